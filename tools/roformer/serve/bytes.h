/*
 * bytes.h — a growing byte buffer and a reader over one: the cache's keys
 * and values (units.h) are built in one and read back with the other.
 */
#ifndef RF_SERVE_BYTES_H
#define RF_SERVE_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    unsigned char *p;
    size_t len, cap;
    bool failed;  /* out of memory: its contents are not to be used */
} serve_bytes;

void serve_bytes_free(serve_bytes *b);
/* Appends n bytes (nothing once it failed). */
void serve_bytes_put(serve_bytes *b, const void *p, size_t n);
void serve_bytes_put_i32(serve_bytes *b, int32_t v);

/* A reader over bytes that were written as they are read: no checks. */
typedef struct {
    const unsigned char *p, *end;
} serve_reader;

/* The next n bytes. */
const void *serve_reader_take(serve_reader *r, size_t n);
int32_t serve_reader_take_i32(serve_reader *r);

#endif
