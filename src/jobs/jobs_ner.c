/*
 * jobs_ner.c — token classification (HF TokenClassificationPipeline with
 * aggregation "simple"): each token of the text gets its most probable
 * label and that probability; tokens are grouped into entities by their
 * BIO/BIOES tags (entities.c); offsets are characters of the input text.
 */
#include "jobs/pipeline.h"

#include "base/error.h"

#include <stdlib.h>

typedef struct {
    const rf_model *model;
    const rf_text *inputs;
    int32_t N;
    const char **labels; /* [N] */
    float *probs;        /* [N] scratch */
    int32_t *tags;       /* [max tokens] scratch */
    float *scores;
    int32_t scratch_cap;
    rf_ner_result *out;  /* [n] */
} ner_job;

void rf_ner_result_free(rf_ner_result *r)
{
    if (!r)
        return;
    free(r->tokens);
    free(r->entities);
    *r = (rf_ner_result){0};
}

static rf_status ner_row(void *job_arg, int32_t i, const rf_encoding *enc, const rf_row *row,
                         rf_error *err)
{
    ner_job *job = job_arg;
    rf_ner_result *r = &job->out[i];
    const char *text = job->inputs[i].text;
    if (enc->n > job->scratch_cap) {
        int32_t *tags = realloc(job->tags, sizeof(int32_t) * (size_t)enc->n);
        if (tags)
            job->tags = tags;
        float *scores = realloc(job->scores, sizeof(float) * (size_t)enc->n);
        if (scores)
            job->scores = scores;
        if (!tags || !scores)
            return rf_fail(err, RF_ERR_NOMEM, "out of memory for token labels");
        job->scratch_cap = enc->n;
    }
    r->tokens = malloc(sizeof *r->tokens * (size_t)(enc->n > 0 ? enc->n : 1));
    r->entities = malloc(sizeof *r->entities * (size_t)(enc->n > 0 ? enc->n : 1));
    if (!r->tokens || !r->entities) {
        rf_ner_result_free(r);
        return rf_fail(err, RF_ERR_NOMEM, "out of memory for token labels");
    }

    /* Pass 1: label and score of every token of the text. */
    for (int32_t t = 0; t < enc->n; t++) {
        if (enc->type_ids[t] != 0) {
            rf_ner_result_free(r);
            return rf_fail(err, RF_ERR_INPUT, "ner takes one text, not a pair");
        }
        if (enc->start[t] < 0)
            continue; /* [CLS], [SEP] */
        rf_softmax(row->logits + (size_t)t * job->N, job->N, job->probs);
        int32_t best;
        rf_top_k(job->probs, job->N, 1, &best);
        int32_t k = r->n_tokens++;
        r->tokens[k] = (rf_token_tag){
            .id = enc->ids[t], .label = best, .score = job->probs[best],
            .start = rf_char_count(text, enc->start[t]), .end = rf_char_count(text, enc->end[t])};
        job->tags[k] = best;
        job->scores[k] = job->probs[best];
    }

    /* Pass 2: entities, with the character span of their tokens. */
    r->n_entities = rf_group_entities(job->labels, job->N, job->tags, job->scores, r->n_tokens,
                                      r->entities);
    for (int32_t e = 0; e < r->n_entities; e++) {
        r->entities[e].start = r->tokens[r->entities[e].first].start;
        r->entities[e].end = r->tokens[r->entities[e].last].end;
    }
    return RF_OK;
}

/* inputs, and the caller's encodings of them when given is not NULL. */
static rf_status token_classify(rf_pipeline *pl, const rf_text *inputs, const rf_encoding *given,
                                int32_t n, rf_ner_result *out, rf_item_status *items,
                                rf_error *err)
{
    const rf_model *model = rf_pipeline_model(pl);
    const rf_hparams *hp = rf_model_hparams(model);
    if (hp->head != RF_HEAD_TOKEN_CLS || hp->num_labels < 1)
        return rf_fail(err, RF_ERR_UNSUPPORTED, "the model has no token-classification head");
    for (int32_t i = 0; i < n; i++)
        out[i] = (rf_ner_result){0};
    ner_job job = {.model = model, .inputs = inputs, .N = hp->num_labels, .out = out};
    job.labels = malloc(sizeof *job.labels * (size_t)job.N);
    job.probs = malloc(sizeof(float) * (size_t)job.N);
    rf_status st;
    if (!job.labels || !job.probs) {
        st = rf_fail(err, RF_ERR_NOMEM, "out of memory for token labels");
        goto done;
    }
    for (int32_t k = 0; k < job.N; k++)
        job.labels[k] = rf_model_label(model, k);
    rf_run_needs needs = {.logits = true};
    st = rf_pipeline_run(pl, inputs, given, n, &needs, ner_row, &job, items, err);
done:
    free(job.labels);
    free(job.probs);
    free(job.tags);
    free(job.scores);
    if (st != RF_OK)
        for (int32_t i = 0; i < n; i++)
            rf_ner_result_free(&out[i]);
    return st;
}

rf_status rf_token_classify(rf_pipeline *pl, const rf_text *inputs, int32_t n,
                            rf_ner_result *out, rf_item_status *items, rf_error *err)
{
    return token_classify(pl, inputs, NULL, n, out, items, err);
}

rf_status rf_token_classify_encodings(rf_pipeline *pl, const rf_text *inputs,
                                      const rf_encoding *encs, int32_t n, rf_ner_result *out,
                                      rf_item_status *items, rf_error *err)
{
    return token_classify(pl, inputs, encs, n, out, items, err);
}
