/*
 * test_corrupt.c — bad input gets the right status and a message that says
 * what and where, never a crash (this test also runs under ASan/UBSan).
 *
 *  - converted GGUF files: truncated in every region, magic, version, counts,
 *    lengths, key types, architecture, hyper-parameters, tensor shapes, names
 *    and types;
 *  - HF directories: config.json, tokenizer_config.json, vocab.txt, the jieba
 *    dictionary, model.safetensors (truncations, header, dtype, shape, names);
 *  - torch.save archives: a hand-built zip (stored and zip64) with a
 *    hand-written pickle that must load, then every truncation of it, unsafe
 *    globals, unsupported opcodes, bad storages and strides; truncations of
 *    the reference pytorch_model.bin.
 */
#include "../check.h"
#include "formats/checkpoint_open.h"
#include "formats/convert.h"
#include "kernels/fp16.h"
#include "formats/gguf.h"
#include "model/model.h"
#include "formats/pickle.h"
#include "formats/torch_zip.h"

#include <stdint.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/rf_test_corrupt_XXXXXX";

/* ==== Helpers ==== */

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, n, f);
        fclose(f);
    }
}

static size_t find(const uint8_t *p, size_t n, const char *needle, size_t len)
{
    for (size_t i = 0; i + len <= n; i++)
        if (!memcmp(p + i, needle, len))
            return i;
    return (size_t)-1;
}

/* Position just after a GGUF string `s` (its u64 length included). */
static size_t after_gguf_string(const uint8_t *p, size_t n, const char *s)
{
    size_t at = find(p, n, s, strlen(s));
    return at == (size_t)-1 ? 0 : at + strlen(s);
}

static void expect(rf_status got, const rf_error *err, rf_status want, const char *substr,
                   const char *what)
{
    CHECK(got == want && strstr(err->message, substr) && !strchr(err->message, '\n'),
          "%s: status %d '%s', expected %d with '%s'", what, got, err->message, want, substr);
}

static rf_status load(const char *path, rf_error *err)
{
    rf_model *m = NULL;
    rf_status st = rf_model_load(path, &m, err);
    rf_model_free(m);
    return st;
}

/* Writes `data` to tmpdir/bad.gguf and loads it. */
static void expect_gguf(const uint8_t *data, size_t n, rf_status want, const char *substr,
                        const char *what)
{
    char path[256];
    rf_error err = {{0}};
    snprintf(path, sizeof path, "%s/bad.gguf", tmpdir);
    write_file(path, data, n);
    expect(load(path, &err), &err, want, substr, what);
}

/* ==== A hand-built HF directory, one file replaced at a time ==== */

static const char *const hf_files[] = {"config.json", "vocab.txt", "tokenizer_config.json",
                                       "model.safetensors"};
static char *hf_orig[4];
static size_t hf_len[4];
static char hf_dir[256], dict_path[256];

static void hf_reset(void)
{
    char path[512];
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", hf_dir, hf_files[i]);
        write_file(path, hf_orig[i], hf_len[i]);
    }
}

/* Replaces file `i` of the HF dir, converts, and checks the outcome. */
static void expect_convert(int i, const void *data, size_t n, rf_status want, const char *substr,
                           const char *what)
{
    char path[512], out[512];
    rf_error err = {{0}};
    rf_convert_params p = rf_convert_default_params();
    p.jieba_dict = dict_path;
    hf_reset();
    snprintf(path, sizeof path, "%s/%s", hf_dir, hf_files[i]);
    write_file(path, data, n);
    snprintf(out, sizeof out, "%s/out.gguf", tmpdir);
    unlink(out);
    expect(rf_convert(hf_dir, out, &p, &err), &err, want, substr, what);
    CHECK(access(out, F_OK) != 0, "%s: no output file left behind", what);
}

/* The original file `i` with `from` replaced by `to` (same length or not). */
static char *replaced(int i, const char *from, const char *to, size_t *n)
{
    size_t pos = find((const uint8_t *)hf_orig[i], hf_len[i], from, strlen(from));
    const char *at = pos == (size_t)-1 ? NULL : hf_orig[i] + pos;
    size_t a = strlen(from), b = strlen(to);
    char *out = malloc(hf_len[i] - a + b + 1);
    if (!at) {
        memcpy(out, hf_orig[i], hf_len[i] + 1);
        *n = hf_len[i];
        return out;
    }
    size_t pre = (size_t)(at - hf_orig[i]);
    memcpy(out, hf_orig[i], pre);
    memcpy(out + pre, to, b);
    memcpy(out + pre + b, at + a, hf_len[i] - pre - a + 1);
    *n = hf_len[i] - a + b;
    return out;
}

static void expect_replaced(int i, const char *from, const char *to, rf_status want,
                            const char *substr, const char *what)
{
    size_t n;
    char *text = replaced(i, from, to, &n);
    CHECK(find((const uint8_t *)hf_orig[i], hf_len[i], from, strlen(from)) != (size_t)-1,
          "%s: '%s' found in %s", what, from, hf_files[i]);
    expect_convert(i, text, n, want, substr, what);
    free(text);
}

static void hf_directory_cases(void)
{
    size_t n;
    /* config.json */
    expect_convert(0, "{\"hidden_size\": 48,", 19, RF_ERR_FORMAT, "config.json: bad JSON",
                   "config.json: bad JSON");
    expect_convert(0, "[1, 2]", 6, RF_ERR_FORMAT, "not a JSON object", "config.json: not an object");
    expect_replaced(0, "\"relu\"", "\"mish\"", RF_ERR_UNSUPPORTED, "hidden_act 'mish'",
                    "config.json: unknown activation");
    expect_replaced(0, "\"roformer\"", "\"bert\"", RF_ERR_UNSUPPORTED, "model_type 'bert'",
                    "config.json: model_type");
    expect_replaced(0, "\"hidden_size\": 48", "\"hidden_size\": 47", RF_ERR_FORMAT,
                    "even head size", "config.json: odd hidden size");
    expect_replaced(0, "\"hidden_size\": 48", "\"hidden_size\": \"48\"", RF_ERR_FORMAT,
                    "'hidden_size' must be an integer", "config.json: string size");
    expect_replaced(0, "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 1e300", RF_ERR_FORMAT,
                    "'num_hidden_layers' must be an integer", "config.json: huge layer count");
    expect_replaced(0, "\"vocab_size\": 5565", "\"vocab_size\": 100", RF_ERR_SHAPE,
                    "config.json says vocab_size 100", "config.json: vocab_size below vocab.txt");
    expect_replaced(0, "\"intermediate_size\": 96", "\"intermediate_size\": 97", RF_ERR_SHAPE,
                    "tensor 'roformer.encoder.layer.0.intermediate.dense.weight' has shape [96,48], expected [97,48]",
                    "config.json: intermediate size differs from the weights");
    expect_replaced(0, "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 3", RF_ERR_SHAPE,
                    "missing tensor 'roformer.encoder.layer.2.attention.self.query.weight'",
                    "config.json: more layers than the checkpoint");
    expect_replaced(0, "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 1", RF_ERR_SHAPE,
                    "unexpected tensor 'roformer.encoder.layer.1.",
                    "config.json: fewer layers than the checkpoint");
    expect_replaced(0, "RoFormerForQuestionAnswering", "BertForQuestionAnswering", RF_ERR_UNSUPPORTED,
                    "architecture 'BertForQuestionAnswering'", "config.json: architecture");
    expect_replaced(0, "RoFormerForQuestionAnswering", "RoFormerForMaskedLM", RF_ERR_SHAPE,
                    "missing tensor 'cls.predictions.transform.dense.weight'",
                    "config.json: head without its tensors");
    expect_replaced(0, "\"layer_norm_eps\": 1e-12", "\"layer_norm_eps\": -1", RF_ERR_FORMAT,
                    "layer_norm_eps", "config.json: negative epsilon");
    /* tokenizer_config.json */
    expect_replaced(2, "RoFormerTokenizer", "XLNetTokenizer", RF_ERR_UNSUPPORTED,
                    "tokenizer_class 'XLNetTokenizer' is not supported (choose one with --tokenizer",
                    "tokenizer_config.json: class");
    expect_replaced(2, "\"do_lower_case\": true", "\"do_lower_case\": 1", RF_ERR_FORMAT,
                    "'do_lower_case' must be true or false", "tokenizer_config.json: bool");
    expect_convert(2, "{", 1, RF_ERR_FORMAT, "tokenizer_config.json: bad JSON",
                   "tokenizer_config.json: bad JSON");
    /* vocab.txt */
    expect_replaced(1, "[MASK]\n", "[MASQ]\n", RF_ERR_FORMAT, "special token '[MASK]' is not in the vocab",
                    "vocab.txt without [MASK]");
    expect_convert(1, "\xff\xfe\n", 3, RF_ERR_FORMAT, "vocab.txt:1: invalid UTF-8", "vocab.txt: bad UTF-8");
    /* the jieba dictionary */
    {
        char out[512];
        rf_error err = {{0}};
        rf_convert_params p = rf_convert_default_params();
        hf_reset();
        write_file(dict_path, "的 318825 uj\n今天 lots t\n", strlen("的 318825 uj\n今天 lots t\n"));
        p.jieba_dict = dict_path;
        snprintf(out, sizeof out, "%s/out.gguf", tmpdir);
        expect(rf_convert(hf_dir, out, &p, &err), &err, RF_ERR_FORMAT, "dict.txt:2: expected 'word frequency",
               "jieba dict: bad frequency");
        write_file(dict_path, "的 99999999999 uj\n", strlen("的 99999999999 uj\n"));
        expect(rf_convert(hf_dir, out, &p, &err), &err, RF_ERR_FORMAT, "dict.txt:1:",
               "jieba dict: frequency over 32 bits");
        p.jieba_dict = "/nonexistent/dict.txt";
        expect(rf_convert(hf_dir, out, &p, &err), &err, RF_ERR_IO, "/nonexistent/dict.txt: cannot open",
               "jieba dict: missing");
        write_file(dict_path, "的 318825 uj\n今天 15960 t\n", strlen("的 318825 uj\n今天 15960 t\n"));
    }
    /* model.safetensors */
    int st = 3;
    size_t cuts[] = {0, 4, 8, 9, 100, 4000, hf_len[st] / 2, hf_len[st] - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "model.safetensors cut at %zu", cuts[i]);
        expect_convert(st, hf_orig[st], cuts[i], RF_ERR_FORMAT, "model.safetensors: ", what);
    }
    char *bad = malloc(hf_len[st]);
    memcpy(bad, hf_orig[st], hf_len[st]);
    check_put_le((uint8_t *)bad, 1ull << 40, 8);
    expect_convert(st, bad, hf_len[st], RF_ERR_LIMIT, "header of 1099511627776 bytes exceeds the limit",
                   "safetensors: huge header length");
    memcpy(bad, hf_orig[st], hf_len[st]);
    bad[8] = '[';
    expect_convert(st, bad, hf_len[st], RF_ERR_FORMAT, "header is not a JSON object",
                   "safetensors: header not an object");
    free(bad);
    expect_replaced(st, "\"qa_outputs.bias\":{\"dtype\":\"F32\"", "\"qa_outputs.bias\":{\"dtype\":\"I32\"",
                    RF_ERR_UNSUPPORTED, "tensor 'qa_outputs.bias' has dtype I32, expected F32, F16 or BF16",
                    "safetensors: integer weights");
    expect_replaced(st, "\"qa_outputs.bias\":{\"dtype\":\"F32\"", "\"qa_outputs.bias\":{\"dtype\":\"F8X\"",
                    RF_ERR_UNSUPPORTED, "tensor 'qa_outputs.bias' has an unsupported dtype",
                    "safetensors: unknown dtype");
    expect_replaced(st, "\"shape\":[96,48]", "\"shape\":[48,96]", RF_ERR_SHAPE,
                    "has shape [48,96], expected [96,48]", "safetensors: transposed weight");
    expect_replaced(st, "\"shape\":[96,48]", "\"shape\":[96,49]", RF_ERR_FORMAT,
                    "data_offsets that do not match its shape", "safetensors: shape vs offsets");
    expect_replaced(st, "\"qa_outputs.bias\"", "\"qa_outputs.bia_\"", RF_ERR_SHAPE,
                    "missing tensor 'qa_outputs.bias'", "safetensors: renamed tensor");
    expect_replaced(st, "\"roformer.encoder.embed_positions.weight\"",
                    "\"roformer.encoder.embed_positionz.weight\"", RF_ERR_SHAPE,
                    "unexpected tensor 'roformer.encoder.embed_positionz.weight'",
                    "safetensors: unexpected tensor");
    expect_replaced(st, "\"qa_outputs.weight\":", "\"qa_outputs.bias\"  :", RF_ERR_FORMAT,
                    "duplicate tensor 'qa_outputs.bias'", "safetensors: duplicate name");
    expect_replaced(st, "\"data_offsets\":[0,", "\"data_offsets\":[9,", RF_ERR_FORMAT,
                    "data_offsets", "safetensors: inconsistent offsets");
    (void)n;
    hf_reset();

    /* files missing */
    rf_error err = {{0}};
    char path[512], out[512];
    snprintf(out, sizeof out, "%s/out.gguf", tmpdir);
    snprintf(path, sizeof path, "%s/model.safetensors", hf_dir);
    unlink(path);
    rf_convert_params p = rf_convert_default_params();
    p.jieba_dict = dict_path;
    expect(rf_convert(hf_dir, out, &p, &err), &err, RF_ERR_IO, "no model.safetensors or pytorch_model.bin",
           "no weights");
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", hf_dir);
    write_file(path, "{}", 2);
    expect(rf_convert(hf_dir, out, &p, &err), &err, RF_ERR_UNSUPPORTED,
           "sharded checkpoints (model.safetensors.index.json) are not supported", "sharded weights");
    unlink(path);
    hf_reset();
    snprintf(path, sizeof path, "%s/config.json", hf_dir);
    unlink(path);
    expect(rf_convert(hf_dir, out, &p, &err), &err, RF_ERR_IO, "config.json: cannot open", "no config.json");
    hf_reset();
    snprintf(path, sizeof path, "%s/no-such-dir", tmpdir);
    expect(load(path, &err), &err, RF_ERR_IO, "no-such-dir: cannot open", "missing model path");
    expect(rf_convert(hf_dir, "/nonexistent/out.gguf", &p, &err), &err, RF_ERR_IO,
           "/nonexistent/out.gguf: cannot create", "unwritable output");
}

/* ==== Converted GGUF files ==== */

static void gguf_cases(void)
{
    char path[512];
    rf_error err = {{0}};
    rf_convert_params p = rf_convert_default_params();
    p.jieba_dict = dict_path;
    snprintf(path, sizeof path, "%s/good.gguf", tmpdir);
    hf_reset();
    CHECK(rf_convert(hf_dir, path, &p, &err) == RF_OK, "convert the good model: %s", err.message);
    size_t n = 0;
    uint8_t *good = (uint8_t *)check_read_file(path, &n);
    if (!good)
        return;
    CHECK(load(path, &err) == RF_OK, "the good model loads: %s", err.message);

    /* truncation in every region: header, metadata, vocab, dictionary,
     * tensor infos, and the first, middle and last byte of every tensor */
    rf_gguf *g = NULL;
    size_t cuts[512], n_cuts = 0;
    for (size_t c = 0; c < 40; c++)
        cuts[n_cuts++] = c;
    for (size_t c = 40; c < 4096 && n_cuts < 200; c += 97)
        cuts[n_cuts++] = c;
    const char *marks[] = {"tokenizer.ggml.tokens", "tokenizer.jieba.words", "tokenizer.jieba.freqs",
                           "token_embd.weight", "qa.bias"};
    for (size_t k = 0; k < sizeof marks / sizeof marks[0]; k++) {
        size_t at = after_gguf_string(good, n, marks[k]);
        for (size_t d = 0; d < 14 && at; d += 3)
            cuts[n_cuts++] = at + d;
    }
    if (rf_gguf_parse(good, n, "good.gguf", &g, &err) == RF_OK) {
        cuts[n_cuts++] = g->data_offset - 1;
        for (uint64_t i = 0; i < g->n_tensors && n_cuts + 3 < sizeof cuts / sizeof cuts[0]; i++) {
            size_t start = (size_t)(g->tensors[i].data - good);
            cuts[n_cuts++] = start;
            cuts[n_cuts++] = start + g->tensors[i].nbytes / 2;
            cuts[n_cuts++] = start + g->tensors[i].nbytes - 1;
        }
        rf_gguf_free(g);
    }
    int bad = 0;
    for (size_t i = 0; i < n_cuts; i++) {
        char p2[512];
        snprintf(p2, sizeof p2, "%s/cut.gguf", tmpdir);
        write_file(p2, good, cuts[i]);
        rf_status st = load(p2, &err);
        if (st != RF_ERR_FORMAT || !strstr(err.message, "truncated")) {
            bad++;
            fprintf(stderr, "cut at %zu: %d %s\n", cuts[i], st, err.message);
        }
    }
    CHECK(bad == 0, "%d of %zu truncated GGUF files not reported as truncated", bad, n_cuts);

    /* a denser sweep in memory: a character-level conversion (no
     * dictionary), cut every 7 bytes through metadata and tensor infos */
    {
        rf_convert_params pb = rf_convert_default_params();
        void *img = NULL;
        size_t img_n = 0;
        pb.tokenizer = RF_TOKENIZER_BERT;
        rf_status st = rf_convert_to_buffer(hf_dir, &pb, &img, &img_n, &err);
        CHECK(st == RF_OK, "convert to memory: %s", err.message);
        rf_gguf *gb = NULL;
        size_t head = 0, tried = 0;
        if (!st && rf_gguf_parse(img, img_n, "mem", &gb, &err) == RF_OK) {
            head = gb->data_offset;
            rf_gguf_free(gb);
        }
        int wrong = 0;
        for (size_t cut = 0; cut < head; cut += 7, tried++) {
            uint8_t *copy = malloc(cut ? cut : 1); /* exact size: ASan sees overreads */
            memcpy(copy, img, cut);
            rf_model *m = NULL;
            st = rf_model_load_buffer(copy, cut, "mem.gguf", &m, &err);
            if (st != RF_ERR_FORMAT || !strstr(err.message, "mem.gguf: truncated"))
                wrong++;
            rf_model_free(m);
            free(copy);
        }
        CHECK(head > 0 && wrong == 0, "%d of %zu in-memory truncations not reported as truncated",
              wrong, tried);
        rf_model *m = NULL;
        CHECK(rf_model_load_buffer(img, img_n, "mem.gguf", &m, &err) == RF_OK, "the whole image loads");
        rf_model_free(m);
        free(img);
    }

    uint8_t *b = malloc(n);
    size_t at;
#define RESET() memcpy(b, good, n)
    RESET();
    b[1] = 'X';
    expect_gguf(b, n, RF_ERR_FORMAT, "not a GGUF file (bad magic)", "flipped magic");
    RESET();
    check_put_le(b + 4, 2, 4);
    expect_gguf(b, n, RF_ERR_UNSUPPORTED, "GGUF version 2, expected 3", "version 2");
    RESET();
    check_put_le(b + 8, 1ull << 40, 8);
    expect_gguf(b, n, RF_ERR_LIMIT, "exceed the limits", "huge tensor count");
    RESET();
    check_put_le(b + 16, 1ull << 62, 8);
    expect_gguf(b, n, RF_ERR_LIMIT, "exceed the limits", "huge key count");
    RESET();
    at = after_gguf_string(b, n, "general.architecture") + 4;
    memcpy(b + at + 8, "bertbert", 8);
    expect_gguf(b, n, RF_ERR_UNSUPPORTED, "architecture 'bertbert' is not roformer", "architecture");
    RESET();
    check_put_le(b + at, 1ull << 61, 8);
    expect_gguf(b, n, RF_ERR_FORMAT, "truncated", "huge string length");
    RESET();
    at = after_gguf_string(b, n, "tokenizer.ggml.tokens") + 4 + 4;
    check_put_le(b + at, 1ull << 59, 8);
    expect_gguf(b, n, RF_ERR_FORMAT, "truncated", "huge vocab array length");
    RESET();
    check_put_le(b + at + 8, 1ull << 45, 8);
    expect_gguf(b, n, RF_ERR_FORMAT, "truncated", "huge vocab entry length");
    RESET();
    at = after_gguf_string(b, n, "roformer.block_count");
    check_put_le(b + at, 5, 4); /* uint32 -> int32 */
    expect_gguf(b, n, RF_ERR_FORMAT, "key 'roformer.block_count' is int32, expected uint32",
                "hyper-parameter of the wrong type");
    RESET();
    check_put_le(b + at + 4, 0, 4);
    expect_gguf(b, n, RF_ERR_FORMAT, "key 'roformer.block_count' = 0 is outside", "zero layers");
    RESET();
    at = after_gguf_string(b, n, "roformer.embedding_length");
    check_put_le(b + at + 4, 47, 4);
    expect_gguf(b, n, RF_ERR_FORMAT, "hidden size 47 is not 2 heads of an even size", "odd hidden size");
    at = after_gguf_string(b, n, "roformer.attention.layer_norm_epsilon");
    const float bad_eps[] = {0.0f, 1.0f};
    for (int i = 0; i < 2; i++) {
        uint32_t bits;
        memcpy(&bits, &bad_eps[i], sizeof bits);
        RESET();
        check_put_le(b + at + 4, bits, 4); /* after the key: its type, then the float32 */
        expect_gguf(b, n, RF_ERR_FORMAT, "layer_norm_epsilon must be in (0, 1)",
                    i ? "epsilon 1" : "epsilon 0");
    }
    RESET();
    at = after_gguf_string(b, n, "roformer.hidden_act");
    b[at + 4 + 8] = 'X';
    expect_gguf(b, n, RF_ERR_UNSUPPORTED, "roformer.hidden_act 'Xelu' is not supported", "activation");
    RESET();
    at = after_gguf_string(b, n, "tokenizer.ggml.mask_token_id");
    check_put_le(b + at + 4, 5565, 4);
    expect_gguf(b, n, RF_ERR_FORMAT, "key 'tokenizer.ggml.mask_token_id' = 5565 is outside [0, 5564]",
                "special id past the vocab");
    RESET();
    at = after_gguf_string(b, n, "tokenizer.roformer.mode");
    memcpy(b + at - 4, "MODE", 4); /* rename the key: it is then missing */
    expect_gguf(b, n, RF_ERR_FORMAT, "missing key 'tokenizer.roformer.mode'", "missing key");
    RESET();
    at = after_gguf_string(b, n, "blk.0.ffn_up.weight"); /* n_dims, ne[0], ne[1], type, offset */
    check_put_le(b + at + 4 + 8, 95, 8);
    expect_gguf(b, n, RF_ERR_SHAPE, "tensor 'blk.0.ffn_up.weight' has shape [48,95], expected [48,96]",
                "wrong tensor shape");
    RESET();
    check_put_le(b + at + 4 + 8, 0, 8);
    expect_gguf(b, n, RF_ERR_FORMAT, "tensor 'blk.0.ffn_up.weight' has a zero dimension",
                "zero dimension");
    RESET();
    check_put_le(b + at, 1, 4); /* one dim: every later field shifts */
    {
        char p2[512];
        snprintf(p2, sizeof p2, "%s/bad.gguf", tmpdir);
        write_file(p2, b, n);
        rf_status st = load(p2, &err);
        CHECK(st != RF_OK && strstr(err.message, "bad.gguf"), "shifted tensor infos: %d %s", st,
              err.message);
    }
    RESET();
    check_put_le(b + at + 4 + 16, 30, 4); /* f32 -> bf16: half the bytes, still in the file */
    expect_gguf(b, n, RF_OK, "", "bf16 storage is accepted");
    RESET();
    check_put_le(b + at + 4 + 16, 8, 4); /* Q8_0 */
    expect_gguf(b, n, RF_ERR_UNSUPPORTED, "tensor 'blk.0.ffn_up.weight' has unsupported type 8",
                "quantized tensor");
    RESET();
    check_put_le(b + at + 4 + 16 + 4, 1ull << 50, 8);
    expect_gguf(b, n, RF_ERR_FORMAT, "truncated file (tensor 'blk.0.ffn_up.weight' needs bytes",
                "tensor offset past the end");
    RESET();
    at = after_gguf_string(b, n, "blk.1.attn_q.weight");
    b[at - 8] = 'Q';
    expect_gguf(b, n, RF_ERR_SHAPE, "missing tensor 'blk.1.attn_q.weight'", "renamed tensor");
    RESET();
    at = after_gguf_string(b, n, "blk.1.attn_q.weight");
    b[at - 8] = 'k';
    expect_gguf(b, n, RF_ERR_FORMAT, "duplicate tensor 'blk.1.attn_k.weight'", "duplicate tensor");
    RESET();
    at = after_gguf_string(b, n, "roformer.head");
    memcpy(b + at + 4 + 8, "no", 2);
    expect_gguf(b, n, RF_ERR_UNSUPPORTED, "head 'no' is not supported", "unknown head");
    RESET();
    memcpy(b + at + 4 + 8, "rf", 2); /* not a head either; and a tensor the head does not use: */
    at = after_gguf_string(b, n, "roformer.pooler");
    b[at + 4] = 1; /* claims a pooler the file lacks */
    memcpy(b + after_gguf_string(b, n, "roformer.head") + 12, "qa", 2);
    expect_gguf(b, n, RF_ERR_FORMAT, "missing key 'roformer.pooler.activation'", "pooler without activation");
#undef RESET
    free(b);
    free(good);
}

/* ==== torch.save archives ==== */

typedef struct {
    uint8_t *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void u8(buf *b, unsigned v)
{
    uint8_t c = (uint8_t)v;
    put(b, &c, 1);
}

static void le_n(buf *b, uint64_t v, int n)
{
    uint8_t t[8];
    check_put_le(t, v, n);
    put(b, t, (size_t)n);
}

static void ustr(buf *b, const char *s) /* SHORT_BINUNICODE */
{
    u8(b, 0x8c);
    u8(b, (unsigned)strlen(s));
    put(b, s, strlen(s));
}

static void global(buf *b, const char *mod, const char *name)
{
    u8(b, 'c');
    put(b, mod, strlen(mod));
    u8(b, '\n');
    put(b, name, strlen(name));
    u8(b, '\n');
}

static void int_tuple(buf *b, int n, const int *v)
{
    u8(b, '(');
    for (int i = 0; i < n; i++) {
        u8(b, 'K');
        u8(b, (unsigned)v[i]);
    }
    u8(b, 't');
}

/* name -> _rebuild_tensor_v2(storage(cls, key, numel), offset, size, stride, False, OrderedDict()) */
static void tensor(buf *b, const char *name, const char *cls, const char *key, int numel,
                   int offset, int n_dims, const int *size, const int *stride, bool parameter)
{
    ustr(b, name);
    if (parameter)
        global(b, "torch._utils", "_rebuild_parameter");
    /* the proto 4 way of naming a global */
    ustr(b, "torch._utils");
    ustr(b, "_rebuild_tensor_v2");
    u8(b, 0x93); /* STACK_GLOBAL */
    u8(b, '(');
    u8(b, '(');
    ustr(b, "storage");
    global(b, "torch", cls);
    ustr(b, key);
    ustr(b, "cpu");
    u8(b, 'K');
    u8(b, (unsigned)numel);
    u8(b, 't');
    u8(b, 'Q');
    u8(b, 'K');
    u8(b, (unsigned)offset);
    int_tuple(b, n_dims, size);
    int_tuple(b, n_dims, stride);
    u8(b, 0x89);
    global(b, "collections", "OrderedDict");
    u8(b, ')');
    u8(b, 'R');
    u8(b, 't');
    u8(b, 'R');
    if (parameter) {
        u8(b, 0x89);
        u8(b, ')');
        u8(b, 0x87); /* TUPLE3 (tensor, False, ()) */
        u8(b, 'R');
    }
}

/* A state dict exercising strides, offsets, shared storages, f16/bf16, the
 * memo and protocol 4 framing. `variant` swaps in one defect. */
static void make_pickle(buf *b, const char *variant)
{
    static const int s32[] = {3, 2}, st13[] = {1, 3}, st14[] = {1, 4}, s2[] = {2}, st2[] = {2},
                     st1[] = {1}, s22[] = {2, 2}, st21[] = {2, 1};
    u8(b, 0x80);
    u8(b, 4);
    u8(b, 0x95); /* FRAME */
    le_n(b, 0, 8);
    u8(b, '}');
    u8(b, 0x94); /* MEMOIZE -> 0 */
    u8(b, '(');
    tensor(b, "t", "FloatStorage", "0", 6, 0, 2, s32, strcmp(variant, "stride") ? st13 : st14, false);
    u8(b, 0x94);
    tensor(b, "h", "HalfStorage", "1", 4, 1, 1, s2, st2, false);
    tensor(b, "shared", "FloatStorage", "0", 6, 2, 2, s22, st21, true);
    tensor(b, "bf", "BFloat16Storage", "2", 2, 0, 1, s2, st1, false);
    if (!strcmp(variant, "numel"))
        tensor(b, "big", "FloatStorage", "0", 100, 0, 1, s2, st1, false);
    if (!strcmp(variant, "missing"))
        tensor(b, "gone", "FloatStorage", "9", 2, 0, 1, s2, st1, false);
    if (!strcmp(variant, "global")) {
        ustr(b, "evil");
        global(b, "os", "system");
    }
    if (!strcmp(variant, "inst"))
        u8(b, 'i');
    if (!strcmp(variant, "memo")) {
        u8(b, 'N');
        u8(b, 'r');
        le_n(b, 0x7fffffff, 4);
    }
    if (!strcmp(variant, "dup"))
        tensor(b, "h", "HalfStorage", "1", 4, 0, 1, s2, st1, false);
    if (!strcmp(variant, "notensor")) {
        ustr(b, "x");
        u8(b, 'N');
    }
    u8(b, 'u');
    tensor(b, "one", "FloatStorage", "0", 6, 5, 1, (const int[]){1}, st1, false);
    u8(b, 's'); /* SETITEM */
    u8(b, 'h'); /* BINGET 0 (the dict), then POP it: memo reads work */
    u8(b, 0);
    u8(b, '0');
    u8(b, '.');
}

typedef struct {
    const char *name;
    const void *data;
    size_t size;
} zentry;

/* A zip archive of stored entries, as torch.save writes, optionally zip64. */
static void make_zip(buf *z, const zentry *e, int n, bool zip64)
{
    buf cd = {0};
    uint64_t offsets[8];
    for (int i = 0; i < n; i++) {
        offsets[i] = z->n;
        le_n(z, 0x04034b50, 4);
        le_n(z, 20, 2); /* version */
        le_n(z, 0, 2);  /* flags */
        le_n(z, 0, 2);  /* stored */
        le_n(z, 0, 4);  /* time, date */
        le_n(z, 0, 4);  /* crc (not checked) */
        le_n(z, e[i].size, 4);
        le_n(z, e[i].size, 4);
        le_n(z, strlen(e[i].name), 2);
        le_n(z, 3, 2); /* an extra field, as torch pads with one */
        put(z, e[i].name, strlen(e[i].name));
        put(z, "\0\0\0", 3);
        put(z, e[i].data, e[i].size);
    }
    for (int i = 0; i < n; i++) {
        le_n(&cd, 0x02014b50, 4);
        le_n(&cd, 45, 2);
        le_n(&cd, 45, 2);
        le_n(&cd, 0, 2);
        le_n(&cd, 0, 2);
        le_n(&cd, 0, 4);
        le_n(&cd, 0, 4);
        le_n(&cd, zip64 ? 0xffffffffu : e[i].size, 4);
        le_n(&cd, zip64 ? 0xffffffffu : e[i].size, 4);
        le_n(&cd, strlen(e[i].name), 2);
        le_n(&cd, zip64 ? 28 : 0, 2);
        le_n(&cd, 0, 2);
        le_n(&cd, 0, 2);
        le_n(&cd, 0, 2);
        le_n(&cd, 0, 4);
        le_n(&cd, zip64 ? 0xffffffffu : offsets[i], 4);
        put(&cd, e[i].name, strlen(e[i].name));
        if (zip64) {
            le_n(&cd, 1, 2);
            le_n(&cd, 24, 2);
            le_n(&cd, e[i].size, 8);
            le_n(&cd, e[i].size, 8);
            le_n(&cd, offsets[i], 8);
        }
    }
    uint64_t cd_off = z->n;
    put(z, cd.p, cd.n);
    if (zip64) {
        uint64_t rec = z->n;
        le_n(z, 0x06064b50, 4);
        le_n(z, 44, 8);
        le_n(z, 45, 2);
        le_n(z, 45, 2);
        le_n(z, 0, 4);
        le_n(z, 0, 4);
        le_n(z, (uint64_t)n, 8);
        le_n(z, (uint64_t)n, 8);
        le_n(z, cd.n, 8);
        le_n(z, cd_off, 8);
        le_n(z, 0x07064b50, 4);
        le_n(z, 0, 4);
        le_n(z, rec, 8);
        le_n(z, 1, 4);
    }
    le_n(z, 0x06054b50, 4);
    le_n(z, 0, 4);
    le_n(z, zip64 ? 0xffff : (unsigned)n, 2);
    le_n(z, zip64 ? 0xffff : (unsigned)n, 2);
    le_n(z, zip64 ? 0xffffffffu : cd.n, 4);
    le_n(z, zip64 ? 0xffffffffu : cd_off, 4);
    le_n(z, 0, 2);
    free(cd.p);
}

static rf_status read_torch(const uint8_t *data, size_t n, rf_checkpoint **out, rf_error *err)
{
    /* an exact-size copy, so that ASan sees any read past the end */
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, data, n);
    rf_checkpoint *ck = calloc(1, sizeof *ck);
    ck->map.data = NULL;
    rf_status st = rf_torch_read(copy, n, "test.bin", ck, err);
    rf_checkpoint_own(ck, copy, NULL);
    if (st || !out) {
        rf_checkpoint_free(ck);
        ck = NULL;
    }
    if (out)
        *out = ck;
    return st;
}

static void build_archive_from(buf *z, const uint8_t *pkl, size_t pkl_len, bool zip64)
{
    static const float f0[6] = {0, 1, 2, 3, 4, 5};
    uint16_t h1[4] = {rf_f32_to_f16(10), rf_f32_to_f16(11), rf_f32_to_f16(12), rf_f32_to_f16(13)};
    uint16_t b2[2] = {rf_f32_to_bf16(-1), rf_f32_to_bf16(0.5f)};
    zentry e[] = {{"archive/data.pkl", pkl, pkl_len},
                  {"archive/byteorder", "little", 6},
                  {"archive/data/0", f0, sizeof f0},
                  {"archive/data/1", h1, sizeof h1},
                  {"archive/data/2", b2, sizeof b2},
                  {"archive/version", "3\n", 2}};
    z->n = 0;
    make_zip(z, e, 6, zip64);
}

static void build_archive(buf *z, const char *variant, bool zip64)
{
    buf pk = {0};
    make_pickle(&pk, variant);
    build_archive_from(z, pk.p, pk.n, zip64);
    free(pk.p);
}

static float value(const rf_ck_tensor *t, int i)
{
    const uint8_t *p = t->data;
    uint16_t h;
    float f;
    if (t->dtype == RF_CK_F16 || t->dtype == RF_CK_BF16) {
        memcpy(&h, p + 2 * i, 2);
        return t->dtype == RF_CK_F16 ? rf_f16_to_f32(h) : rf_bf16_to_f32(h);
    }
    memcpy(&f, p + 4 * i, 4);
    return f;
}

static void torch_cases(const char *ref)
{
    buf z = {0};
    rf_error err = {{0}};
    rf_checkpoint *ck = NULL;
    for (int zip64 = 0; zip64 < 2; zip64++) {
        build_archive(&z, "", zip64);
        rf_status st = read_torch(z.p, z.n, &ck, &err);
        CHECK(st == RF_OK, "hand-built archive (zip64 %d): %s", zip64, err.message);
        if (st)
            continue;
        const rf_ck_tensor *t = rf_checkpoint_find(ck, "t"), *h = rf_checkpoint_find(ck, "h"),
                           *s = rf_checkpoint_find(ck, "shared"), *bf = rf_checkpoint_find(ck, "bf");
        const rf_ck_tensor *one = rf_checkpoint_find(ck, "one");
        CHECK(ck->n == 5 && t && h && s && bf && one, "five tensors (zip64 %d)", zip64);
        CHECK(one && one->count == 1 && value(one, 0) == 5, "tensor added by SETITEM");
        if (ck->n == 5 && t && h && s && bf) {
            /* t = storage viewed (3, 2) with strides (1, 3): the transpose */
            CHECK(t->n_dims == 2 && t->shape[0] == 3 && t->shape[1] == 2 && value(t, 0) == 0 &&
                      value(t, 1) == 3 && value(t, 2) == 1 && value(t, 5) == 5,
                  "strided tensor gathered row-major");
            CHECK(h->dtype == RF_CK_F16 && h->count == 2 && value(h, 0) == 11 && value(h, 1) == 13,
                  "f16 tensor with offset 1, stride 2");
            CHECK(s->dtype == RF_CK_F32 && value(s, 0) == 2 && value(s, 3) == 5,
                  "parameter sharing storage 0 at offset 2");
            CHECK(bf->dtype == RF_CK_BF16 && value(bf, 0) == -1 && value(bf, 1) == 0.5f, "bf16 tensor");
        }
        rf_checkpoint_free(ck);
    }

    /* every truncation of the archive is refused */
    build_archive(&z, "", false);
    int bad = 0;
    for (size_t n = 0; n < z.n; n++) {
        rf_status st = read_torch(z.p, n, NULL, &err);
        if (st != RF_ERR_FORMAT)
            bad++;
    }
    CHECK(bad == 0, "%d of %zu truncated archives not refused as malformed", bad, z.n);

    /* and every truncation of the pickle inside it */
    buf pk = {0};
    make_pickle(&pk, "");
    bad = 0;
    for (size_t n = 0; n <= pk.n; n++) {
        build_archive_from(&z, pk.p, n, false);
        rf_status st = read_torch(z.p, z.n, NULL, &err);
        if ((st == RF_OK) != (n == pk.n))
            bad++;
    }
    CHECK(bad == 0, "%d truncated pickles accepted (or the whole one refused)", bad);
    free(pk.p);

    static const struct {
        const char *variant;
        rf_status status;
        const char *message;
    } defects[] = {
        {"global", RF_ERR_UNSUPPORTED, "unsupported pickle global 'os.system'"},
        {"inst", RF_ERR_UNSUPPORTED, "unsupported pickle opcode INST (0x69)"},
        {"numel", RF_ERR_FORMAT, "truncated storage '0' (100 elements need 400 bytes, it has 24)"},
        {"stride", RF_ERR_FORMAT, "outside its storage"},
        {"missing", RF_ERR_FORMAT, "storage '9' is missing from the archive"},
        {"memo", RF_ERR_LIMIT, "memo index 2147483647 too large"},
        {"notensor", RF_ERR_FORMAT, "state dict entry 'x' is not a tensor"},
        {"dup", RF_ERR_FORMAT, "duplicate tensor 'h'"},
    };
    for (size_t i = 0; i < sizeof defects / sizeof defects[0]; i++) {
        build_archive(&z, defects[i].variant, false);
        rf_status st = read_torch(z.p, z.n, NULL, &err);
        expect(st, &err, defects[i].status, defects[i].message, defects[i].variant);
    }
    {
        zentry e[] = {{"data.pkl", "\x80\x02}.", 4}};
        z.n = 0;
        make_zip(&z, e, 1, false);
        expect(read_torch(z.p, z.n, NULL, &err), &err, RF_ERR_FORMAT, "not a torch.save archive",
               "archive without <name>/data.pkl");
    }
    free(z.p);

    /* the reference pytorch_model.bin, truncated, and a legacy pickle file */
    if (!ref) {
        SKIP("reference fixtures absent: pytorch_model.bin truncations not run");
        return;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/models/tiny-word-mlm/pytorch_model.bin", ref);
    size_t n = 0;
    uint8_t *bin = (uint8_t *)check_read_file(path, &n);
    CHECK(bin != NULL, "read %s", path);
    if (!bin)
        return;
    CHECK(read_torch(bin, n, NULL, &err) == RF_OK, "reference .bin reads: %s", err.message);
    size_t cuts[] = {0, 3, 30, 64, 200, 5000, n / 2, n - 200, n - 22, n - 1};
    bad = 0;
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        if (read_torch(bin, cuts[i], NULL, &err) != RF_ERR_FORMAT || !strstr(err.message, "test.bin"))
            bad++;
    CHECK(bad == 0, "%d truncated pytorch_model.bin not refused", bad);
    size_t at = find(bin, n, "collections\nOrderedDict\n", 24);
    CHECK(at != (size_t)-1, "pickle names collections.OrderedDict");
    if (at != (size_t)-1) {
        memcpy(bin + at, "subprocess\ncheck_output\n", 24);
        expect(read_torch(bin, n, NULL, &err), &err, RF_ERR_UNSUPPORTED,
               "unsupported pickle global 'subprocess.check_output'", "patched global in the .bin");
    }
    free(bin);
    char legacy[256];
    snprintf(legacy, sizeof legacy, "%s/legacy.bin", tmpdir);
    write_file(legacy, "\x80\x02\x8a\x0a", 4);
    expect(rf_checkpoint_open(legacy, &ck, &err), &err, RF_ERR_UNSUPPORTED, "legacy (pre-1.6",
           "legacy torch format");
}

int main(void)
{
    const char *ref = check_reference();
    if (!mkdtemp(tmpdir)) {
        CHECK(0, "mkdtemp");
        return check_done();
    }
    torch_cases(ref);
    if (ref) {
        /* a copy of tiny-qa with a two-word jieba dictionary keeps each case fast */
        snprintf(hf_dir, sizeof hf_dir, "%s/hf", tmpdir);
        snprintf(dict_path, sizeof dict_path, "%s/dict.txt", tmpdir);
        mkdir(hf_dir, 0700);
        write_file(dict_path, "的 318825 uj\n今天 15960 t\n", strlen("的 318825 uj\n今天 15960 t\n"));
        for (int i = 0; i < 4; i++) {
            char path[1024];
            snprintf(path, sizeof path, "%s/models/tiny-qa/%s", ref, hf_files[i]);
            hf_orig[i] = check_read_file(path, &hf_len[i]);
            CHECK(hf_orig[i] != NULL, "read %s", path);
        }
        if (hf_orig[0] && hf_orig[1] && hf_orig[2] && hf_orig[3]) {
            hf_directory_cases();
            gguf_cases();
        }
        for (int i = 0; i < 4; i++)
            free(hf_orig[i]);
    } else {
        SKIP("reference fixtures not found (../shared/reference or $ROFORMER_REFERENCE): "
             "checkpoint and GGUF corruption cases not run");
    }
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    CHECK(system(cmd) == 0, "clean up");
    return check_done();
}
