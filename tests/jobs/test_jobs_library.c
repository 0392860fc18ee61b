/*
 * test_jobs_library.c — the job calls of the library on the reference
 * models: per-input failures with and without `items`, head checks,
 * batching that does not change results, and every result freed (the
 * sanitizer build checks the leaks), and each *_encodings twin giving its
 * text job's bytes. Numbers against HF are checked end to
 * end by test_jobs_cli.sh, except the classification logits, checked here
 * against the reference's expected.safetensors.
 */
#include "../check.h"
#include "../reference_cases.h"
#include "roformer.h"

#include "formats/checkpoint_open.h"

#include <cJSON.h>
#include <math.h>

static rf_text txt(const char *s) { return (rf_text){s, strlen(s), NULL, 0}; }

/* A normalized embedding is the vector divided by its length, computed
 * here in double (bound 1e-6: float rounding of components under 1); the
 * similarity of two texts is the cosine of their vectors (bound 1e-5, the
 * batched = alone bound of test_embed: similarity runs its own batch). */
static void check_unit_and_cosine(rf_pipeline *pl, int32_t D)
{
    rf_error err;
    rf_text two[2] = {txt("今天天气很好"), txt("北京是中国的首都")};
    float *v = malloc(sizeof(float) * 2 * (size_t)D), *u = malloc(sizeof(float) * 2 * (size_t)D);
    CHECK(rf_embed(pl, two, 2, RF_POOLING_MEAN, false, v, NULL, &err) == RF_OK &&
              rf_embed(pl, two, 2, RF_POOLING_MEAN, true, u, NULL, &err) == RF_OK,
          "embed: %s", err.message);
    double len[2] = {0, 0}, dot = 0, worst = 0;
    for (int32_t d = 0; d < D; d++) {
        len[0] += (double)v[d] * v[d];
        len[1] += (double)v[D + d] * v[D + d];
        dot += (double)v[d] * v[D + d];
    }
    for (int r = 0; r < 2; r++)
        for (int32_t d = 0; d < D; d++)
            worst = check_max_nan(worst, fabs(u[r * D + d] - v[r * D + d] / sqrt(len[r])));
    CHECK(worst < 1e-6, "normalized = the vector / its length (max |diff| %g)", worst);
    rf_text pair = {two[0].text, two[0].text_len, two[1].text, two[1].text_len};
    float sim = NAN;
    double cosine = dot / sqrt(len[0] * len[1]);
    CHECK(rf_similarity(pl, &pair, 1, RF_POOLING_MEAN, &sim, NULL, &err) == RF_OK &&
              fabs(sim - cosine) < 1e-5,
          "similarity = the cosine of the two vectors: %.7f, want %.7f", sim, cosine);
    free(v);
    free(u);
}

static void test_embed(const rf_model *m)
{
    rf_error err;
    rf_pipeline *pl;
    rf_pipeline_params pp = rf_pipeline_default_params();
    pp.batch_size = 2;
    CHECK(rf_pipeline_create(m, &pp, &pl, &err) == RF_OK, "pipeline: %s", err.message);
    int32_t D = rf_model_hparams(m)->hidden_size;
    rf_text in[4] = {txt("今天天气很好"), txt("bad \xff byte"), txt("北京"),
                     txt("一个长一点的句子，用来测试按长度分组之后的顺序。")};
    float *out = malloc(sizeof(float) * 4 * (size_t)D), *alone = malloc(sizeof(float) * (size_t)D);
    rf_item_status items[4];
    CHECK(rf_embed(pl, in, 4, RF_POOLING_MEAN, false, out, items, &err) == RF_OK,
          "embed with items: %s", err.message);
    CHECK(items[0].status == RF_OK && items[2].status == RF_OK && items[3].status == RF_OK,
          "good inputs ok");
    CHECK(items[1].status == RF_ERR_INPUT && strstr(items[1].error.message, "UTF-8"),
          "bad input fails alone: %d '%s'", items[1].status, items[1].error.message);
    CHECK(isnan(out[D]) && !isnan(out[0]), "failed row is NaN, others are not");
    for (int i = 0; i < 4; i += 2 + (i == 2)) { /* 0, 2, 3: each equals the input run alone */
        rf_status st = rf_embed(pl, &in[i], 1, RF_POOLING_MEAN, false, alone, NULL, &err);
        float diff = check_max_abs_diff(alone, out + (size_t)i * D, D);
        CHECK(st == RF_OK && diff < 1e-5f, "input %d batched = alone (max diff %g)", i, diff);
    }
    CHECK(rf_embed(pl, in, 4, RF_POOLING_MEAN, false, out, NULL, &err) == RF_ERR_INPUT &&
              strstr(err.message, "input 2:"),
          "without items the first bad input fails the call: '%s'", err.message);

    float cos[2];
    rf_text pairs[2] = {{"下雨了", 9, "下雨了", 9}, {"下雨了", 9, "\xff", 1}};
    CHECK(rf_similarity(pl, pairs, 2, RF_POOLING_CLS, cos, items, &err) == RF_OK &&
              fabsf(cos[0] - 1) < 1e-5f && isnan(cos[1]) && items[1].status == RF_ERR_INPUT &&
              strstr(items[1].error.message, "text_b"),
          "similarity: identical texts 1, bad text_b fails alone ('%s')", items[1].error.message);
    check_unit_and_cosine(pl, D);
    CHECK(rf_classify(pl, in, 1, out, NULL, &err) == RF_ERR_UNSUPPORTED,
          "classify on an MLM model: unsupported");
    CHECK(rf_classify_logits(pl, in, 1, out, NULL, &err) == RF_ERR_UNSUPPORTED,
          "classify logits on an MLM model: unsupported");

    rf_fill_mask_result fm[2];
    rf_text masked[2] = {txt("北京是[MASK]国的首都，[MASK]海"), txt("没有掩码")};
    CHECK(rf_fill_mask(pl, masked, 2, 3, fm, items, &err) == RF_OK, "fill-mask: %s", err.message);
    CHECK(fm[0].n_masks == 2 && fm[0].top_k == 3 && fm[0].positions[0] < fm[0].positions[1] &&
              fm[0].scores[0] >= fm[0].scores[1] && fm[0].scores[1] >= fm[0].scores[2],
          "fill-mask: two masks, scores in decreasing order");
    CHECK(items[1].status == RF_ERR_INPUT && fm[1].n_masks == 0, "fill-mask: no [MASK] fails alone");
    rf_fill_mask_result_free(&fm[0]);
    rf_fill_mask_result_free(&fm[1]);
    rf_fill_mask_result_free(NULL);
    free(out);
    free(alone);
    rf_pipeline_free(pl);

    pp.max_length = rf_model_hparams(m)->max_position + 1;
    CHECK(rf_pipeline_create(m, &pp, &pl, &err) == RF_ERR_INPUT && !pl,
          "max_length over the model's maximum is refused");
    rf_pipeline_free(NULL);
}

static void test_ner(const rf_model *m)
{
    rf_error err;
    rf_pipeline *pl;
    if (rf_pipeline_create(m, NULL, &pl, &err) != RF_OK) {
        CHECK(0, "pipeline: %s", err.message);
        return;
    }
    rf_ner_result r[2];
    rf_item_status items[2];
    rf_text in[2] = {txt("张三在北京工作"), {"问题", 6, "上下文", 9}};
    CHECK(rf_token_classify(pl, in, 2, r, items, &err) == RF_OK, "ner: %s", err.message);
    CHECK(r[0].n_tokens == 7 && r[0].tokens[6].start == 6 && r[0].tokens[6].end == 7,
          "ner: one token per character, character offsets (%d tokens)", r[0].n_tokens);
    bool inside = true;
    for (int32_t e = 0; e < r[0].n_entities; e++)
        inside &= r[0].entities[e].start >= 0 && r[0].entities[e].end <= 7 &&
                  r[0].entities[e].start < r[0].entities[e].end;
    CHECK(inside, "ner: entity offsets inside the text");
    CHECK(items[1].status == RF_ERR_INPUT, "ner: a pair fails alone");
    rf_ner_result_free(&r[0]);
    rf_ner_result_free(&r[1]);
    rf_qa_result qa;
    CHECK(rf_qa(pl, in, 1, 30, -1, &qa, NULL, &err) == RF_ERR_UNSUPPORTED, "qa on a NER model: unsupported");
    rf_pipeline_free(pl);
}

static void test_qa(const rf_model *m)
{
    rf_error err;
    rf_pipeline *pl;
    if (rf_pipeline_create(m, NULL, &pl, &err) != RF_OK) {
        CHECK(0, "pipeline: %s", err.message);
        return;
    }
    const char *ctx = "张三在北京的一家银行工作。";
    rf_text in[2] = {{"张三在哪里工作？", strlen("张三在哪里工作？"), ctx, strlen(ctx)},
                     txt("没有上下文")};
    rf_qa_result r[2];
    rf_item_status items[2];
    CHECK(rf_qa(pl, in, 2, 3, -1, r, items, &err) == RF_OK, "qa: %s", err.message);
    CHECK(items[0].status == RF_OK && r[0].start >= 0 && r[0].start < r[0].end &&
              r[0].end <= 13 && r[0].end_token - r[0].start_token < 3 && r[0].score > 0 &&
              r[0].score <= 1,
          "qa: a span of at most 3 tokens inside the context (%d-%d)", r[0].start, r[0].end);
    CHECK(r[0].byte_end - r[0].byte_start == 3 * (r[0].end - r[0].start),
          "qa: byte and character offsets agree (CJK = 3 bytes)");
    CHECK(items[1].status == RF_ERR_INPUT, "qa: no context fails alone");
    /* a context that fits one window: the same answer with windows on */
    rf_qa_result w[2];
    CHECK(rf_qa(pl, in, 2, 3, 128, w, items, &err) == RF_OK, "qa windows: %s", err.message);
    CHECK(items[0].status == RF_OK && w[0].score == r[0].score && w[0].start == r[0].start &&
              w[0].end == r[0].end && w[0].start_token == r[0].start_token,
          "qa: doc_stride on a short context gives the single-window answer");
    CHECK(items[1].status == RF_ERR_INPUT, "qa windows: no context fails alone");
    rf_pipeline_free(pl);
    /* nothing left to run (every input failed, or none given), on fresh
     * pipelines that have no buffers yet */
    for (int32_t stride = -1; stride <= 128; stride += 129) {
        if (rf_pipeline_create(m, NULL, &pl, &err) != RF_OK)
            return;
        CHECK(rf_qa(pl, in + 1, 1, 3, stride, w, items, &err) == RF_OK &&
                  items[0].status == RF_ERR_INPUT,
              "qa (doc_stride %d): every input failing is no error of the call", stride);
        CHECK(rf_qa(pl, in, 0, 3, stride, w, items, &err) == RF_OK, "qa: no inputs");
        rf_pipeline_free(pl);
    }
}

/* rf_classify_logits against HF's logits of the reference cases c00 (one
 * text) and c01 (four texts, which HF ran as one padded batch), all five
 * in one call with a bad input among them; rf_classify's probabilities are
 * their softmax. */
static void test_classify_logits(const rf_model *m, const char *ref)
{
    char path[512];
    size_t len;
    snprintf(path, sizeof path, "%s/models/tiny-word-cls/cases.jsonl", ref);
    char *cases = check_read_file(path, &len);
    snprintf(path, sizeof path, "%s/models/tiny-word-cls/expected.safetensors", ref);
    rf_checkpoint *expected = NULL;
    rf_error err;
    rf_pipeline *pl = NULL;
    CHECK(rf_checkpoint_open(path, &expected, &err) == RF_OK, "%s", err.message);
    CHECK(rf_pipeline_create(m, NULL, &pl, &err) == RF_OK, "pipeline: %s", err.message);
    if (!cases || !expected || !pl)
        goto done;

    /* texts 0..4 from c00 and c01; text 5 is invalid UTF-8 */
    enum { N = 3, N_TEXTS = 6 };
    rf_text in[N_TEXTS];
    char *owned[N_TEXTS] = {0};
    int n = 0;
    for (char *line = strtok(cases, "\n"); line && n < 5; line = strtok(NULL, "\n")) {
        cJSON *c = cJSON_Parse(line);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "id"), *t;
        if (cJSON_IsString(id) && !strcmp(id->valuestring, "c00"))
            owned[n++] = strdup(cJSON_GetObjectItemCaseSensitive(c, "text")->valuestring);
        else if (cJSON_IsString(id) && !strcmp(id->valuestring, "c01"))
            cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(c, "texts"))
                if (n < 5)
                    owned[n++] = strdup(t->valuestring);
        cJSON_Delete(c);
    }
    CHECK(n == 5, "c00 and c01 give 5 texts (%d)", n);
    owned[5] = strdup("bad \xff byte");
    for (int i = 0; i < N_TEXTS; i++)
        in[i] = txt(owned[i] ? owned[i] : "");
    const rf_ck_tensor *e0 = rf_checkpoint_find(expected, "c00.logits"),
                       *e1 = rf_checkpoint_find(expected, "c01.logits");
    CHECK(e0 && e1 && e0->dtype == RF_CK_F32 && e1->dtype == RF_CK_F32, "expected logits present");
    if (n != 5 || !e0 || !e1)
        goto free_texts;
    float want[5 * N], logits[N_TEXTS * N], probs[N_TEXTS * N];
    memcpy(want, e0->data, sizeof(float) * N);
    memcpy(want + N, e1->data, sizeof(float) * 4 * N);
    rf_item_status items[N_TEXTS];
    CHECK(rf_classify_logits(pl, in, N_TEXTS, logits, items, &err) == RF_OK, "logits: %s",
          err.message);
    float diff = check_max_abs_diff(logits, want, 5 * N);
    CHECK(diff < 1e-4f, "classify logits = HF's (c00, c01): max |diff| %g", diff);
    printf("  classify logits vs HF: c00 %.6f %.6f %.6f, max |diff| %.3g\n", logits[0],
           logits[1], logits[2], diff);
    CHECK(items[5].status == RF_ERR_INPUT && isnan(logits[5 * N]) && items[4].status == RF_OK,
          "classify logits: a bad input fails alone, its row NaN");
    CHECK(rf_classify(pl, in, 5, probs, NULL, &err) == RF_OK, "classify: %s", err.message);
    /* the softmax computed here in double; bound 1e-6: float rounding of
       probabilities under 1 */
    diff = 0;
    for (int i = 0; i < 5; i++) {
        const float *x = logits + i * N;
        double max = x[0], sum = 0;
        float p[N];
        for (int k = 1; k < N; k++)
            max = x[k] > max ? x[k] : max;
        for (int k = 0; k < N; k++)
            sum += exp(x[k] - max);
        for (int k = 0; k < N; k++)
            p[k] = (float)(exp(x[k] - max) / sum);
        diff = check_max_nan(diff, check_max_abs_diff(p, probs + i * N, N));
    }
    CHECK(diff < 1e-6f, "rf_classify = softmax of rf_classify_logits (max |diff| %g)", diff);
free_texts:
    for (int i = 0; i < N_TEXTS; i++)
        free(owned[i]);
done:
    free(cases);
    rf_checkpoint_free(expected);
    rf_pipeline_free(pl);
}

/* ==== The *_encodings twins: the bits of the text jobs ==== */

/* Tokenizes in[n] as a pipeline with this max_length does (right side). */
static rf_encoding *encode_all(const rf_model *m, const rf_text *in, int32_t n, int32_t max_length)
{
    rf_encoding *encs = calloc((size_t)n, sizeof *encs);
    rf_error err;
    for (int32_t i = 0; encs && i < n; i++)
        CHECK(rf_tokenize_truncated(m, in[i].text, in[i].text_len, in[i].pair, in[i].pair_len,
                                    max_length, RF_TRUNCATE_RIGHT, &encs[i], &err) == RF_OK,
              "tokenize input %d: %s", i, err.message);
    return encs;
}

static void free_encodings(rf_encoding *encs, int32_t n)
{
    for (int32_t i = 0; encs && i < n; i++)
        rf_encoding_free(&encs[i]);
    free(encs);
}

/* Same statuses, same bytes. */
static bool same_items(const rf_item_status *a, const rf_item_status *b, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        if (a[i].status != b[i].status)
            return false;
    return true;
}

/* A pipeline of batch 2 with this max_length, and a window when window > 0. */
static rf_pipeline *twin_pipeline(const rf_model *m, int32_t max_length, int32_t window)
{
    rf_pipeline_params pp = rf_pipeline_default_params();
    pp.batch_size = 2;
    pp.max_length = max_length;
    pp.window = window;
    pp.stride = window ? 2 : RF_STRIDE_DEFAULT;
    rf_pipeline *pl = NULL;
    rf_error err;
    CHECK(rf_pipeline_create(m, &pp, &pl, &err) == RF_OK, "pipeline: %s", err.message);
    return pl;
}

static const char *const long_text = "一个长一点的句子，用来测试窗口和截断之后的结果是否一样。";

/* Embeddings (with windows, and without), fill-mask and scm on an MLM model. */
static void test_twins_mlm(const rf_model *m)
{
    rf_error err;
    int32_t D = rf_model_hparams(m)->hidden_size;
    rf_text in[4] = {txt("今天天气很好"), txt(long_text), txt("北京"), txt("北京是[MASK]国的首都")};
    rf_item_status a[4], b[4];
    float *va = malloc(sizeof(float) * 4 * (size_t)D), *vb = malloc(sizeof(float) * 4 * (size_t)D);
    for (int32_t window = 0; window <= 8; window += 8) {
        rf_pipeline *pl = twin_pipeline(m, window ? 0 : 12, window);
        rf_encoding *encs = encode_all(m, in, 4, window ? 0 : 12);
        if (!pl || !encs)
            return;
        CHECK(rf_embed(pl, in, 4, RF_POOLING_MEAN, true, va, a, &err) == RF_OK &&
                  rf_embed_windowed_encodings(pl, encs, 4, RF_POOLING_MEAN, true, vb, b, &err) ==
                      RF_OK &&
                  same_items(a, b, 4) && !memcmp(va, vb, sizeof(float) * 4 * (size_t)D),
              "embed (window %d): the encodings give rf_embed's bytes", window);
        rf_pipeline_stats stats;
        rf_pipeline_get_stats(pl, &stats);
        CHECK(!window || stats.windowed_inputs == 2, "window 8: the long text ran as windows "
              "both times (%lld)", (long long)stats.windowed_inputs);
        free_encodings(encs, 4);
        rf_pipeline_free(pl);
    }
    rf_pipeline *pl = twin_pipeline(m, 12, 0);
    rf_encoding *encs = encode_all(m, in, 4, 12);
    rf_encoding empty = {0};
    CHECK(rf_embed_windowed_encodings(pl, &empty, 1, RF_POOLING_MEAN, false, vb, b, &err) ==
                  RF_OK && b[0].status == RF_ERR_INPUT && isnan(vb[0]),
          "an empty encoding fails its input alone");

    rf_text masked[2] = {in[3], txt("没有掩码")};
    rf_encoding *menc = encode_all(m, masked, 2, 12);
    rf_fill_mask_result fa[2], fb[2];
    CHECK(rf_fill_mask(pl, masked, 2, 3, fa, a, &err) == RF_OK &&
              rf_fill_mask_encodings(pl, masked, menc, 2, 3, fb, b, &err) == RF_OK &&
              same_items(a, b, 2) && fb[1].n_masks == 0,
          "fill-mask: the same outcomes (%s)", err.message);
    CHECK(fa[0].n_masks == fb[0].n_masks && fa[0].top_k == fb[0].top_k &&
              !memcmp(fa[0].ids, fb[0].ids, sizeof(int32_t) * 3 * (size_t)fa[0].n_masks) &&
              !memcmp(fa[0].scores, fb[0].scores, sizeof(float) * 3 * (size_t)fa[0].n_masks) &&
              !strcmp(fa[0].sequence, fb[0].sequence),
          "fill-mask: the encodings give the same ids, scores and sequence");
    for (int i = 0; i < 2; i++) {
        rf_fill_mask_result_free(&fa[i]);
        rf_fill_mask_result_free(&fb[i]);
    }
    free_encodings(menc, 2);

    /* triplets with a repeated document: A, B, C of each from in[] */
    rf_triplet t[2] = {{{in[0].text, in[1].text, in[2].text}, {in[0].text_len, in[1].text_len,
                                                              in[2].text_len}},
                       {{in[2].text, in[1].text, in[0].text}, {in[2].text_len, in[1].text_len,
                                                              in[0].text_len}}};
    rf_encoding tenc[6] = {encs[0], encs[1], encs[2], encs[2], encs[1], encs[0]};
    rf_scm_result sa[2], sb[2];
    int32_t da = 0, db = 0;
    rf_scm_params sp = rf_scm_default_params();
    CHECK(rf_scm(pl, t, 2, &sp, sa, &da, a, &err) == RF_OK &&
              rf_scm_encodings(pl, t, tenc, 2, &sp, sb, &db, b, &err) == RF_OK &&
              same_items(a, b, 2) && da == 3 && db == 3 && !memcmp(sa, sb, sizeof sa),
          "scm: the encodings give rf_scm's bytes, 3 distinct documents (%d)", db);
    sp.mode = RF_SCM_PAIR;
    CHECK(rf_scm_encodings(pl, t, tenc, 2, &sp, sb, &db, b, &err) == RF_ERR_INPUT,
          "scm pair mode takes no document encodings");
    float score;
    CHECK(rf_rerank_score_encodings(pl, encs, 1, NULL, &score, NULL, &err) == RF_ERR_UNSUPPORTED,
          "rerank by cosine takes no pair encodings");
    free_encodings(encs, 4);
    rf_pipeline_free(pl);
    free(va);
    free(vb);
}

/* Classification (probabilities, logits, pairs, windows) and rerank. */
static void test_twins_cls(const rf_model *m)
{
    rf_error err;
    int32_t N = rf_model_hparams(m)->num_labels;
    rf_text in[3] = {txt("这家酒店服务很好"), {"房间很大", strlen("房间很大"), "早餐一般",
                                               strlen("早餐一般")}, txt(long_text)};
    rf_item_status a[3], b[3];
    float pa[3 * 8], pb[3 * 8];
    if (N > 8)
        return;
    for (int32_t window = 0; window <= 8; window += 8) {
        rf_pipeline *pl = twin_pipeline(m, window ? 0 : 10, window);
        rf_encoding *encs = encode_all(m, in, 3, window ? 0 : 10);
        if (!pl || !encs)
            return;
        CHECK(rf_classify(pl, in, 3, pa, a, &err) == RF_OK &&
                  rf_classify_encodings(pl, encs, 3, pb, b, &err) == RF_OK &&
                  same_items(a, b, 3) && !memcmp(pa, pb, sizeof(float) * 3 * (size_t)N),
              "classify (window %d): the encodings give rf_classify's bytes", window);
        CHECK(rf_classify_logits(pl, in, 3, pa, a, &err) == RF_OK &&
                  rf_classify_logits_encodings(pl, encs, 3, pb, b, &err) == RF_OK &&
                  same_items(a, b, 3) && !memcmp(pa, pb, sizeof(float) * 3 * (size_t)N),
              "classify logits (window %d): the same bytes", window);
        rf_rerank_params rp = rf_rerank_default_params();
        rf_text pairs[2] = {{"这个东西怎么样", strlen("这个东西怎么样"), "还行吧", strlen("还行吧")},
                            {"这个东西怎么样", strlen("这个东西怎么样"), long_text,
                             strlen(long_text)}};
        rf_encoding *penc = encode_all(m, pairs, 2, window ? 0 : 10);
        for (int raw = 0; raw <= 1; raw++) {
            rp.raw_scores = raw;
            CHECK(rf_rerank_score(pl, pairs, 2, &rp, pa, a, &err) == RF_OK &&
                      rf_rerank_score_encodings(pl, penc, 2, &rp, pb, b, &err) == RF_OK &&
                      same_items(a, b, 2) && !memcmp(pa, pb, sizeof(float) * 2),
                  "rerank (window %d, raw %d): the same bytes", window, raw);
        }
        free_encodings(penc, 2);
        free_encodings(encs, 3);
        rf_pipeline_free(pl);
    }
}

static bool same_ner(const rf_ner_result *x, const rf_ner_result *y)
{
    return x->n_tokens == y->n_tokens && x->n_entities == y->n_entities &&
           !memcmp(x->tokens, y->tokens, sizeof *x->tokens * (size_t)x->n_tokens) &&
           !memcmp(x->entities, y->entities, sizeof *x->entities * (size_t)x->n_entities);
}

static void test_twins_ner(const rf_model *m)
{
    rf_error err;
    rf_text in[2] = {txt("张三在北京工作"), txt(long_text)};
    rf_pipeline *pl = twin_pipeline(m, 12, 0);
    rf_encoding *encs = encode_all(m, in, 2, 12);
    rf_ner_result ra[2], rb[2];
    rf_item_status a[2], b[2];
    if (!pl || !encs)
        return;
    CHECK(rf_token_classify(pl, in, 2, ra, a, &err) == RF_OK &&
              rf_token_classify_encodings(pl, in, encs, 2, rb, b, &err) == RF_OK &&
              same_items(a, b, 2) && same_ner(&ra[0], &rb[0]) && same_ner(&ra[1], &rb[1]),
          "ner: the encodings give rf_token_classify's tokens and entities");
    for (int i = 0; i < 2; i++) {
        rf_ner_result_free(&ra[i]);
        rf_ner_result_free(&rb[i]);
    }
    free_encodings(encs, 2);
    rf_pipeline_free(pl);
}

/* One window (truncated at max_length), and windows over a long context. */
static void test_twins_qa(const rf_model *m)
{
    rf_error err;
    const char *q = "张三在哪里工作？";
    rf_text in[2] = {{q, strlen(q), "张三在北京的一家银行工作。", strlen("张三在北京的一家银行工作。")},
                     {q, strlen(q), long_text, strlen(long_text)}};
    rf_pipeline *pl = twin_pipeline(m, 16, 0);
    rf_qa_result ra[2], rb[2];
    rf_item_status a[2], b[2];
    if (!pl)
        return;
    for (int32_t stride = -1; stride <= 2; stride += 3) {
        rf_encoding *encs = encode_all(m, in, 2, stride < 0 ? 16 : 0);
        CHECK(rf_qa(pl, in, 2, 5, stride, ra, a, &err) == RF_OK &&
                  rf_qa_encodings(pl, in, encs, 2, 5, stride, rb, b, &err) == RF_OK &&
                  same_items(a, b, 2) && !memcmp(ra, rb, sizeof ra),
              "qa (doc_stride %d): the encodings give rf_qa's answers", stride);
        free_encodings(encs, 2);
    }
    rf_pipeline_free(pl);
}

int main(void)
{
    REFERENCE_OR_SKIP(ref, "library jobs");
    rf_model *mlm = load_reference_model(ref, "tiny-word-mlm");
    rf_model *ner = load_reference_model(ref, "tiny-char-proj");
    rf_model *qa = load_reference_model(ref, "tiny-qa");
    rf_model *cls = load_reference_model(ref, "tiny-word-cls");
    if (cls) {
        test_classify_logits(cls, ref);
        test_twins_cls(cls);
    }
    if (mlm) {
        test_embed(mlm);
        test_twins_mlm(mlm);
    }
    if (ner) {
        test_ner(ner);
        test_twins_ner(ner);
    }
    if (qa) {
        test_qa(qa);
        test_twins_qa(qa);
    }
    rf_model_free(mlm);
    rf_model_free(ner);
    rf_model_free(qa);
    rf_model_free(cls);
    return check_done();
}
