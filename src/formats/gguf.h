/*
 * gguf.h — reading and writing GGUF v3 files (ggml's docs/gguf.md).
 *
 * File layout (all integers little-endian):
 *
 *   OFFSET  SIZE  DESCRIPTION
 *   0       4     magic "GGUF"
 *   4       4     version (3)
 *   8       8     tensor count
 *   16      8     key/value count
 *   24      ...   key/values: string key, u32 type, value
 *   ...     ...   tensor infos: string name, u32 n_dims, u64 ne[n_dims],
 *                 u32 ggml type, u64 offset (relative to the data section)
 *   ...     pad   zeros up to general.alignment (default 32)
 *   ...     ...   tensor data, each tensor at a multiple of the alignment
 *
 * A string is a u64 byte length and that many bytes (no NUL). An array is
 * a u32 element type, a u64 count and the elements.
 *
 * The reader works on a (pointer, size) buffer, so it serves mmapped files,
 * in-memory conversions and fuzzing alike. Every length, count and offset is
 * checked against the buffer before use; the parsed structure points into
 * the buffer (which must outlive it). Only the tensor types this project
 * stores are accepted: F32, F16, BF16, I8 (RF_DTYPE_Q8).
 */
#ifndef RF_GGUF_H
#define RF_GGUF_H

#include "roformer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RF_GGUF_MAGIC "GGUF"
#define RF_GGUF_VERSION 3
#define RF_GGUF_ALIGNMENT 32
#define RF_GGUF_MAX_DIMS 4
#define RF_GGUF_MAX_TENSORS 65536   /* far above any RoFormer (~16 per layer) */
#define RF_GGUF_MAX_KV 65536
#define RF_GGUF_MAX_KEY 65535       /* the spec's limit on key and tensor names */

/* Value types of metadata (gguf_type in the spec). */
typedef enum {
    RF_GGUF_UINT8 = 0,
    RF_GGUF_INT8 = 1,
    RF_GGUF_UINT16 = 2,
    RF_GGUF_INT16 = 3,
    RF_GGUF_UINT32 = 4,
    RF_GGUF_INT32 = 5,
    RF_GGUF_FLOAT32 = 6,
    RF_GGUF_BOOL = 7,
    RF_GGUF_STRING = 8,
    RF_GGUF_ARRAY = 9,
    RF_GGUF_UINT64 = 10,
    RF_GGUF_INT64 = 11,
    RF_GGUF_FLOAT64 = 12,
} rf_gguf_type;

/* A string inside the buffer: not NUL-terminated. */
typedef struct {
    const char *ptr;
    uint64_t len;
} rf_gguf_str;

typedef struct {
    rf_gguf_str key;
    rf_gguf_type type;
    union {
        uint64_t u;  /* UINT8..UINT64 and BOOL, zero-extended */
        int64_t i;   /* INT8..INT64, sign-extended */
        double f;    /* FLOAT32, FLOAT64 */
        rf_gguf_str str;
    } v;
    /* ARRAY: element type, count and the first element's bytes. For string
     * arrays the elements are (u64 len, bytes) records, validated at parse
     * time; read them with rf_gguf_array_strings. */
    rf_gguf_type arr_type;
    uint64_t arr_n;
    const uint8_t *arr_data;
} rf_gguf_kv;

typedef struct {
    rf_gguf_str name;
    uint32_t n_dims;
    uint64_t ne[RF_GGUF_MAX_DIMS]; /* ggml order: ne[0] is the innermost (contiguous) dim; unused = 1 */
    rf_dtype type;
    uint64_t offset;               /* from the start of the data section */
    const uint8_t *data;
    uint64_t nbytes;
} rf_gguf_tensor;

typedef struct {
    uint32_t version;
    uint32_t alignment;
    uint64_t n_kv;
    rf_gguf_kv *kv;
    uint64_t n_tensors;
    rf_gguf_tensor *tensors;
    uint64_t data_offset; /* start of the data section in the buffer */
    uint32_t *tensor_order; /* tensor indices sorted by name (lookups) */
} rf_gguf;

/* Parses a GGUF image. `what` names the source in error messages (a path).
 * The result points into `data`. */
rf_status rf_gguf_parse(const void *data, size_t size, const char *what, rf_gguf **out,
                        rf_error *err);
void rf_gguf_free(rf_gguf *g);

const rf_gguf_kv *rf_gguf_find_kv(const rf_gguf *g, const char *key);
const rf_gguf_tensor *rf_gguf_find_tensor(const rf_gguf *g, const char *name);
/* Fills ptrs[i], lens[i] for each element of a string array (n = kv->arr_n). */
void rf_gguf_array_strings(const rf_gguf_kv *kv, const char **ptrs, uint32_t *lens);
/* Reads element i of a UINT32 array. */
uint32_t rf_gguf_array_u32(const rf_gguf_kv *kv, uint64_t i);

const char *rf_gguf_type_name(rf_gguf_type t);
/* Bytes per element of a tensor type; 0 when not one this project stores. */
size_t rf_dtype_size(rf_dtype t);

/* ==== Writer ====
 *
 * Metadata and tensor infos are serialized as they are added, in the order
 * they are added, so the same calls always give the same bytes. The writer
 * takes ownership of each tensor's data (malloc'ed). */
typedef struct rf_gguf_writer rf_gguf_writer;

rf_gguf_writer *rf_gguf_writer_new(void);
void rf_gguf_writer_free(rf_gguf_writer *w);

/* Each returns RF_OK or RF_ERR_NOMEM; errors are sticky and reported again
 * by rf_gguf_writer_status, so a sequence of calls can be checked once. */
rf_status rf_gguf_set_str(rf_gguf_writer *w, const char *key, const char *value);
rf_status rf_gguf_set_u32(rf_gguf_writer *w, const char *key, uint32_t value);
rf_status rf_gguf_set_f32(rf_gguf_writer *w, const char *key, float value);
rf_status rf_gguf_set_bool(rf_gguf_writer *w, const char *key, bool value);
rf_status rf_gguf_set_arr_str(rf_gguf_writer *w, const char *key, const char *const *strs,
                              const uint32_t *lens, uint64_t n);
rf_status rf_gguf_set_arr_u32(rf_gguf_writer *w, const char *key, const uint32_t *values,
                              uint64_t n);
/* `ne` in ggml order. `data` (nbytes = product(ne) * rf_dtype_size(type))
 * is owned by the writer from here on, even on failure. */
rf_status rf_gguf_add_tensor(rf_gguf_writer *w, const char *name, rf_dtype type, uint32_t n_dims,
                             const uint64_t *ne, void *data);
rf_status rf_gguf_writer_status(const rf_gguf_writer *w);

/* The whole file in one buffer (aligned to 64 bytes; free() it). */
rf_status rf_gguf_write_buffer(const rf_gguf_writer *w, void **out, size_t *size, rf_error *err);
/* Writes `path` through a temporary file renamed into place, so a failed
 * write never leaves a partial model behind. */
rf_status rf_gguf_write_file(const rf_gguf_writer *w, const char *path, rf_error *err);

#endif
