/*
 * test_convert.c — converting every reference checkpoint and loading it back.
 *
 * Expected values come from the HF files themselves, read here with cJSON
 * and plain byte access (not through the converter): config.json,
 * vocab.txt, the jieba dictionary and model.safetensors. Checks: every
 * hyper-parameter, labels, vocab and special ids, every weight equal to the
 * checkpoint's, tied MLM decoder, pytorch_model.bin and model.safetensors
 * giving byte-identical GGUF files, f16 / bf16 storage round trips, loading
 * an HF directory directly, the --tokenizer override, and HF's token ids
 * (tokenizer/cases*.jsonl) from tokenizers built out of converted files.
 */
#include "../check.h"
#include "../safetensors_read.h"
#include "formats/checkpoint_open.h"
#include "formats/convert.h"
#include "kernels/fp16.h"
#include "kernels/widen.h"
#include "model/model.h"
#include "model/packed_weights.h"
#include "../tokenizer_fixture.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/rf_test_convert_XXXXXX";

/* ==== The checkpoint, read independently ==== */

/* The tensor's values as float (F32 or F16 in the fixtures), or NULL. */
static float *st_values(const st_file *f, const char *name, int64_t *count)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(f->header, name);
    if (!e)
        return NULL;
    const char *dtype = cJSON_GetObjectItemCaseSensitive(e, "dtype")->valuestring;
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    size_t begin = (size_t)cJSON_GetArrayItem(offs, 0)->valuedouble;
    size_t end = (size_t)cJSON_GetArrayItem(offs, 1)->valuedouble;
    bool half = !strcmp(dtype, "F16");
    int64_t n = (int64_t)((end - begin) / (half ? 2 : 4));
    float *v = malloc((size_t)n * sizeof *v + 1);
    for (int64_t i = 0; i < n; i++) {
        if (half) {
            uint16_t h;
            memcpy(&h, f->data + begin + 2 * i, 2);
            v[i] = rf_f16_to_f32(h);
        } else {
            memcpy(&v[i], f->data + begin + 4 * i, 4);
        }
    }
    *count = n;
    return v;
}

/* How a stored weight relates to the checkpoint's value. */
typedef enum { EXACT, AS_F16, AS_BF16 } storage;

static float stored(float x, storage s)
{
    return s == AS_F16 ? rf_f16_to_f32(rf_f32_to_f16(x))
         : s == AS_BF16 ? rf_bf16_to_f32(rf_f32_to_bf16(x)) : x;
}

/* Compares one loaded weight with the checkpoint tensor `hf`. 1-D tensors
 * are stored f32 whatever the dtype. */
static void check_weight(const st_file *f, const char *hf, const float *w, int64_t want_count,
                         storage s, const char *model)
{
    int64_t n = 0;
    float *v = st_values(f, hf, &n);
    CHECK(v != NULL, "%s: checkpoint has no '%s'", model, hf);
    CHECK(w != NULL, "%s: no loaded weight for '%s'", model, hf);
    if (!v || !w) {
        free(v);
        return;
    }
    CHECK(n == want_count, "%s: '%s' has %lld values, expected %lld", model, hf, (long long)n,
          (long long)want_count);
    /* equal to the checkpoint value rounded once; and, independently of the
     * rounding function, within half an ulp of it (f16 subnormals: half the
     * smallest step, 2^-25) */
    double rel = s == AS_F16 ? 1.0 / 2048 : s == AS_BF16 ? 1.0 / 256 : 0;
    double abs_floor = s == AS_F16 ? 2.98023223876953125e-08 : 0;
    int64_t bad = 0, far = 0;
    for (int64_t i = 0; i < n && n == want_count; i++) {
        float want = stored(v[i], s);
        if (memcmp(&want, &w[i], sizeof want))
            bad++;
        if (!(fabs((double)w[i] - v[i]) <= rel * fabs(v[i]) + abs_floor))
            far++; /* a NaN counts */
    }
    CHECK(bad == 0, "%s: '%s' has %lld values that differ from the checkpoint", model, hf,
          (long long)bad);
    CHECK(far == 0, "%s: '%s' has %lld values beyond half an ulp", model, hf, (long long)far);
    free(v);
}

/* ==== Expected hyper-parameters, from config.json ==== */

static int json_int(const cJSON *c, const char *key, int dflt)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(c, key);
    return cJSON_IsNumber(j) ? j->valueint : dflt;
}

static bool json_true(const cJSON *c, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, key));
}

/* Checks every weight of `m` against the checkpoint. */
static void check_weights(const rf_model *m, const st_file *f, const char *pre, storage mat,
                          const char *name)
{
    const rf_hparams *hp = &m->hp;
    const rf_weights *w = &m->w;
    int64_t V = hp->vocab_size, E = hp->embedding_size, D = hp->hidden_size,
            F = hp->intermediate_size, N = hp->num_labels;
    char hf[160];
#define W(suffix, ptr, count, s)                                                \
    do {                                                                        \
        snprintf(hf, sizeof hf, "%s%s", pre, suffix);                           \
        check_weight(f, hf, ptr, count, s, name);                               \
    } while (0)
    /* without an MLM head, f16 / bf16 word embeddings stay as the file
       stores them (read a row at a time): widened here to compare */
    const rf_stored_matrix *se = &w->token_embd_stored;
    bool half = !w->token_embd && se->data && (se->type == RF_DTYPE_F16 || se->type == RF_DTYPE_BF16);
    float *widened = half ? malloc((size_t)(V * E) * sizeof *widened) : NULL;
    if (widened && se->type == RF_DTYPE_F16)
        rf_widen_f16(se->data, widened, (size_t)(V * E));
    else if (widened)
        rf_widen_bf16(se->data, widened, (size_t)(V * E));
    W("embeddings.word_embeddings.weight", half ? widened : w->token_embd, V * E, mat);
    free(widened);
    W("embeddings.token_type_embeddings.weight", w->token_types, 2 * E, mat);
    W("embeddings.LayerNorm.weight", w->embd_norm_w, E, EXACT);
    W("embeddings.LayerNorm.bias", w->embd_norm_b, E, EXACT);
    if (E != D) {
        W("embeddings_project.weight", w->embd_proj_w, D * E, mat);
        W("embeddings_project.bias", w->embd_proj_b, D, EXACT);
    } else {
        CHECK(w->embd_proj_w == NULL, "%s: no projection when E == D", name);
    }
    for (int l = 0; l < hp->num_layers; l++) {
        const rf_layer_weights *L = &w->layers[l];
        char s[128];
#define LW(part, ptr, count, st)                                                \
    do {                                                                        \
        snprintf(s, sizeof s, "encoder.layer.%d.%s", l, part);                  \
        W(s, ptr, count, st);                                                   \
    } while (0)
        LW("attention.self.query.weight", L->attn_q_w, D * D, mat);
        LW("attention.self.query.bias", L->attn_q_b, D, EXACT);
        LW("attention.self.key.weight", L->attn_k_w, D * D, mat);
        LW("attention.self.key.bias", L->attn_k_b, D, EXACT);
        LW("attention.self.value.weight", L->attn_v_w, D * D, mat);
        LW("attention.self.value.bias", L->attn_v_b, D, EXACT);
        LW("attention.output.dense.weight", L->attn_out_w, D * D, mat);
        LW("attention.output.dense.bias", L->attn_out_b, D, EXACT);
        LW("attention.output.LayerNorm.weight", L->attn_norm_w, D, EXACT);
        LW("attention.output.LayerNorm.bias", L->attn_norm_b, D, EXACT);
        LW("intermediate.dense.weight", L->ffn_up_w, F * D, mat);
        LW("intermediate.dense.bias", L->ffn_up_b, F, EXACT);
        LW("output.dense.weight", L->ffn_down_w, D * F, mat);
        LW("output.dense.bias", L->ffn_down_b, D, EXACT);
        LW("output.LayerNorm.weight", L->out_norm_w, D, EXACT);
        LW("output.LayerNorm.bias", L->out_norm_b, D, EXACT);
#undef LW
        /* the encoder's one Q|K|V product reads the three in place */
        CHECK(L->attn_qkv_w == L->attn_q_w && L->attn_k_w == L->attn_q_w + D * D &&
                  L->attn_v_w == L->attn_k_w + D * D && L->attn_qkv_b == L->attn_q_b &&
                  L->attn_k_b == L->attn_q_b + D && L->attn_v_b == L->attn_k_b + D,
              "%s: layer %d Q, K, V stacked in place", name, l);
    }
    CHECK(m->owned_qkv == NULL, "%s: no stacked copy of Q, K, V", name);
    if (hp->has_pooler) {
        W("pooler.dense.weight", w->pooler_w, D * D, mat);
        W("pooler.dense.bias", w->pooler_b, D, EXACT);
    }
#undef W
    switch (hp->head) {
    case RF_HEAD_MLM:
        check_weight(f, "cls.predictions.transform.dense.weight", w->mlm_dense_w, E * D, mat, name);
        check_weight(f, "cls.predictions.transform.dense.bias", w->mlm_dense_b, E, EXACT, name);
        check_weight(f, "cls.predictions.transform.LayerNorm.weight", w->mlm_norm_w, E, EXACT, name);
        check_weight(f, "cls.predictions.transform.LayerNorm.bias", w->mlm_norm_b, E, EXACT, name);
        check_weight(f, "cls.predictions.bias", w->mlm_decoder_b, V, EXACT, name);
        CHECK(w->mlm_decoder_w == w->token_embd, "%s: MLM decoder tied to the word embeddings", name);
        break;
    case RF_HEAD_SEQ_CLS:
        check_weight(f, "classifier.dense.weight", w->cls_dense_w, D * D, mat, name);
        check_weight(f, "classifier.dense.bias", w->cls_dense_b, D, EXACT, name);
        check_weight(f, "classifier.out_proj.weight", w->cls_out_w, N * D, mat, name);
        check_weight(f, "classifier.out_proj.bias", w->cls_out_b, N, EXACT, name);
        break;
    case RF_HEAD_TOKEN_CLS:
        check_weight(f, "classifier.weight", w->token_cls_w, N * D, mat, name);
        check_weight(f, "classifier.bias", w->token_cls_b, N, EXACT, name);
        break;
    case RF_HEAD_QA:
        check_weight(f, "qa_outputs.weight", w->qa_w, 2 * D, mat, name);
        check_weight(f, "qa_outputs.bias", w->qa_b, 2, EXACT, name);
        break;
    case RF_HEAD_NONE:
        break;
    }
}

static void check_model(const char *ref, const char *name)
{
    char dir[1024], path[1200], gguf[1200];
    snprintf(dir, sizeof dir, "%s/models/%s", ref, name);
    snprintf(gguf, sizeof gguf, "%s/%s.gguf", tmpdir, name);
    rf_error err = {{0}};
    rf_convert_params p = rf_convert_default_params();
    rf_status st = rf_convert(dir, gguf, &p, &err);
    CHECK(st == RF_OK, "%s: convert: %s", name, err.message);
    rf_model *m = NULL;
    st = st ? st : rf_model_load(gguf, &m, &err);
    CHECK(st == RF_OK, "%s: load: %s", name, err.message);
    if (st)
        return;

    /* hyper-parameters and head from config.json */
    snprintf(path, sizeof path, "%s/config.json", dir);
    char *text = check_read_file(path, NULL);
    cJSON *c = cJSON_Parse(text);
    const rf_hparams *hp = rf_model_hparams(m);
    int D = json_int(c, "hidden_size", 768);
    CHECK(hp->vocab_size == json_int(c, "vocab_size", 50000) && hp->hidden_size == D &&
              hp->embedding_size == json_int(c, "embedding_size", D) &&
              hp->num_layers == json_int(c, "num_hidden_layers", 12) &&
              hp->num_heads == json_int(c, "num_attention_heads", 12) &&
              hp->intermediate_size == json_int(c, "intermediate_size", 3072) &&
              hp->max_position == json_int(c, "max_position_embeddings", 1536) &&
              hp->type_vocab_size == json_int(c, "type_vocab_size", 2),
          "%s: sizes from config.json", name);
    CHECK(hp->layer_norm_eps == (float)cJSON_GetObjectItem(c, "layer_norm_eps")->valuedouble,
          "%s: layer_norm_eps", name);
    CHECK(!strcmp(rf_activation_name(hp->hidden_act),
                  cJSON_GetObjectItem(c, "hidden_act")->valuestring),
          "%s: hidden_act %s", name, rf_activation_name(hp->hidden_act));
    CHECK(hp->rotary_value == json_true(c, "rotary_value"), "%s: rotary_value", name);
    const char *arch = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "architectures"), 0)->valuestring;
    static const struct {
        const char *arch;
        rf_head_kind head;
    } heads[] = {{"RoFormerModel", RF_HEAD_NONE},
                 {"RoFormerForMaskedLM", RF_HEAD_MLM},
                 {"RoFormerForSequenceClassification", RF_HEAD_SEQ_CLS},
                 {"RoFormerForTokenClassification", RF_HEAD_TOKEN_CLS},
                 {"RoFormerForQuestionAnswering", RF_HEAD_QA}};
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
        if (!strcmp(arch, heads[i].arch))
            CHECK(hp->head == heads[i].head, "%s: head %s for %s", name, rf_head_name(hp->head), arch);
    const cJSON *id2label = cJSON_GetObjectItem(c, "id2label");
    if (id2label) {
        CHECK(hp->num_labels == cJSON_GetArraySize(id2label), "%s: %d labels", name, hp->num_labels);
        for (int i = 0; i < hp->num_labels; i++) {
            char key[16];
            snprintf(key, sizeof key, "%d", i);
            const char *want = cJSON_GetObjectItem(id2label, key)->valuestring;
            CHECK(rf_model_label(m, i) && !strcmp(rf_model_label(m, i), want), "%s: label %d", name, i);
        }
    } else {
        CHECK(hp->num_labels == 0, "%s: no labels", name);
    }
    CHECK(rf_model_label(m, hp->num_labels) == NULL && rf_model_label(m, -1) == NULL,
          "%s: labels out of range are NULL", name);
    CHECK(hp->tokenizer == RF_TOKENIZER_WOBERT && hp->do_lower_case, "%s: wobert, lower case", name);
    CHECK(hp->dtype == RF_DTYPE_F32, "%s: stored as f32 by default", name);
    cJSON_Delete(c);
    free(text);

    /* vocab and special ids from vocab.txt */
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    text = check_read_file(path, NULL);
    int lines = 0, bad = 0;
    int32_t special[5] = {-1, -1, -1, -1, -1};
    static const char *const names[5] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL, lines++) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        const char *tok = rf_model_token(m, lines);
        if (!tok || strcmp(tok, line))
            bad++;
        for (int s = 0; s < 5; s++)
            if (!strcmp(line, names[s]))
                special[s] = lines;
    }
    CHECK(bad == 0 && m->n_tokens == lines, "%s: %d of %d vocab entries differ (%d loaded)", name,
          bad, lines, m->n_tokens);
    CHECK(rf_model_token(m, lines) == NULL && rf_model_token(m, -1) == NULL,
          "%s: token ids out of range are NULL", name);
    CHECK(hp->pad_id == special[0] && hp->unk_id == special[1] && hp->cls_id == special[2] &&
              hp->sep_id == special[3] && hp->mask_id == special[4],
          "%s: special ids %d %d %d %d %d", name, hp->pad_id, hp->unk_id, hp->cls_id, hp->sep_id,
          hp->mask_id);
    free(text);

    /* the tokenizer's view of the file */
    const rf_tokenizer_spec *ts = &m->tokenizer_spec;
    CHECK(ts->vocab_size == lines && ts->vocab_len[hp->cls_id] == 5 &&
              !memcmp(ts->vocab[hp->cls_id], "[CLS]", 5),
          "%s: tokenizer spec vocab", name);
    CHECK(ts->dict_size == 349046 && ts->dict_word_len[0] == 4 && !memcmp(ts->dict_words[0], "AT&T", 4) &&
              ts->dict_freq[0] == 3 && ts->dict_word_len[233780] == 3 &&
              !memcmp(ts->dict_words[233780], "的", 3) && ts->dict_freq[233780] == 318825,
          "%s: jieba dictionary (%d words)", name, ts->dict_size);

    /* weights */
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    st_file f;
    if (st_open(path, &f)) {
        const char *pre = cJSON_GetObjectItem(f.header, "roformer.embeddings.word_embeddings.weight")
                              ? "roformer." : "";
        check_weights(m, &f, pre, EXACT, name);
        /* every checkpoint tensor but the RoPE table becomes one GGUF tensor */
        char ep[128];
        snprintf(ep, sizeof ep, "%sencoder.embed_positions.weight", pre);
        int want = cJSON_GetArraySize(f.header) - 1 - (cJSON_GetObjectItem(f.header, ep) ? 1 : 0);
        CHECK(rf_model_tensor_count(m) == want, "%s: %d tensors, expected %d", name,
              rf_model_tensor_count(m), want);
        CHECK(hp->has_pooler == (cJSON_GetObjectItem(f.header, "roformer.pooler.dense.weight") != NULL),
              "%s: pooler presence", name);
    } else {
        CHECK(0, "%s: cannot read %s", name, path);
    }

    /* loading the HF directory directly gives the same model */
    rf_model *d = NULL;
    st = rf_model_load(dir, &d, &err);
    CHECK(st == RF_OK, "%s: load directory: %s", name, err.message);
    if (d) {
        CHECK(!memcmp(&d->hp, &m->hp, sizeof d->hp), "%s: directory hparams", name);
        CHECK(!memcmp(d->w.token_embd, m->w.token_embd,
                      sizeof(float) * (size_t)hp->vocab_size * (size_t)hp->embedding_size) &&
                  !memcmp(d->w.layers[1].ffn_down_w, m->w.layers[1].ffn_down_w,
                          sizeof(float) * (size_t)hp->hidden_size * (size_t)hp->intermediate_size),
              "%s: directory weights", name);
        CHECK(d->map_size > 0 && d->owned_bytes && !d->map, "%s: directory image held in memory", name);
    }
    rf_model_free(d);
    st_close(&f);
    rf_model_free(m);
}

/* f16 / bf16 storage: matrices rounded once, vectors exact. */
static void check_dtype(const char *ref, const char *name, rf_dtype dtype, storage s)
{
    char dir[1024], path[1200], gguf[1200];
    snprintf(dir, sizeof dir, "%s/models/%s", ref, name);
    snprintf(gguf, sizeof gguf, "%s/%s.%s.gguf", tmpdir, name, rf_dtype_name(dtype));
    rf_error err = {{0}};
    rf_convert_params p = rf_convert_default_params();
    p.dtype = dtype;
    rf_model *m = NULL;
    rf_status st = rf_convert(dir, gguf, &p, &err);
    if (!st)
        st = rf_model_load(gguf, &m, &err);
    CHECK(st == RF_OK, "%s as %s: %s", name, rf_dtype_name(dtype), err.message);
    if (st)
        return;
    CHECK(m->hp.dtype == dtype, "%s: dtype %s reported", name, rf_dtype_name(m->hp.dtype));
    CHECK(m->owned_f32 != NULL, "%s: %s weights widened once", name, rf_dtype_name(dtype));
    CHECK(m->hp.head == RF_HEAD_MLM ? m->w.token_embd != NULL
                                    : !m->w.token_embd && m->w.token_embd_stored.type == dtype,
          "%s: %s word embeddings %s", name, rf_dtype_name(dtype),
          m->hp.head == RF_HEAD_MLM ? "widened for the tied MLM decoder" : "kept as stored");
    /* the layer matrices stay as stored until f32 compute needs them */
    CHECK(!m->w.layers[0].ffn_up_w && m->w.layers[0].ffn_up_stored.type == dtype,
          "%s: %s layer matrices kept as stored at load", name, rf_dtype_name(dtype));
    st = rf_model_pack(m, RF_COMPUTE_F32, &err);
    CHECK(st == RF_OK && m->w.layers[0].ffn_up_w && m->packed.widened_layers, "%s: %s layers widened: %s",
          name, rf_dtype_name(dtype), err.message);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    st_file f;
    if (st_open(path, &f)) {
        const char *pre = cJSON_GetObjectItem(f.header, "roformer.embeddings.word_embeddings.weight")
                              ? "roformer." : "";
        char label[64];
        snprintf(label, sizeof label, "%s(%s)", name, rf_dtype_name(dtype));
        check_weights(m, &f, pre, s, label);
    }
    st_close(&f);
    rf_model_free(m);
}

/* pytorch_model.bin and model.safetensors convert to the same bytes. */
static void check_bin_identical(const char *ref)
{
    char src[1024], bin_dir[1200], a[1200], b[1200], from[1200], to[1300];
    static const char *const files[] = {"config.json", "vocab.txt", "tokenizer_config.json",
                                        "pytorch_model.bin"};
    snprintf(src, sizeof src, "%s/models/tiny-word-mlm", ref);
    snprintf(bin_dir, sizeof bin_dir, "%s/bin-only", tmpdir);
    mkdir(bin_dir, 0700);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(from, sizeof from, "%s/%s", src, files[i]);
        snprintf(to, sizeof to, "%s/%s", bin_dir, files[i]);
        if (from[0] != '/') { /* a relative reference dir: link from inside bin_dir */
            char cwd[1024];
            snprintf(from, sizeof from, "%s/%s/%s", getcwd(cwd, sizeof cwd), src, files[i]);
        }
        CHECK(symlink(from, to) == 0, "symlink %s", to);
    }
    snprintf(a, sizeof a, "%s/mlm-bin.gguf", tmpdir);
    snprintf(b, sizeof b, "%s/mlm-st.gguf", tmpdir);
    rf_error err = {{0}};
    rf_convert_params p = rf_convert_default_params();
    CHECK(rf_convert(bin_dir, a, &p, &err) == RF_OK, "convert .bin: %s", err.message);
    CHECK(rf_convert(src, b, &p, &err) == RF_OK, "convert .safetensors: %s", err.message);
    size_t na = 0, nb = 0;
    char *fa = check_read_file(a, &na), *fb = check_read_file(b, &nb);
    CHECK(fa && fb && na == nb && !memcmp(fa, fb, na),
          "tiny-word-mlm: GGUF from pytorch_model.bin and from model.safetensors byte-identical (%zu, %zu bytes)",
          na, nb);
    free(fa);
    free(fb);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(to, sizeof to, "%s/%s", bin_dir, files[i]);
        unlink(to);
    }
    rmdir(bin_dir);
}

/* --tokenizer bert: no dictionary, mode recorded. */
static void check_tokenizer_override(const char *ref)
{
    char dir[1024], gguf[1200];
    snprintf(dir, sizeof dir, "%s/models/tiny-char-proj", ref);
    snprintf(gguf, sizeof gguf, "%s/char-bert.gguf", tmpdir);
    rf_error err = {{0}};
    rf_convert_params p = rf_convert_default_params();
    p.tokenizer = RF_TOKENIZER_BERT;
    rf_model *m = NULL;
    rf_status st = rf_convert(dir, gguf, &p, &err);
    if (!st)
        st = rf_model_load(gguf, &m, &err);
    CHECK(st == RF_OK, "--tokenizer bert: %s", err.message);
    if (m) {
        CHECK(m->hp.tokenizer == RF_TOKENIZER_BERT && m->tokenizer_spec.mode == RF_TOKENIZER_BERT &&
                  m->tokenizer_spec.dict_size == 0,
              "bert mode has no jieba dictionary");
        CHECK(m->hp.unk_id == 1 && m->hp.cls_id == 2, "char vocab special ids");
    }
    rf_model_free(m);
}

/* The checkpoint reader on a file of reference outputs (float32 and int64
 * tensors), against the header read here: names, dtypes, shapes, bytes. */
static void check_expected_outputs(const char *ref)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/models/tiny-word-mlm/expected.safetensors", ref);
    rf_error err = {{0}};
    rf_checkpoint *ck = NULL;
    st_file f;
    rf_status st = rf_checkpoint_open(path, &ck, &err);
    CHECK(st == RF_OK, "open %s: %s", path, err.message);
    if (st || !st_open(path, &f)) {
        rf_checkpoint_free(ck);
        return;
    }
    int n = 0, bad = 0, ints = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, f.header) {
        if (!strcmp(e->string, "__metadata__"))
            continue;
        n++;
        const rf_ck_tensor *t = rf_checkpoint_find(ck, e->string);
        const cJSON *shape = cJSON_GetObjectItem(e, "shape"), *offs = cJSON_GetObjectItem(e, "data_offsets");
        size_t begin = (size_t)cJSON_GetArrayItem(offs, 0)->valuedouble;
        size_t end = (size_t)cJSON_GetArrayItem(offs, 1)->valuedouble;
        bool ok = t && !strcmp(rf_ck_dtype_name(t->dtype), cJSON_GetObjectItem(e, "dtype")->valuestring) &&
                  t->n_dims == cJSON_GetArraySize(shape) && t->nbytes == end - begin &&
                  !memcmp(t->data, f.data + begin, end - begin);
        for (int d = 0; ok && d < t->n_dims; d++)
            ok = t->shape[d] == (int64_t)cJSON_GetArrayItem(shape, d)->valuedouble;
        if (!ok)
            bad++;
        if (t && t->dtype == RF_CK_I64)
            ints++;
    }
    CHECK(n > 0 && bad == 0 && ints > 0 && ck->n == n,
          "expected.safetensors: %d of %d tensors differ (%d int64)", bad, n, ints);
    st_close(&f);
    rf_checkpoint_free(ck);
}

/* The tokenizer built from the converted file gives HF's ids: the vocab,
 * special ids and jieba dictionary made it through the GGUF intact. */
static void check_tokenizer_cases(const char *ref, const char *model_name, rf_tokenizer_mode mode,
                                  const char *cases_file)
{
    char dir[1024], gguf[1200], path[1200];
    snprintf(dir, sizeof dir, "%s/models/%s", ref, model_name);
    snprintf(gguf, sizeof gguf, "%s/%s.tok.gguf", tmpdir, model_name);
    snprintf(path, sizeof path, "%s/tokenizer/%s", ref, cases_file);
    rf_error err = {{0}};
    rf_convert_params p = rf_convert_default_params();
    p.tokenizer = (int)mode;
    rf_model *m = NULL;
    rf_status st = rf_convert(dir, gguf, &p, &err);
    if (!st)
        st = rf_model_load(gguf, &m, &err);
    CHECK(st == RF_OK, "%s: %s", model_name, err.message);
    char *text = check_read_file(path, NULL);
    CHECK(text != NULL, "read %s", path);
    if (!m || !text) {
        rf_model_free(m);
        free(text);
        return;
    }
    int cases = 0, wrong = 0;
    rf_encoding enc = {0};
    for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        cJSON *c = fixture_parse(line); /* keeps texts with NUL characters whole */
        if (!c)
            continue;
        size_t la = 0, lb = 0;
        const char *a = fixture_text(cJSON_GetObjectItem(c, "text"), &la);
        const char *b = fixture_text(cJSON_GetObjectItem(c, "text_pair"), &lb);
        const cJSON *ml = cJSON_GetObjectItem(c, "max_length");
        const cJSON *ids = cJSON_GetObjectItem(c, "input_ids"), *types = cJSON_GetObjectItem(c, "token_type_ids");
        cases++;
        st = rf_tokenize(m, a, la, b, lb, ml ? ml->valueint : 0, &enc, &err);
        bool same = st == RF_OK && enc.n == cJSON_GetArraySize(ids);
        for (int i = 0; same && i < enc.n; i++)
            same = enc.ids[i] == cJSON_GetArrayItem(ids, i)->valueint &&
                   enc.type_ids[i] == cJSON_GetArrayItem(types, i)->valueint;
        if (!same && wrong++ < 3)
            fprintf(stderr, "%s: case %s differs (%s)\n", model_name,
                    cJSON_GetObjectItem(c, "id")->valuestring, st ? err.message : "ids");
        cJSON_Delete(c);
    }
    CHECK(cases > 0 && wrong == 0, "%s (%s): %d of %d tokenizer cases differ from HF", model_name,
          rf_tokenizer_mode_name(mode), wrong, cases);
    rf_encoding_free(&enc);
    free(text);
    rf_model_free(m);
}

int main(void)
{
    REFERENCE_OR_SKIP(ref, "conversion");
    if (!mkdtemp(tmpdir)) {
        CHECK(0, "mkdtemp");
        return check_done();
    }
    static const char *const models[] = {"tiny-word-mlm", "tiny-word-cls", "tiny-char-proj",
                                         "tiny-qa", "small-fp16"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        check_model(ref, models[i]);
    check_bin_identical(ref);
    check_dtype(ref, "tiny-char-proj", RF_DTYPE_F16, AS_F16);
    check_dtype(ref, "tiny-char-proj", RF_DTYPE_BF16, AS_BF16);
    check_dtype(ref, "tiny-word-mlm", RF_DTYPE_BF16, AS_BF16);
    /* small-fp16 holds f16 values: storing them as f16 loses nothing */
    check_dtype(ref, "small-fp16", RF_DTYPE_F16, EXACT);
    check_tokenizer_override(ref);
    check_expected_outputs(ref);
    check_tokenizer_cases(ref, "tiny-word-mlm", RF_TOKENIZER_WOBERT, "cases.jsonl");
    check_tokenizer_cases(ref, "tiny-char-proj", RF_TOKENIZER_BERT, "cases_bert_char.jsonl");

    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    CHECK(system(cmd) == 0, "clean up %s", tmpdir);
    return check_done();
}
