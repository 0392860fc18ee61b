/*
 * test_gguf.c — GGUF writer/reader round trip on a hand-made file, the
 * byte layout the spec prescribes, and the reader's refusal of malformed
 * buffers (every truncation, bad magic/version, huge counts and lengths,
 * misaligned or out-of-range tensors).
 */
#include "../check.h"
#include "formats/gguf.h"

#include <stdint.h>
#include <unistd.h>

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void *copy_of(const void *p, size_t n)
{
    void *c = malloc(n ? n : 1);
    memcpy(c, p, n);
    return c;
}

/* A small file with every kind of value the project writes. */
static rf_gguf_writer *sample(void)
{
    rf_gguf_writer *w = rf_gguf_writer_new();
    static const char *const strs[] = {"[PAD]", "", "你好", "##ing"};
    static const uint32_t u32s[] = {0, 7, 318825, UINT32_MAX};
    float f32[6] = {1.5f, -2.25f, 0.0f, 3.0e-8f, 65504.0f, -1.0f};
    uint16_t f16[3] = {0x3c00, 0xc000, 0x0001};
    uint16_t bf16[5] = {0x3f80, 0xbf80, 0x7f7f, 0x0001, 0x8000};
    uint64_t ne_a[2] = {3, 2}, ne_b[1] = {3}, ne_c[3] = {5, 1, 1};
    rf_gguf_set_str(w, "general.architecture", "roformer");
    rf_gguf_set_u32(w, "general.alignment", 32);
    rf_gguf_set_u32(w, "test.u32", 123456789);
    rf_gguf_set_f32(w, "test.f32", 1e-12f);
    rf_gguf_set_bool(w, "test.true", true);
    rf_gguf_set_bool(w, "test.false", false);
    rf_gguf_set_arr_str(w, "test.strings", strs, NULL, 4);
    rf_gguf_set_arr_u32(w, "test.u32s", u32s, 4);
    rf_gguf_add_tensor(w, "a.weight", RF_DTYPE_F32, 2, ne_a, copy_of(f32, sizeof f32));
    rf_gguf_add_tensor(w, "b.f16", RF_DTYPE_F16, 1, ne_b, copy_of(f16, sizeof f16));
    rf_gguf_add_tensor(w, "c.bf16", RF_DTYPE_BF16, 3, ne_c, copy_of(bf16, sizeof bf16));
    return w;
}

static rf_status parse(const void *p, size_t n, rf_error *err)
{
    rf_gguf *g = NULL;
    rf_status st = rf_gguf_parse(p, n, "t.gguf", &g, err);
    rf_gguf_free(g);
    return st;
}

/* Position right after the first occurrence of `needle` in the buffer. */
static size_t find_after(const uint8_t *p, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(p + i, needle, k))
            return i + k;
    return 0;
}

static void check_bad(const uint8_t *buf, size_t n, rf_status want, const char *substr,
                      const char *what)
{
    rf_error err = {{0}};
    rf_status st = parse(buf, n, &err);
    CHECK(st == want && strstr(err.message, substr), "%s: status %d, message '%s' (want %d, '%s')",
          what, st, err.message, want, substr);
}

int main(void)
{
    rf_error err = {{0}};
    rf_gguf_writer *w = sample();
    void *buf = NULL;
    size_t size = 0;
    CHECK(rf_gguf_writer_status(w) == RF_OK, "writer status");
    CHECK(rf_gguf_write_buffer(w, &buf, &size, &err) == RF_OK, "write_buffer: %s", err.message);
    const uint8_t *p = buf;

    /* header as the spec lays it out */
    CHECK(size > 24 && !memcmp(p, "GGUF", 4) && le(p + 4, 4) == 3, "magic and version 3");
    CHECK(le(p + 8, 8) == 3 && le(p + 16, 8) == 8, "tensor count 3, kv count 8");
    CHECK(le(p + 24, 8) == strlen("general.architecture") && !memcmp(p + 32, "general.architecture", 20),
          "first key is a u64-length string");

    /* write_file gives the same bytes */
    char path[] = "/tmp/rf_test_gguf_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    CHECK(rf_gguf_write_file(w, path, &err) == RF_OK, "write_file: %s", err.message);
    size_t flen = 0;
    char *file = check_read_file(path, &flen);
    CHECK(file && flen == size && !memcmp(file, buf, size), "file and buffer images identical");
    free(file);
    unlink(path);
    CHECK(rf_gguf_write_file(w, "/nonexistent-dir/x.gguf", &err) == RF_ERR_IO &&
              strstr(err.message, "/nonexistent-dir/x.gguf"),
          "unwritable path: %s", err.message);

    /* read back */
    rf_gguf *g = NULL;
    CHECK(rf_gguf_parse(buf, size, "t.gguf", &g, &err) == RF_OK, "parse: %s", err.message);
    if (g) {
        const rf_gguf_kv *kv = rf_gguf_find_kv(g, "general.architecture");
        CHECK(kv && kv->type == RF_GGUF_STRING && kv->v.str.len == 8 &&
                  !memcmp(kv->v.str.ptr, "roformer", 8), "architecture string");
        kv = rf_gguf_find_kv(g, "test.u32");
        CHECK(kv && kv->type == RF_GGUF_UINT32 && kv->v.u == 123456789, "u32 value");
        kv = rf_gguf_find_kv(g, "test.f32");
        CHECK(kv && kv->type == RF_GGUF_FLOAT32 && (float)kv->v.f == 1e-12f, "f32 value");
        kv = rf_gguf_find_kv(g, "test.true");
        CHECK(kv && kv->type == RF_GGUF_BOOL && kv->v.u == 1, "bool true");
        kv = rf_gguf_find_kv(g, "test.false");
        CHECK(kv && kv->type == RF_GGUF_BOOL && kv->v.u == 0, "bool false");
        kv = rf_gguf_find_kv(g, "test.strings");
        CHECK(kv && kv->type == RF_GGUF_ARRAY && kv->arr_type == RF_GGUF_STRING && kv->arr_n == 4,
              "string array");
        if (kv && kv->arr_n == 4) {
            const char *s[4];
            uint32_t l[4];
            rf_gguf_array_strings(kv, s, l);
            CHECK(l[0] == 5 && !memcmp(s[0], "[PAD]", 5) && l[1] == 0 && l[2] == 6 &&
                      !memcmp(s[2], "你好", 6) && l[3] == 5 && !memcmp(s[3], "##ing", 5),
                  "string array contents");
        }
        kv = rf_gguf_find_kv(g, "test.u32s");
        CHECK(kv && kv->arr_type == RF_GGUF_UINT32 && kv->arr_n == 4 &&
                  rf_gguf_array_u32(kv, 2) == 318825 && rf_gguf_array_u32(kv, 3) == UINT32_MAX,
              "u32 array contents");
        CHECK(rf_gguf_find_kv(g, "nope") == NULL, "absent key");
        CHECK(g->alignment == 32 && g->data_offset % 32 == 0, "data section aligned");

        const rf_gguf_tensor *t = rf_gguf_find_tensor(g, "a.weight");
        float back[6];
        CHECK(t && t->type == RF_DTYPE_F32 && t->n_dims == 2 && t->ne[0] == 3 && t->ne[1] == 2 &&
                  t->nbytes == 24, "f32 tensor info");
        if (t) {
            memcpy(back, t->data, sizeof back);
            CHECK(back[0] == 1.5f && back[3] == 3.0e-8f && back[4] == 65504.0f, "f32 data");
            CHECK((size_t)(t->data - p) % 32 == 0, "tensor 32-byte aligned in the file");
        }
        t = rf_gguf_find_tensor(g, "b.f16");
        CHECK(t && t->type == RF_DTYPE_F16 && t->nbytes == 6 && le(t->data + 4, 2) == 0x0001 &&
                  t->offset % 32 == 0, "f16 tensor");
        t = rf_gguf_find_tensor(g, "c.bf16");
        CHECK(t && t->type == RF_DTYPE_BF16 && t->n_dims == 3 && t->ne[0] == 5 && t->ne[2] == 1 &&
                  le(t->data + 4, 2) == 0x7f7f && t->offset % 32 == 0, "bf16 tensor");
        CHECK(rf_gguf_find_tensor(g, "a.weigh") == NULL, "prefix of a name is not a match");
    }
    rf_gguf_free(g);

    /* the same calls give the same bytes */
    rf_gguf_writer *w2 = sample();
    void *buf2 = NULL;
    size_t size2 = 0;
    rf_gguf_write_buffer(w2, &buf2, &size2, &err);
    CHECK(size2 == size && !memcmp(buf, buf2, size), "deterministic output");
    rf_gguf_writer_free(w2);
    free(buf2);

    /* every truncation that cuts into the data is refused (the zero padding
     * after the last tensor is not needed) */
    size_t data_end = 0;
    if (rf_gguf_parse(buf, size, "t.gguf", &g, &err) == RF_OK) {
        for (uint64_t i = 0; i < g->n_tensors; i++) {
            size_t end = (size_t)(g->tensors[i].data - p) + g->tensors[i].nbytes;
            data_end = end > data_end ? end : data_end;
        }
        rf_gguf_free(g);
    }
    CHECK(data_end > 0 && size - data_end < 32, "only padding after the last tensor");
    int crashes = 0;
    for (size_t n = 0; n < data_end; n++) {
        uint8_t *cut = copy_of(buf, n); /* exact-size copy so ASan sees overreads */
        rf_status st = parse(cut, n, &err);
        if (st != RF_ERR_FORMAT || !strstr(err.message, "t.gguf"))
            crashes++;
        free(cut);
    }
    CHECK(crashes == 0, "%d truncations not reported as malformed", crashes);

    uint8_t *b = copy_of(buf, size);
    b[0] = 'X';
    check_bad(b, size, RF_ERR_FORMAT, "bad magic", "magic");
    memcpy(b, buf, size);
    check_put_le(b + 4, 2, 4);
    check_bad(b, size, RF_ERR_UNSUPPORTED, "version 2", "version");
    memcpy(b, buf, size);
    check_put_le(b + 8, 1ull << 40, 8);
    check_bad(b, size, RF_ERR_LIMIT, "exceed", "huge tensor count");
    memcpy(b, buf, size);
    check_put_le(b + 16, 60000, 8);
    check_bad(b, size, RF_ERR_FORMAT, "truncated", "kv count larger than the file");
    memcpy(b, buf, size);
    check_put_le(b + 24, 1ull << 62, 8);
    check_bad(b, size, RF_ERR_FORMAT, "truncated", "huge key length");
    {
        /* a key past the spec's 65535-byte limit, though inside the file */
        rf_gguf_writer *d = rf_gguf_writer_new();
        char *key = malloc(70001);
        void *db = NULL;
        size_t dn = 0;
        memset(key, 'k', 70000);
        key[70000] = '\0';
        rf_gguf_set_u32(d, key, 1);
        rf_gguf_write_buffer(d, &db, &dn, &err);
        check_bad(db, dn, RF_ERR_LIMIT, "exceeds the limit of 65535", "key over the limit");
        free(db);
        free(key);
        rf_gguf_writer_free(d);
    }
    memcpy(b, buf, size);
    size_t at = find_after(b, size, "test.strings") + 4; /* past the value type */
    check_put_le(b + at + 4, 1ull << 60, 8);
    check_bad(b, size, RF_ERR_FORMAT, "truncated", "huge array length");
    memcpy(b, buf, size);
    check_put_le(b + at + 4 + 8, 1ull << 50, 8);
    check_bad(b, size, RF_ERR_FORMAT, "truncated", "huge string in an array");
    memcpy(b, buf, size);
    check_put_le(b + at, 99, 4);
    check_bad(b, size, RF_ERR_UNSUPPORTED, "unsupported type", "array of an unknown type");
    memcpy(b, buf, size);
    at = find_after(b, size, "general.alignment") + 4;
    check_put_le(b + at, 48, 4);
    check_bad(b, size, RF_ERR_FORMAT, "power of two", "alignment not a power of two");
    {
        /* the writer does not check keys: a duplicate is easy to build */
        rf_gguf_writer *d = rf_gguf_writer_new();
        void *db = NULL;
        size_t dn = 0;
        rf_gguf_set_u32(d, "k", 1);
        rf_gguf_set_u32(d, "k", 2);
        rf_gguf_write_buffer(d, &db, &dn, &err);
        check_bad(db, dn, RF_ERR_FORMAT, "duplicate key 'k'", "duplicate key");
        free(db);
        rf_gguf_writer_free(d);
    }
    memcpy(b, buf, size);
    at = find_after(b, size, "a.weight"); /* n_dims, ne[0], ne[1], type, offset */
    check_put_le(b + at + 4, 1ull << 40, 8);
    check_bad(b, size, RF_ERR_FORMAT, "cannot fit", "huge tensor dimension");
    memcpy(b, buf, size);
    check_put_le(b + at, 5, 4);
    check_bad(b, size, RF_ERR_FORMAT, "5 dimensions", "too many dimensions");
    memcpy(b, buf, size);
    check_put_le(b + at + 4 + 16, 2, 4); /* ggml Q4_0 */
    check_bad(b, size, RF_ERR_UNSUPPORTED, "unsupported type 2", "quantized tensor type");
    memcpy(b, buf, size);
    check_put_le(b + at + 4 + 16 + 4, 8, 8);
    check_bad(b, size, RF_ERR_FORMAT, "not 32-byte aligned", "misaligned tensor offset");
    memcpy(b, buf, size);
    check_put_le(b + at + 4 + 16 + 4, 1ull << 40, 8);
    check_bad(b, size, RF_ERR_FORMAT, "tensor 'a.weight' needs bytes", "tensor offset past the end");
    free(b);

    free(buf);
    rf_gguf_writer_free(w);
    return check_done();
}
