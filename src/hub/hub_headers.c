/*
 * hub_headers.c — reading the response header lines a download needs (see
 * hub_headers.h). Pure parsing of untrusted bytes: no I/O, no allocation.
 */
#include "hub/hub_headers.h"

#include <stdbool.h>
#include <string.h>

void rf_hub_headers_init(rf_hub_headers *h)
{
    memset(h, 0, sizeof *h);
    h->range_start = h->range_total = -1;
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* Case-insensitive equality of s[0..n) and the lower-case word w. */
static bool same_word(const char *s, size_t n, const char *w)
{
    if (strlen(w) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lower(s[i]) != w[i])
            return false;
    return true;
}

/* An ETag-style value, W/ prefix and quotes optional, that is exactly 64
 * hex digits: written lower-case into out[65]; otherwise out is "". */
static void read_sha256(const char *v, size_t n, char out[65])
{
    out[0] = '\0';
    if (n >= 2 && v[0] == 'W' && v[1] == '/') {
        v += 2;
        n -= 2;
    }
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
        v++;
        n -= 2;
    }
    if (n != 64)
        return;
    for (size_t i = 0; i < 64; i++) {
        char c = lower(v[i]);
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return;
    }
    for (size_t i = 0; i < 64; i++)
        out[i] = lower(v[i]);
    out[64] = '\0';
}

/* A decimal number of at most 18 digits at *p (advanced past it), or -1. */
static int64_t read_number(const char **p, const char *end)
{
    int64_t v = 0;
    int digits = 0;
    while (*p < end && **p >= '0' && **p <= '9' && digits < 18) {
        v = v * 10 + (**p - '0');
        (*p)++;
        digits++;
    }
    return digits ? v : -1;
}

/* "HTTP/1.1 206 Partial Content" or "HTTP/2 200". */
static void read_status_line(rf_hub_headers *h, const char *s, size_t n)
{
    const char *end = s + n, *p = memchr(s, ' ', n);
    h->responses++;
    h->status = 0;
    h->error_code[0] = '\0';
    h->range_start = h->range_total = -1;
    if (!p)
        return;
    p++;
    const char *digits = p;
    int64_t code = read_number(&p, end);
    if (p - digits == 3 && (p == end || *p == ' '))
        h->status = (int)code;
}

/* "bytes START-LAST/TOTAL" (TOTAL may be '*'). */
static void read_content_range(rf_hub_headers *h, const char *v, size_t n)
{
    const char *end = v + n, *p = v;
    if (n < 6 || !same_word(v, 5, "bytes") || v[5] != ' ')
        return;
    p += 6;
    int64_t start = read_number(&p, end);
    if (start < 0 || p == end || *p != '-')
        return;
    p++;
    int64_t last = read_number(&p, end);
    if (last < start || p == end || *p != '/')
        return;
    p++;
    int64_t total = -1;
    if (p < end && *p == '*')
        p++;
    else if ((total = read_number(&p, end)) <= last)
        return;
    if (p != end)
        return;
    h->range_start = start;
    h->range_total = total;
}

void rf_hub_headers_feed(rf_hub_headers *h, const char *line, size_t len)
{
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    if (len >= 5 && !memcmp(line, "HTTP/", 5)) {
        read_status_line(h, line, len);
        return;
    }
    const char *colon = memchr(line, ':', len);
    if (!colon)
        return;
    size_t name_n = (size_t)(colon - line);
    const char *v = colon + 1, *end = line + len;
    while (v < end && is_space(*v))
        v++;
    while (end > v && is_space(end[-1]))
        end--;
    size_t vn = (size_t)(end - v);
    if (same_word(line, name_n, "x-linked-etag")) {
        char sha[65];
        read_sha256(v, vn, sha);
        if (sha[0])
            memcpy(h->linked_sha256, sha, sizeof sha);
    } else if (same_word(line, name_n, "etag") && h->responses == 1) {
        read_sha256(v, vn, h->etag_sha256);
    } else if (same_word(line, name_n, "x-error-code")) {
        size_t n = vn < sizeof h->error_code - 1 ? vn : sizeof h->error_code - 1;
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (v[i] >= 0x21 && v[i] <= 0x7e)
                h->error_code[k++] = v[i];
        h->error_code[k] = '\0';
    } else if (same_word(line, name_n, "content-range")) {
        read_content_range(h, v, vn);
    }
}

const char *rf_hub_headers_sha256(const rf_hub_headers *h)
{
    if (h->linked_sha256[0])
        return h->linked_sha256;
    return h->etag_sha256[0] ? h->etag_sha256 : NULL;
}
