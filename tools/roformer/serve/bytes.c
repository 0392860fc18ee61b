/*
 * bytes.c — the growing byte buffer and its reader (see bytes.h).
 */
#include "serve/bytes.h"

#include <stdlib.h>
#include <string.h>

void serve_bytes_free(serve_bytes *b)
{
    free(b->p);
    *b = (serve_bytes){0};
}

void serve_bytes_put(serve_bytes *b, const void *p, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *grown = realloc(b->p, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->p = grown;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

void serve_bytes_put_i32(serve_bytes *b, int32_t v)
{
    serve_bytes_put(b, &v, sizeof v);
}

const void *serve_reader_take(serve_reader *r, size_t n)
{
    const unsigned char *at = r->p;
    r->p += n;
    return at;
}

int32_t serve_reader_take_i32(serve_reader *r)
{
    int32_t v;
    memcpy(&v, serve_reader_take(r, sizeof v), sizeof v);
    return v;
}
