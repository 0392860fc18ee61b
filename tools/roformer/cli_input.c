/*
 * cli_input.c — one input per line: plain text or a JSON object (cJSON),
 * with U+0000 inside JSON strings kept (see cli_input.h).
 *
 * cJSON stores strings NUL-terminated, so a "\u0000" escape would end the
 * string early. Before parsing, each such escape is replaced by the escape
 * of U+10FFFF (a noncharacter), and cli_input_field turns that back into a
 * NUL byte. A line that already holds U+10FFFF as well is refused.
 */
#include "cli_input.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MARK_ESCAPE "\\udbff\\udfff" /* U+10FFFF in JSON */
#define MARK_UTF8 "\xF4\x8F\xBF\xBF" /* U+10FFFF in UTF-8 */

void cli_input_free(cli_input *in)
{
    free(in->line);
    free(in->escaped);
    cJSON_Delete(in->json);
    memset(in, 0, sizeof *in);
}

static void fail(cli_input *in, const char *msg)
{
    in->bad = true;
    snprintf(in->error, sizeof in->error, "%s", msg);
}

/* True when `s` (length n) contains `needle`, ignoring ASCII case. */
static bool contains_nocase(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (!strncasecmp(s + i, needle, k))
            return true;
    return false;
}

/* The JSON text to parse: the line, or a copy with "\u0000" escapes
 * replaced by the U+10FFFF marker. NULL (and `bad`) when impossible. */
static const char *escape_nul(cli_input *in, size_t *out_len)
{
    size_t count = 0;
    for (size_t i = 0; i + 1 < in->len; i++) {
        if (in->line[i] != '\\')
            continue;
        if (!strncmp(in->line + i, "\\u0000", 6))
            count++;
        i++; /* skip the escaped character, so "\\\\u0000" is no escape */
    }
    *out_len = in->len;
    if (count == 0)
        return in->line;
    if (memmem(in->line, in->len, MARK_UTF8, 4) || contains_nocase(in->line, in->len, MARK_ESCAPE)) {
        fail(in, "a line cannot hold both U+0000 and U+10FFFF");
        return NULL;
    }
    size_t need = in->len + count * (sizeof MARK_ESCAPE - 1) + 1;
    if (need > in->escaped_cap) {
        char *grown = realloc(in->escaped, need);
        if (!grown) {
            fail(in, "out of memory");
            return NULL;
        }
        in->escaped = grown;
        in->escaped_cap = need;
    }
    char *o = in->escaped;
    for (size_t i = 0; i < in->len;) {
        if (in->line[i] == '\\' && !strncmp(in->line + i, "\\u0000", 6)) {
            memcpy(o, MARK_ESCAPE, sizeof MARK_ESCAPE - 1);
            o += sizeof MARK_ESCAPE - 1;
            i += 6;
        } else if (in->line[i] == '\\' && i + 1 < in->len) {
            *o++ = in->line[i++];
            *o++ = in->line[i++];
        } else {
            *o++ = in->line[i++];
        }
    }
    *o = '\0';
    *out_len = (size_t)(o - in->escaped);
    in->nul_marked = true;
    return in->escaped;
}

bool cli_input_next(cli_input *in, FILE *f)
{
    cJSON_Delete(in->json);
    in->json = NULL;
    in->is_json = false;
    in->bad = false;
    in->nul_marked = false;
    in->error[0] = '\0';
    ssize_t n = getline(&in->line, &in->cap, f);
    if (n < 0)
        return false;
    in->line_no++;
    in->len = (size_t)n;
    if (in->len > 0 && in->line[in->len - 1] == '\n')
        in->line[--in->len] = '\0';
    if (in->len > 0 && in->line[in->len - 1] == '\r')
        in->line[--in->len] = '\0';

    size_t i = 0;
    while (i < in->len && (in->line[i] == ' ' || in->line[i] == '\t'))
        i++;
    if (i == in->len || in->line[i] != '{')
        return true; /* plain text */
    in->is_json = true;
    size_t len;
    const char *text = escape_nul(in, &len);
    if (!text)
        return true;
    const char *end = NULL;
    in->json = cJSON_ParseWithLengthOpts(text, len, &end, false);
    while (in->json && end && end < text + len && (*end == ' ' || *end == '\t'))
        end++;
    if (!in->json || !cJSON_IsObject(in->json) || (end && end < text + len)) {
        const char *where = in->json ? end : cJSON_GetErrorPtr();
        size_t at = where && where >= text ? (size_t)(where - text) : 0;
        char msg[128];
        snprintf(msg, sizeof msg, "bad JSON object (near byte %zu)", at < len ? at : len);
        fail(in, msg);
        cJSON_Delete(in->json);
        in->json = NULL;
    }
    return true;
}

int cli_input_field(cli_input *in, const char *name, const char **text, size_t *len)
{
    cJSON *item = in->json ? cJSON_GetObjectItemCaseSensitive(in->json, name) : NULL;
    if (!item || cJSON_IsNull(item))
        return 0;
    if (!cJSON_IsString(item))
        return -1;
    /* Turn the markers back into NUL bytes, in place. */
    char *s = item->valuestring, *o = s;
    for (const char *p = s; *p;) {
        if (in->nul_marked && !strncmp(p, MARK_UTF8, 4)) {
            *o++ = '\0';
            p += 4;
        } else {
            *o++ = *p++;
        }
    }
    *len = (size_t)(o - s);
    *text = s;
    return 1;
}
