/*
 * test_v2.c — RoFormer-v2 checkpoints through the converter and the loader
 * (tiny-v2-mlm, tiny-v2-cls; the numbers themselves are test_parity's).
 *
 * Expected values come from the checkpoint files, read here with cJSON and
 * plain byte access: the GGUF metadata says rms_norm and no encoder biases
 * (and layer_norm with biases for a v1 model); the model has no norm or
 * encoder-bias tensors and their pointers are NULL; the MLM head is the tied
 * decoder alone; every weight equals the checkpoint's; model.safetensors
 * (decoder left out) and pytorch_model.bin (decoder stored) give the same
 * bytes; a config that disagrees with the weights fails naming the missing
 * or unexpected tensor; a GGUF file without the two keys loads as v1.
 */
#include "../check.h"
#include "../safetensors_read.h"
#include "formats/gguf.h"
#include "model/model.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/rf_test_v2_XXXXXX";

/* ==== Files ==== */

/* DIR/name -> tmpdir/sub/name as a symlink, for the listed files present. */
static void link_files(const char *dir, const char *sub, const char *const *names, int n)
{
    char abs_dir[PATH_MAX], from[PATH_MAX + 64], to[1200];
    CHECK(realpath(dir, abs_dir) != NULL, "realpath %s", dir);
    snprintf(to, sizeof to, "%s/%s", tmpdir, sub);
    mkdir(to, 0700);
    for (int i = 0; i < n; i++) {
        snprintf(from, sizeof from, "%s/%s", abs_dir, names[i]);
        snprintf(to, sizeof to, "%s/%s/%s", tmpdir, sub, names[i]);
        if (access(from, F_OK) == 0)
            CHECK(symlink(from, to) == 0, "symlink %s", to);
    }
}

/* Writes tmpdir/sub/config.json: DIR's config.json with `edit` applied. */
static void write_config(const char *dir, const char *sub, void (*edit)(cJSON *))
{
    char path[1200];
    snprintf(path, sizeof path, "%s/config.json", dir);
    char *text = check_read_file(path, NULL);
    cJSON *c = cJSON_Parse(text);
    edit(c);
    char *out = cJSON_Print(c);
    snprintf(path, sizeof path, "%s/%s/config.json", tmpdir, sub);
    FILE *f = fopen(path, "w");
    CHECK(f && out && fputs(out, f) >= 0, "write %s", path);
    if (f)
        fclose(f);
    free(out);
    cJSON_Delete(c);
    free(text);
}

static void set_key(cJSON *c, const char *key, cJSON *value)
{
    cJSON_DeleteItemFromObjectCaseSensitive(c, key);
    cJSON_AddItemToObject(c, key, value);
}

/* ==== The checkpoint, read independently ==== */

/* The loaded weight an HF name maps to (NULL for one the model lacks). */
static const float *weight_of(const rf_model *m, const char *hf, int64_t *count)
{
    const rf_weights *w = &m->w;
    const rf_hparams *hp = &m->hp;
    int64_t D = hp->hidden_size, F = hp->intermediate_size, V = hp->vocab_size, N = hp->num_labels;
    int layer;
    char part[96];
    if (sscanf(hf, "roformer.encoder.layer.%d.%95s", &layer, part) == 2 && layer >= 0 &&
        layer < hp->num_layers) {
        const rf_layer_weights *l = &w->layers[layer];
        static const char *const names[] = {
            "attention.self.query.weight", "attention.self.key.weight",
            "attention.self.value.weight", "attention.output.dense.weight",
            "intermediate.dense.weight",   "output.dense.weight"};
        const float *ptrs[] = {l->attn_q_w, l->attn_k_w, l->attn_v_w, l->attn_out_w, l->ffn_up_w,
                               l->ffn_down_w};
        const int64_t counts[] = {D * D, D * D, D * D, D * D, F * D, D * F};
        for (int i = 0; i < 6; i++)
            if (!strcmp(part, names[i])) {
                *count = counts[i];
                return ptrs[i];
            }
        return NULL;
    }
    static const char *const names[] = {
        "roformer.embeddings.word_embeddings.weight", "roformer.embeddings.token_type_embeddings.weight",
        "classifier.dense.weight", "classifier.dense.bias", "classifier.out_proj.weight",
        "classifier.out_proj.bias"};
    const float *ptrs[] = {w->token_embd, w->token_types, w->cls_dense_w, w->cls_dense_b,
                           w->cls_out_w, w->cls_out_b};
    const int64_t counts[] = {V * D, 2 * D, D * D, D, N * D, N};
    for (int i = 0; i < 6; i++)
        if (!strcmp(hf, names[i])) {
            *count = counts[i];
            return ptrs[i];
        }
    return NULL;
}

/* Every checkpoint tensor is a loaded weight with the same bytes. */
static void check_weights(const rf_model *m, const char *dir, const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    st_file f;
    if (!st_open(path, &f)) {
        CHECK(0, "%s: cannot read %s", name, path);
        st_close(&f);
        return;
    }
    int n = 0, bad = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, f.header) {
        if (!strcmp(e->string, "__metadata__"))
            continue;
        n++;
        const cJSON *offs = cJSON_GetObjectItem(e, "data_offsets");
        size_t begin = (size_t)cJSON_GetArrayItem(offs, 0)->valuedouble;
        size_t end = (size_t)cJSON_GetArrayItem(offs, 1)->valuedouble;
        int64_t count = 0;
        const float *w = weight_of(m, e->string, &count);
        if (!w || strcmp(cJSON_GetObjectItem(e, "dtype")->valuestring, "F32") ||
            (size_t)count * 4 != end - begin || memcmp(w, f.data + begin, end - begin)) {
            fprintf(stderr, "  %s: '%s' differs or is not loaded\n", name, e->string);
            bad++;
        }
    }
    CHECK(n > 0 && bad == 0, "%s: %d of %d checkpoint tensors differ from the loaded weights", name,
          bad, n);
    CHECK(rf_model_tensor_count(m) == n, "%s: %d GGUF tensors, the checkpoint has %d", name,
          rf_model_tensor_count(m), n);
    st_close(&f);
}

/* ==== The converted model ==== */

static rf_status convert_load(const char *dir, const char *gguf, rf_model **m, rf_error *err)
{
    rf_convert_params p = rf_convert_default_params();
    rf_status st = rf_convert(dir, gguf, &p, err);
    *m = NULL;
    return st ? st : rf_model_load(gguf, m, err);
}

/* The metadata keys as the file holds them. */
static void check_keys(const char *gguf, const char *norm, bool bias, const char *name)
{
    size_t size = 0;
    char *bytes = check_read_file(gguf, &size);
    rf_gguf *g = NULL;
    rf_error err;
    rf_status st = bytes ? rf_gguf_parse(bytes, size, gguf, &g, &err) : RF_ERR_IO;
    CHECK(st == RF_OK, "%s: parse %s", name, gguf);
    if (!st) {
        const rf_gguf_kv *kn = rf_gguf_find_kv(g, "roformer.norm_type");
        const rf_gguf_kv *kb = rf_gguf_find_kv(g, "roformer.use_bias");
        CHECK(kn && kn->type == RF_GGUF_STRING && kn->v.str.len == strlen(norm) &&
                  !memcmp(kn->v.str.ptr, norm, strlen(norm)),
              "%s: roformer.norm_type is \"%s\"", name, norm);
        CHECK(kb && kb->type == RF_GGUF_BOOL && (kb->v.u != 0) == bias,
              "%s: roformer.use_bias is %s", name, bias ? "true" : "false");
    }
    rf_gguf_free(g);
    free(bytes);
}

/* What a v2 model leaves out, and its Q|K|V stacked in place. */
static void check_v2_pointers(const rf_model *m, const char *name)
{
    const rf_weights *w = &m->w;
    int64_t D = m->hp.hidden_size;
    CHECK(!w->embd_norm_w && !w->embd_norm_b && !w->embd_proj_w, "%s: no embedding norm, no projection",
          name);
    int bad = 0;
    for (int i = 0; i < m->hp.num_layers; i++) {
        const rf_layer_weights *l = &w->layers[i];
        bad += l->attn_q_b || l->attn_k_b || l->attn_v_b || l->attn_qkv_b || l->attn_out_b ||
               l->ffn_up_b || l->ffn_down_b || l->attn_norm_w || l->attn_norm_b ||
               l->out_norm_w || l->out_norm_b;
        bad += !(l->attn_qkv_w == l->attn_q_w && l->attn_k_w == l->attn_q_w + D * D &&
                 l->attn_v_w == l->attn_k_w + D * D);
    }
    CHECK(bad == 0, "%s: no biases or norm weights in the layers, Q|K|V stacked in place", name);
    CHECK(m->owned_qkv == NULL, "%s: no stacked copy of Q, K, V", name);
}

static void check_v2_mlm(const char *ref)
{
    char dir[1024], a[1200], b[1200], bin_dir[1200];
    snprintf(dir, sizeof dir, "%s/models/tiny-v2-mlm", ref);
    snprintf(a, sizeof a, "%s/v2-mlm-st.gguf", tmpdir);
    snprintf(b, sizeof b, "%s/v2-mlm-bin.gguf", tmpdir);
    static const char *const bin_files[] = {"config.json", "vocab.txt", "tokenizer_config.json",
                                            "pytorch_model.bin"};
    link_files(dir, "bin-only", bin_files, 4);
    snprintf(bin_dir, sizeof bin_dir, "%s/bin-only", tmpdir);

    rf_error err = {{0}};
    rf_model *m = NULL, *mb = NULL;
    rf_status st = convert_load(dir, a, &m, &err);
    CHECK(st == RF_OK, "tiny-v2-mlm: convert and load: %s", err.message);
    st = convert_load(bin_dir, b, &mb, &err);
    CHECK(st == RF_OK, "tiny-v2-mlm (pytorch_model.bin): convert and load: %s", err.message);
    size_t na = 0, nb = 0;
    char *fa = check_read_file(a, &na), *fb = check_read_file(b, &nb);
    CHECK(fa && fb && na == nb && !memcmp(fa, fb, na),
          "tiny-v2-mlm: GGUF from pytorch_model.bin and model.safetensors byte-identical (%zu, %zu bytes)",
          na, nb);
    free(fa);
    free(fb);
    check_keys(a, "rms_norm", false, "tiny-v2-mlm");
    if (m) {
        const rf_hparams *hp = rf_model_hparams(m);
        CHECK(hp->norm_type == RF_NORM_RMS && !hp->use_bias && hp->head == RF_HEAD_MLM &&
                  hp->hidden_act == RF_ACT_RELU && hp->tokenizer == RF_TOKENIZER_BERT &&
                  hp->embedding_size == hp->hidden_size && hp->max_position == 512 &&
                  !hp->has_pooler,
              "tiny-v2-mlm: hyper-parameters (rms_norm, no biases, mlm, relu, bert, 512)");
        check_v2_pointers(m, "tiny-v2-mlm");
        CHECK(!m->w.mlm_dense_w && !m->w.mlm_dense_b && !m->w.mlm_norm_w && !m->w.mlm_norm_b &&
                  !m->w.mlm_decoder_b && m->w.mlm_decoder_w == m->w.token_embd,
              "tiny-v2-mlm: MLM head is the tied decoder alone");
        check_weights(m, dir, "tiny-v2-mlm");
    }
    rf_model_free(m);
    rf_model_free(mb);
}

static void check_v2_cls(const char *ref)
{
    char dir[1024], gguf[1200];
    snprintf(dir, sizeof dir, "%s/models/tiny-v2-cls", ref);
    snprintf(gguf, sizeof gguf, "%s/v2-cls.gguf", tmpdir);
    rf_error err = {{0}};
    rf_model *m = NULL;
    rf_status st = convert_load(dir, gguf, &m, &err);
    CHECK(st == RF_OK, "tiny-v2-cls: convert and load: %s", err.message);
    check_keys(gguf, "rms_norm", false, "tiny-v2-cls");
    if (m) {
        const rf_hparams *hp = rf_model_hparams(m);
        CHECK(hp->norm_type == RF_NORM_RMS && !hp->use_bias && hp->head == RF_HEAD_SEQ_CLS &&
                  hp->num_labels == 3 && !strcmp(rf_model_label(m, 2), "positive"),
              "tiny-v2-cls: rms_norm, no biases, 3 labels");
        check_v2_pointers(m, "tiny-v2-cls");
        /* the classification head is v1's: biases kept */
        CHECK(m->w.cls_dense_b && m->w.cls_out_b, "tiny-v2-cls: classifier biases loaded");
        check_weights(m, dir, "tiny-v2-cls");
    }
    rf_model_free(m);
}

/* A v1 model says so in the same keys; without them a file is v1. */
static void check_v1_keys(const char *ref)
{
    char dir[1024], gguf[1200];
    snprintf(dir, sizeof dir, "%s/models/tiny-qa", ref);
    snprintf(gguf, sizeof gguf, "%s/qa.gguf", tmpdir);
    rf_error err = {{0}};
    rf_convert_params p = rf_convert_default_params();
    CHECK(rf_convert(dir, gguf, &p, &err) == RF_OK, "tiny-qa: convert: %s", err.message);
    check_keys(gguf, "layer_norm", true, "tiny-qa");
    size_t size = 0;
    char *bytes = check_read_file(gguf, &size);
    if (!bytes)
        return;
    /* rename both keys (same lengths): a file written before they existed */
    int renamed = 0;
    for (size_t i = 0; i + 17 < size; i++) {
        if (!memcmp(bytes + i, "roformer.norm_type", 18)) {
            bytes[i + 17] = 'X';
            renamed++;
        }
        if (!memcmp(bytes + i, "roformer.use_bias", 17)) {
            bytes[i + 16] = 'X';
            renamed++;
        }
    }
    CHECK(renamed == 2, "tiny-qa: both keys found once in the file (%d)", renamed);
    rf_model *m = NULL;
    rf_status st = rf_model_load_buffer(bytes, size, "old.gguf", &m, &err);
    CHECK(st == RF_OK && m->hp.norm_type == RF_NORM_LAYER && m->hp.use_bias &&
              m->w.layers[0].attn_qkv_b == m->w.layers[0].attn_q_b && m->w.embd_norm_w,
          "a file without the keys loads as v1: %s", st ? err.message : "ok");
    rf_model_free(m);
    free(bytes);
}

/* A v2 file whose norm_type the loader does not know is refused. */
static void check_bad_norm_key(void)
{
    char gguf[1200];
    snprintf(gguf, sizeof gguf, "%s/v2-mlm-st.gguf", tmpdir);
    size_t size = 0;
    char *bytes = check_read_file(gguf, &size);
    if (!bytes) {
        CHECK(0, "read %s", gguf);
        return;
    }
    char *p = memmem(bytes, size, "rms_norm", 8);
    CHECK(p != NULL, "v2 file holds \"rms_norm\"");
    if (p)
        memcpy(p, "rms_nrom", 8);
    rf_model *m = NULL;
    rf_error err = {{0}};
    rf_status st = rf_model_load_buffer(bytes, size, "bad.gguf", &m, &err);
    CHECK(st == RF_ERR_UNSUPPORTED && strstr(err.message, "bad.gguf: norm_type 'rms_nrom' is not supported"),
          "unknown norm_type refused: %d %s", st, err.message);
    rf_model_free(m);
    free(bytes);
}

/* ==== Config and weights that disagree ==== */

static void as_v1(cJSON *c)
{
    set_key(c, "norm_type", cJSON_CreateString("layer_norm"));
    set_key(c, "use_bias", cJSON_CreateTrue());
}

static void rms_with_bias(cJSON *c)
{
    set_key(c, "use_bias", cJSON_CreateTrue());
}

static void as_v2(cJSON *c)
{
    set_key(c, "norm_type", cJSON_CreateString("rms_norm"));
    set_key(c, "use_bias", cJSON_CreateFalse());
}

static void narrow_embedding(cJSON *c)
{
    set_key(c, "embedding_size", cJSON_CreateNumber(32));
}

static void expect_convert_error(const char *sub, rf_status want, const char *message,
                                 const char *what)
{
    char dir[1200], gguf[1300];
    snprintf(dir, sizeof dir, "%s/%s", tmpdir, sub);
    snprintf(gguf, sizeof gguf, "%s/%s.gguf", tmpdir, sub);
    rf_error err = {{0}};
    rf_convert_params p = rf_convert_default_params();
    rf_status st = rf_convert(dir, gguf, &p, &err);
    CHECK(st == want && strstr(err.message, message), "%s: status %d, message: %s", what, st,
          err.message);
    CHECK(access(gguf, F_OK) != 0, "%s: nothing written", what);
}

static void check_mismatches(const char *ref)
{
    char v2[1024], v1[1024];
    snprintf(v2, sizeof v2, "%s/models/tiny-v2-mlm", ref);
    snprintf(v1, sizeof v1, "%s/models/tiny-qa", ref);
    static const char *const files[] = {"vocab.txt", "tokenizer_config.json", "model.safetensors"};

    link_files(v2, "v2-as-v1", files, 3);
    write_config(v2, "v2-as-v1", as_v1);
    expect_convert_error("v2-as-v1", RF_ERR_SHAPE,
                         "missing tensor 'roformer.embeddings.LayerNorm.weight' (needed by a RoFormer with a mlm head)",
                         "v2 weights, v1 config");

    link_files(v2, "v2-with-bias", files, 3);
    write_config(v2, "v2-with-bias", rms_with_bias);
    expect_convert_error("v2-with-bias", RF_ERR_SHAPE,
                         "missing tensor 'roformer.encoder.layer.0.attention.self.query.bias'",
                         "v2 weights, use_bias true");

    link_files(v1, "v1-as-v2", files, 3);
    write_config(v1, "v1-as-v2", as_v2);
    expect_convert_error("v1-as-v2", RF_ERR_SHAPE,
                         "unexpected tensor 'roformer.embeddings.LayerNorm.bias' (not part of a RoFormer-v2 (rms_norm, no encoder biases) with a qa head)",
                         "v1 weights, v2 config");

    link_files(v2, "v2-narrow", files, 3);
    write_config(v2, "v2-narrow", narrow_embedding);
    expect_convert_error("v2-narrow", RF_ERR_UNSUPPORTED,
                         "a RoFormer-v2 MLM head needs embedding_size (32) == hidden_size (64)",
                         "v2 MLM with embedding_size != hidden_size");
}

int main(void)
{
    REFERENCE_OR_SKIP(ref, "v2 conversion");
    char probe[1200];
    snprintf(probe, sizeof probe, "%s/models/tiny-v2-mlm/config.json", ref);
    if (access(probe, F_OK) != 0) {
        SKIP("no RoFormer-v2 fixtures in %s/models: v2 conversion not checked", ref);
        return check_done();
    }
    if (!mkdtemp(tmpdir)) {
        CHECK(0, "mkdtemp");
        return check_done();
    }
    check_v2_mlm(ref);
    check_v2_cls(ref);
    check_v1_keys(ref);
    check_bad_norm_key();
    check_mismatches(ref);

    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    CHECK(system(cmd) == 0, "clean up %s", tmpdir);
    return check_done();
}
