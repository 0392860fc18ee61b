/*
 * jieba_cut.c — jieba-rs `cut(text, hmm=false)`: regex blocks, DAG,
 * maximum log-probability route, ASCII run merging (see jieba_cut.h).
 *
 * The DAG is never stored: going right to left, each position walks the
 * prefix trie forward and scores every word it passes, using the routes
 * already computed for the positions after it.
 */
#include "text/jieba_cut.h"

#include "base/error.h"
#include "text/utf8.h"

#include <stdlib.h>
#include <string.h>

/* ASCII part of the block regex: a-z A-Z 0-9 + # & . _ % - */
static const unsigned char ascii_in_block[128] = {
    ['+'] = 1, ['#'] = 1, ['&'] = 1, ['.'] = 1, ['_'] = 1, ['%'] = 1, ['-'] = 1,
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
    ['8'] = 1, ['9'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1,
    ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1,
    ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
    ['y'] = 1, ['z'] = 1,
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1,
    ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1,
    ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
    ['Y'] = 1, ['Z'] = 1,
};

static inline bool in_block(int32_t cp)
{
    if (cp < 0x80)
        return ascii_in_block[cp];
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
           (cp >= 0x2A700 && cp <= 0x2EBEF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

static inline bool is_ascii_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

static rf_status push_word(rf_jieba_words *out, size_t off, size_t len, rf_error *err)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 256;
        rf_span *grown = realloc(out->words, cap * sizeof *grown);
        if (!grown)
            return rf_fail(err, RF_ERR_NOMEM, "jieba: out of memory");
        out->words = grown;
        out->cap = cap;
    }
    out->words[out->n++] = (rf_span){(uint32_t)off, (uint32_t)len};
    return RF_OK;
}

/* Segments one block text[b..e) of the block regex. */
/* How many characters ahead (to the left) the route pass prefetches the
 * second trie probe, which is the one that misses the cache. */
#define PREFETCH_AHEAD 4

static rf_status reserve_route(rf_jieba_words *out, size_t n, rf_error *err)
{
    if (n + 1 <= out->route_cap)
        return RF_OK;
    size_t cap = out->route_cap ? out->route_cap : 1024;
    while (cap < n + 1)
        cap *= 2;
    double *w = realloc(out->route_w, cap * sizeof *w);
    if (w)
        out->route_w = w;
    uint32_t *end = realloc(out->route_end, cap * sizeof *end);
    if (end)
        out->route_end = end;
    uint32_t *start = realloc(out->char_start, cap * sizeof *start);
    if (start)
        out->char_start = start;
    int32_t *cp = realloc(out->char_cp, cap * sizeof *cp);
    if (cp)
        out->char_cp = cp;
    if (!w || !end || !start || !cp)
        return rf_fail(err, RF_ERR_NOMEM, "jieba: out of memory for a %zu-byte block", n);
    out->route_cap = cap;
    return RF_OK;
}

/* Segments one block text[b..e) of the block regex. */
static rf_status cut_block(const rf_jieba_dict *d, const char *text, size_t b, size_t e,
                           rf_jieba_words *out, rf_error *err)
{
    size_t n = e - b;
    rf_status st = reserve_route(out, n, err);
    if (st != RF_OK)
        return st;
    const char *s = text + b;
    double *route_w = out->route_w;
    uint32_t *route_end = out->route_end;
    uint32_t *start = out->char_start;
    int32_t *cps = out->char_cp;

    /* The characters of the block: start[k] and code point cps[k]. */
    size_t chars = 0;
    for (size_t i = 0; i < n; chars++) {
        start[chars] = (uint32_t)i;
        i += (size_t)rf_utf8_decode(s + i, &cps[chars]);
    }
    start[chars] = (uint32_t)n;
    route_w[n] = 0.0;
    route_end[n] = (uint32_t)n;

    /* Right to left: route(k) from the routes of the characters after k. */
    for (size_t k = chars; k-- > 0;) {
        if (k >= PREFETCH_AHEAD) {
            size_t p = k - PREFETCH_AHEAD;
            int32_t c = cps[p];
            uint32_t first = c < 0x10000 ? d->root_child[c] : RF_JIEBA_NO_NODE;
            if (first != RF_JIEBA_NO_NODE)
                __builtin_prefetch(&d->nodes[rf_jieba_slot_of(rf_jieba_key(first, cps[p + 1]), d->mask)]);
        }
        bool found = false;
        double best = 0.0;
        uint32_t best_end = 0;
        uint32_t node = d->root;
        for (size_t m = k; m < chars; m++) {
            node = rf_jieba_dict_child(d, node, cps[m]);
            if (node == RF_JIEBA_NO_NODE)
                break;
            double w = d->nodes[node].weight;
            if (isnan(w))
                continue;
            uint32_t j = start[m + 1];
            double cand = w + route_w[j];
            if (!found || cand >= best) { /* ties: the later end wins */
                found = true;
                best = cand;
                best_end = j;
            }
        }
        if (!found) {
            best_end = start[k + 1];
            best = d->unknown_weight + route_w[best_end];
        }
        route_w[start[k]] = best;
        route_end[start[k]] = best_end;
    }

    /* Left to right along the route, merging one-character ASCII alnum words. */
    size_t left = SIZE_MAX;
    for (size_t x = 0; x < n;) {
        size_t y = route_end[x];
        if (y - x == 1 && is_ascii_alnum((unsigned char)s[x])) {
            if (left == SIZE_MAX)
                left = x;
        } else {
            rf_status st;
            if (left != SIZE_MAX) {
                if ((st = push_word(out, b + left, x - left, err)) != RF_OK)
                    return st;
                left = SIZE_MAX;
            }
            if ((st = push_word(out, b + x, y - x, err)) != RF_OK)
                return st;
        }
        x = y;
    }
    if (left != SIZE_MAX)
        return push_word(out, b + left, n - left, err);
    return RF_OK;
}

rf_status rf_jieba_cut(const rf_jieba_dict *d, const char *text, size_t len, rf_jieba_words *out,
                       rf_error *err)
{
    size_t i = 0;
    while (i < len) {
        int32_t cp;
        int clen = rf_utf8_decode(text + i, &cp);
        if (in_block(cp)) {
            size_t b = i;
            i += (size_t)clen;
            while (i < len) {
                clen = rf_utf8_decode(text + i, &cp);
                if (!in_block(cp))
                    break;
                i += (size_t)clen;
            }
            rf_status st = cut_block(d, text, b, i, out, err);
            if (st != RF_OK)
                return st;
            continue;
        }
        /* Outside blocks: one character per word, "\r\n" kept together. */
        if (cp == '\r' && i + 1 < len && text[i + 1] == '\n')
            clen = 2;
        rf_status st = push_word(out, i, (size_t)clen, err);
        if (st != RF_OK)
            return st;
        i += (size_t)clen;
    }
    return RF_OK;
}

void rf_jieba_words_release(rf_jieba_words *w)
{
    if (!w)
        return;
    free(w->words);
    free(w->route_w);
    free(w->route_end);
    free(w->char_start);
    free(w->char_cp);
    memset(w, 0, sizeof *w);
}
