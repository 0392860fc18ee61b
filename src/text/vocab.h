/*
 * vocab.h — token string -> id lookup (HF load_vocab: one entry per line;
 * when a string occurs twice, the later id wins, as in a Python dict).
 *
 * Open addressing over a power-of-two table of (hash tag, id, length,
 * offset) slots; the strings are copied back to back into one arena, so a
 * lookup touches one slot and one string. `str`/`len` still point at the
 * caller's arrays (the model file) for id -> string, so the vocab must not
 * outlive them.
 */
#ifndef RF_VOCAB_H
#define RF_VOCAB_H

#include "roformer.h"

typedef struct {
    uint32_t tag; /* high 32 bits of the string's hash */
    int32_t id;   /* -1: empty slot */
    uint32_t len; /* string length */
    uint32_t off; /* string offset in the arena */
} rf_vocab_slot;

typedef struct {
    const char *const *str; /* [n] */
    const uint32_t *len;    /* [n] */
    int32_t n;
    size_t max_len;         /* longest entry, in bytes */
    rf_vocab_slot *slots;   /* [mask + 1] */
    char *arena;            /* every string, back to back */
    uint64_t mask;
} rf_vocab;

rf_status rf_vocab_init(rf_vocab *v, const char *const *str, const uint32_t *len, int32_t n,
                        rf_error *err);
void rf_vocab_release(rf_vocab *v);

/* The id of s[0..len), or -1 when it is not in the vocab. */
int32_t rf_vocab_find(const rf_vocab *v, const char *s, size_t len);

/* The hash the vocab uses (fast on short keys). */
uint64_t rf_hash_bytes(const char *s, size_t len);

/* rf_vocab_find with the hash already computed. Callers with many words
 * to look up hash them all first, then prefetch a few words ahead:
 * rf_vocab_prefetch_slot further ahead, rf_vocab_prefetch_string (which
 * reads the now cached slot) nearer, so both cache misses of a lookup
 * overlap with other work. */
int32_t rf_vocab_find_hashed(const rf_vocab *v, const char *s, size_t len, uint64_t hash);

static inline void rf_vocab_prefetch_slot(const rf_vocab *v, uint64_t hash)
{
    __builtin_prefetch(&v->slots[hash & v->mask]);
}

static inline void rf_vocab_prefetch_string(const rf_vocab *v, uint64_t hash)
{
    const rf_vocab_slot *slot = &v->slots[hash & v->mask];
    if (slot->id >= 0)
        __builtin_prefetch(v->arena + slot->off);
}

#endif
