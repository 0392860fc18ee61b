/*
 * cache.h — `roformer serve --cache-mb N`: finished per-input results kept
 * in memory, looked up by a key of bytes, least recently used out first.
 *
 * The cache knows nothing of models or jobs: a key and a value are bytes
 * (runner.c says what goes in them), and each entry belongs to an owner,
 * the served model that put it there, by its index. What it holds, keys,
 * values and the bookkeeping of each entry and of the hash table, stays
 * within the size it was created with. Thread-safe: one mutex.
 *
 *     buckets ─▶ entry ─▶ entry            (chains by hash)
 *     lru:  most recent ◀─▶ ... ◀─▶ least recent (evicted first)
 *
 * An owner's entries are dropped when its model is reloaded
 * (serve_cache_drop_owner), and from then on entries put for an older load
 * of it (a request that was running on the old weights) are refused.
 */
#ifndef RF_SERVE_CACHE_H
#define RF_SERVE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct serve_cache serve_cache;

/* One owner's counts, for /metrics. */
typedef struct {
    int64_t hits, misses, evictions;
    int64_t bytes; /* of its entries: keys, values and each entry's bookkeeping */
} serve_cache_stats;

/* A cache of at most max_bytes for owners 0..n_owners-1; NULL when out of
 * memory. */
serve_cache *serve_cache_create(size_t max_bytes, int n_owners);
void serve_cache_free(serve_cache *c); /* NULL: nothing */

/* Called on a hit with the value, under the cache's lock (copy it out;
 * do not call the cache). */
typedef void (*serve_cache_read_fn)(const void *value, size_t len, void *arg);

/* Looks key[0..key_len) up; on a hit calls read(value, len, arg), makes the
 * entry the most recent and returns true. Counts a hit or a miss for
 * `owner`. */
bool serve_cache_get(serve_cache *c, int owner, const void *key, size_t key_len,
                     serve_cache_read_fn read, void *arg);

/* The same lookup without counting it, for a caller that may look again:
 * it counts its hits once it knows (serve_cache_count_hits). */
bool serve_cache_find(serve_cache *c, const void *key, size_t key_len, serve_cache_read_fn read,
                      void *arg);
void serve_cache_count_hits(serve_cache *c, int owner, int64_t hits);

/* Puts a copy of key and value for `owner`, computed on that owner's load
 * `load`, evicting the least recently used entries to make room. Nothing
 * is put when the key is there already, when the entry alone would not
 * fit, or when `load` is older than the owner's latest drop. */
void serve_cache_put(serve_cache *c, int owner, int load, const void *key, size_t key_len,
                     const void *value, size_t value_len);

/* Drops every entry of `owner`: its model now serves load `load`. */
void serve_cache_drop_owner(serve_cache *c, int owner, int load);

void serve_cache_get_stats(serve_cache *c, int owner, serve_cache_stats *out);
/* Bytes held in all: every entry and the hash table. */
size_t serve_cache_bytes(serve_cache *c);

#endif
