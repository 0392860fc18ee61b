/*
 * gguf.c — GGUF v3 reader (bounds-checked, over a buffer) and writer.
 * Format: ggml's docs/gguf.md; layout summary in gguf.h.
 */
#include "formats/gguf.h"

#include "base/error.h"
#include "base/sorted_find.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ==== Types ==== */

const char *rf_gguf_type_name(rf_gguf_type t)
{
    switch (t) {
    case RF_GGUF_UINT8: return "uint8";
    case RF_GGUF_INT8: return "int8";
    case RF_GGUF_UINT16: return "uint16";
    case RF_GGUF_INT16: return "int16";
    case RF_GGUF_UINT32: return "uint32";
    case RF_GGUF_INT32: return "int32";
    case RF_GGUF_FLOAT32: return "float32";
    case RF_GGUF_BOOL: return "bool";
    case RF_GGUF_STRING: return "string";
    case RF_GGUF_ARRAY: return "array";
    case RF_GGUF_UINT64: return "uint64";
    case RF_GGUF_INT64: return "int64";
    case RF_GGUF_FLOAT64: return "float64";
    }
    return "unknown";
}

const char *rf_dtype_name(rf_dtype t)
{
    switch (t) {
    case RF_DTYPE_F32: return "f32";
    case RF_DTYPE_F16: return "f16";
    case RF_DTYPE_BF16: return "bf16";
    case RF_DTYPE_Q8: return "q8";
    }
    return "unknown";
}

size_t rf_dtype_size(rf_dtype t)
{
    switch (t) {
    case RF_DTYPE_F32: return 4;
    case RF_DTYPE_F16: return 2;
    case RF_DTYPE_BF16: return 2;
    case RF_DTYPE_Q8: return 1;
    }
    return 0;
}

/* Size of one scalar value of type t; 0 for STRING, ARRAY and unknown types. */
static size_t scalar_size(uint32_t t)
{
    switch (t) {
    case RF_GGUF_UINT8: case RF_GGUF_INT8: case RF_GGUF_BOOL: return 1;
    case RF_GGUF_UINT16: case RF_GGUF_INT16: return 2;
    case RF_GGUF_UINT32: case RF_GGUF_INT32: case RF_GGUF_FLOAT32: return 4;
    case RF_GGUF_UINT64: case RF_GGUF_INT64: case RF_GGUF_FLOAT64: return 8;
    }
    return 0;
}

/* ==== Reader ==== */

/* A cursor over the buffer; every read checks that the bytes are there. */
typedef struct {
    const uint8_t *base;
    size_t size;
    size_t pos;
    const char *what;
    rf_error *err;
} reader;

static uint64_t load_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static rf_status truncated(reader *r, const char *at)
{
    return rf_fail(r->err, RF_ERR_FORMAT, "%s: truncated file (%s at byte %zu of %zu)", r->what,
                   at, r->pos, r->size);
}

static rf_status read_uint(reader *r, size_t n, uint64_t *v, const char *at)
{
    *v = 0;
    if (r->size - r->pos < n)
        return truncated(r, at);
    *v = load_le(r->base + r->pos, n);
    r->pos += n;
    return RF_OK;
}

static rf_status read_str(reader *r, rf_gguf_str *s, uint64_t max_len, const char *at)
{
    uint64_t len;
    rf_status st = read_uint(r, 8, &len, at);
    if (st)
        return st;
    if (r->size - r->pos < len)
        return truncated(r, at);
    if (len > max_len)
        return rf_fail(r->err, RF_ERR_LIMIT, "%s: %s of %llu bytes at byte %zu exceeds the limit of %llu",
                       r->what, at, (unsigned long long)len, r->pos - 8, (unsigned long long)max_len);
    s->ptr = (const char *)r->base + r->pos;
    s->len = len;
    r->pos += len;
    return RF_OK;
}

static bool str_eq(rf_gguf_str s, const char *c)
{
    size_t n = strlen(c);
    return s.len == n && memcmp(s.ptr, c, n) == 0;
}

/* Reads one value of type t (scalar or string) into kv->v. */
static rf_status read_value(reader *r, uint32_t t, rf_gguf_kv *kv)
{
    if (t == RF_GGUF_STRING)
        return read_str(r, &kv->v.str, r->size, "string value");
    size_t n = scalar_size(t);
    uint64_t raw;
    rf_status st = read_uint(r, n, &raw, "value");
    if (st)
        return st;
    switch (t) {
    case RF_GGUF_INT8: kv->v.i = (int8_t)raw; break;
    case RF_GGUF_INT16: kv->v.i = (int16_t)raw; break;
    case RF_GGUF_INT32: kv->v.i = (int32_t)raw; break;
    case RF_GGUF_INT64: kv->v.i = (int64_t)raw; break;
    case RF_GGUF_FLOAT32: {
        uint32_t b = (uint32_t)raw;
        float f;
        memcpy(&f, &b, sizeof f);
        kv->v.f = f;
        break;
    }
    case RF_GGUF_FLOAT64: memcpy(&kv->v.f, &raw, sizeof kv->v.f); break;
    case RF_GGUF_BOOL:
        if (raw > 1)
            return rf_fail(r->err, RF_ERR_FORMAT, "%s: bool value %llu at byte %zu is not 0 or 1",
                           r->what, (unsigned long long)raw, r->pos - 1);
        kv->v.u = raw;
        break;
    default: kv->v.u = raw; break;
    }
    return RF_OK;
}

static rf_status read_kv(reader *r, rf_gguf_kv *kv)
{
    uint64_t t;
    rf_status st = read_str(r, &kv->key, RF_GGUF_MAX_KEY, "key");
    if (!st)
        st = read_uint(r, 4, &t, "value type");
    if (st)
        return st;
    kv->type = (rf_gguf_type)t;
    if (t == RF_GGUF_ARRAY) {
        uint64_t at, n;
        if ((st = read_uint(r, 4, &at, "array type")) || (st = read_uint(r, 8, &n, "array length")))
            return st;
        kv->arr_type = (rf_gguf_type)at;
        kv->arr_n = n;
        kv->arr_data = r->base + r->pos;
        if (at == RF_GGUF_STRING) {
            /* each element needs at least its 8-byte length: this bounds n
             * by the file size before the loop runs */
            if (n > (r->size - r->pos) / 8)
                return truncated(r, "string array");
            for (uint64_t i = 0; i < n; i++) {
                rf_gguf_str s;
                if ((st = read_str(r, &s, r->size, "array string")))
                    return st;
                if (s.len > UINT32_MAX)
                    return rf_fail(r->err, RF_ERR_LIMIT, "%s: array string too long", r->what);
            }
            return RF_OK;
        }
        size_t es = scalar_size((uint32_t)at);
        if (es == 0)
            return rf_fail(r->err, RF_ERR_UNSUPPORTED,
                           "%s: key '%.*s' is an array of unsupported type %llu", r->what,
                           (int)kv->key.len, kv->key.ptr, (unsigned long long)at);
        if (n > (r->size - r->pos) / es)
            return truncated(r, "array");
        r->pos += n * es;
        return RF_OK;
    }
    if (t != RF_GGUF_STRING && scalar_size((uint32_t)t) == 0)
        return rf_fail(r->err, RF_ERR_UNSUPPORTED, "%s: key '%.*s' has unknown value type %llu",
                       r->what, (int)kv->key.len, kv->key.ptr, (unsigned long long)t);
    return read_value(r, (uint32_t)t, kv);
}

static rf_status read_tensor_info(reader *r, rf_gguf_tensor *t)
{
    uint64_t n_dims, type;
    rf_status st = read_str(r, &t->name, RF_GGUF_MAX_KEY, "tensor name");
    if (!st)
        st = read_uint(r, 4, &n_dims, "tensor dims");
    if (st)
        return st;
    if (n_dims < 1 || n_dims > RF_GGUF_MAX_DIMS)
        return rf_fail(r->err, RF_ERR_FORMAT, "%s: tensor '%.*s' has %llu dimensions (1 to %d allowed)",
                       r->what, (int)t->name.len, t->name.ptr, (unsigned long long)n_dims,
                       RF_GGUF_MAX_DIMS);
    t->n_dims = (uint32_t)n_dims;
    uint64_t count = 1;
    for (int i = 0; i < RF_GGUF_MAX_DIMS; i++) {
        t->ne[i] = 1;
        if ((uint32_t)i >= t->n_dims)
            continue;
        if ((st = read_uint(r, 8, &t->ne[i], "tensor shape")))
            return st;
        /* no element count can exceed the file's size; checking each factor
         * against it keeps the product from overflowing */
        if (t->ne[i] == 0)
            return rf_fail(r->err, RF_ERR_FORMAT, "%s: tensor '%.*s' has a zero dimension", r->what,
                           (int)t->name.len, t->name.ptr);
        if (t->ne[i] > r->size || count > r->size / t->ne[i])
            return rf_fail(r->err, RF_ERR_FORMAT,
                           "%s: truncated file (tensor '%.*s' cannot fit in its %zu bytes)", r->what,
                           (int)t->name.len, t->name.ptr, r->size);
        count *= t->ne[i];
    }
    if ((st = read_uint(r, 4, &type, "tensor type")) || (st = read_uint(r, 8, &t->offset, "tensor offset")))
        return st;
    t->type = (rf_dtype)type;
    size_t es = type <= 255 ? rf_dtype_size((rf_dtype)type) : 0;
    if (es == 0)
        return rf_fail(r->err, RF_ERR_UNSUPPORTED, "%s: tensor '%.*s' has unsupported type %llu",
                       r->what, (int)t->name.len, t->name.ptr, (unsigned long long)type);
    t->nbytes = count * es;
    return RF_OK;
}

/* Names in a total order (length first: cheaper, and any order will do). */
static int cmp_str(rf_gguf_str a, rf_gguf_str b)
{
    if (a.len != b.len)
        return a.len < b.len ? -1 : 1;
    return a.len ? memcmp(a.ptr, b.ptr, a.len) : 0;
}

static int cmp_kv(const void *x, const void *y, void *kvs)
{
    const rf_gguf_kv *kv = kvs;
    return cmp_str(kv[*(const uint32_t *)x].key, kv[*(const uint32_t *)y].key);
}

static int cmp_tensor(const void *x, const void *y, void *tensors)
{
    const rf_gguf_tensor *t = tensors;
    return cmp_str(t[*(const uint32_t *)x].name, t[*(const uint32_t *)y].name);
}

/* Sorts keys and tensor names: duplicates show up as neighbours, and the
 * tensor order serves lookups by binary search. O(n log n), so that no
 * count the limits allow makes parsing slow. */
static rf_status index_names(rf_gguf *g, const char *what, rf_error *err)
{
    uint32_t *keys = malloc((g->n_kv ? g->n_kv : 1) * sizeof *keys);
    rf_status st = RF_OK;
    g->tensor_order = malloc((g->n_tensors ? g->n_tensors : 1) * sizeof *g->tensor_order);
    if (!keys || !g->tensor_order) {
        st = rf_fail(err, RF_ERR_NOMEM, "%s: out of memory", what);
        goto done;
    }
    for (uint64_t i = 0; i < g->n_kv; i++)
        keys[i] = (uint32_t)i;
    qsort_r(keys, g->n_kv, sizeof *keys, cmp_kv, g->kv);
    for (uint64_t i = 1; i < g->n_kv; i++) {
        rf_gguf_str k = g->kv[keys[i]].key;
        if (!cmp_str(g->kv[keys[i - 1]].key, k)) {
            st = rf_fail(err, RF_ERR_FORMAT, "%s: duplicate key '%.*s'", what, (int)k.len, k.ptr);
            goto done;
        }
    }
    for (uint64_t i = 0; i < g->n_tensors; i++)
        g->tensor_order[i] = (uint32_t)i;
    qsort_r(g->tensor_order, g->n_tensors, sizeof *g->tensor_order, cmp_tensor, g->tensors);
    for (uint64_t i = 1; i < g->n_tensors; i++) {
        rf_gguf_str n = g->tensors[g->tensor_order[i]].name;
        if (!cmp_str(g->tensors[g->tensor_order[i - 1]].name, n)) {
            st = rf_fail(err, RF_ERR_FORMAT, "%s: duplicate tensor '%.*s'", what, (int)n.len, n.ptr);
            goto done;
        }
    }
done:
    free(keys);
    return st;
}

rf_status rf_gguf_parse(const void *data, size_t size, const char *what, rf_gguf **out,
                        rf_error *err)
{
    reader r = {data, size, 0, what, err};
    rf_gguf *g = calloc(1, sizeof *g);
    uint64_t v;
    rf_status st = RF_OK;
    *out = NULL;
    if (!g)
        return rf_fail(err, RF_ERR_NOMEM, "%s: out of memory", what);
    if (size < 4 && (size == 0 || memcmp(data, RF_GGUF_MAGIC, size) == 0)) {
        st = truncated(&r, "magic");
        goto done;
    }
    if (size < 4 || memcmp(data, RF_GGUF_MAGIC, 4) != 0) {
        st = rf_fail(err, RF_ERR_FORMAT, "%s: not a GGUF file (bad magic)", what);
        goto done;
    }
    r.pos = 4;
    if ((st = read_uint(&r, 4, &v, "version")))
        goto done;
    g->version = (uint32_t)v;
    if (v != RF_GGUF_VERSION) {
        st = rf_fail(err, RF_ERR_UNSUPPORTED, "%s: GGUF version %u, expected %d", what, g->version,
                     RF_GGUF_VERSION);
        goto done;
    }
    if ((st = read_uint(&r, 8, &g->n_tensors, "tensor count")) ||
        (st = read_uint(&r, 8, &g->n_kv, "key/value count")))
        goto done;
    if (g->n_tensors > RF_GGUF_MAX_TENSORS || g->n_kv > RF_GGUF_MAX_KV) {
        st = rf_fail(err, RF_ERR_LIMIT, "%s: %llu tensors and %llu keys exceed the limits (%d, %d)",
                     what, (unsigned long long)g->n_tensors, (unsigned long long)g->n_kv,
                     RF_GGUF_MAX_TENSORS, RF_GGUF_MAX_KV);
        goto done;
    }
    /* a key/value takes at least 8 + 4 + 1 bytes, a tensor info 8 + 4 + 8 + 4 + 8:
     * counts the file cannot hold are refused before anything is allocated */
    if (g->n_kv > (size - r.pos) / 13 || g->n_tensors > (size - r.pos) / 32) {
        st = truncated(&r, "counts larger than the file");
        goto done;
    }
    g->kv = calloc(g->n_kv ? g->n_kv : 1, sizeof *g->kv);
    g->tensors = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *g->tensors);
    if (!g->kv || !g->tensors) {
        st = rf_fail(err, RF_ERR_NOMEM, "%s: out of memory", what);
        goto done;
    }
    g->alignment = RF_GGUF_ALIGNMENT;
    for (uint64_t i = 0; i < g->n_kv; i++) {
        rf_gguf_kv *kv = &g->kv[i];
        if ((st = read_kv(&r, kv)))
            goto done;
        if (str_eq(kv->key, "general.alignment")) {
            if (kv->type != RF_GGUF_UINT32 || kv->v.u == 0 || (kv->v.u & (kv->v.u - 1)) ||
                kv->v.u > 65536) {
                st = rf_fail(err, RF_ERR_FORMAT, "%s: general.alignment must be a uint32 power of two",
                             what);
                goto done;
            }
            g->alignment = (uint32_t)kv->v.u;
        }
    }
    for (uint64_t i = 0; i < g->n_tensors; i++)
        if ((st = read_tensor_info(&r, &g->tensors[i])))
            goto done;
    g->data_offset = (r.pos + g->alignment - 1) / g->alignment * g->alignment;
    if (g->data_offset > size) {
        r.pos = size;
        st = truncated(&r, "data section");
        goto done;
    }
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        rf_gguf_tensor *t = &g->tensors[i];
        uint64_t avail = size - g->data_offset;
        if (t->offset % g->alignment) {
            st = rf_fail(err, RF_ERR_FORMAT, "%s: tensor '%.*s' offset %llu is not %u-byte aligned",
                         what, (int)t->name.len, t->name.ptr, (unsigned long long)t->offset,
                         g->alignment);
            goto done;
        }
        if (t->offset > avail || t->nbytes > avail - t->offset) {
            st = rf_fail(err, RF_ERR_FORMAT,
                         "%s: truncated file (tensor '%.*s' needs bytes %llu..%llu, file has %zu)",
                         what, (int)t->name.len, t->name.ptr,
                         (unsigned long long)(g->data_offset + t->offset),
                         (unsigned long long)(g->data_offset + t->offset + t->nbytes), size);
            goto done;
        }
        t->data = (const uint8_t *)data + g->data_offset + t->offset;
    }
    st = index_names(g, what, err);
done:
    if (st)
        rf_gguf_free(g);
    else
        *out = g;
    return st;
}

void rf_gguf_free(rf_gguf *g)
{
    if (!g)
        return;
    free(g->kv);
    free(g->tensors);
    free(g->tensor_order);
    free(g);
}

const rf_gguf_kv *rf_gguf_find_kv(const rf_gguf *g, const char *key)
{
    for (uint64_t i = 0; i < g->n_kv; i++)
        if (str_eq(g->kv[i].key, key))
            return &g->kv[i];
    return NULL;
}

typedef struct {
    const rf_gguf *g;
    rf_gguf_str name;
} find_key;

static int cmp_tensor_at(const void *ctx, int64_t i)
{
    const find_key *k = ctx;
    return cmp_str(k->g->tensors[k->g->tensor_order[i]].name, k->name);
}

const rf_gguf_tensor *rf_gguf_find_tensor(const rf_gguf *g, const char *name)
{
    find_key key = {g, {name, strlen(name)}};
    int64_t i = rf_sorted_find((int64_t)g->n_tensors, cmp_tensor_at, &key);
    return i < 0 ? NULL : &g->tensors[g->tensor_order[i]];
}

void rf_gguf_array_strings(const rf_gguf_kv *kv, const char **ptrs, uint32_t *lens)
{
    const uint8_t *p = kv->arr_data;
    for (uint64_t i = 0; i < kv->arr_n; i++) {
        uint64_t len = load_le(p, 8);
        ptrs[i] = (const char *)p + 8;
        lens[i] = (uint32_t)len;
        p += 8 + len;
    }
}

uint32_t rf_gguf_array_u32(const rf_gguf_kv *kv, uint64_t i)
{
    return (uint32_t)load_le(kv->arr_data + 4 * i, 4);
}

/* ==== Writer ==== */

typedef struct {
    uint8_t *p;
    size_t len, cap;
} bytes;

typedef struct {
    void *data;
    size_t nbytes;
} tensor_data;

struct rf_gguf_writer {
    rf_status status;
    uint64_t n_kv;
    bytes kv;          /* serialized key/values */
    bytes info;        /* serialized tensor infos */
    tensor_data *tensors;
    uint64_t n_tensors, cap_tensors;
    uint64_t data_size; /* running size of the data section */
};

static bool bytes_put(bytes *b, const void *src, size_t n)
{
    if (n == 0)
        return true;
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p)
            return false;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
    return true;
}

static bool bytes_le(bytes *b, uint64_t v, size_t n)
{
    uint8_t tmp[8];
    for (size_t i = 0; i < n; i++)
        tmp[i] = (uint8_t)(v >> (8 * i));
    return bytes_put(b, tmp, n);
}

static bool bytes_str(bytes *b, const char *s, uint64_t len)
{
    return bytes_le(b, len, 8) && bytes_put(b, s, len);
}

rf_gguf_writer *rf_gguf_writer_new(void)
{
    return calloc(1, sizeof(rf_gguf_writer));
}

void rf_gguf_writer_free(rf_gguf_writer *w)
{
    if (!w)
        return;
    for (uint64_t i = 0; i < w->n_tensors; i++)
        free(w->tensors[i].data);
    free(w->tensors);
    free(w->kv.p);
    free(w->info.p);
    free(w);
}

rf_status rf_gguf_writer_status(const rf_gguf_writer *w)
{
    return w->status;
}

/* Starts a key/value: key and type. */
static bool kv_begin(rf_gguf_writer *w, const char *key, rf_gguf_type t)
{
    if (w->status)
        return false;
    w->n_kv++;
    if (bytes_str(&w->kv, key, strlen(key)) && bytes_le(&w->kv, t, 4))
        return true;
    w->status = RF_ERR_NOMEM;
    return false;
}

static rf_status kv_end(rf_gguf_writer *w, bool ok)
{
    if (!ok && !w->status)
        w->status = RF_ERR_NOMEM;
    return w->status;
}

rf_status rf_gguf_set_str(rf_gguf_writer *w, const char *key, const char *value)
{
    return kv_end(w, kv_begin(w, key, RF_GGUF_STRING) && bytes_str(&w->kv, value, strlen(value)));
}

rf_status rf_gguf_set_u32(rf_gguf_writer *w, const char *key, uint32_t value)
{
    return kv_end(w, kv_begin(w, key, RF_GGUF_UINT32) && bytes_le(&w->kv, value, 4));
}

rf_status rf_gguf_set_f32(rf_gguf_writer *w, const char *key, float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return kv_end(w, kv_begin(w, key, RF_GGUF_FLOAT32) && bytes_le(&w->kv, bits, 4));
}

rf_status rf_gguf_set_bool(rf_gguf_writer *w, const char *key, bool value)
{
    return kv_end(w, kv_begin(w, key, RF_GGUF_BOOL) && bytes_le(&w->kv, value ? 1 : 0, 1));
}

rf_status rf_gguf_set_arr_str(rf_gguf_writer *w, const char *key, const char *const *strs,
                              const uint32_t *lens, uint64_t n)
{
    bool ok = kv_begin(w, key, RF_GGUF_ARRAY) && bytes_le(&w->kv, RF_GGUF_STRING, 4) &&
              bytes_le(&w->kv, n, 8);
    for (uint64_t i = 0; ok && i < n; i++)
        ok = bytes_str(&w->kv, strs[i], lens ? lens[i] : strlen(strs[i]));
    return kv_end(w, ok);
}

rf_status rf_gguf_set_arr_u32(rf_gguf_writer *w, const char *key, const uint32_t *values,
                              uint64_t n)
{
    bool ok = kv_begin(w, key, RF_GGUF_ARRAY) && bytes_le(&w->kv, RF_GGUF_UINT32, 4) &&
              bytes_le(&w->kv, n, 8);
    for (uint64_t i = 0; ok && i < n; i++)
        ok = bytes_le(&w->kv, values[i], 4);
    return kv_end(w, ok);
}

static uint64_t align_up(uint64_t v)
{
    return (v + RF_GGUF_ALIGNMENT - 1) / RF_GGUF_ALIGNMENT * RF_GGUF_ALIGNMENT;
}

rf_status rf_gguf_add_tensor(rf_gguf_writer *w, const char *name, rf_dtype type, uint32_t n_dims,
                             const uint64_t *ne, void *data)
{
    uint64_t count = 1;
    bool ok = !w->status;
    if (ok && w->n_tensors == w->cap_tensors) {
        uint64_t cap = w->cap_tensors ? 2 * w->cap_tensors : 64;
        tensor_data *t = realloc(w->tensors, cap * sizeof *t);
        ok = t != NULL;
        if (ok) {
            w->tensors = t;
            w->cap_tensors = cap;
        }
    }
    if (!ok) {
        free(data);
        return kv_end(w, false);
    }
    for (uint32_t i = 0; i < n_dims; i++)
        count *= ne[i];
    w->tensors[w->n_tensors].data = data;
    w->tensors[w->n_tensors].nbytes = count * rf_dtype_size(type);
    w->n_tensors++;
    ok = bytes_str(&w->info, name, strlen(name)) && bytes_le(&w->info, n_dims, 4);
    for (uint32_t i = 0; ok && i < n_dims; i++)
        ok = bytes_le(&w->info, ne[i], 8);
    ok = ok && bytes_le(&w->info, (uint64_t)type, 4) && bytes_le(&w->info, w->data_size, 8);
    w->data_size = align_up(w->data_size + count * rf_dtype_size(type));
    return kv_end(w, ok);
}

/* The bytes before the data section: header, key/values, tensor infos, padding. */
static rf_status write_head(const rf_gguf_writer *w, bytes *head)
{
    bool ok = bytes_put(head, RF_GGUF_MAGIC, 4) && bytes_le(head, RF_GGUF_VERSION, 4) &&
              bytes_le(head, w->n_tensors, 8) && bytes_le(head, w->n_kv, 8) &&
              bytes_put(head, w->kv.p, w->kv.len) && bytes_put(head, w->info.p, w->info.len);
    static const uint8_t zeros[RF_GGUF_ALIGNMENT];
    if (ok)
        ok = bytes_put(head, zeros, align_up(head->len) - head->len);
    return ok ? RF_OK : RF_ERR_NOMEM;
}

rf_status rf_gguf_write_buffer(const rf_gguf_writer *w, void **out, size_t *size, rf_error *err)
{
    bytes head = {0};
    uint8_t *buf = NULL;
    rf_status st = w->status ? w->status : write_head(w, &head);
    *out = NULL;
    if (st) {
        st = rf_fail(err, st, "out of memory while building a GGUF image");
        goto done;
    }
    size_t total = head.len + w->data_size;
    if (posix_memalign((void **)&buf, 64, total ? total : 1)) {
        buf = NULL;
        st = rf_fail(err, RF_ERR_NOMEM, "out of memory for a %zu-byte GGUF image", total);
        goto done;
    }
    memset(buf, 0, total);
    memcpy(buf, head.p, head.len);
    size_t pos = head.len;
    for (uint64_t i = 0; i < w->n_tensors; i++) {
        memcpy(buf + pos, w->tensors[i].data, w->tensors[i].nbytes);
        pos += align_up(w->tensors[i].nbytes);
    }
    *out = buf;
    *size = total;
done:
    free(head.p);
    return st;
}

rf_status rf_gguf_write_file(const rf_gguf_writer *w, const char *path, rf_error *err)
{
    static const uint8_t zeros[RF_GGUF_ALIGNMENT];
    bytes head = {0};
    char *tmp = NULL;
    FILE *f = NULL;
    int fd = -1;
    rf_status st = w->status ? w->status : write_head(w, &head);
    if (st) {
        st = rf_fail(err, st, "%s: out of memory while building the GGUF file", path);
        goto done;
    }
    size_t n = strlen(path);
    tmp = malloc(n + 16);
    if (!tmp) {
        st = rf_fail(err, RF_ERR_NOMEM, "%s: out of memory", path);
        goto done;
    }
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp.XXXXXX", 12);
    fd = mkstemp(tmp);
    if (fd < 0 || !(f = fdopen(fd, "wb"))) {
        st = rf_fail(err, RF_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        goto done;
    }
    fd = -1;
    bool ok = fwrite(head.p, 1, head.len, f) == head.len;
    for (uint64_t i = 0; ok && i < w->n_tensors; i++) {
        size_t nb = w->tensors[i].nbytes, pad = align_up(nb) - nb;
        ok = fwrite(w->tensors[i].data, 1, nb, f) == nb && fwrite(zeros, 1, pad, f) == pad;
    }
    if (fclose(f) != 0)
        ok = false;
    f = NULL;
    if (!ok) {
        st = rf_fail(err, RF_ERR_IO, "%s: write failed: %s", path, strerror(errno));
        goto done;
    }
    /* mkstemp creates 0600; a model file is as readable as any other output */
    mode_t mask = umask(0);
    umask(mask);
    chmod(tmp, 0666 & ~mask);
    if (rename(tmp, path) != 0) {
        st = rf_fail(err, RF_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
        goto done;
    }
done:
    if (f)
        fclose(f);
    if (fd >= 0)
        close(fd);
    if (st && tmp)
        unlink(tmp);
    free(tmp);
    free(head.p);
    return st;
}
