/*
 * test_rerank.c — rf_rerank and its parts: the positive-label rule and the
 * sort on hand-made scores (exact ties, NaN, top_n), and on the reference models
 * the scores of the HF reference pair c02 of tiny-word-cls (the softmax of
 * HF's logits, computed here from expected.safetensors), documents ranked
 * in the order of their classifier scores, and cosine ranking for a model
 * without a classifier (tiny-word-mlm) against rf_similarity.
 */
#include "../check.h"
#include "roformer.h"

#include "formats/checkpoint_open.h"

#include <cJSON.h>
#include <math.h>

static rf_text doc(const char *s) { return (rf_text){s, strlen(s), NULL, 0}; }

static void test_pick_label(void)
{
    const char *three[] = {"negative", "neutral", "positive"};
    const char *nli[] = {"contradiction", "Entailment", "neutral"};
    const char *plain[] = {"LABEL_0", "LABEL_1"};
    const char *digits[] = {"1", "0"};
    const char *unnamed[] = {NULL, NULL, NULL};
    CHECK(rf_rerank_pick_label(three, 1) == 0, "one label: label 0");
    CHECK(rf_rerank_pick_label(three, 3) == 2, "\"positive\" is picked");
    CHECK(rf_rerank_pick_label(nli, 3) == 1, "\"Entailment\" is picked, case ignored");
    CHECK(rf_rerank_pick_label(plain, 2) == 1, "LABEL_0/LABEL_1: the last label");
    CHECK(rf_rerank_pick_label(digits, 2) == 0, "\"1\" is picked wherever it is");
    CHECK(rf_rerank_pick_label(unnamed, 3) == 2, "no names: the last label");
}

static void test_sort(void)
{
    /* expected order written by hand: 0.9 (3), 0.5 (0), 0.5 (2), 0.5 (5), 0.1 (1); NaN (4) out */
    const float scores[] = {0.5f, 0.1f, 0.5f, 0.9f, NAN, 0.5f};
    const int32_t want[] = {3, 0, 2, 5, 1};
    rf_rerank_hit hits[6];
    rf_error err;
    int32_t n = -1;
    rf_status st = rf_rerank_sort(scores, 6, 0, hits, &n, &err);
    bool same = st == RF_OK && n == 5;
    for (int32_t i = 0; same && i < n; i++)
        same = hits[i].index == want[i] && hits[i].score == scores[want[i]];
    CHECK(same, "sort: best first, ties in input order, NaN left out (%d hits)", n);
    st = rf_rerank_sort(scores, 6, 2, hits, &n, &err);
    CHECK(st == RF_OK && n == 2 && hits[0].index == 3 && hits[1].index == 0,
          "top_n 2 keeps the two best");
    st = rf_rerank_sort(scores, 6, 99, hits, &n, &err);
    CHECK(st == RF_OK && n == 5, "top_n over n keeps all");
    st = rf_rerank_sort(scores, 0, 0, hits, &n, &err);
    CHECK(st == RF_OK && n == 0, "no documents: no hits");
    strcpy(err.message, "untouched");
    st = rf_rerank_sort(scores, 1, 0, hits, &n, &err);
    CHECK(st == RF_OK && !strcmp(err.message, "untouched"), "success leaves the error as it was");
    n = 7;
    st = rf_rerank_sort(scores, -1, 0, hits, &n, &err);
    CHECK(st == RF_ERR_INPUT && n == 0 && strstr(err.message, "negative document count -1"),
          "a negative count: RF_ERR_INPUT, no hits (%s)", err.message);
}

/* The reference pair c02 (text, text_pair) of tiny-word-cls. */
static bool read_pair(const char *ref, char **text, char **pair)
{
    char path[512];
    size_t len;
    snprintf(path, sizeof path, "%s/models/tiny-word-cls/cases.jsonl", ref);
    char *cases = check_read_file(path, &len);
    *text = *pair = NULL;
    for (char *line = cases ? strtok(cases, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        cJSON *c = cJSON_Parse(line);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "id");
        if (cJSON_IsString(id) && !strcmp(id->valuestring, "c02")) {
            *text = strdup(cJSON_GetObjectItemCaseSensitive(c, "text")->valuestring);
            *pair = strdup(cJSON_GetObjectItemCaseSensitive(c, "text_pair")->valuestring);
        }
        cJSON_Delete(c);
    }
    free(cases);
    return *text && *pair;
}

static void test_classifier(const rf_model *m, const char *ref)
{
    char path[512], *query = NULL, *pair = NULL;
    rf_error err;
    rf_checkpoint *expected = NULL;
    rf_pipeline *pl = NULL;
    snprintf(path, sizeof path, "%s/models/tiny-word-cls/expected.safetensors", ref);
    CHECK(rf_checkpoint_open(path, &expected, &err) == RF_OK, "%s", err.message);
    CHECK(rf_pipeline_create(m, NULL, &pl, &err) == RF_OK, "pipeline: %s", err.message);
    CHECK(read_pair(ref, &query, &pair), "reference pair c02 present");
    const rf_ck_tensor *e = expected ? rf_checkpoint_find(expected, "c02.logits") : NULL;
    CHECK(e && e->dtype == RF_CK_F32, "c02 logits present");
    if (!pl || !query || !pair || !e || e->dtype != RF_CK_F32)
        goto done;
    CHECK(rf_rerank_scoring_of(m) == RF_RERANK_CLASSIFIER, "a classifier reranks as one");

    /* HF's probability of "positive" (label 2), softmax computed here in double */
    const float *hf = e->data;
    double mx = check_max_nan(hf[0], check_max_nan(hf[1], hf[2])), sum = 0;
    for (int k = 0; k < 3; k++)
        sum += exp(hf[k] - mx);
    float want_prob = (float)(exp(hf[2] - mx) / sum);

    /* documents: the reference pair twice (a tie), two others, one invalid */
    rf_text docs[5] = {doc("质量很差，不推荐。"), doc(pair), doc("还行吧"), doc(pair),
                       doc("bad \xff byte")};
    rf_rerank_hit hits[5];
    rf_item_status items[5];
    int32_t n = -1;
    CHECK(rf_rerank(pl, query, strlen(query), docs, 5, 0, NULL, hits, &n, items, &err) == RF_OK,
          "rerank: %s", err.message);
    CHECK(n == 4 && items[4].status == RF_ERR_INPUT, "the invalid document fails alone (%d hits)",
          n);
    /* |prob - HF| <= 1e-4: the reference's logit tolerance, and a softmax moves by at most
       half the largest logit change */
    /* the two copies of the reference document each score HF's value: rows of one batch
       may differ in summation order, so exact ties are checked on rf_rerank_sort alone */
    float got[2] = {NAN, NAN};
    for (int32_t i = 0; i < n; i++)
        if (hits[i].index == 1 || hits[i].index == 3)
            got[hits[i].index == 3] = hits[i].score;
    CHECK(fabsf(got[0] - want_prob) <= 1e-4f && fabsf(got[1] - want_prob) <= 1e-4f,
          "pair score = HF's softmax of c02 (%.6f, %.6f vs %.6f)", got[0], got[1], want_prob);
    bool sorted = true;
    for (int32_t i = 1; i < n; i++)
        sorted = sorted && hits[i - 1].score >= hits[i].score;
    CHECK(sorted, "hits best first");

    /* raw scores: the positive label's logit, ranked the same way as the logits */
    rf_rerank_params raw = rf_rerank_default_params();
    raw.raw_scores = true;
    rf_rerank_hit top[2];
    CHECK(rf_rerank(pl, query, strlen(query), docs + 1, 1, 0, &raw, top, &n, NULL, &err) ==
                  RF_OK &&
              n == 1 && fabsf(top[0].score - hf[2]) <= 1e-4f,
          "raw score = HF's logit of label 2 (%.6f vs %.6f)", top[0].score, hf[2]);
    raw.positive_label = 0;
    CHECK(rf_rerank(pl, query, strlen(query), docs + 1, 1, 0, &raw, top, &n, NULL, &err) ==
                  RF_OK &&
              fabsf(top[0].score - hf[0]) <= 1e-4f,
          "positive_label 0: HF's logit of label 0 (%.6f vs %.6f)", top[0].score, hf[0]);
    CHECK(rf_rerank(pl, query, strlen(query), docs, 4, 2, NULL, top, &n, NULL, &err) == RF_OK &&
              n == 2 && top[0].index == hits[0].index && top[1].index == hits[1].index,
          "top_n 2: the first two of the full ranking");
    raw.positive_label = 3;
    CHECK(rf_rerank(pl, query, strlen(query), docs, 1, 0, &raw, top, &n, NULL, &err) ==
                  RF_ERR_INPUT &&
              strstr(err.message, "positive_label 3"),
          "positive_label out of range: '%s'", err.message);
    CHECK(rf_rerank(pl, query, strlen(query), docs, 0, 0, NULL, top, &n, NULL, &err) == RF_OK &&
              n == 0,
          "no documents: no hits");
done:
    free(query);
    free(pair);
    rf_checkpoint_free(expected);
    rf_pipeline_free(pl);
}

static void test_cosine(const rf_model *m)
{
    rf_error err;
    rf_pipeline *pl = NULL;
    CHECK(rf_pipeline_create(m, NULL, &pl, &err) == RF_OK, "pipeline: %s", err.message);
    if (!pl)
        return;
    CHECK(rf_rerank_scoring_of(m) == RF_RERANK_COSINE, "an MLM model reranks by cosine");
    const char *q = "今天天气很好";
    rf_text docs[3] = {doc("北京"), doc(q), doc("一个长一点的句子")};
    rf_rerank_hit hits[3];
    int32_t n = 0;
    rf_rerank_params p = rf_rerank_default_params();
    p.pooling = RF_POOLING_MEAN;
    CHECK(rf_rerank(pl, q, strlen(q), docs, 3, 0, &p, hits, &n, NULL, &err) == RF_OK && n == 3,
          "cosine rerank: %s", err.message);
    /* cosine of a text with itself is 1 up to float32 rounding of the norms (D terms) */
    CHECK(hits[0].index == 1 && fabsf(hits[0].score - 1) < 1e-5f,
          "the query itself ranks first with cosine 1 (%d, %g)", hits[0].index, hits[0].score);
    float cos[3];
    rf_text pairs[3];
    for (int i = 0; i < 3; i++)
        pairs[i] = (rf_text){q, strlen(q), docs[i].text, docs[i].text_len};
    CHECK(rf_similarity(pl, pairs, 3, RF_POOLING_MEAN, cos, NULL, &err) == RF_OK, "similarity");
    bool same = true;
    for (int i = 0; i < 3; i++)
        same = same && hits[i].score == cos[hits[i].index];
    CHECK(same, "cosine scores are rf_similarity's");
    rf_rerank_params pooler = rf_rerank_default_params();
    pooler.pooling = RF_POOLING_POOLER;
    rf_status st = rf_rerank(pl, q, strlen(q), docs, 3, 0, &pooler, hits, &n, NULL, &err);
    CHECK(rf_model_hparams(m)->has_pooler ? st == RF_OK : st == RF_ERR_UNSUPPORTED,
          "pooler pooling as rf_embed allows it (%d)", st);
    CHECK(rf_pipeline_set_truncation_side(pl, 2, &err) == RF_ERR_INPUT &&
              strstr(err.message, "truncation_side 2"),
          "an unknown truncation side is refused: '%s'", err.message);
    rf_pipeline_free(pl);
    rf_pipeline_params pp = rf_pipeline_default_params();
    pp.truncation_side = -1;
    CHECK(rf_pipeline_create(m, &pp, &pl, &err) == RF_ERR_INPUT && !pl,
          "pipeline with truncation_side -1 is refused");
}

int main(void)
{
    test_pick_label();
    test_sort();
    REFERENCE_OR_SKIP(ref, "rerank on models");
    char path[512];
    rf_model *cls = NULL, *mlm = NULL;
    rf_error err;
    snprintf(path, sizeof path, "%s/models/tiny-word-cls", ref);
    CHECK(rf_model_load(path, &cls, &err) == RF_OK, "%s", err.message);
    snprintf(path, sizeof path, "%s/models/tiny-word-mlm", ref);
    CHECK(rf_model_load(path, &mlm, &err) == RF_OK, "%s", err.message);
    if (cls)
        test_classifier(cls, ref);
    if (mlm)
        test_cosine(mlm);
    rf_model_free(cls);
    rf_model_free(mlm);
    return check_done();
}
