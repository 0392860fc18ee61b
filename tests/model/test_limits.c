/*
 * test_limits.c — the resource limits on untrusted model files: counts,
 * sizes and copies a hostile file could use to make loading slow or
 * memory-hungry are refused with the exact status, quickly:
 *   - GGUF: 65536 keys with a duplicate among them, thousands of tensors
 *     the model does not use (sorted lookups, not pairwise comparisons);
 *   - safetensors: the tensor-count cap, duplicate names among many, the
 *     header-size cap;
 *   - config.json and GGUF: the longest sequence a model may declare;
 *   - pickle: copies of strided tensors capped by the archive size, the
 *     number of values capped (each takes ~250 bytes, whatever its opcode).
 */
#include "../check.h"
#include "formats/checkpoint.h"
#include "formats/gguf.h"
#include "formats/hf_config.h"
#include "model/model.h"
#include "formats/pickle.h"
#include "formats/safetensors.h"

#include <stdint.h>

/* ==== GGUF ==== */

/* n keys "key.%015d" (all 19 bytes), u32 values; the last repeats key 0. */
static uint8_t *gguf_many_keys(uint64_t n, size_t *size)
{
    size_t rec = 8 + 19 + 4 + 4;
    uint8_t *b = calloc(1, 24 + n * rec + 64), *p = b + 24;
    memcpy(b, "GGUF", 4);
    check_put_le(b + 4, 3, 4);
    check_put_le(b + 16, n, 8);
    for (uint64_t i = 0; i < n; i++, p += rec) {
        char key[20];
        snprintf(key, sizeof key, "key.%015llu", (unsigned long long)(i + 1 < n ? i : 0));
        check_put_le(p, 19, 8);
        memcpy(p + 8, key, 19);
        check_put_le(p + 27, RF_GGUF_UINT32, 4);
        check_put_le(p + 31, i, 4);
    }
    *size = (size_t)(p - b) + 64;
    return b;
}

static void gguf_cases(void)
{
    size_t size;
    uint8_t *b = gguf_many_keys(RF_GGUF_MAX_KV, &size);
    rf_gguf *g = NULL;
    rf_error err;
    rf_status st = rf_gguf_parse(b, size, "many.gguf", &g, &err);
    CHECK(st == RF_ERR_FORMAT && strstr(err.message, "duplicate key 'key.000000000000000'"),
          "65536 keys with one duplicate: status %d (%s)", st, err.message);
    rf_gguf_free(g);
    free(b);
}

/* Copies every key/value and tensor of a parsed model into a writer. */
static rf_gguf_writer *copy_model(const rf_gguf *g)
{
    rf_gguf_writer *w = rf_gguf_writer_new();
    for (uint64_t i = 0; i < g->n_kv; i++) {
        const rf_gguf_kv *kv = &g->kv[i];
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)kv->key.len, kv->key.ptr);
        if (kv->type == RF_GGUF_STRING) {
            char *v = strndup(kv->v.str.ptr, kv->v.str.len);
            rf_gguf_set_str(w, key, v);
            free(v);
        } else if (kv->type == RF_GGUF_UINT32) {
            rf_gguf_set_u32(w, key, (uint32_t)kv->v.u);
        } else if (kv->type == RF_GGUF_FLOAT32) {
            rf_gguf_set_f32(w, key, (float)kv->v.f);
        } else if (kv->type == RF_GGUF_BOOL) {
            rf_gguf_set_bool(w, key, kv->v.u != 0);
        } else if (kv->type == RF_GGUF_ARRAY && kv->arr_type == RF_GGUF_STRING) {
            const char **ptrs = malloc((kv->arr_n + 1) * sizeof *ptrs);
            uint32_t *lens = malloc((kv->arr_n + 1) * sizeof *lens);
            rf_gguf_array_strings(kv, ptrs, lens);
            rf_gguf_set_arr_str(w, key, ptrs, lens, kv->arr_n);
            free(ptrs);
            free(lens);
        } else if (kv->type == RF_GGUF_ARRAY && kv->arr_type == RF_GGUF_UINT32) {
            uint32_t *v = malloc((kv->arr_n + 1) * sizeof *v);
            for (uint64_t j = 0; j < kv->arr_n; j++)
                v[j] = rf_gguf_array_u32(kv, j);
            rf_gguf_set_arr_u32(w, key, v, kv->arr_n);
            free(v);
        }
    }
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const rf_gguf_tensor *t = &g->tensors[i];
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)t->name.len, t->name.ptr);
        void *data = malloc(t->nbytes);
        memcpy(data, t->data, t->nbytes);
        rf_gguf_add_tensor(w, name, t->type, t->n_dims, t->ne, data);
    }
    return w;
}

static void model_cases(void)
{
    const char *seed = "tests/fuzz/corpus/model/tiny-cls-f32.gguf";
    size_t len;
    char *file = check_read_file(seed, &len);
    rf_gguf *g = NULL;
    rf_error err;
    CHECK(file && rf_gguf_parse(file, len, seed, &g, &err) == RF_OK, "read %s", seed);
    if (!g) {
        free(file);
        return;
    }
    rf_gguf_writer *w = copy_model(g);
    void *image = NULL;
    size_t size = 0;
    rf_model *model = NULL;
    CHECK(rf_gguf_write_buffer(w, &image, &size, &err) == RF_OK, "copy of %s", seed);
    rf_status st = rf_model_load_buffer(image, size, "copy.gguf", &model, &err);
    CHECK(st == RF_OK, "the copied model loads: %s", err.message);
    rf_model_free(model);
    free(image);
    /* a context length past RF_MAX_POSITION (contexts size their RoPE
     * table and scratch from it) */
    for (uint64_t i = 0; i < g->n_kv; i++)
        if (g->kv[i].key.len == 23 && !memcmp(g->kv[i].key.ptr, "roformer.context_length", 23))
            check_put_le((uint8_t *)(uintptr_t)g->kv[i].key.ptr + 23 + 4, RF_MAX_POSITION + 1, 4);
    st = rf_model_load_buffer(file, len, "long.gguf", &model, &err);
    CHECK(st == RF_ERR_FORMAT &&
          strstr(err.message, "'roformer.context_length' = 65537 is outside [1, 65536]"),
          "context length 65537: status %d (%s)", st, err.message);
    rf_model_free(model);
    /* 60000 one-element tensors the model has no use for */
    for (int i = 0; i < 60000; i++) {
        char name[32];
        uint64_t ne = 1;
        snprintf(name, sizeof name, "extra.%d", i);
        rf_gguf_add_tensor(w, name, RF_DTYPE_F32, 1, &ne, calloc(1, 4));
    }
    CHECK(rf_gguf_write_buffer(w, &image, &size, &err) == RF_OK, "model with extra tensors");
    st = rf_model_load_buffer(image, size, "extra.gguf", &model, &err);
    CHECK(st == RF_ERR_SHAPE && strstr(err.message, "unexpected tensor 'extra.0'"),
          "60000 unexpected tensors: status %d (%s)", st, err.message);
    rf_model_free(model);
    free(image);
    rf_gguf_writer_free(w);
    rf_gguf_free(g);
    free(file);
}

/* ==== safetensors ==== */

/* A safetensors image with n one-byte U8 tensors "t%07d"; the last name
 * repeats the first when `dup`. `pad` spaces are added to the header. */
static uint8_t *safetensors_many(int n, bool dup, size_t pad, size_t *size)
{
    size_t cap = (size_t)n * 96 + pad + 64, h = 0;
    char *json = malloc(cap);
    h += (size_t)snprintf(json + h, cap - h, "{");
    for (int i = 0; i < n; i++)
        h += (size_t)snprintf(json + h, cap - h,
                              "%s\"t%07d\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[%d,%d]}",
                              i ? "," : "", dup && i == n - 1 ? 0 : i, i, i + 1);
    memset(json + h, ' ', pad);
    h += pad;
    json[h++] = '}';
    uint8_t *b = calloc(1, 8 + h + (size_t)n);
    check_put_le(b, h, 8);
    memcpy(b + 8, json, h);
    free(json);
    *size = 8 + h + (size_t)n;
    return b;
}

static rf_status read_safetensors(const uint8_t *b, size_t size, rf_error *err)
{
    rf_checkpoint *ck = calloc(1, sizeof *ck);
    rf_status st = rf_safetensors_read(b, size, "many.safetensors", ck, err);
    rf_checkpoint_free(ck);
    return st;
}

static void safetensors_cases(void)
{
    size_t size;
    rf_error err;
    uint8_t *b = safetensors_many(RF_CK_MAX_TENSORS, false, 0, &size);
    rf_status st = read_safetensors(b, size, &err);
    CHECK(st == RF_OK, "65536 tensors are read: %s", err.message);
    free(b);
    b = safetensors_many(RF_CK_MAX_TENSORS, true, 0, &size);
    st = read_safetensors(b, size, &err);
    CHECK(st == RF_ERR_FORMAT && strstr(err.message, "duplicate tensor 't0000000'"),
          "65536 tensors with one duplicate: status %d (%s)", st, err.message);
    free(b);
    b = safetensors_many(RF_CK_MAX_TENSORS + 1, false, 0, &size);
    st = read_safetensors(b, size, &err);
    CHECK(st == RF_ERR_LIMIT && strstr(err.message, "more than 65536 tensors"),
          "65537 tensors: status %d (%s)", st, err.message);
    free(b);
    b = safetensors_many(1, false, RF_SAFETENSORS_MAX_HEADER, &size);
    st = read_safetensors(b, size, &err);
    CHECK(st == RF_ERR_LIMIT && strstr(err.message, "exceeds the limit"),
          "header over 16 MiB: status %d (%s)", st, err.message);
    free(b);
}

/* ==== pickle ==== */

static uint8_t storage[4096];

static const uint8_t *lookup(void *ctx, const char *key, size_t key_len, uint64_t *size)
{
    (void)ctx;
    (void)key;
    (void)key_len;
    *size = sizeof storage;
    return storage;
}

/* The seed state dict holds one strided tensor, a transposed 4 x 4 f32
 * matrix: its copy takes 64 bytes. */
static void pickle_cases(void)
{
    const char *seed = "tests/fuzz/corpus/pickle/tiny-cls.pkl";
    size_t len;
    char *pkl = check_read_file(seed, &len);
    CHECK(pkl != NULL, "read %s", seed);
    if (!pkl)
        return;
    for (uint64_t limit = 63; limit <= 64; limit++) {
        rf_checkpoint *ck = calloc(1, sizeof *ck);
        rf_error err;
        rf_status st = rf_unpickle_state_dict((const uint8_t *)pkl, len, lookup, NULL, limit,
                                              seed, ck, &err);
        if (limit == 63)
            CHECK(st == RF_ERR_LIMIT && strstr(err.message, "past 63 bytes"),
                  "copies over the limit: status %d (%s)", st, err.message);
        else
            CHECK(st == RF_OK && rf_checkpoint_find(ck, "classifier.dense.weight"),
                  "copies at the limit: status %d (%s)", st, err.message);
        rf_checkpoint_free(ck);
    }
    free(pkl);

    /* PROTO 2, then one NONE per byte: each makes a value */
    size_t n = 2 + (size_t)RF_PICKLE_MAX_VALUES + 1;
    uint8_t *nones = malloc(n);
    nones[0] = 0x80;
    nones[1] = 2;
    memset(nones + 2, 'N', n - 2);
    rf_checkpoint *ck = calloc(1, sizeof *ck);
    rf_error err;
    rf_status st = rf_unpickle_state_dict(nones, n, lookup, NULL, n, "nones.pkl", ck, &err);
    CHECK(st == RF_ERR_LIMIT && strstr(err.message, "more than 2097152 values"),
          "a pickle of 2M+1 values: status %d (%s)", st, err.message);
    rf_checkpoint_free(ck);
    free(nones);
}

/* ==== config.json ==== */

static void config_cases(void)
{
    static const char cfg[] = "{\"vocab_size\": 10, \"hidden_size\": 4, \"num_hidden_layers\": 1, "
                              "\"num_attention_heads\": 1, \"intermediate_size\": 8, "
                              "\"max_position_embeddings\": %d}";
    for (int pos = RF_MAX_POSITION; pos <= RF_MAX_POSITION + 1; pos++) {
        char text[512];
        rf_hf_config c;
        rf_error err;
        snprintf(text, sizeof text, cfg, pos);
        rf_status st = rf_hf_config_parse(text, strlen(text), "config.json", NULL, 0, NULL,
                                          RF_TOKENIZER_AUTO, &c, &err);
        if (pos == RF_MAX_POSITION)
            CHECK(st == RF_OK, "max_position_embeddings %d: %s", pos, err.message);
        else
            CHECK(st == RF_ERR_FORMAT &&
                      strstr(err.message, "'max_position_embeddings' must be an integer in [1, 65536]"),
                  "max_position_embeddings %d: status %d (%s)", pos, st, err.message);
        if (st == RF_OK)
            rf_hf_config_free(&c);
    }
}

int main(void)
{
    config_cases();
    gguf_cases();
    model_cases();
    safetensors_cases();
    pickle_cases();
    return check_done();
}
