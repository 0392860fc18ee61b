/*
 * input.c — the record reader of the line-oriented commands (see input.h):
 * lines of stdin or a file, or positional arguments; JSON objects via cJSON, UTF-8
 * checked with utf8proc.
 *
 * cJSON keeps strings NUL-terminated, so a "\u0000" escape would end a
 * text early. Before parsing, each such escape is replaced by the escape of
 * U+10FFFF (a noncharacter) and the field values turn it back into a NUL
 * byte; a line that holds U+10FFFF itself as well is refused.
 */
#include "input.h"

#include "cli.h"

#include <cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utf8proc.h>

enum { READ_AHEAD = 1 << 16 };

struct cli_reader {
    cli_input_spec spec;
    FILE *f;        /* NULL when reading arguments */
    int fd;         /* fileno(f), or -1 for a stream without one (fmemopen) */
    char *ahead;    /* [READ_AHEAD] bytes read but not yet consumed */
    size_t ahead_pos, ahead_len;
    bool own_file;
    const char *path;
    char **args;
    int n_args, next_arg;
    long line;
    double done, total;
    char *buf;      /* the current line */
    size_t cap;
};

/* The size of a regular file behind f, for progress; else 0 (unknown). */
static double stream_size(FILE *f)
{
    struct stat st;
    return fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) ? (double)st.st_size : 0.0;
}

/* A reader of spec's records with nothing to read yet, or NULL (said)
 * when out of memory. */
static cli_reader *reader_new(const cli_input_spec *spec)
{
    cli_reader *in = calloc(1, sizeof *in);
    if (!in) {
        cli_error("out of memory");
        return NULL;
    }
    in->spec = *spec;
    return in;
}

cli_reader *cli_reader_open_stream(const cli_input_spec *spec, FILE *f, const char *name)
{
    cli_reader *in = reader_new(spec);
    if (!in)
        return NULL;
    in->f = f;
    in->fd = fileno(f);
    in->path = name;
    in->total = stream_size(f);
    return in;
}

cli_reader *cli_reader_open(const cli_input_spec *spec, const char *path, char **args, int n_args)
{
    if (n_args > 0) {
        cli_reader *in = reader_new(spec);
        if (!in)
            return NULL;
        in->args = args;
        in->n_args = n_args;
        in->total = n_args;
        return in;
    }
    if (!path || !strcmp(path, "-"))
        return cli_reader_open_stream(spec, stdin, "<stdin>");
    FILE *f = fopen(path, "rb");
    if (!f) {
        cli_error("%s: %s", path, strerror(errno));
        return NULL;
    }
    cli_reader *in = cli_reader_open_stream(spec, f, path);
    if (!in) {
        fclose(f);
        return NULL;
    }
    in->own_file = true;
    return in;
}

void cli_reader_close(cli_reader *in)
{
    if (!in)
        return;
    if (in->own_file)
        fclose(in->f);
    free(in->buf);
    free(in->ahead);
    free(in);
}

double cli_reader_done(const cli_reader *in) { return in->done; }
double cli_reader_total(const cli_reader *in) { return in->total; }

void cli_record_fail(cli_record *rec, const char *msg)
{
    if (!rec->error)
        rec->error = strdup(msg ? msg : "error");
}

void cli_record_free(cli_record *rec)
{
    free(rec->error);
    free(rec->storage);
    cJSON_Delete(rec->json);
    cJSON_Delete(rec->result);
    *rec = (cli_record){0};
}

/* Refills the read-ahead buffer. read(2) returns what a pipe already
 * holds without waiting for more, so a process that writes one line and
 * waits for its answer is served; a stream without a descriptor goes
 * through fread. Returns the bytes read, 0 at the end, -1 on error. */
static ssize_t refill(cli_reader *in)
{
    if (!in->ahead && !(in->ahead = malloc(READ_AHEAD))) {
        cli_error("out of memory reading %s", in->path);
        return -1;
    }
    ssize_t n;
    if (in->fd >= 0) {
        do
            n = read(in->fd, in->ahead, READ_AHEAD);
        while (n < 0 && errno == EINTR);
    } else {
        n = (ssize_t)fread(in->ahead, 1, READ_AHEAD, in->f);
        if (n == 0 && ferror(in->f))
            n = -1;
    }
    if (n < 0) {
        cli_error("%s: read error: %s", in->path, strerror(errno));
        return -1;
    }
    in->ahead_pos = 0;
    in->ahead_len = (size_t)n;
    return n;
}

bool cli_reader_ready(const cli_reader *in)
{
    if (in->args || in->ahead_pos < in->ahead_len || in->fd < 0)
        return true;
    struct pollfd p = {.fd = in->fd, .events = POLLIN};
    return poll(&p, 1, 0) > 0; /* data, or the end (POLLHUP) */
}

/* Reads one line (without "\n" or "\r\n") into in->buf. Past max_line the
 * rest of the line is skipped, not stored. Returns 1, 0 at end, -1 on error. */
static int read_line(cli_reader *in, size_t *len, bool *too_long)
{
    size_t n = 0;
    bool any = false, newline = false;
    *too_long = false;
    while (!newline) {
        if (in->ahead_pos == in->ahead_len) {
            ssize_t got = refill(in);
            if (got < 0)
                return -1;
            if (got == 0)
                break;
        }
        /* Copy up to the newline (or the buffer's end) in one go. */
        const char *p = in->ahead + in->ahead_pos;
        size_t avail = in->ahead_len - in->ahead_pos;
        const char *nl = memchr(p, '\n', avail);
        size_t take = nl ? (size_t)(nl - p) : avail;
        in->ahead_pos += take + (nl != NULL);
        in->done += (double)(take + (nl != NULL));
        newline = nl != NULL;
        any = true;
        size_t keep = n + take > in->spec.max_line ? in->spec.max_line - n : take;
        if (keep < take)
            *too_long = true;
        if (n + keep + 1 > in->cap) {
            size_t cap = in->cap ? in->cap : 4096;
            while (cap < n + keep + 1)
                cap *= 2;
            char *grown = realloc(in->buf, cap);
            if (!grown) {
                cli_error("out of memory reading %s", in->path);
                return -1;
            }
            in->buf = grown;
            in->cap = cap;
        }
        memcpy(in->buf + n, p, keep);
        n += keep;
    }
    if (!any)
        return 0;
    if (n > 0 && in->buf[n - 1] == '\r')
        n--;
    if (!in->buf && !(in->buf = malloc(in->cap = 1)))
        return -1;
    in->buf[n] = '\0';
    *len = n;
    return 1;
}

/* Byte offset of the first invalid UTF-8 sequence, or -1 when valid. */
static long invalid_utf8_at(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i,
                                              (utf8proc_ssize_t)(len - i), &cp);
        if (k <= 0)
            return (long)i;
        i += (size_t)k;
    }
    return -1;
}

static void failf(cli_record *rec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void failf(cli_record *rec, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_record_fail(rec, msg);
}

/* Copies the fields' values into one owned block. */
static bool store_fields(cli_record *rec, const char *const *vals, const size_t *lens, int n)
{
    size_t total = 0;
    for (int k = 0; k < n; k++)
        total += vals[k] ? lens[k] + 1 : 0;
    if (!(rec->storage = malloc(total ? total : 1)))
        return false;
    char *w = rec->storage;
    for (int k = 0; k < n; k++) {
        if (!vals[k])
            continue;
        memcpy(w, vals[k], lens[k]);
        w[lens[k]] = '\0';
        rec->field[k] = w;
        rec->len[k] = lens[k];
        w += lens[k] + 1;
    }
    return true;
}

#define NUL_MARK_ESCAPE "\\udbff\\udfff" /* U+10FFFF in JSON */
#define NUL_MARK_UTF8 "\xF4\x8F\xBF\xBF"   /* U+10FFFF in UTF-8 */

/* True when s[0..n) contains `needle`, ignoring ASCII case. */
static bool contains_nocase(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (!strncasecmp(s + i, needle, k))
            return true;
    return false;
}

/* The JSON text with each "\u0000" escape replaced by the U+10FFFF marker
 * (a new string in *copy), or s itself when there is none. NULL with the
 * record failed when the line also holds U+10FFFF or memory runs out. */
static const char *mark_nul_escapes(cli_record *rec, const char *s, size_t len, size_t *out_len,
                                    char **copy, bool *marked)
{
    size_t count = 0;
    for (size_t i = 0; i + 1 < len; i++) {
        if (s[i] != '\\')
            continue;
        count += !strncmp(s + i, "\\u0000", 6);
        i++; /* skip the escaped character: "\\\\u0000" is no escape */
    }
    *out_len = len;
    *copy = NULL;
    *marked = count > 0;
    if (!count)
        return s;
    if (memmem(s, len, NUL_MARK_UTF8, 4) || contains_nocase(s, len, NUL_MARK_ESCAPE)) {
        failf(rec, "a line cannot hold both U+0000 and U+10FFFF");
        return NULL;
    }
    char *o = *copy = malloc(len + count * (sizeof NUL_MARK_ESCAPE - 1) + 1);
    if (!o) {
        failf(rec, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < len;) {
        if (s[i] == '\\' && !strncmp(s + i, "\\u0000", 6)) {
            memcpy(o, NUL_MARK_ESCAPE, sizeof NUL_MARK_ESCAPE - 1);
            o += sizeof NUL_MARK_ESCAPE - 1;
            i += 6;
        } else if (s[i] == '\\' && i + 1 < len) {
            *o++ = s[i++];
            *o++ = s[i++];
        } else {
            *o++ = s[i++];
        }
    }
    *o = '\0';
    *out_len = (size_t)(o - *copy);
    return *copy;
}

/* Turns the markers of a string value back into NUL bytes, in place;
 * returns the true length. */
static size_t unmark_nul(char *v, bool marked)
{
    char *o = v;
    for (const char *p = v; *p;) {
        if (marked && !strncmp(p, NUL_MARK_UTF8, 4)) {
            *o++ = '\0';
            p += 4;
        } else {
            *o++ = *p++;
        }
    }
    return (size_t)(o - v);
}

static void parse_json(const cli_input_spec *spec, cli_record *rec, const char *line, size_t line_len)
{
    size_t len;
    char *copy;
    bool marked;
    const char *s = mark_nul_escapes(rec, line, line_len, &len, &copy, &marked);
    if (!s)
        return;
    const char *end = NULL;
    cJSON *obj = cJSON_ParseWithLengthOpts(s, len, &end, false);
    while (obj && end && end < s + len && (*end == ' ' || *end == '\t'))
        end++;
    if (!obj || !cJSON_IsObject(obj) || (end && end < s + len)) {
        const char *where = obj ? end : cJSON_GetErrorPtr();
        size_t at = where && where >= s && where <= s + len ? (size_t)(where - s) : 0;
        failf(rec, "bad JSON object (near byte %zu)", at);
        cJSON_Delete(obj);
        free(copy);
        return;
    }
    const char *vals[CLI_MAX_FIELDS] = {0};
    size_t lens[CLI_MAX_FIELDS] = {0};
    for (int k = 0; k < spec->n_fields; k++) {
        cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, spec->names[k]);
        if (!v || cJSON_IsNull(v)) {
            if (k < spec->n_required)
                failf(rec, "missing \"%s\"", spec->names[k]);
            continue;
        }
        if (!cJSON_IsString(v)) {
            failf(rec, "\"%s\" is not a string", spec->names[k]);
            continue;
        }
        vals[k] = v->valuestring;
        lens[k] = unmark_nul(v->valuestring, marked);
        long bad = invalid_utf8_at(vals[k], lens[k]);
        if (bad >= 0)
            failf(rec, "invalid UTF-8 at byte %ld of \"%s\"", bad, spec->names[k]);
    }
    if (!rec->error && !store_fields(rec, vals, lens, spec->n_fields))
        failf(rec, "out of memory");
    if (rec->error)
        cJSON_Delete(obj);
    else
        rec->json = obj; /* for commands that read more than string fields */
    free(copy);
}

static void parse_text(const cli_input_spec *spec, cli_record *rec, const char *s, size_t len)
{
    const char *vals[CLI_MAX_FIELDS] = {0};
    size_t lens[CLI_MAX_FIELDS] = {0};
    int want = spec->tab_fields > 1 ? spec->tab_fields : 1;
    const char *p = s, *end = s + len;
    for (int k = 0; k < want; k++) {
        const char *tab = k + 1 < want ? memchr(p, '\t', (size_t)(end - p)) : NULL;
        if (k + 1 < want && !tab) {
            char names[256] = "";
            for (int j = 0; j < want; j++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                         j ? "<TAB>" : "", spec->names[j]);
            failf(rec, "expected %s, or a JSON object", names);
            return;
        }
        vals[k] = p;
        lens[k] = (size_t)((tab ? tab : end) - p);
        p = tab ? tab + 1 : end;
    }
    if (!store_fields(rec, vals, lens, want))
        failf(rec, "out of memory");
}

static void parse_record(const cli_input_spec *spec, cli_record *rec, const char *s, size_t len)
{
    long bad = invalid_utf8_at(s, len);
    if (bad >= 0) {
        /* A plain line of one field is the text itself. */
        failf(rec, "invalid UTF-8 at byte %ld of the %s", bad,
              spec->tab_fields > 1 ? "line" : "text");
        return;
    }
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i < len && s[i] == '{')
        parse_json(spec, rec, s, len);
    else
        parse_text(spec, rec, s, len);
}

int cli_reader_next(cli_reader *in, cli_record *rec)
{
    *rec = (cli_record){0};
    if (in->args) {
        if (in->next_arg >= in->n_args)
            return 0;
        const char *arg = in->args[in->next_arg++];
        rec->line = in->next_arg;
        in->done = in->next_arg;
        if (strlen(arg) > in->spec.max_line)
            failf(rec, "input is longer than %zu bytes (--max-line-bytes)", in->spec.max_line);
        else
            parse_record(&in->spec, rec, arg, strlen(arg));
        return 1;
    }
    size_t len = 0;
    bool too_long;
    int got = read_line(in, &len, &too_long);
    if (got <= 0)
        return got;
    rec->line = ++in->line;
    if (too_long)
        failf(rec, "line is longer than %zu bytes (--max-line-bytes)", in->spec.max_line);
    else
        parse_record(&in->spec, rec, in->buf, len);
    return 1;
}
