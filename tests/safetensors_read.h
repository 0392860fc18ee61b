/*
 * safetensors_read.h — a checkpoint read independently of the library, for
 * the tests that compare loaded weights with it: the whole file, its JSON
 * header (cJSON) and a pointer to the tensor data after it. The format: an
 * 8-byte little-endian header length, the header, then the data.
 */
#ifndef RF_TEST_SAFETENSORS_READ_H
#define RF_TEST_SAFETENSORS_READ_H

#include "check.h"

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *bytes;
    size_t size;
    cJSON *header;
    const uint8_t *data; /* where the header's data_offsets count from */
} st_file;

/* False (with whatever was read kept for st_close) when the file is
 * missing, shorter than its header or the header is not JSON. */
static inline bool st_open(const char *path, st_file *f)
{
    memset(f, 0, sizeof *f);
    f->bytes = check_read_file(path, &f->size);
    if (!f->bytes || f->size < 8)
        return false;
    uint64_t n = 0;
    for (int i = 0; i < 8; i++)
        n |= (uint64_t)(uint8_t)f->bytes[i] << (8 * i);
    if (n > f->size - 8)
        return false;
    f->header = cJSON_ParseWithLength(f->bytes + 8, n);
    f->data = (const uint8_t *)f->bytes + 8 + n;
    return f->header != NULL;
}

static inline void st_close(st_file *f)
{
    cJSON_Delete(f->header);
    free(f->bytes);
}

#endif
