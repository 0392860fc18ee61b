/*
 * test_limit_bounds.c — each limit of docs/reliability.md's table held at
 * its number: the value N is not refused by the limit, N + 1 is, with the
 * status and a message naming it.
 *   - config.json: dimensions up to 2^24, 1024 layers, 65536 labels,
 *     labels of 4096 bytes; the same dimensions and layers as GGUF keys;
 *   - GGUF: 65535-byte key and tensor names, 4 dimensions, 65536 tensors
 *     and 65536 keys;
 *   - safetensors: 8 dimensions;
 *   - pytorch_model.bin: 1M zip entries (a zip64 directory claiming them),
 *     2M values made by its pickle;
 *   - the files a conversion reads: config.json and tokenizer_config.json
 *     16 MiB, vocab.txt 256 MiB, the jieba dict.txt 1 GiB (the sizes are
 *     sparse files: past the limit they are refused by their size before
 *     any byte is read; at 16 MiB and 256 MiB they are read, and at 1 GiB,
 *     which would take a gigabyte of memory, the same reader is trusted
 *     from the two others), entries of vocab.txt and dict.txt up to 65535
 *     bytes.
 * "Not refused by the limit" means: accepted, or refused for another
 * reason whose message does not name the limit (a GGUF claiming 1024
 * layers lacks their tensors).
 */
#include "../check.h"
#include "formats/checkpoint.h"
#include "formats/gguf.h"
#include "formats/hf_config.h"
#include "formats/pickle.h"
#include "formats/safetensors.h"
#include "formats/torch_zip.h"
#include "model/model.h"
#include "roformer.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DIM (1 << 24)
#define MAX_LAYERS 1024
#define MAX_LABELS 65536
#define MAX_LABEL_BYTES 4096
#define MAX_JSON_FILE (16u << 20)
#define MAX_VOCAB_FILE (256u << 20)
#define MAX_DICT_FILE (1u << 30)
#define MAX_ENTRY_BYTES 65535

/* ==== config.json ==== */

/* Parses config.json text; frees what it read. */
static rf_status parse_config(const char *text, size_t len, rf_error *err)
{
    rf_hf_config c;
    rf_status st = rf_hf_config_parse(text, len, "config.json", NULL, 0, NULL, RF_TOKENIZER_AUTO,
                                      &c, err);
    if (st == RF_OK)
        rf_hf_config_free(&c);
    return st;
}

/* A small config whose `key` is `value` (the key once: cJSON reads the
 * first of two). */
static rf_status config_with(const char *key, long value, rf_error *err)
{
    static const struct {
        const char *key;
        long value;
    } base[] = {{"vocab_size", 10},       {"hidden_size", 4},       {"num_hidden_layers", 1},
                {"num_attention_heads", 1}, {"intermediate_size", 8}, {"type_vocab_size", 2}};
    char text[512];
    size_t k = (size_t)snprintf(text, sizeof text, "{\"%s\": %ld", key, value);
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        if (strcmp(base[i].key, key))
            k += (size_t)snprintf(text + k, sizeof text - k, ", \"%s\": %ld", base[i].key,
                                  base[i].value);
    k += (size_t)snprintf(text + k, sizeof text - k, "}");
    return parse_config(text, k, err);
}

static void config_dimension_cases(void)
{
    static const struct {
        const char *key;
        long limit;
    } bounds[] = {{"vocab_size", MAX_DIM},        {"hidden_size", MAX_DIM},
                  {"embedding_size", MAX_DIM},    {"intermediate_size", MAX_DIM},
                  {"type_vocab_size", MAX_DIM},   {"num_hidden_layers", MAX_LAYERS}};
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        rf_error err = {{0}};
        char want[128];
        snprintf(want, sizeof want, "'%s' must be an integer in [1, %ld]", bounds[i].key,
                 bounds[i].limit);
        rf_status st = config_with(bounds[i].key, bounds[i].limit, &err);
        CHECK(st == RF_OK, "config.json %s %ld: accepted (%s)", bounds[i].key, bounds[i].limit,
              err.message);
        st = config_with(bounds[i].key, bounds[i].limit + 1, &err);
        CHECK(st == RF_ERR_FORMAT && strstr(err.message, want), "config.json %s %ld: status %d (%s)",
              bounds[i].key, bounds[i].limit + 1, st, err.message);
    }
}

/* A classifier's config with n labels "L<i>", label 0 spelled with
 * `label0_bytes` bytes. */
static char *labels_config(int n, size_t label0_bytes, size_t *len)
{
    size_t cap = 256 + (size_t)n * 24 + label0_bytes;
    char *text = malloc(cap);
    size_t k = (size_t)snprintf(text, cap,
                                "{\"vocab_size\": 10, \"hidden_size\": 4, \"num_hidden_layers\": 1, "
                                "\"num_attention_heads\": 1, \"intermediate_size\": 8, "
                                "\"architectures\": [\"RoFormerForSequenceClassification\"], "
                                "\"id2label\": {\"0\": \"");
    memset(text + k, 'x', label0_bytes);
    k += label0_bytes;
    k += (size_t)snprintf(text + k, cap - k, "\"");
    for (int i = 1; i < n; i++)
        k += (size_t)snprintf(text + k, cap - k, ", \"%d\": \"L%d\"", i, i);
    k += (size_t)snprintf(text + k, cap - k, "}}");
    *len = k;
    return text;
}

static void config_label_cases(void)
{
    static const struct {
        int n;
        size_t bytes;
        rf_status want;
        const char *message;
    } cases[] = {{MAX_LABELS, 2, RF_OK, ""},
                 {MAX_LABELS + 1, 2, RF_ERR_LIMIT, "more than 65536 labels"},
                 {2, MAX_LABEL_BYTES, RF_OK, ""},
                 {2, MAX_LABEL_BYTES + 1, RF_ERR_LIMIT, "id2label['0'] is longer than 4096 bytes"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        char *text = labels_config(cases[i].n, cases[i].bytes, &len);
        rf_error err = {{0}};
        rf_status st = parse_config(text, len, &err);
        CHECK(st == cases[i].want && strstr(err.message, cases[i].message),
              "config.json with %d labels, label 0 of %zu bytes: status %d, want %d (%s)", cases[i].n,
              cases[i].bytes, st, cases[i].want, err.message);
        free(text);
    }
}

/* ==== GGUF keys ==== */

/* Loads the seed model with u32 key `key` set to `value`. */
static rf_status gguf_with(const char *key, uint32_t value, rf_error *err)
{
    const char *seed = "tests/fuzz/corpus/model/tiny-cls-f32.gguf";
    size_t len;
    char *file = check_read_file(seed, &len);
    rf_gguf *g = NULL;
    rf_status st = file ? rf_gguf_parse(file, len, seed, &g, err) : RF_ERR_IO;
    bool found = false;
    for (uint64_t i = 0; st == RF_OK && i < g->n_kv; i++)
        if (g->kv[i].key.len == strlen(key) && !memcmp(g->kv[i].key.ptr, key, strlen(key))) {
            /* the value follows the key's bytes and its u32 type */
            check_put_le((uint8_t *)(uintptr_t)g->kv[i].key.ptr + strlen(key) + 4, value, 4);
            found = true;
        }
    CHECK(found, "%s holds %s", seed, key);
    rf_gguf_free(g);
    rf_model *model = NULL;
    if (st == RF_OK)
        st = rf_model_load_buffer(file, len, "patched.gguf", &model, err);
    rf_model_free(model);
    free(file);
    return st;
}

static void gguf_dimension_cases(void)
{
    static const struct {
        const char *key;
        uint32_t limit;
    } bounds[] = {{"roformer.block_count", MAX_LAYERS},
                  {"roformer.vocab_size", MAX_DIM},
                  {"roformer.feed_forward_length", MAX_DIM}};
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        rf_error err = {{0}};
        char want[128];
        snprintf(want, sizeof want, "'%s' = %u is outside [1, %u]", bounds[i].key,
                 bounds[i].limit + 1, bounds[i].limit);
        /* at the limit the file lacks what the value promises: refused, but
         * not by the limit */
        rf_status st = gguf_with(bounds[i].key, bounds[i].limit, &err);
        CHECK(st != RF_OK && !strstr(err.message, "is outside [1,"),
              "GGUF %s %u: not refused by the limit (%s)", bounds[i].key, bounds[i].limit, err.message);
        st = gguf_with(bounds[i].key, bounds[i].limit + 1, &err);
        CHECK(st == RF_ERR_FORMAT && strstr(err.message, want), "GGUF %s %u: status %d (%s)",
              bounds[i].key, bounds[i].limit + 1, st, err.message);
    }
}

/* ==== GGUF: names, dimensions, counts ==== */

/* A GGUF of one u32 key named with `key_bytes` 'k's and one f32 tensor
 * of `dims` dimensions of 1, named with `name_bytes` 't's; parsed. */
static rf_status gguf_of(size_t key_bytes, size_t name_bytes, uint32_t dims, rf_error *err)
{
    char *key = malloc(key_bytes + 1), *name = malloc(name_bytes + 1);
    memset(key, 'k', key_bytes);
    key[key_bytes] = '\0';
    memset(name, 't', name_bytes);
    name[name_bytes] = '\0';
    uint64_t ne[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    rf_gguf_writer *w = rf_gguf_writer_new();
    rf_gguf_set_u32(w, key, 1);
    rf_gguf_add_tensor(w, name, RF_DTYPE_F32, dims, ne, calloc(1, 4));
    void *b = NULL;
    size_t size = 0;
    rf_status st = rf_gguf_write_buffer(w, &b, &size, err);
    rf_gguf *g = NULL;
    if (st == RF_OK)
        st = rf_gguf_parse(b, size, "bounds.gguf", &g, err);
    rf_gguf_free(g);
    free(b);
    rf_gguf_writer_free(w);
    free(key);
    free(name);
    return st;
}

static void gguf_structure_cases(void)
{
    rf_error err = {{0}};
    rf_status st = gguf_of(RF_GGUF_MAX_KEY, RF_GGUF_MAX_KEY, RF_GGUF_MAX_DIMS, &err);
    CHECK(st == RF_OK, "GGUF: a key and a tensor name of 65535 bytes, 4 dimensions: read (%s)",
          err.message);
    st = gguf_of(RF_GGUF_MAX_KEY + 1, 4, 2, &err);
    CHECK(st == RF_ERR_LIMIT && strstr(err.message, "key of 65536 bytes") &&
              strstr(err.message, "exceeds the limit of 65535"),
          "GGUF: a key of 65536 bytes: status %d (%s)", st, err.message);
    st = gguf_of(4, RF_GGUF_MAX_KEY + 1, 2, &err);
    CHECK(st == RF_ERR_LIMIT && strstr(err.message, "tensor name of 65536 bytes") &&
              strstr(err.message, "exceeds the limit of 65535"),
          "GGUF: a tensor name of 65536 bytes: status %d (%s)", st, err.message);
    st = gguf_of(4, 4, RF_GGUF_MAX_DIMS + 1, &err);
    CHECK(st == RF_ERR_FORMAT && strstr(err.message, "5 dimensions"),
          "GGUF: a tensor of 5 dimensions: status %d (%s)", st, err.message);
    /* the counts of the header, against a file holding one of each: at
       the limit the file is too short for them, past it the limit says so */
    for (int field = 0; field < 2; field++)
        for (uint64_t n = 65536; n <= 65537; n++) {
            uint8_t hdr[24 + 64] = {0};
            memcpy(hdr, "GGUF", 4);
            check_put_le(hdr + 4, RF_GGUF_VERSION, 4);
            check_put_le(hdr + 8, field == 0 ? n : 1, 8);
            check_put_le(hdr + 16, field == 1 ? n : 1, 8);
            rf_gguf *g = NULL;
            st = rf_gguf_parse(hdr, sizeof hdr, "counts.gguf", &g, &err);
            rf_gguf_free(g);
            const char *what = field == 0 ? "tensors" : "keys";
            if (n == 65536)
                CHECK(st == RF_ERR_FORMAT && !strstr(err.message, "exceed the limits"),
                      "GGUF: %llu %s: not refused by the limit (%s)", (unsigned long long)n, what,
                      err.message);
            else
                CHECK(st == RF_ERR_LIMIT && strstr(err.message, "exceed the limits (65536, 65536)"),
                      "GGUF: %llu %s: status %d (%s)", (unsigned long long)n, what, st, err.message);
        }
}

/* ==== safetensors: 8 dimensions ==== */

static void safetensors_dimension_cases(void)
{
    for (int dims = RF_CK_MAX_DIMS; dims <= RF_CK_MAX_DIMS + 1; dims++) {
        char json[256];
        size_t h = (size_t)snprintf(json, sizeof json, "{\"t\":{\"dtype\":\"U8\",\"shape\":[");
        for (int d = 0; d < dims; d++)
            h += (size_t)snprintf(json + h, sizeof json - h, "%s1", d ? "," : "");
        h += (size_t)snprintf(json + h, sizeof json - h, "],\"data_offsets\":[0,1]}}");
        uint8_t b[300] = {0};
        check_put_le(b, h, 8);
        memcpy(b + 8, json, h);
        rf_checkpoint *ck = calloc(1, sizeof *ck);
        rf_error err = {{0}};
        rf_status st = rf_safetensors_read(b, 8 + h + 1, "dims.safetensors", ck, &err);
        if (dims == RF_CK_MAX_DIMS)
            CHECK(st == RF_OK, "safetensors tensor of %d dimensions: read (%s)", dims, err.message);
        else
            CHECK(st == RF_ERR_FORMAT && strstr(err.message, "too many dimensions"),
                  "safetensors tensor of %d dimensions: status %d (%s)", dims, st, err.message);
        rf_checkpoint_free(ck);
    }
}

/* ==== pytorch_model.bin: 1M zip entries ==== */

/* A zip64 archive whose directory claims `count` entries in count * 46
 * bytes of zeros: the claim passes the entry cap or not; the zeros then
 * fail as central directory headers. */
static void zip_entry_cases(void)
{
    for (uint64_t count = RF_ZIP_MAX_ENTRIES; count <= RF_ZIP_MAX_ENTRIES + 1; count++) {
        uint64_t cd_size = count * 46;
        size_t size = (size_t)cd_size + 56 + 20 + 22;
        uint8_t *b = calloc(1, size), *rec = b + cd_size, *loc = rec + 56, *eocd = loc + 20;
        check_put_le(rec, 0x06064b50, 4);            /* zip64 end of central directory */
        check_put_le(rec + 32, count, 8);
        check_put_le(rec + 40, cd_size, 8);
        check_put_le(rec + 48, 0, 8);
        check_put_le(loc, 0x07064b50, 4);            /* zip64 locator */
        check_put_le(loc + 8, cd_size, 8);
        check_put_le(eocd, 0x06054b50, 4);           /* end of central directory */
        check_put_le(eocd + 10, 0xffff, 2);
        check_put_le(eocd + 12, 0xffffffffu, 4);
        check_put_le(eocd + 16, 0xffffffffu, 4);
        rf_zip zip = {0};
        rf_error err = {{0}};
        rf_status st = rf_zip_open(b, size, "many.bin", &zip, &err);
        if (count == RF_ZIP_MAX_ENTRIES)
            CHECK(st != RF_OK && !strstr(err.message, "entries in"),
                  "zip claiming %llu entries: not refused by the cap (%s)", (unsigned long long)count,
                  err.message);
        else
            CHECK(st == RF_ERR_FORMAT && strstr(err.message, "claims 1048577 entries"),
                  "zip claiming %llu entries: status %d (%s)", (unsigned long long)count, st,
                  err.message);
        rf_zip_free(&zip);
        free(b);
    }
}

/* ==== the pickle: at most 2M values ==== */

static const uint8_t *no_storage(void *ctx, const char *key, size_t key_len, uint64_t *size)
{
    (void)ctx;
    (void)key;
    (void)key_len;
    *size = 0;
    return NULL;
}

/* PROTO 2, then n NONEs: each makes a value; no STOP, so a pickle within
 * the cap fails at its end instead. */
static void pickle_value_cases(void)
{
    for (size_t n = RF_PICKLE_MAX_VALUES; n <= RF_PICKLE_MAX_VALUES + 1; n++) {
        uint8_t *b = malloc(2 + n);
        b[0] = 0x80;
        b[1] = 2;
        memset(b + 2, 'N', n);
        rf_checkpoint *ck = calloc(1, sizeof *ck);
        rf_error err = {{0}};
        rf_status st = rf_unpickle_state_dict(b, 2 + n, no_storage, NULL, 2 + n, "nones.pkl", ck, &err);
        if (n == RF_PICKLE_MAX_VALUES)
            CHECK(st != RF_OK && !strstr(err.message, "values"),
                  "a pickle of 2M values: not refused by the cap (%s)", err.message);
        else
            CHECK(st == RF_ERR_LIMIT && strstr(err.message, "more than 2097152 values"),
                  "a pickle of 2M + 1 values: status %d (%s)", st, err.message);
        rf_checkpoint_free(ck);
        free(b);
    }
}

/* ==== the files a conversion reads ==== */

static char tmpdir[] = "/tmp/rf_bounds_XXXXXX";
static char model_dir[2048];

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", tmpdir, name);
}

/* Writes `n` bytes of `data` to tmpdir/name, then extends the file to
 * `total` bytes (a sparse tail of zeros) when `total` > n. */
static void write_sized(const char *name, const void *data, size_t n, uint64_t total)
{
    char path[PATH_MAX];
    path_in(path, sizeof path, name);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, n, f) == n && fclose(f) == 0, "write %s", path);
    if (total > n)
        CHECK(truncate(path, (off_t)total) == 0, "extend %s to %llu bytes", path,
              (unsigned long long)total);
}

/* The reference model's file `name`, read whole. */
static char *model_file(const char *name, size_t *len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", model_dir, name);
    return check_read_file(path, len);
}

/* Puts the reference model's files into tmpdir (copies of the text files,
 * links to the weights). */
static void reset_model_files(void)
{
    static const char *const texts[] = {"config.json", "vocab.txt", "tokenizer_config.json"};
    for (size_t i = 0; i < 3; i++) {
        size_t len;
        char *text = model_file(texts[i], &len);
        if (text)
            write_sized(texts[i], text, len, len);
        free(text);
    }
    char from[PATH_MAX], to[PATH_MAX], weights[PATH_MAX + 32];
    snprintf(weights, sizeof weights, "%s/model.safetensors", model_dir);
    path_in(to, sizeof to, "model.safetensors");
    unlink(to);
    CHECK(realpath(weights, from) && symlink(from, to) == 0, "link %s to %s", to, weights);
}

static rf_status convert(const char *dict, rf_error *err)
{
    char out[PATH_MAX];
    path_in(out, sizeof out, "out.gguf");
    rf_convert_params p = rf_convert_default_params();
    p.jieba_dict = dict;
    rf_status st = rf_convert(tmpdir, out, &p, err);
    unlink(out);
    return st;
}

/* A JSON file padded with spaces before its closing brace to `total` bytes. */
static void write_padded_json(const char *name, const char *json, size_t total)
{
    size_t n = strlen(json);
    char *b = malloc(total);
    memcpy(b, json, n - 1);
    memset(b + n - 1, ' ', total - n);
    b[total - 1] = '}';
    write_sized(name, b, total, total);
    free(b);
}

static void json_file_cases(void)
{
    static const char *const names[] = {"config.json", "tokenizer_config.json"};
    for (int i = 0; i < 2; i++) {
        size_t len;
        char *json = model_file(names[i], &len);
        if (!json)
            return;
        while (len && json[len - 1] != '}')   /* the closing brace ends the text */
            json[--len] = '\0';
        for (size_t total = MAX_JSON_FILE; total <= MAX_JSON_FILE + 1; total++) {
            reset_model_files();
            write_padded_json(names[i], json, total);
            rf_error err = {{0}};
            rf_status st = convert(NULL, &err);
            if (total == MAX_JSON_FILE)
                CHECK(st == RF_OK, "%s of 16 MiB: converted (%s)", names[i], err.message);
            else
                CHECK(st == RF_ERR_LIMIT && strstr(err.message, "16777217 bytes exceeds the limit of 16777216"),
                      "%s of 16 MiB + 1: status %d (%s)", names[i], st, err.message);
        }
        free(json);
    }
}

static void vocab_cases(void)
{
    size_t len;
    char *vocab = model_file("vocab.txt", &len);
    if (!vocab)
        return;
    /* the size: the model's vocabulary then a sparse tail */
    for (uint64_t total = MAX_VOCAB_FILE; total <= MAX_VOCAB_FILE + 1; total++) {
        reset_model_files();
        write_sized("vocab.txt", vocab, len, total);
        rf_error err = {{0}};
        rf_status st = convert(NULL, &err);
        if (total == MAX_VOCAB_FILE)
            /* read whole: its zero tail is one line, refused as an entry */
            CHECK(st == RF_ERR_LIMIT && strstr(err.message, "token longer than 65535 bytes"),
                  "vocab.txt of 256 MiB: read, not refused by its size (%s)", err.message);
        else
            CHECK(st == RF_ERR_LIMIT && strstr(err.message, "268435457 bytes exceeds the limit of 268435456"),
                  "vocab.txt of 256 MiB + 1: status %d (%s)", st, err.message);
    }
    /* an entry: the last token of the vocabulary replaced by a long one */
    size_t last = len - 1;
    while (last > 0 && vocab[last - 1] != '\n')
        last--;
    for (size_t bytes = MAX_ENTRY_BYTES; bytes <= MAX_ENTRY_BYTES + 1; bytes++) {
        char *b = malloc(last + bytes + 1);
        memcpy(b, vocab, last);
        memset(b + last, 'x', bytes);
        b[last + bytes] = '\n';
        reset_model_files();
        write_sized("vocab.txt", b, last + bytes + 1, 0);
        rf_error err = {{0}};
        rf_status st = convert(NULL, &err);
        if (bytes == MAX_ENTRY_BYTES)
            CHECK(st == RF_OK, "vocab.txt token of 65535 bytes: converted (%s)", err.message);
        else
            CHECK(st == RF_ERR_LIMIT && strstr(err.message, "token longer than 65535 bytes"),
                  "vocab.txt token of 65536 bytes: status %d (%s)", st, err.message);
        free(b);
    }
    free(vocab);
}

static void dict_cases(void)
{
    char dict[PATH_MAX];
    path_in(dict, sizeof dict, "dict.txt");
    reset_model_files();
    static const char words[] = "的 318825 uj\n今天 15960 t\n";
    /* past 1 GiB: refused by its size before it is read */
    write_sized("dict.txt", words, strlen(words), (uint64_t)MAX_DICT_FILE + 1);
    rf_error err = {{0}};
    rf_status st = convert(dict, &err);
    CHECK(st == RF_ERR_LIMIT && strstr(err.message, "1073741825 bytes exceeds the limit of 1073741824"),
          "dict.txt of 1 GiB + 1: status %d (%s)", st, err.message);
    unlink(dict);
    /* a word of 65535 bytes, then of 65536 */
    for (size_t bytes = MAX_ENTRY_BYTES; bytes <= MAX_ENTRY_BYTES + 1; bytes++) {
        size_t n = strlen(words);
        char *b = malloc(n + bytes + 16);
        memcpy(b, words, n);
        memset(b + n, 'x', bytes);
        n += bytes;
        n += (size_t)snprintf(b + n, 16, " 3 n\n");
        write_sized("dict.txt", b, n, 0);
        st = convert(dict, &err);
        if (bytes == MAX_ENTRY_BYTES)
            CHECK(st == RF_OK, "dict.txt word of 65535 bytes: converted (%s)", err.message);
        else
            CHECK(st == RF_ERR_LIMIT && strstr(err.message, "word longer than 65535 bytes"),
                  "dict.txt word of 65536 bytes: status %d (%s)", st, err.message);
        free(b);
    }
}

static void conversion_file_cases(void)
{
    const char *ref = getenv("ROFORMER_REFERENCE");
    snprintf(model_dir, sizeof model_dir, "%s/models/tiny-word-cls", ref ? ref : "../shared/reference");
    if (access(model_dir, R_OK) != 0) {
        SKIP("reference fixtures absent (%s): the conversion's file limits", model_dir);
        return;
    }
    if (!mkdtemp(tmpdir)) {
        CHECK(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    json_file_cases();
    vocab_cases();
    dict_cases();
    static const char *const names[] = {"config.json", "vocab.txt", "tokenizer_config.json",
                                        "model.safetensors", "dict.txt", "out.gguf"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[PATH_MAX];
        path_in(path, sizeof path, names[i]);
        unlink(path);
    }
    rmdir(tmpdir);
}

int main(void)
{
    config_dimension_cases();
    config_label_cases();
    gguf_dimension_cases();
    gguf_structure_cases();
    safetensors_dimension_cases();
    zip_entry_cases();
    pickle_value_cases();
    conversion_file_cases();
    return check_done();
}
