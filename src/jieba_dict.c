/*
 * jieba_dict.c — building the prefix dictionary (jieba-rs 0.10.3
 * Jieba::load_dict semantics: duplicates keep the last frequency, total is
 * the sum over distinct words).
 */
#include "jieba_dict.h"

#include "error.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

rf_status rf_jieba_dict_init(rf_jieba_dict *d, const char *const *words, const uint32_t *len,
                             const uint32_t *freq, int32_t n, rf_error *err)
{
    memset(d, 0, sizeof *d);
    if (n < 0)
        return rf_fail(err, RF_ERR_FORMAT, "jieba dictionary: negative size %d", n);
    /* Nodes <= total code points; keep the load factor under 1/2. */
    uint64_t cps = 0;
    for (int32_t i = 0; i < n; i++)
        cps += len[i];
    uint64_t cap = 1024;
    while (cap < cps * 2 / 3 + 16) /* CJK words: about 3 bytes per code point */
        cap *= 2;
    for (;;) {
        if (cap > ((uint64_t)1 << 31))
            return rf_fail(err, RF_ERR_LIMIT, "jieba dictionary: too large (%d words)", n);
        rf_status st = RF_OK;
        d->nodes = calloc(cap, sizeof *d->nodes);
        if (!d->nodes)
            return rf_fail(err, RF_ERR_NOMEM, "jieba dictionary: out of memory (%llu slots)",
                           (unsigned long long)cap);
        d->mask = cap - 1;
        d->root = (uint32_t)cap;
        uint64_t used = 0;
        bool full = false;
        /* Pass 1: insert every word's path; word nodes hold the frequency. */
        for (int32_t w = 0; w < n && !full; w++) {
            size_t bad;
            if (!rf_utf8_validate(words[w], len[w], &bad)) {
                st = rf_fail(err, RF_ERR_FORMAT,
                             "jieba dictionary: entry %d is not valid UTF-8 (byte %zu)", w, bad);
                break;
            }
            if (len[w] == 0)
                continue;
            uint32_t node = d->root;
            for (uint32_t at = 0; at < len[w];) {
                int32_t cp;
                at += (uint32_t)rf_utf8_decode(words[w] + at, &cp);
                uint64_t key = ((uint64_t)node + 1) << 21 | (uint64_t)cp;
                uint64_t i = rf_jieba_slot_of(key, d->mask);
                while (d->nodes[i].key && d->nodes[i].key != key)
                    i = (i + 1) & d->mask;
                if (!d->nodes[i].key) {
                    if (++used * 4 > cap * 3) { /* over 3/4 full: grow and start again */
                        full = true;
                        break;
                    }
                    d->nodes[i].key = key;
                    d->nodes[i].weight = NAN;
                }
                node = (uint32_t)i;
            }
            if (!full)
                d->nodes[node].weight = (double)freq[w];
        }
        if (st != RF_OK) {
            rf_jieba_dict_release(d);
            return st;
        }
        if (!full)
            break;
        free(d->nodes);
        cap *= 2;
    }
    /* Pass 2: total over distinct words, then frequencies become weights. */
    uint64_t total = 0;
    int32_t distinct = 0;
    for (uint64_t i = 0; i <= d->mask; i++)
        if (d->nodes[i].key && !isnan(d->nodes[i].weight)) {
            total += (uint64_t)d->nodes[i].weight;
            distinct++;
        }
    double log_total = log((double)total);
    for (uint64_t i = 0; i <= d->mask; i++)
        if (d->nodes[i].key && !isnan(d->nodes[i].weight))
            d->nodes[i].weight = log(d->nodes[i].weight) - log_total;
    d->unknown_weight = log(1.0) - log_total;
    d->total = total;
    d->n_words = distinct;
    return RF_OK;
}

void rf_jieba_dict_release(rf_jieba_dict *d)
{
    if (!d)
        return;
    free(d->nodes);
    memset(d, 0, sizeof *d);
}
