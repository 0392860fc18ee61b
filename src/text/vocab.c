/*
 * vocab.c — the token string -> id hash table.
 */
#include "text/vocab.h"

#include "base/error.h"

#include <stdlib.h>
#include <string.h>

uint64_t rf_hash_bytes(const char *s, size_t len)
{
    /* 8 bytes per step, multiply-rotate mixing, then a final avalanche. */
    const uint64_t k = 0x9E3779B97F4A7C15ull;
    uint64_t h = (uint64_t)len * k;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = ((h << 5) | (h >> 59)) ^ w;
        h *= k;
    }
    if (i < len) {
        uint64_t w = 0;
        memcpy(&w, s + i, len - i);
        h = ((h << 5) | (h >> 59)) ^ w;
        h *= k;
    }
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ull;
    h ^= h >> 32;
    return h;
}

rf_status rf_vocab_init(rf_vocab *v, const char *const *str, const uint32_t *len, int32_t n,
                        rf_error *err)
{
    memset(v, 0, sizeof *v);
    if (n < 0)
        return rf_fail(err, RF_ERR_FORMAT, "vocab: negative size %d", n);
    uint64_t cap = 16;
    while (cap < (uint64_t)n * 2)
        cap *= 2;
    v->slots = malloc(cap * sizeof *v->slots);
    if (!v->slots)
        return rf_fail(err, RF_ERR_NOMEM, "vocab: out of memory for %d entries", n);
    memset(v->slots, 0xFF, cap * sizeof *v->slots); /* id -1 everywhere */
    size_t bytes = 0;
    for (int32_t id = 0; id < n; id++)
        bytes += len[id];
    if (bytes > UINT32_MAX) {
        rf_vocab_release(v);
        return rf_fail(err, RF_ERR_LIMIT, "vocab: %zu bytes of strings is too large", bytes);
    }
    v->arena = malloc(bytes + 1);
    if (!v->arena) {
        rf_vocab_release(v);
        return rf_fail(err, RF_ERR_NOMEM, "vocab: out of memory for %zu bytes", bytes);
    }
    v->mask = cap - 1;
    v->str = str;
    v->len = len;
    v->n = n;
    size_t off = 0;
    for (int32_t id = 0; id < n; id++) {
        if (len[id])
            memcpy(v->arena + off, str[id], len[id]);
        if (len[id] > v->max_len)
            v->max_len = len[id];
        uint64_t h = rf_hash_bytes(str[id], len[id]);
        uint32_t tag = (uint32_t)(h >> 32);
        for (uint64_t i = h & v->mask;; i = (i + 1) & v->mask) {
            rf_vocab_slot *s = &v->slots[i];
            if (s->id < 0) {
                *s = (rf_vocab_slot){tag, id, len[id], (uint32_t)off};
                break;
            }
            if (s->tag == tag && s->len == len[id] && !memcmp(v->arena + s->off, str[id], len[id])) {
                s->id = id; /* duplicate string: the later line wins */
                break;
            }
        }
        off += len[id];
    }
    return RF_OK;
}

void rf_vocab_release(rf_vocab *v)
{
    if (!v)
        return;
    free(v->slots);
    free(v->arena);
    memset(v, 0, sizeof *v);
}

/* a[0..len) == b[0..len) for the short strings of a vocab, without a
 * library call: overlapping word loads that stay inside both strings. */
static inline bool same_bytes(const char *a, const char *b, size_t len)
{
    uint64_t x, y, x2, y2;
    uint32_t u, w, u2, w2;
    if (len >= 8 && len <= 16) {
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        memcpy(&x2, a + len - 8, 8);
        memcpy(&y2, b + len - 8, 8);
        return ((x ^ y) | (x2 ^ y2)) == 0;
    }
    if (len >= 4 && len < 8) {
        memcpy(&u, a, 4);
        memcpy(&w, b, 4);
        memcpy(&u2, a + len - 4, 4);
        memcpy(&w2, b + len - 4, 4);
        return ((u ^ w) | (u2 ^ w2)) == 0;
    }
    if (len < 4) {
        for (size_t i = 0; i < len; i++)
            if (a[i] != b[i])
                return false;
        return true;
    }
    return memcmp(a, b, len) == 0;
}

int32_t rf_vocab_find(const rf_vocab *v, const char *s, size_t len)
{
    return rf_vocab_find_hashed(v, s, len, rf_hash_bytes(s, len));
}

int32_t rf_vocab_find_hashed(const rf_vocab *v, const char *s, size_t len, uint64_t h)
{
    uint32_t tag = (uint32_t)(h >> 32);
    for (uint64_t i = h & v->mask;; i = (i + 1) & v->mask) {
        const rf_vocab_slot *slot = &v->slots[i];
        if (slot->id < 0)
            return -1;
        if (slot->tag == tag && slot->len == len && same_bytes(v->arena + slot->off, s, len))
            return slot->id;
    }
}
