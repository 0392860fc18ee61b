/*
 * basic_tokenizer.c — HF BasicTokenizer: clean, CJK split, NFC, lower,
 * accent stripping, punctuation split (see basic_tokenizer.h).
 */
#include "text/basic_tokenizer.h"

#include "base/error.h"
#include "text/unicode.h"
#include "text/utf8.h"

#include <stdlib.h>
#include <string.h>

rf_status rf_chars_push(rf_chars *c, int32_t cp, int32_t start, int32_t end, rf_error *err)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        int32_t *a = realloc(c->cp, cap * sizeof *a);
        if (a)
            c->cp = a;
        int32_t *b = realloc(c->start, cap * sizeof *b);
        if (b)
            c->start = b;
        int32_t *e = realloc(c->end, cap * sizeof *e);
        if (e)
            c->end = e;
        if (!a || !b || !e)
            return rf_fail(err, RF_ERR_NOMEM, "tokenizer: out of memory");
        c->cap = cap;
    }
    c->cp[c->n] = cp;
    c->start[c->n] = start;
    c->end[c->n] = end;
    c->n++;
    return RF_OK;
}

void rf_chars_release(rf_chars *c)
{
    if (!c)
        return;
    free(c->cp);
    free(c->start);
    free(c->end);
    memset(c, 0, sizeof *c);
}

void rf_basic_words_release(rf_basic_words *w)
{
    if (!w)
        return;
    rf_chars_release(&w->chars);
    rf_chars_release(&w->run);
    free(w->word_first);
    free(w->word_count);
    free(w->buf_a);
    free(w->buf_b);
    memset(w, 0, sizeof *w);
}

/* Ends the current word at out->chars.n (no-op when it is empty). */
static rf_status close_word(rf_basic_words *out, size_t *word_begin, rf_error *err)
{
    size_t first = *word_begin, n = out->chars.n - first;
    *word_begin = out->chars.n;
    if (n == 0)
        return RF_OK;
    if (out->n_words == out->cap_words) {
        size_t cap = out->cap_words ? out->cap_words * 2 : 64;
        uint32_t *f = realloc(out->word_first, cap * sizeof *f);
        if (f)
            out->word_first = f;
        uint32_t *c = realloc(out->word_count, cap * sizeof *c);
        if (c)
            out->word_count = c;
        if (!f || !c)
            return rf_fail(err, RF_ERR_NOMEM, "tokenizer: out of memory");
        out->cap_words = cap;
    }
    out->word_first[out->n_words] = (uint32_t)first;
    out->word_count[out->n_words] = (uint32_t)n;
    out->n_words++;
    return RF_OK;
}

/* Appends one processed character, splitting off punctuation. */
static rf_status emit_char(rf_basic_words *out, size_t *word_begin, int32_t cp, int32_t s,
                           int32_t e, rf_error *err)
{
    rf_status st;
    if (rf_uni_is_punct(cp)) {
        if ((st = close_word(out, word_begin, err)) != RF_OK ||
            (st = rf_chars_push(&out->chars, cp, s, e, err)) != RF_OK)
            return st;
        return close_word(out, word_begin, err);
    }
    return rf_chars_push(&out->chars, cp, s, e, err);
}

static rf_status reserve_bufs(rf_basic_words *out, size_t n, rf_error *err)
{
    if (n <= out->buf_cap)
        return RF_OK;
    size_t cap = out->buf_cap ? out->buf_cap : 64;
    while (cap < n)
        cap *= 2;
    int32_t *a = realloc(out->buf_a, cap * sizeof *a);
    if (a)
        out->buf_a = a;
    int32_t *b = realloc(out->buf_b, cap * sizeof *b);
    if (b)
        out->buf_b = b;
    if (!a || !b)
        return rf_fail(err, RF_ERR_NOMEM, "tokenizer: out of memory");
    out->buf_cap = cap;
    return RF_OK;
}

/* NFC of cp[0..n) into out->buf_a, its length in *len. */
static rf_status nfc_into_a(rf_basic_words *out, const int32_t *cp, size_t n, ptrdiff_t *len,
                            rf_error *err)
{
    for (size_t need = n * 4 + 16;; need *= 2) {
        rf_status st = reserve_bufs(out, need, err);
        if (st != RF_OK)
            return st;
        if ((*len = rf_uni_nfc(cp, n, out->buf_a, out->buf_cap)) >= 0)
            return RF_OK;
        if (need > ((size_t)1 << 28))
            return rf_fail(err, RF_ERR_LIMIT, "tokenizer: normalisation too long");
    }
}

/* Processes one segment run->cp[a..b): NFC, then lower-case + strip accents. */
static rf_status emit_segment(rf_basic_words *out, size_t *word_begin, size_t a, size_t b,
                              bool lower, rf_error *err)
{
    const rf_chars *run = &out->run;
    int32_t s = run->start[a], e = run->end[b - 1];
    for (size_t i = a; i < b; i++) {
        if (run->start[i] < s)
            s = run->start[i];
        if (run->end[i] > e)
            e = run->end[i];
    }
    ptrdiff_t n;
    rf_status st = nfc_into_a(out, run->cp + a, b - a, &n, err);
    if (st != RF_OK)
        return st;
    if (!lower) {
        for (ptrdiff_t i = 0; i < n; i++)
            if ((st = emit_char(out, word_begin, out->buf_a[i], s, e, err)) != RF_OK)
                return st;
        return RF_OK;
    }
    /* Lower-case into buf_b (at most 2 code points each), then NFD back
     * into buf_a and drop Mn. */
    if ((st = reserve_bufs(out, (size_t)n * 2 + 16, err)) != RF_OK)
        return st;
    size_t m = 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        int32_t low[3];
        int k = rf_uni_lower(out->buf_a[i], low);
        for (int j = 0; j < k; j++)
            out->buf_b[m++] = low[j];
    }
    ptrdiff_t d;
    for (size_t need = m * 4 + 16;; need *= 2) {
        if ((st = reserve_bufs(out, need, err)) != RF_OK)
            return st;
        if ((d = rf_uni_nfd(out->buf_b, m, out->buf_a, out->buf_cap)) >= 0)
            break;
        if (need > ((size_t)1 << 28))
            return rf_fail(err, RF_ERR_LIMIT, "tokenizer: normalisation too long");
    }
    for (ptrdiff_t i = 0; i < d; i++) {
        if (rf_uni_is_mark_mn(out->buf_a[i]))
            continue;
        if ((st = emit_char(out, word_begin, out->buf_a[i], s, e, err)) != RF_OK)
            return st;
    }
    return RF_OK;
}

/* True when starter `cp` may compose with what precedes it (so NFC could
 * join it to the previous segment). Latin-1 and CJK never do. */
static bool may_compose_backwards(int32_t cp)
{
    return cp >= 0x300 && !rf_uni_is_cjk(cp);
}

/* When the characters from `first` on spell a never-split string, makes
 * them one word again (the words from `first_word` on are replaced). */
static void keep_whole(rf_basic_words *out, size_t first, size_t first_word, const rf_never_split *ns)
{
    char buf[256];
    size_t len = 0;
    for (size_t i = first; i < out->chars.n; i++) {
        if (len + 4 > sizeof buf)
            return;
        len += (size_t)rf_utf8_encode(out->chars.cp[i], buf + len);
    }
    for (int k = 0; k < ns->n; k++) {
        if (len > 0 && ns->len[k] == len && !memcmp(ns->str[k], buf, len)) {
            out->n_words = first_word; /* at least one word was made: room for this one */
            out->word_first[out->n_words] = (uint32_t)first;
            out->word_count[out->n_words] = (uint32_t)(out->chars.n - first);
            out->n_words++;
            return;
        }
    }
}

/* Processes the characters gathered in out->run (one whitespace-free run). */
static rf_status flush_run(rf_basic_words *out, bool lower, const rf_never_split *ns, rf_error *err)
{
    rf_chars *run = &out->run;
    size_t word_begin = out->chars.n, first = out->chars.n, first_word = out->n_words;
    rf_status st = RF_OK;
    bool ascii = true;
    for (size_t i = 0; i < run->n && ascii; i++)
        ascii = run->cp[i] < 0x80;
    if (ascii) {
        for (size_t i = 0; i < run->n; i++) {
            int32_t c = run->cp[i];
            if (lower && c >= 'A' && c <= 'Z')
                c += 32;
            if ((st = emit_char(out, &word_begin, c, run->start[i], run->end[i], err)) != RF_OK)
                return st;
        }
    } else {
        size_t a = 0;
        while (a < run->n) {
            size_t b = a + 1;
            for (;;) {
                while (b < run->n && rf_uni_combining_class(run->cp[b]) != 0)
                    b++;
                if (b >= run->n || !may_compose_backwards(run->cp[b]))
                    break;
                /* Does the next starter compose into this segment? */
                ptrdiff_t alone, joined;
                if ((st = nfc_into_a(out, run->cp + a, b - a, &alone, err)) != RF_OK ||
                    (st = nfc_into_a(out, run->cp + a, b - a + 1, &joined, err)) != RF_OK)
                    return st;
                if (joined > alone)
                    break;
                b++;
            }
            if ((st = emit_segment(out, &word_begin, a, b, lower, err)) != RF_OK)
                return st;
            a = b;
        }
    }
    run->n = 0;
    if ((st = close_word(out, &word_begin, err)) != RF_OK)
        return st;
    if (!lower && ns && out->n_words > first_word)
        keep_whole(out, first, first_word, ns);
    return RF_OK;
}

rf_status rf_basic_tokenize(const int32_t *cp, const int32_t *start, const int32_t *end, size_t n,
                            bool lower, const rf_never_split *never_split, rf_basic_words *out,
                            rf_error *err)
{
    out->chars.n = 0;
    out->n_words = 0;
    out->run.n = 0;
    rf_status st;
    for (size_t i = 0; i < n; i++) {
        int32_t c = cp[i];
        if (c == 0 || c == 0xFFFD || rf_uni_is_control(c))
            continue;
        if (rf_uni_is_space(c) || rf_uni_splits_words(c)) {
            if ((st = flush_run(out, lower, never_split, err)) != RF_OK)
                return st;
            continue;
        }
        if (rf_uni_is_cjk(c)) {
            if ((st = flush_run(out, lower, never_split, err)) != RF_OK ||
                (st = rf_chars_push(&out->run, c, start[i], end[i], err)) != RF_OK ||
                (st = flush_run(out, lower, never_split, err)) != RF_OK)
                return st;
            continue;
        }
        if ((st = rf_chars_push(&out->run, c, start[i], end[i], err)) != RF_OK)
            return st;
    }
    return flush_run(out, lower, never_split, err);
}
