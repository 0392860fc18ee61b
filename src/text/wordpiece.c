/*
 * wordpiece.c — greedy longest-match WordPiece (see wordpiece.h).
 */
#include "text/wordpiece.h"

#include "base/error.h"
#include "text/utf8.h"

#include <stdlib.h>
#include <string.h>

rf_status rf_token_list_push(rf_token_list *t, int32_t id, int32_t start, int32_t end,
                             rf_error *err)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        int32_t *a = realloc(t->id, cap * sizeof *a);
        if (a)
            t->id = a;
        int32_t *b = realloc(t->start, cap * sizeof *b);
        if (b)
            t->start = b;
        int32_t *c = realloc(t->end, cap * sizeof *c);
        if (c)
            t->end = c;
        if (!a || !b || !c)
            return rf_fail(err, RF_ERR_NOMEM, "tokenizer: out of memory");
        t->cap = cap;
    }
    t->id[t->n] = id;
    t->start[t->n] = start;
    t->end[t->n] = end;
    t->n++;
    return RF_OK;
}

void rf_token_list_release(rf_token_list *t)
{
    if (!t)
        return;
    free(t->id);
    free(t->start);
    free(t->end);
    memset(t, 0, sizeof *t);
}

void rf_wordpiece_scratch_release(rf_wordpiece_scratch *s)
{
    if (!s)
        return;
    free(s->buf);
    free(s->offset);
    memset(s, 0, sizeof *s);
}

rf_status rf_wordpiece(const rf_vocab *v, int32_t unk_id, size_t max_token_bytes, const int32_t *cp,
                       const int32_t *start, const int32_t *end, size_t n,
                       rf_wordpiece_scratch *scratch, rf_token_list *out, rf_error *err)
{
    if (n == 0)
        return RF_OK;
    if (n > RF_WORDPIECE_MAX_CHARS)
        return rf_token_list_push(out, unk_id, start[0], end[n - 1], err);
    if (scratch->cap < n) {
        char *buf = realloc(scratch->buf, 2 + 4 * RF_WORDPIECE_MAX_CHARS);
        if (buf)
            scratch->buf = buf;
        uint32_t *off = realloc(scratch->offset, (RF_WORDPIECE_MAX_CHARS + 1) * sizeof *off);
        if (off)
            scratch->offset = off;
        if (!buf || !off)
            return rf_fail(err, RF_ERR_NOMEM, "tokenizer: out of memory");
        scratch->cap = RF_WORDPIECE_MAX_CHARS;
    }
    char *word = scratch->buf + 2; /* the word; "##" is written just before a piece */
    uint32_t *off = scratch->offset;
    off[0] = 0;
    for (size_t i = 0; i < n; i++)
        off[i + 1] = off[i] + (uint32_t)rf_utf8_encode(cp[i], word + off[i]);

    size_t first_piece = out->n;
    for (size_t s = 0; s < n;) {
        const char *key;
        size_t prefix;
        if (s == 0) {
            key = word;
            prefix = 0;
        } else {
            key = word + off[s] - 2;
            memcpy((char *)key, "##", 2); /* overwrites characters already consumed */
            prefix = 2;
        }
        size_t e = n;
        int32_t id = -1;
        for (; e > s; e--) {
            size_t bytes = prefix + off[e] - off[s];
            if (bytes > max_token_bytes)
                continue;
            if ((id = rf_vocab_find(v, key, bytes)) >= 0)
                break;
        }
        if (id < 0) {
            out->n = first_piece; /* the whole word is one unknown token */
            return rf_token_list_push(out, unk_id, start[0], end[n - 1], err);
        }
        rf_status st = rf_token_list_push(out, id, start[s], end[e - 1], err);
        if (st != RF_OK)
            return st;
        s = e;
    }
    return RF_OK;
}
