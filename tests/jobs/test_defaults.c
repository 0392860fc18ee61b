/*
 * test_defaults.c — the defaults the library decides for every front end
 * (roformer.h, "Defaults"): pooling and its check, truncation, window
 * stride, the rerank label, QA's window token count, SCM scored from
 * vectors, the jobs on caller-made encodings, and the thread limit.
 * Expected values are worked out by hand from the reference models'
 * config.json (tiny-word-mlm: a tanh pooler, max_position 1536;
 * tiny-word-cls: no pooler, labels negative / neutral / positive), and
 * a config.json's missing keys from HF's RoFormerConfig defaults.
 */
#include "../check.h"
#include "formats/hf_config.h"
#include "roformer.h"

#include <math.h>

static rf_model *load(const char *ref, const char *name)
{
    char path[512];
    rf_error err;
    rf_model *m = NULL;
    snprintf(path, sizeof path, "%s/models/%s", ref, name);
    if (rf_model_load(path, &m, &err) != RF_OK)
        fprintf(stderr, "%s\n", err.message);
    return m;
}

/* Values that need no model. */
static void test_plain_rules(void)
{
    CHECK(rf_window_default_stride(128) == 32, "stride of 128: %d", rf_window_default_stride(128));
    CHECK(rf_window_default_stride(0) == 0, "stride without windows");
    rf_pipeline_params pp = rf_pipeline_default_params();
    CHECK(pp.max_length == RF_MAX_LENGTH_MODEL && pp.stride == RF_STRIDE_DEFAULT,
          "pipeline defaults: max_length %d, stride %d", pp.max_length, pp.stride);
    rf_context_params cp = rf_context_default_params();
    CHECK(pp.context.n_threads == cp.n_threads && pp.context.compute == cp.compute &&
              pp.context.extend_positions == cp.extend_positions &&
              pp.context.rope_scaling == cp.rope_scaling && pp.context.rope_factor == cp.rope_factor,
          "a pipeline's context defaults are rf_context_default_params'");
    size_t bad = 0;
    CHECK(rf_utf8_validate("ok", 2, &bad), "valid UTF-8");
    CHECK(!rf_utf8_validate("ab\xff", 3, &bad) && bad == 2, "invalid byte at 2: %zu", bad);
}

/* [CLS] q q [SEP] c... [SEP]: header 3 tokens of type 0, then `context`
 * tokens and the closing [SEP] of type 1. */
static rf_encoding qa_encoding(int32_t *type_ids, int32_t context)
{
    int32_t n = 3 + context + 1;
    for (int32_t i = 0; i < n; i++)
        type_ids[i] = i < 3 ? 0 : 1;
    return (rf_encoding){.type_ids = type_ids, .n = n};
}

static void test_qa_window_tokens(void)
{
    int32_t types[64];
    /* 8 context tokens, windows of 8 (4 context tokens each), stride 1:
       windows of context 0-3, 3-6, 6-7: 3 x (3 + 1) + 4 + 4 + 2 = 22 */
    rf_encoding e = qa_encoding(types, 8);
    CHECK(rf_qa_window_tokens(&e, 8, 1) == 22, "3 windows: %d", rf_qa_window_tokens(&e, 8, 1));
    /* stride 0: 0-3, 4-7: 2 x 4 + 8 = 16 */
    CHECK(rf_qa_window_tokens(&e, 8, 0) == 16, "2 windows: %d", rf_qa_window_tokens(&e, 8, 0));
    CHECK(rf_qa_window_tokens(&e, 12, 1) == 12, "fits one window: its own 12");
    CHECK(rf_qa_window_tokens(&e, 8, 4) == 12, "a stride that makes no progress: its own 12");
    CHECK(rf_qa_window_tokens(&e, 4, 1) == 12, "no room for context: its own 12");
}

static void test_scm_score(void)
{
    const float vecs[3][2] = {{1, 0}, {1, 0}, {0, 1}}; /* A = B, C orthogonal */
    rf_scm_result out[3];
    rf_item_status items[3];
    rf_item_status docs[3] = {{.status = RF_OK}, {.status = RF_OK}, {.status = RF_ERR_INPUT}};
    snprintf(docs[2].error.message, sizeof docs[2].error.message, "too long");
    const int32_t doc_of[3][3] = {{0, 1, 2}, {0, -1, 1}, {0, 2, 1}};
    rf_error err;
    rf_status st = rf_scm_score(&vecs[0][0], 2, NULL, &doc_of[0][0], 1, out, items, &err);
    CHECK(st == RF_OK && out[0].prediction == 'B' && out[0].sim_ab == 1.0f &&
              out[0].sim_ac == 0.0f,
          "A = B: %c %g %g", out[0].prediction, out[0].sim_ab, out[0].sim_ac);
    st = rf_scm_score(&vecs[0][0], 2, docs, &doc_of[0][0], 3, out, items, &err);
    CHECK(st == RF_OK && items[0].status == RF_ERR_INPUT &&
              !strcmp(items[0].error.message, "C: too long") && isnan(out[0].sim_ab),
          "failed document C: %d '%s'", items[0].status, items[0].error.message);
    CHECK(items[1].status == RF_ERR_INPUT && !strcmp(items[1].error.message, "B: missing"),
          "missing B: '%s'", items[1].error.message);
    CHECK(items[2].status == RF_ERR_INPUT && !strcmp(items[2].error.message, "B: too long"),
          "failed document as B: '%s'", items[2].error.message);
    st = rf_scm_score(&vecs[0][0], 2, docs, &doc_of[1][0], 1, out, NULL, &err);
    CHECK(st == RF_ERR_INPUT && strstr(err.message, "B: missing"),
          "no items: the first failure fails the call: %d '%s'", st, err.message);
}


/* The twins' per-input statuses: an empty encoding between two good ones
 * fails alone (its row NaN, its status RF_ERR_INPUT), the good ones give
 * their bytes of the call without it; without items the call fails. `cls`
 * holds the two good encodings' [CLS] vectors. */
static void check_encodings_items(rf_pipeline *pl, const rf_encoding *good, int32_t D,
                                  const float *cls)
{
    rf_encoding three[3] = {good[0], {0}, good[1]};
    rf_item_status items[3];
    rf_error err;
    float *vecs = malloc(sizeof(float) * 3 * D);
    float *rows = malloc(sizeof(float) * (size_t)(good[0].n + good[1].n) * D);
    CHECK(rf_embed_encodings(pl, three, 3, RF_POOLING_CLS, false, vecs, items, &err) == RF_OK,
          "rf_embed_encodings with items and an empty encoding: %s", err.message);
    CHECK(items[0].status == RF_OK && items[2].status == RF_OK && items[1].status == RF_ERR_INPUT,
          "rf_embed_encodings: statuses %d %d %d, not ok, input error, ok", items[0].status,
          items[1].status, items[2].status);
    CHECK(isnan(vecs[D]) && isnan(vecs[2 * D - 1]), "rf_embed_encodings: the failed row is NaN");
    CHECK(!memcmp(vecs, cls, sizeof(float) * D) && !memcmp(vecs + 2 * D, cls + D, sizeof(float) * D),
          "rf_embed_encodings: the good inputs' rows are their bytes alone");
    CHECK(rf_embed_encodings(pl, three, 3, RF_POOLING_CLS, false, vecs, NULL, &err) == RF_ERR_INPUT,
          "rf_embed_encodings without items: the empty encoding fails the call");
    CHECK(rf_token_embeddings(pl, three, 3, rows, items, &err) == RF_OK,
          "rf_token_embeddings with items and an empty encoding: %s", err.message);
    CHECK(items[1].status == RF_ERR_INPUT && items[0].status == RF_OK && items[2].status == RF_OK,
          "rf_token_embeddings: statuses %d %d %d, not ok, input error, ok", items[0].status,
          items[1].status, items[2].status);
    CHECK(!memcmp(rows, cls, sizeof(float) * D) &&
              !memcmp(rows + (size_t)good[0].n * D, cls + D, sizeof(float) * D),
          "rf_token_embeddings: the good inputs' rows follow each other, the empty one has none");
    free(vecs);
    free(rows);
}
static void test_model_defaults(const char *ref)
{
    rf_model *mlm = load(ref, "tiny-word-mlm"), *cls = load(ref, "tiny-word-cls");
    CHECK(mlm && cls, "reference models load");
    if (!mlm || !cls)
        goto done;
    CHECK(rf_model_default_pooling(mlm) == RF_POOLING_POOLER,
          "a model with a pooler pools with it");
    CHECK(rf_model_default_pooling(cls) == RF_POOLING_CLS, "a model without one: [CLS]");
    rf_error err;
    rf_status st = rf_model_check_pooling(cls, RF_POOLING_POOLER, &err);
    CHECK(st == RF_ERR_UNSUPPORTED && strstr(err.message, "the model has no pooler"),
          "pooler without a pooler: %d '%s'", st, err.message);
    st = rf_model_check_pooling(cls, (rf_pooling)99, &err);
    CHECK(st == RF_ERR_INPUT && strstr(err.message, "unknown pooling 99"), "pooling 99: %d", st);
    CHECK(rf_model_check_pooling(mlm, RF_POOLING_POOLER, &err) == RF_OK, "pooler with a pooler");
    CHECK(rf_model_default_max_length(mlm) == 0, "no sentence-transformers length: no truncation");
    CHECK(rf_model_max_input_length(mlm) == 1536, "the longest input: max_position, %d",
          rf_model_max_input_length(mlm));
    CHECK(rf_model_rerank_label(cls) == 2, "rerank reads label 2, 'positive': %d",
          rf_model_rerank_label(cls));
    CHECK(rf_model_rerank_label(mlm) == 0, "no labels: 0");

    /* threads over the limit are refused, not capped */
    rf_context_params cp = rf_context_default_params();
    cp.n_threads = RF_MAX_THREADS + 1;
    rf_context *ctx = NULL;
    st = rf_context_create(mlm, &cp, &ctx, &err);
    CHECK(st == RF_ERR_INPUT && strstr(err.message, "257 threads"), "context, 257 threads: %d '%s'",
          st, st ? err.message : "");
    rf_context_free(ctx);
    rf_pipeline_params pp = rf_pipeline_default_params();
    pp.context.n_threads = RF_MAX_THREADS + 1;
    rf_pipeline *pl = NULL;
    st = rf_pipeline_create(mlm, &pp, &pl, &err);
    CHECK(st == RF_ERR_INPUT && strstr(err.message, "n_threads 257"), "pipeline, 257 threads: %d", st);
    rf_pipeline_free(pl);
    pl = NULL;

    /* the jobs on encodings equal the jobs on the same texts */
    pp = rf_pipeline_default_params();
    pp.context.n_threads = 1;
    if (rf_pipeline_create(mlm, &pp, &pl, &err) != RF_OK) {
        CHECK(0, "pipeline: %s", err.message);
        goto done;
    }
    const char *texts[2] = {"今天天气很好", "北京是中国的首都，也是一座古城"};
    rf_text in[2];
    rf_encoding encs[2] = {{0}};
    int32_t D = rf_model_hparams(mlm)->hidden_size, rows = 0;
    for (int i = 0; i < 2; i++) {
        in[i] = (rf_text){texts[i], strlen(texts[i]), NULL, 0};
        rf_tokenize(mlm, texts[i], strlen(texts[i]), NULL, 0, 0, &encs[i], &err);
        rows += encs[i].n;
    }
    float *want = malloc(sizeof(float) * 2 * D), *got = malloc(sizeof(float) * 2 * D);
    float *tokens = malloc(sizeof(float) * (size_t)rows * D);
    CHECK(rf_embed(pl, in, 2, RF_POOLING_MEAN, false, want, NULL, &err) == RF_OK, "rf_embed");
    CHECK(rf_embed_encodings(pl, encs, 2, RF_POOLING_MEAN, false, got, NULL, &err) == RF_OK,
          "rf_embed_encodings: %s", err.message);
    /* the same encodings in the same batch: the same bytes (batch invariance) */
    CHECK(!memcmp(want, got, sizeof(float) * 2 * D), "rf_embed_encodings = rf_embed: max |diff| %g",
          (double)check_max_abs_diff(want, got, 2 * (size_t)D));
    CHECK(rf_embed(pl, in, 2, RF_POOLING_MEAN, true, want, NULL, &err) == RF_OK,
          "rf_embed normalized");
    CHECK(rf_embed_encodings(pl, encs, 2, RF_POOLING_MEAN, true, got, NULL, &err) == RF_OK,
          "rf_embed_encodings normalized: %s", err.message);
    CHECK(!memcmp(want, got, sizeof(float) * 2 * D),
          "rf_embed_encodings normalized = rf_embed normalized: max |diff| %g",
          (double)check_max_abs_diff(want, got, 2 * (size_t)D));
    CHECK(rf_embed_encodings(pl, encs, 2, RF_POOLING_POOLER, false, got, NULL, &err) == RF_OK,
          "rf_embed_encodings with the pooler");
    CHECK(rf_embed(pl, in, 2, RF_POOLING_CLS, false, want, NULL, &err) == RF_OK, "rf_embed cls");
    CHECK(rf_token_embeddings(pl, encs, 2, tokens, NULL, &err) == RF_OK,
          "rf_token_embeddings: %s", err.message);
    /* each encoding's first row is its [CLS] vector */
    float diff = check_max_nan(check_max_abs_diff(tokens, want, D),
                               check_max_abs_diff(tokens + (size_t)encs[0].n * D, want + D, D));
    CHECK(diff < 1e-5f, "rf_token_embeddings' [CLS] rows = cls pooling: max |diff| %g", diff);
    check_encodings_items(pl, encs, D, want);
    free(want);
    free(got);
    free(tokens);
    for (int i = 0; i < 2; i++)
        rf_encoding_free(&encs[i]);
done:
    rf_pipeline_free(pl);
    rf_model_free(mlm);
    rf_model_free(cls);
}

/* A config.json without the size keys: HF's RoFormerConfig defaults
 * (vocab_size 50000, hidden_size 768, 12 layers of 12 heads,
 * intermediate_size 3072, max_position_embeddings 1536, type_vocab_size
 * 2, layer_norm_eps 1e-12, hidden_act "gelu", embedding_size = hidden_size). */
static void test_config_defaults(void)
{
    static const char config[] = "{\"model_type\": \"roformer\"}";
    rf_hf_config c;
    rf_error err;
    rf_status st = rf_hf_config_parse(config, sizeof config - 1, "config.json", NULL, 0, NULL,
                                      RF_TOKENIZER_AUTO, &c, &err);
    CHECK(st == RF_OK, "a config.json of model_type alone: %s", err.message);
    if (st != RF_OK)
        return;
    const rf_hparams *hp = &c.hp;
    CHECK(hp->vocab_size == 50000 && hp->hidden_size == 768 && hp->embedding_size == 768 &&
              hp->num_layers == 12 && hp->num_heads == 12 && hp->intermediate_size == 3072,
          "HF's sizes: vocab %d, hidden %d, embedding %d, %d layers, %d heads, ffn %d",
          hp->vocab_size, hp->hidden_size, hp->embedding_size, hp->num_layers, hp->num_heads,
          hp->intermediate_size);
    CHECK(hp->max_position == 1536 && hp->type_vocab_size == 2,
          "HF's max_position_embeddings 1536 (%d), type_vocab_size 2 (%d)", hp->max_position,
          hp->type_vocab_size);
    CHECK(hp->layer_norm_eps == 1e-12f && hp->hidden_act == RF_ACT_GELU,
          "HF's layer_norm_eps 1e-12 (%g), hidden_act gelu (%d)", hp->layer_norm_eps,
          (int)hp->hidden_act);
    rf_hf_config_free(&c);
}

int main(void)
{
    test_plain_rules();
    test_config_defaults();
    test_qa_window_tokens();
    test_scm_score();
    REFERENCE_OR_SKIP(ref, "the defaults on models");
    test_model_defaults(ref);
    return check_done();
}
