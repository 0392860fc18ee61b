/*
 * test_batch_duplicates.c — equal inputs of one library call run once:
 * a batch holding duplicates gives, for every copy, the very bytes of the
 * batch without them, and the pipeline counts the tokens of the distinct
 * inputs only (rf_pipeline_stats.tokens), for text and encoding inputs,
 * pooled (embed, classify) and per-token (NER) jobs. Inputs that only look
 * alike (a pair and its swap) still run apart.
 */
#include "../check.h"
#include "../reference_cases.h"
#include "roformer.h"

static rf_text txt(const char *s) { return (rf_text){s, strlen(s), NULL, 0}; }

/* Tokens the pipeline ran since `before`. */
static int64_t tokens_since(const rf_pipeline *pl, const rf_pipeline_stats *before)
{
    rf_pipeline_stats now;
    rf_pipeline_get_stats(pl, &now);
    return now.tokens - before->tokens;
}

static void test_embed_and_classify(const rf_model *m)
{
    rf_error err;
    rf_pipeline *pl;
    rf_pipeline_params pp = rf_pipeline_default_params();
    CHECK(rf_pipeline_create(m, &pp, &pl, &err) == RF_OK, "pipeline: %s", err.message);
    int32_t D = rf_model_hparams(m)->hidden_size, N = rf_model_hparams(m)->num_labels;
    rf_text two[2] = {txt("今天天气很好"), txt("我们明天去北京")};
    rf_text five[5] = {two[0], two[1], two[0], two[0], two[1]};
    const int from[5] = {0, 1, 0, 0, 1};
    float *v2 = malloc(sizeof(float) * 2 * (size_t)D), *v5 = malloc(sizeof(float) * 5 * (size_t)D);
    rf_pipeline_stats s;

    rf_pipeline_get_stats(pl, &s);
    CHECK(rf_embed(pl, two, 2, RF_POOLING_MEAN, false, v2, NULL, &err) == RF_OK, "%s", err.message);
    int64_t distinct = tokens_since(pl, &s);
    rf_pipeline_get_stats(pl, &s);
    CHECK(rf_embed(pl, five, 5, RF_POOLING_MEAN, false, v5, NULL, &err) == RF_OK, "%s", err.message);
    CHECK(tokens_since(pl, &s) == distinct && distinct > 0,
          "embed [a, b, a, a, b]: the tokens of [a, b] ran (%lld, want %lld)",
          (long long)tokens_since(pl, &s), (long long)distinct);
    for (int i = 0; i < 5; i++)
        CHECK(!memcmp(v5 + (size_t)i * D, v2 + (size_t)from[i] * D, sizeof(float) * D),
              "embed: copy %d has the bytes of [a, b]'s row %d", i, from[i]);

    /* the same through caller-made encodings */
    rf_encoding encs[5] = {{0}};
    for (int i = 0; i < 5; i++)
        CHECK(rf_tokenize(m, five[i].text, five[i].text_len, NULL, 0, 0, &encs[i], &err) == RF_OK,
              "tokenize %d", i);
    float *p2 = malloc(sizeof(float) * 2 * (size_t)N), *p5 = malloc(sizeof(float) * 5 * (size_t)N);
    rf_pipeline_get_stats(pl, &s);
    CHECK(rf_classify_encodings(pl, encs, 2, p2, NULL, &err) == RF_OK, "%s", err.message);
    distinct = tokens_since(pl, &s);
    rf_pipeline_get_stats(pl, &s);
    CHECK(rf_classify_encodings(pl, encs, 5, p5, NULL, &err) == RF_OK, "%s", err.message);
    CHECK(tokens_since(pl, &s) == distinct, "classify encodings with duplicates: %lld tokens, "
          "want %lld", (long long)tokens_since(pl, &s), (long long)distinct);
    for (int i = 0; i < 5; i++)
        CHECK(!memcmp(p5 + (size_t)i * N, p2 + (size_t)from[i] * N, sizeof(float) * N),
              "classify: copy %d has the bytes of row %d", i, from[i]);

    /* a pair and its swap are different inputs */
    rf_text pairs[2] = {{two[0].text, two[0].text_len, two[1].text, two[1].text_len},
                        {two[1].text, two[1].text_len, two[0].text, two[0].text_len}};
    rf_pipeline_get_stats(pl, &s);
    CHECK(rf_classify(pl, pairs, 1, p2, NULL, &err) == RF_OK, "%s", err.message);
    int64_t one = tokens_since(pl, &s);
    rf_pipeline_get_stats(pl, &s);
    CHECK(rf_classify(pl, pairs, 2, p2, NULL, &err) == RF_OK, "%s", err.message);
    CHECK(tokens_since(pl, &s) == 2 * one, "a pair and its swap both run (%lld tokens, one %lld)",
          (long long)tokens_since(pl, &s), (long long)one);

    for (int i = 0; i < 5; i++)
        rf_encoding_free(&encs[i]);
    free(v2);
    free(v5);
    free(p2);
    free(p5);
    rf_pipeline_free(pl);
}

/* NER reads each copy's own text: two texts with the same tokens (a space
 * more) run once and each gets offsets into itself. */
static void test_ner(const rf_model *m)
{
    rf_error err;
    rf_pipeline *pl;
    rf_pipeline_params pp = rf_pipeline_default_params();
    CHECK(rf_pipeline_create(m, &pp, &pl, &err) == RF_OK, "pipeline: %s", err.message);
    rf_text in[3] = {txt("我们明天去北京"), txt(" 我们明天去北京"), txt("我们明天去北京")};
    rf_ner_result one = {0}, three[3] = {{0}};
    rf_pipeline_stats s;
    rf_pipeline_get_stats(pl, &s);
    CHECK(rf_token_classify(pl, in, 1, &one, NULL, &err) == RF_OK, "%s", err.message);
    int64_t distinct = tokens_since(pl, &s);
    rf_pipeline_get_stats(pl, &s);
    CHECK(rf_token_classify(pl, in, 3, three, NULL, &err) == RF_OK, "%s", err.message);
    CHECK(tokens_since(pl, &s) == distinct, "NER: 3 texts of the same tokens ran once "
          "(%lld tokens, want %lld)", (long long)tokens_since(pl, &s), (long long)distinct);
    bool same = one.n_tokens > 0;
    for (int i = 0; i < 3; i++) {
        same = same && three[i].n_tokens == one.n_tokens;
        for (int32_t t = 0; same && t < one.n_tokens; t++) {
            int shift = i == 1; /* the space before */
            same = three[i].tokens[t].label == one.tokens[t].label &&
                   !memcmp(&three[i].tokens[t].score, &one.tokens[t].score, sizeof(float)) &&
                   three[i].tokens[t].start == one.tokens[t].start + shift;
        }
    }
    CHECK(same, "NER: every copy has the labels and score bytes of the one, offsets its own");
    rf_ner_result_free(&one);
    for (int i = 0; i < 3; i++)
        rf_ner_result_free(&three[i]);
    rf_pipeline_free(pl);
}

int main(void)
{
    REFERENCE_OR_SKIP(ref, "duplicates in a batch");
    rf_model *cls = load_reference_model(ref, "tiny-word-cls");
    rf_model *ner = load_reference_model(ref, "tiny-char-proj");
    if (cls)
        test_embed_and_classify(cls);
    if (ner)
        test_ner(ner);
    rf_model_free(cls);
    rf_model_free(ner);
    return check_done();
}
