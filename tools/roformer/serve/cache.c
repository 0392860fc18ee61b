/*
 * cache.c — a byte-keyed LRU cache under one mutex (see cache.h): a hash
 * table of chained entries, each entry one allocation holding its key then
 * its value, and a doubly linked list in order of use.
 *
 * Sizes are counted as the allocator hands them out: an entry costs its
 * header, key and value plus the allocator's own word, rounded up to its
 * 16-byte granule; the table costs its bucket array. The table doubles when
 * it holds two entries per bucket on average, if the doubled array fits.
 */
#include "serve/cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    struct entry *chain;      /* next in its bucket */
    struct entry *newer, *older;
    uint64_t hash;
    size_t key_len, value_len;
    size_t bytes;             /* what it costs, as counted */
    int owner;
    unsigned char data[];     /* key, then value */
} entry;

typedef struct {
    serve_cache_stats stats;
    int load;                 /* the load of the owner's latest drop */
} owner_state;

struct serve_cache {
    pthread_mutex_t lock;
    size_t max_bytes;
    size_t bytes;             /* entries and table */
    entry **buckets;          /* [n_buckets], a power of two */
    size_t n_buckets;
    size_t count;
    entry *newest, *oldest;
    owner_state *owners;      /* [n_owners] */
    int n_owners;
};

enum { FIRST_BUCKETS = 1024 };

/* What the allocator takes for `size` bytes: its 8-byte header, in 16-byte
 * granules (glibc's malloc on 64-bit). */
static size_t allocated(size_t size)
{
    return (size + 8 + 15) / 16 * 16;
}

/* FNV-1a, 64 bits. */
static uint64_t hash_bytes(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

serve_cache *serve_cache_create(size_t max_bytes, int n_owners)
{
    serve_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->owners = calloc((size_t)n_owners, sizeof *c->owners);
    c->buckets = calloc(FIRST_BUCKETS, sizeof *c->buckets);
    if (!c->owners || !c->buckets) {
        free(c->owners);
        free(c->buckets);
        free(c);
        return NULL;
    }
    c->max_bytes = max_bytes;
    c->n_buckets = FIRST_BUCKETS;
    c->bytes = allocated(FIRST_BUCKETS * sizeof *c->buckets);
    c->n_owners = n_owners;
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

void serve_cache_free(serve_cache *c)
{
    if (!c)
        return;
    for (entry *e = c->newest, *next; e; e = next) {
        next = e->older;
        free(e);
    }
    pthread_mutex_destroy(&c->lock);
    free(c->buckets);
    free(c->owners);
    free(c);
}

/* ==== The list of use and the table (lock held) ==== */

static void unlink_lru(serve_cache *c, entry *e)
{
    if (e->newer)
        e->newer->older = e->older;
    else
        c->newest = e->older;
    if (e->older)
        e->older->newer = e->newer;
    else
        c->oldest = e->newer;
    e->newer = e->older = NULL;
}

static void push_newest(serve_cache *c, entry *e)
{
    e->older = c->newest;
    e->newer = NULL;
    if (c->newest)
        c->newest->newer = e;
    c->newest = e;
    if (!c->oldest)
        c->oldest = e;
}

static entry **bucket_of(serve_cache *c, uint64_t hash)
{
    return &c->buckets[hash & (c->n_buckets - 1)];
}

static entry *find(serve_cache *c, uint64_t hash, const void *key, size_t key_len)
{
    for (entry *e = *bucket_of(c, hash); e; e = e->chain)
        if (e->hash == hash && e->key_len == key_len && !memcmp(e->data, key, key_len))
            return e;
    return NULL;
}

/* Takes e out of the table and the list and frees it. */
static void remove_entry(serve_cache *c, entry *e)
{
    entry **link = bucket_of(c, e->hash);
    while (*link != e)
        link = &(*link)->chain;
    *link = e->chain;
    unlink_lru(c, e);
    c->bytes -= e->bytes;
    c->owners[e->owner].stats.bytes -= (int64_t)e->bytes;
    c->count--;
    free(e);
}

/* Doubles the bucket array when it is crowded and the larger one fits
 * beside what is held; a crowded table only makes chains longer. */
static void maybe_grow(serve_cache *c)
{
    if (c->count < 2 * c->n_buckets)
        return;
    size_t n = 2 * c->n_buckets, old_bytes = allocated(c->n_buckets * sizeof *c->buckets);
    size_t new_bytes = allocated(n * sizeof *c->buckets);
    if (c->bytes - old_bytes + new_bytes > c->max_bytes)
        return;
    entry **buckets = calloc(n, sizeof *buckets);
    if (!buckets)
        return;
    for (size_t b = 0; b < c->n_buckets; b++)
        for (entry *e = c->buckets[b], *next; e; e = next) {
            next = e->chain;
            e->chain = buckets[e->hash & (n - 1)];
            buckets[e->hash & (n - 1)] = e;
        }
    free(c->buckets);
    c->buckets = buckets;
    c->n_buckets = n;
    c->bytes += new_bytes - old_bytes;
}

/* ==== The API ==== */

/* Looks key up with the lock held; a hit is read and made the newest. */
static entry *lookup(serve_cache *c, const void *key, size_t key_len, serve_cache_read_fn read,
                     void *arg)
{
    entry *e = find(c, hash_bytes(key, key_len), key, key_len);
    if (e) {
        read(e->data + e->key_len, e->value_len, arg);
        unlink_lru(c, e);
        push_newest(c, e);
    }
    return e;
}

bool serve_cache_get(serve_cache *c, int owner, const void *key, size_t key_len,
                     serve_cache_read_fn read, void *arg)
{
    pthread_mutex_lock(&c->lock);
    bool hit = lookup(c, key, key_len, read, arg) != NULL;
    if (hit)
        c->owners[owner].stats.hits++;
    else
        c->owners[owner].stats.misses++;
    pthread_mutex_unlock(&c->lock);
    return hit;
}

bool serve_cache_find(serve_cache *c, const void *key, size_t key_len, serve_cache_read_fn read,
                      void *arg)
{
    pthread_mutex_lock(&c->lock);
    bool hit = lookup(c, key, key_len, read, arg) != NULL;
    pthread_mutex_unlock(&c->lock);
    return hit;
}

void serve_cache_count_hits(serve_cache *c, int owner, int64_t hits)
{
    pthread_mutex_lock(&c->lock);
    c->owners[owner].stats.hits += hits;
    pthread_mutex_unlock(&c->lock);
}

void serve_cache_put(serve_cache *c, int owner, int load, const void *key, size_t key_len,
                     const void *value, size_t value_len)
{
    size_t bytes = allocated(sizeof(entry) + key_len + value_len);
    uint64_t hash = hash_bytes(key, key_len);
    pthread_mutex_lock(&c->lock);
    size_t table = allocated(c->n_buckets * sizeof *c->buckets);
    bool refused = load < c->owners[owner].load || table + bytes > c->max_bytes ||
                   find(c, hash, key, key_len);
    entry *e = refused ? NULL : malloc(sizeof(entry) + key_len + value_len);
    if (e) {
        while (c->oldest && c->bytes + bytes > c->max_bytes) {
            c->owners[c->oldest->owner].stats.evictions++;
            remove_entry(c, c->oldest);
        }
        *e = (entry){.hash = hash, .key_len = key_len, .value_len = value_len, .bytes = bytes,
                     .owner = owner};
        memcpy(e->data, key, key_len);
        memcpy(e->data + key_len, value, value_len);
        entry **bucket = bucket_of(c, hash);
        e->chain = *bucket;
        *bucket = e;
        push_newest(c, e);
        c->bytes += bytes;
        c->owners[owner].stats.bytes += (int64_t)bytes;
        c->count++;
        maybe_grow(c);
    }
    pthread_mutex_unlock(&c->lock);
}

void serve_cache_drop_owner(serve_cache *c, int owner, int load)
{
    pthread_mutex_lock(&c->lock);
    for (entry *e = c->newest, *next; e; e = next) {
        next = e->older;
        if (e->owner == owner)
            remove_entry(c, e);
    }
    c->owners[owner].load = load;
    pthread_mutex_unlock(&c->lock);
}

void serve_cache_get_stats(serve_cache *c, int owner, serve_cache_stats *out)
{
    pthread_mutex_lock(&c->lock);
    *out = c->owners[owner].stats;
    pthread_mutex_unlock(&c->lock);
}

size_t serve_cache_bytes(serve_cache *c)
{
    pthread_mutex_lock(&c->lock);
    size_t n = c->bytes;
    pthread_mutex_unlock(&c->lock);
    return n;
}
