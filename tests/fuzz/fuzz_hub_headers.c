/*
 * fuzz_hub_headers.c — the hub client's readers of untrusted text: HTTP
 * response header lines (hub_headers.c), as a server or a man in the
 * middle may send them, and "OWNER/NAME[@REVISION]" names (hub_repo.c).
 * The input is split at '\n' into header lines, fed in order; its first
 * line is also parsed as a repository name. What they hand back is checked:
 * digests are "" or 64 lower-case hex digits, the error code printable,
 * ranges consistent, accepted names made only of allowed characters.
 */
#include "fuzz.h"
#include "hub/hub_headers.h"
#include "hub/hub_repo.h"

#include <stdbool.h>
#include <string.h>

static bool digest_ok(const char *s)
{
    size_t n = strlen(s);
    if (n != 0 && n != 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

static void check_headers(const rf_hub_headers *h)
{
    FUZZ_ASSERT(digest_ok(h->linked_sha256) && digest_ok(h->etag_sha256));
    const char *sha = rf_hub_headers_sha256(h);
    FUZZ_ASSERT(!sha || strlen(sha) == 64);
    FUZZ_ASSERT(strlen(h->error_code) < sizeof h->error_code);
    for (const char *c = h->error_code; *c; c++)
        FUZZ_ASSERT(*c >= 0x21 && *c <= 0x7e);
    FUZZ_ASSERT(h->status >= 0 && h->status <= 999);
    FUZZ_ASSERT(h->range_start >= -1 && h->range_total >= -1);
    FUZZ_ASSERT(h->range_total == -1 || h->range_total > h->range_start);
}

static void check_name(const char *s, size_t n)
{
    char spec[600];
    rf_hub_repo r;
    rf_error err;
    if (n >= sizeof spec)
        n = sizeof spec - 1;
    memcpy(spec, s, n);
    spec[n] = '\0';
    if (rf_hub_repo_parse(spec, &r, &err) != RF_OK) {
        FUZZ_ASSERT(err.message[0]);
        return;
    }
    FUZZ_ASSERT(r.owner[0] && r.name[0] && r.revision[0]);
    FUZZ_ASSERT(!strchr(r.owner, '/') && !strchr(r.name, '/') && !strchr(r.revision_escaped, '/'));
    FUZZ_ASSERT(strcmp(r.owner, "..") && strcmp(r.name, "..") && !strstr(r.revision, ".."));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data, *end = text + size;
    rf_hub_headers h;
    rf_hub_headers_init(&h);
    const char *nl = memchr(text, '\n', size);
    check_name(text, nl ? (size_t)(nl - text) : size);
    for (const char *line = text; line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        size_t n = eol ? (size_t)(eol - line + 1) : (size_t)(end - line);
        rf_hub_headers_feed(&h, line, n);
        check_headers(&h);
        line += n;
    }
    return 0;
}
