/*
 * jieba_dict.c — building the prefix dictionary (jieba-rs 0.10.3
 * Jieba::load_dict semantics: duplicates keep the last frequency, total is
 * the sum over distinct words).
 *
 * The build is bound by cache misses on a table of several MB, so words
 * are inserted LANES at a time: each round first computes and prefetches
 * the slot of every lane's next character, then does the probes.
 */
#include "text/jieba_dict.h"

#include "base/error.h"
#include "text/utf8.h"
#include "base/zeroed_pages.h"

#include <stdlib.h>
#include <string.h>

#define LANES 16
#define SMALL_FREQ 4096 /* ln() of frequencies below this comes from a table */
#define MAX_SLOTS ((uint64_t)1 << 31) /* node ids are uint32_t, the root one above */

typedef struct {
    int32_t word; /* -1: idle */
    uint32_t at;  /* byte offset of the next character */
    uint32_t node;
    uint64_t key, slot;
} lane;

/* Slots of the table for up to `nodes` nodes: at most half full (about
 * 1/4 for dict.txt: 500k nodes in 2M slots, 32 MB): most lookups while
 * segmenting are for words that do not exist, and in a sparse table they
 * end at the first or second slot. */
static uint64_t table_slots(uint64_t nodes)
{
    uint64_t cap = 1024;
    while (cap < nodes * 2 && cap <= MAX_SLOTS)
        cap *= 2;
    return cap;
}

/* Inserts the edge `key` starting the probe at `slot`; returns the node.
 * The table always has free slots: it is sized for twice as many nodes as
 * the words have characters. */
static uint32_t insert(rf_jieba_dict *d, uint64_t key, uint64_t slot)
{
    while (d->nodes[slot].key && d->nodes[slot].key != key)
        slot = (slot + 1) & d->mask;
    if (!d->nodes[slot].key) {
        d->nodes[slot].key = key;
        d->nodes[slot].weight = NAN;
    }
    return (uint32_t)slot;
}

/* Pass 1: every word's path. Distinct words are listed in order of first
 * appearance: list_node[i] is the node, list_word[i] the last entry that
 * spells it; a word node's weight holds its list position until pass 2. */
static void insert_words(rf_jieba_dict *d, const char *const *words, const uint32_t *len, int32_t n,
                         uint32_t *list_node, int32_t *list_word, int32_t *n_list)
{
    lane lanes[LANES];
    int32_t next = 0;
    int active = 0;
    for (int l = 0; l < LANES; l++) {
        while (next < n && len[next] == 0)
            next++;
        lanes[l] = (lane){.word = next < n ? next++ : -1, .node = d->root};
        active += lanes[l].word >= 0;
    }
    while (active > 0) {
        for (int l = 0; l < LANES; l++) {
            lane *ln = &lanes[l];
            if (ln->word < 0)
                continue;
            int32_t cp;
            rf_utf8_decode(words[ln->word] + ln->at, &cp);
            ln->key = rf_jieba_key(ln->node, cp);
            ln->slot = rf_jieba_slot_of(ln->key, d->mask);
            __builtin_prefetch(&d->nodes[ln->slot], 1);
        }
        for (int l = 0; l < LANES; l++) {
            lane *ln = &lanes[l];
            if (ln->word < 0)
                continue;
            const char *w = words[ln->word];
            int32_t cp;
            ln->at += (uint32_t)rf_utf8_decode(w + ln->at, &cp);
            uint32_t node = insert(d, ln->key, ln->slot);
            if (ln->node == d->root && cp < 0x10000)
                d->root_child[cp] = node;
            ln->node = node;
            if (ln->at < len[ln->word])
                continue;
            double *pos = &d->nodes[node].weight;
            if (isnan(*pos)) {
                *pos = *n_list;
                list_node[*n_list] = node;
                list_word[(*n_list)++] = ln->word;
            } else if (list_word[(int32_t)*pos] < ln->word) {
                list_word[(int32_t)*pos] = ln->word; /* a duplicate: the last one counts */
            }
            while (next < n && len[next] == 0)
                next++;
            *ln = (lane){.word = next < n ? next++ : -1, .node = d->root};
            active -= ln->word < 0;
        }
    }
}

/* Code points of the n words: an upper bound on the nodes. */
static uint64_t count_code_points(const char *const *words, const uint32_t *len, int32_t n)
{
    uint64_t cps = 0;
    for (int32_t w = 0; w < n; w++)
        for (uint32_t i = 0; i < len[w]; i++)
            cps += ((unsigned char)words[w][i] & 0xC0) != 0x80;
    return cps;
}

rf_status rf_jieba_dict_check(const char *const *words, const uint32_t *len, int32_t n,
                              rf_error *err)
{
    if (n < 0)
        return rf_fail(err, RF_ERR_FORMAT, "jieba dictionary: negative size %d", n);
    for (int32_t w = 0; w < n; w++) {
        size_t bad;
        if (!rf_utf8_validate(words[w], len[w], &bad))
            return rf_fail(err, RF_ERR_FORMAT, "jieba dictionary: entry %d is not valid UTF-8 (byte %zu)",
                           w, bad);
    }
    if (table_slots(count_code_points(words, len, n)) > MAX_SLOTS)
        return rf_fail(err, RF_ERR_LIMIT, "jieba dictionary: too large (%d words)", n);
    return RF_OK;
}

rf_status rf_jieba_dict_init(rf_jieba_dict *d, const char *const *words, const uint32_t *len,
                             const uint32_t *freq, int32_t n, rf_error *err)
{
    rf_status st = rf_jieba_dict_check(words, len, n, err);
    if (st != RF_OK) {
        memset(d, 0, sizeof *d);
        return st;
    }
    return rf_jieba_dict_build(d, words, len, freq, n, err);
}

rf_status rf_jieba_dict_build(rf_jieba_dict *d, const char *const *words, const uint32_t *len,
                              const uint32_t *freq, int32_t n, rf_error *err)
{
    memset(d, 0, sizeof *d);
    uint64_t cps = count_code_points(words, len, n);
    d->root_child = malloc(0x10000 * sizeof *d->root_child);
    uint32_t *list_node = malloc(((size_t)n + 1) * sizeof *list_node);
    int32_t *list_word = malloc(((size_t)n + 1) * sizeof *list_word);
    int32_t n_list = 0;
    if (!d->root_child || !list_node || !list_word) {
        free(list_node);
        free(list_word);
        rf_jieba_dict_release(d);
        return rf_fail(err, RF_ERR_NOMEM, "jieba dictionary: out of memory");
    }
    uint64_t cap = table_slots(cps);
    /* zeroed by the kernel, on 2 MB pages where allowed: every probe is a
       random access, so huge pages save a TLB miss on each */
    d->nodes = rf_zeroed_pages((size_t)cap * sizeof(rf_jieba_node));
    if (!d->nodes) {
        free(list_node);
        free(list_word);
        rf_jieba_dict_release(d);
        return rf_fail(err, RF_ERR_NOMEM, "jieba dictionary: out of memory (%llu slots)",
                       (unsigned long long)cap);
    }
    d->mask = cap - 1;
    d->root = (uint32_t)cap;
    memset(d->root_child, 0xFF, 0x10000 * sizeof *d->root_child);
    insert_words(d, words, len, n, list_node, list_word, &n_list);

    /* Pass 2: total over distinct words, then list positions become weights. */
    uint64_t total = 0;
    for (int32_t i = 0; i < n_list; i++)
        total += freq[list_word[i]];
    double log_total = log((double)total);
    double small_log[SMALL_FREQ];
    for (int f = 0; f < SMALL_FREQ; f++)
        small_log[f] = log((double)f);
    for (int32_t i = 0; i < n_list; i++) {
        if (i + 16 < n_list)
            __builtin_prefetch(&d->nodes[list_node[i + 16]], 1);
        uint32_t f = freq[list_word[i]];
        d->nodes[list_node[i]].weight = (f < SMALL_FREQ ? small_log[f] : log((double)f)) - log_total;
    }
    d->unknown_weight = log(1.0) - log_total;
    d->total = total;
    d->n_words = n_list;
    free(list_node);
    free(list_word);
    return RF_OK;
}

void rf_jieba_dict_release(rf_jieba_dict *d)
{
    if (!d)
        return;
    rf_zeroed_pages_free(d->nodes, (size_t)(d->mask + 1) * sizeof *d->nodes);
    free(d->root_child);
    memset(d, 0, sizeof *d);
}
