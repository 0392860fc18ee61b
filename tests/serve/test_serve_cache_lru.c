/*
 * test_serve_cache_lru.c — the server's result cache (tools/roformer/serve/
 * cache.c) on its own: values come back byte for byte, hits and misses are
 * counted per owner, what it holds never passes its size, the least
 * recently used entry leaves first (a lookup renews an entry), an entry
 * larger than the cache is refused, dropping an owner frees its entries and
 * refuses what an older load puts afterwards, and four threads at once
 * leave it consistent.
 */
#include "../check.h"

#include "serve/cache.h"

#include <pthread.h>

enum { MIB = 1 << 20 };

typedef struct {
    char buf[64 * 1024];
    size_t len;
} copied;

static void copy_out(const void *value, size_t len, void *arg)
{
    copied *c = arg;
    c->len = len < sizeof c->buf ? len : sizeof c->buf;
    memcpy(c->buf, value, c->len);
}

static bool has(serve_cache *c, const char *key)
{
    copied out;
    return serve_cache_find(c, key, strlen(key), copy_out, &out);
}

static void put_value(serve_cache *c, int owner, int load, const char *key, size_t size)
{
    static char value[64 * 1024];
    memset(value, key[0], size);
    serve_cache_put(c, owner, load, key, strlen(key), value, size);
}

static void test_values_and_counts(void)
{
    serve_cache *c = serve_cache_create(MIB, 2);
    const float v[3] = {1.0f, -0.0f, 3.5e-38f};
    serve_cache_put(c, 1, 0, "key", 3, v, sizeof v);
    copied out = {.len = 0};
    CHECK(serve_cache_get(c, 1, "key", 3, copy_out, &out) && out.len == sizeof v &&
              !memcmp(out.buf, v, sizeof v),
          "a hit gives back the value's bytes");
    CHECK(!serve_cache_get(c, 1, "kez", 3, copy_out, &out), "another key misses");
    CHECK(!serve_cache_get(c, 1, "ke", 2, copy_out, &out), "a prefix of a key misses");
    serve_cache_stats s0, s1;
    serve_cache_get_stats(c, 0, &s0);
    serve_cache_get_stats(c, 1, &s1);
    CHECK(s1.hits == 1 && s1.misses == 2 && s0.hits == 0 && s0.misses == 0,
          "counted for the owner that asked: %lld hits, %lld misses", (long long)s1.hits,
          (long long)s1.misses);
    CHECK(s1.bytes >= (int64_t)(3 + sizeof v) && s0.bytes == 0,
          "bytes counted for the owner that put it, key and value at least (%lld)",
          (long long)s1.bytes);
    serve_cache_count_hits(c, 0, 5);
    serve_cache_get_stats(c, 0, &s0);
    CHECK(s0.hits == 5, "hits counted afterwards: %lld", (long long)s0.hits);
    put_value(c, 0, 0, "big", 1);
    size_t before = serve_cache_bytes(c);
    char *value = calloc(2 * MIB, 1);
    serve_cache_put(c, 0, 0, "huge", 4, value, 2 * MIB);
    free(value);
    CHECK(!has(c, "huge") && serve_cache_bytes(c) == before && has(c, "big") && has(c, "key"),
          "an entry larger than the cache is refused and evicts nothing");
    serve_cache_free(c);
}

static void test_lru(void)
{
    serve_cache *c = serve_cache_create(MIB, 1);
    char key[32];
    for (int i = 0; i < 40; i++) { /* 40 x 20 kB: all fit */
        snprintf(key, sizeof key, "k%d", i);
        put_value(c, 0, 0, key, 20000);
    }
    CHECK(has(c, "k0") && has(c, "k39"), "40 entries of 20 kB fit in 1 MiB");
    /* k0 was just looked up: k1 is now the least recently used */
    size_t most = 0;
    serve_cache_stats s;
    for (int i = 40; i < 60; i++) {
        snprintf(key, sizeof key, "k%d", i);
        put_value(c, 0, 0, key, 20000);
        if (serve_cache_bytes(c) > most)
            most = serve_cache_bytes(c);
    }
    serve_cache_get_stats(c, 0, &s);
    CHECK(most <= MIB && s.bytes <= MIB, "never over 1 MiB: at most %zu held", most);
    CHECK(s.evictions > 0 && !has(c, "k1") && has(c, "k0") && has(c, "k59"),
          "%lld evicted: k1 first (least recently used), k0 kept (looked up), k59 in",
          (long long)s.evictions);
    serve_cache_free(c);
}

static void test_drop(void)
{
    serve_cache *c = serve_cache_create(MIB, 2);
    put_value(c, 0, 1, "a0", 100);
    put_value(c, 1, 1, "b0", 100);
    serve_cache_drop_owner(c, 0, 2);
    serve_cache_stats s0, s1;
    serve_cache_get_stats(c, 0, &s0);
    serve_cache_get_stats(c, 1, &s1);
    CHECK(!has(c, "a0") && has(c, "b0") && s0.bytes == 0 && s1.bytes > 0,
          "dropping owner 0 frees its entries only");
    put_value(c, 0, 1, "a1", 100);
    CHECK(!has(c, "a1"), "a put computed on the load before the drop is refused");
    put_value(c, 0, 2, "a2", 100);
    CHECK(has(c, "a2"), "a put computed on the new load is kept");
    serve_cache_free(c);
}

static void *hammer(void *arg)
{
    serve_cache *c = arg;
    char key[32];
    copied out;
    for (int i = 0; i < 20000; i++) {
        int k = (i * 7919) % 3000;
        snprintf(key, sizeof key, "t%d", k);
        if (!serve_cache_get(c, k % 2, key, strlen(key), copy_out, &out))
            put_value(c, k % 2, 0, key, 100 + (size_t)(k % 7) * 300);
        else if (out.len != 100 + (size_t)(k % 7) * 300 || out.buf[0] != 't')
            return (void *)1;
    }
    return NULL;
}

static void test_threads(void)
{
    serve_cache *c = serve_cache_create(MIB / 4, 2);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, hammer, c);
    bool right = true;
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        right = right && r == NULL;
    }
    serve_cache_stats s0, s1;
    serve_cache_get_stats(c, 0, &s0);
    serve_cache_get_stats(c, 1, &s1);
    CHECK(right, "4 threads: every hit gave back the value put under its key");
    CHECK(s0.hits + s0.misses + s1.hits + s1.misses == 80000,
          "4 threads: every lookup counted once (%lld)",
          (long long)(s0.hits + s0.misses + s1.hits + s1.misses));
    CHECK(s0.evictions + s1.evictions > 0 && serve_cache_bytes(c) <= MIB / 4 &&
              (size_t)(s0.bytes + s1.bytes) <= serve_cache_bytes(c),
          "4 threads: within 256 kB (%zu), the owners' bytes within it",
          serve_cache_bytes(c));
    serve_cache_free(c);
}

int main(void)
{
    test_values_and_counts();
    test_lru();
    test_drop();
    test_threads();
    return check_done();
}
