/*
 * jobs_rerank.c — rerank: (query, document) pairs scored by a
 * cross-encoder's classifier (sentence-transformers' CrossEncoder.predict:
 * sigmoid of a single logit, else the positive label's softmax
 * probability) or by the cosine of pooled embeddings for a model without a
 * classifier, then sorted best first with each document's index kept
 * (CrossEncoder.rank, TEI's /rerank). The scores come from rf_classify /
 * rf_classify_logits / rf_similarity (or their *_encodings twins on pairs
 * the caller tokenized); this file only picks and sorts.
 */
#include "jobs/pipeline.h"

#include "base/error.h"

#include <math.h>
#include <stdlib.h>
#include <strings.h>

rf_rerank_params rf_rerank_default_params(void)
{
    return (rf_rerank_params){.raw_scores = false, .positive_label = -1,
                              .pooling = RF_POOLING_DEFAULT};
}

rf_rerank_scoring rf_rerank_scoring_of(const rf_model *model)
{
    const rf_hparams *hp = rf_model_hparams(model);
    return hp->head == RF_HEAD_SEQ_CLS && hp->num_labels >= 1 ? RF_RERANK_CLASSIFIER
                                                               : RF_RERANK_COSINE;
}

const char *rf_rerank_scoring_name(rf_rerank_scoring scoring)
{
    return scoring == RF_RERANK_CLASSIFIER ? "classifier" : "cosine";
}

/* rf_rerank_pick_label over n labels, label i read through name(src, i). */
static int32_t pick_label(const char *(*name)(const void *src, int32_t i), const void *src,
                          int32_t n)
{
    static const char *const positive[] = {"positive", "pos",  "entailment", "relevant",
                                           "yes",      "true", "1"};
    if (n <= 1)
        return 0;
    for (int32_t i = 0; i < n; i++) {
        const char *label = name(src, i);
        for (size_t k = 0; label && k < sizeof positive / sizeof *positive; k++)
            if (!strcasecmp(label, positive[k]))
                return i;
    }
    return n - 1;
}

static const char *array_label(const void *labels, int32_t i)
{
    return ((const char *const *)labels)[i];
}

static const char *model_label(const void *model, int32_t i)
{
    return rf_model_label(model, i);
}

int32_t rf_rerank_pick_label(const char *const *labels, int32_t n)
{
    return pick_label(array_label, labels, n);
}

int32_t rf_model_rerank_label(const rf_model *model)
{
    return pick_label(model_label, model, rf_model_hparams(model)->num_labels);
}

/* The label the scores read: params' choice or rf_model_rerank_label. */
static rf_status positive_label(const rf_model *m, int32_t asked, int32_t *out, rf_error *err)
{
    int32_t N = rf_model_hparams(m)->num_labels;
    if (asked >= 0) {
        if (asked >= N)
            return rf_fail(err, RF_ERR_INPUT, "positive_label %d: the model has %d label%s",
                           asked, N, N == 1 ? "" : "s");
        *out = asked;
        return RF_OK;
    }
    *out = rf_model_rerank_label(m);
    return RF_OK;
}

/* pairs, or the caller's encodings of them (given, not NULL). */
static rf_status classifier_scores(rf_pipeline *pl, const rf_text *pairs,
                                   const rf_encoding *given, int32_t n,
                                   const rf_rerank_params *p, float *scores,
                                   rf_item_status *items, rf_error *err)
{
    const rf_model *m = rf_pipeline_model(pl);
    int32_t N = rf_model_hparams(m)->num_labels, label = 0;
    rf_status st = positive_label(m, p->positive_label, &label, err);
    if (st != RF_OK || n == 0)
        return st;
    float *per_label = malloc(sizeof(float) * (size_t)n * N);
    if (!per_label)
        return rf_fail(err, RF_ERR_NOMEM, "out of memory for %d pairs", n);
    if (given)
        st = p->raw_scores ? rf_classify_logits_encodings(pl, given, n, per_label, items, err)
                           : rf_classify_encodings(pl, given, n, per_label, items, err);
    else
        st = p->raw_scores ? rf_classify_logits(pl, pairs, n, per_label, items, err)
                           : rf_classify(pl, pairs, n, per_label, items, err);
    for (int32_t i = 0; st == RF_OK && i < n; i++)
        scores[i] = per_label[(size_t)i * N + label];
    free(per_label);
    return st;
}

rf_status rf_rerank_score(rf_pipeline *pl, const rf_text *pairs, int32_t n,
                          const rf_rerank_params *params, float *scores, rf_item_status *items,
                          rf_error *err)
{
    if (n < 0)
        return rf_fail(err, RF_ERR_INPUT, "negative pair count %d", n);
    rf_rerank_params p = params ? *params : rf_rerank_default_params();
    const rf_model *m = rf_pipeline_model(pl);
    rf_fill_nan(scores, n);
    if (rf_rerank_scoring_of(m) == RF_RERANK_CLASSIFIER)
        return classifier_scores(pl, pairs, NULL, n, &p, scores, items, err);
    rf_pooling pooling = p.pooling >= 0 ? (rf_pooling)p.pooling : rf_model_default_pooling(m);
    for (int32_t i = 0; i < n; i++)
        if (!pairs[i].pair)
            return rf_fail(err, RF_ERR_INPUT, "pair %d has no document", i + 1);
    return rf_similarity(pl, pairs, n, pooling, scores, items, err);
}

rf_status rf_rerank_score_encodings(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                                    const rf_rerank_params *params, float *scores,
                                    rf_item_status *items, rf_error *err)
{
    if (n < 0)
        return rf_fail(err, RF_ERR_INPUT, "negative pair count %d", n);
    rf_rerank_params p = params ? *params : rf_rerank_default_params();
    if (rf_rerank_scoring_of(rf_pipeline_model(pl)) != RF_RERANK_CLASSIFIER)
        return rf_fail(err, RF_ERR_UNSUPPORTED,
                       "cosine scoring embeds query and document apart, not their pair's "
                       "encoding; use rf_similarity_encodings on its sides");
    rf_fill_nan(scores, n);
    return classifier_scores(pl, NULL, encs, n, &p, scores, items, err);
}

/* Best first; equal scores keep input order (the lower index first). */
static int by_score_desc(const void *a, const void *b)
{
    const rf_rerank_hit *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

rf_status rf_rerank_sort(const float *scores, int32_t n, int32_t top_n, rf_rerank_hit *out,
                         int32_t *n_out, rf_error *err)
{
    *n_out = 0;
    if (n < 0)
        return rf_fail(err, RF_ERR_INPUT, "rerank: negative document count %d", n);
    /* out may be shorter than n: sort all into scratch, keep the first top_n */
    rf_rerank_hit *all = malloc(sizeof *all * (size_t)(n > 0 ? n : 1));
    if (!all)
        return rf_fail(err, RF_ERR_NOMEM, "rerank: out of memory sorting %d documents", n);
    int32_t kept = 0;
    for (int32_t i = 0; i < n; i++)
        if (!isnan(scores[i]))
            all[kept++] = (rf_rerank_hit){.index = i, .score = scores[i]};
    qsort(all, (size_t)kept, sizeof *all, by_score_desc);
    if (top_n > 0 && top_n < kept)
        kept = top_n;
    for (int32_t i = 0; i < kept; i++)
        out[i] = all[i];
    free(all);
    *n_out = kept;
    return RF_OK;
}

rf_status rf_rerank(rf_pipeline *pl, const char *query, size_t query_len,
                    const rf_text *documents, int32_t n, int32_t top_n,
                    const rf_rerank_params *params, rf_rerank_hit *out, int32_t *n_out,
                    rf_item_status *items, rf_error *err)
{
    *n_out = 0;
    if (n < 0)
        return rf_fail(err, RF_ERR_INPUT, "negative document count %d", n);
    if (!query)
        return rf_fail(err, RF_ERR_INPUT, "rerank: missing query");
    rf_text *pairs = malloc(sizeof *pairs * (size_t)(n > 0 ? n : 1));
    float *scores = malloc(sizeof *scores * (size_t)(n > 0 ? n : 1));
    rf_status st = RF_OK;
    if (!pairs || !scores) {
        st = rf_fail(err, RF_ERR_NOMEM, "out of memory for %d documents", n);
        goto done;
    }
    for (int32_t i = 0; i < n; i++)
        pairs[i] = (rf_text){.text = query, .text_len = query_len,
                             .pair = documents[i].text ? documents[i].text : "",
                             .pair_len = documents[i].text ? documents[i].text_len : 0};
    st = rf_rerank_score(pl, pairs, n, params, scores, items, err);
    if (st != RF_OK)
        goto done;
    st = rf_rerank_sort(scores, n, top_n, out, n_out, err);
done:
    free(pairs);
    free(scores);
    return st;
}
