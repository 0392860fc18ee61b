/*
 * jobs_fill_mask.c — the most probable tokens for each [MASK] of a text
 * (HF FillMaskPipeline: softmax over the vocabulary at the mask position,
 * then top-k). The MLM decoder runs only at the [MASK] positions.
 *
 * The filled sequence is the input text with each literal [MASK] replaced
 * by its best token (WordPiece "##" dropped), so Chinese text comes back
 * without the spaces HF's decode() puts between tokens.
 */
#include "jobs/pipeline.h"

#include "base/error.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const rf_model *model;
    const rf_text *inputs;
    int32_t top_k;
    int32_t V;
    float *probs;             /* [V] scratch */
    rf_fill_mask_result *out; /* [n] */
} fill_mask_job;

void rf_fill_mask_result_free(rf_fill_mask_result *r)
{
    if (!r)
        return;
    free(r->positions);
    free(r->ids);
    free(r->scores);
    free(r->sequence);
    *r = (rf_fill_mask_result){0};
}

static const char *strip_continuation(const char *token)
{
    return strncmp(token, "##", 2) == 0 && token[2] ? token + 2 : token;
}

/* The text with every mask span replaced by the best token of that mask. */
static char *filled_sequence(const fill_mask_job *job, const rf_text *in, const rf_encoding *enc,
                             const rf_fill_mask_result *r)
{
    size_t len = in->text_len;
    for (int32_t m = 0; m < r->n_masks; m++)
        len += strlen(rf_model_token(job->model, r->ids[(size_t)m * r->top_k]));
    char *seq = malloc(len + 1), *w = seq;
    if (!seq)
        return NULL;
    int32_t copied = 0; /* bytes of the text already written */
    for (int32_t m = 0; m < r->n_masks; m++) {
        int32_t t = r->positions[m];
        if (enc->start[t] < copied)
            continue;
        memcpy(w, in->text + copied, (size_t)(enc->start[t] - copied));
        w += enc->start[t] - copied;
        const char *tok = strip_continuation(rf_model_token(job->model, r->ids[(size_t)m * r->top_k]));
        memcpy(w, tok, strlen(tok));
        w += strlen(tok);
        copied = enc->end[t];
    }
    memcpy(w, in->text + copied, in->text_len - (size_t)copied);
    w += in->text_len - (size_t)copied;
    *w = '\0';
    return seq;
}

static rf_status fill_mask_row(void *job_arg, int32_t i, const rf_encoding *enc,
                               const rf_row *row, rf_error *err)
{
    fill_mask_job *job = job_arg;
    int32_t mask_id = rf_model_hparams(job->model)->mask_id;
    rf_fill_mask_result *r = &job->out[i];
    int32_t n_masks = 0;
    for (int32_t t = 0; t < enc->n; t++) {
        if (enc->type_ids[t] != 0)
            return rf_fail(err, RF_ERR_INPUT, "fill-mask takes one text, not a pair");
        n_masks += enc->ids[t] == mask_id;
    }
    if (!n_masks)
        return rf_fail(err, RF_ERR_INPUT, "no [MASK] token in the input");
    r->n_masks = n_masks;
    r->top_k = job->top_k;
    r->positions = malloc(sizeof(int32_t) * (size_t)r->n_masks);
    r->ids = malloc(sizeof(int32_t) * (size_t)r->n_masks * r->top_k);
    r->scores = malloc(sizeof(float) * (size_t)r->n_masks * r->top_k);
    if (!r->positions || !r->ids || !r->scores)
        goto nomem;

    int32_t m = 0;
    for (int32_t t = 0; t < enc->n; t++) {
        if (enc->ids[t] != mask_id)
            continue;
        int32_t p = 0; /* the logits row of position t */
        while (p < row->n_positions && row->positions[p] != t)
            p++;
        const float *logits = row->logits + (size_t)p * job->V;
        rf_softmax(logits, job->V, job->probs);
        int32_t *ids = r->ids + (size_t)m * r->top_k;
        rf_top_k(job->probs, job->V, r->top_k, ids);
        for (int32_t k = 0; k < r->top_k; k++)
            r->scores[(size_t)m * r->top_k + k] = job->probs[ids[k]];
        r->positions[m++] = t;
    }
    if (!(r->sequence = filled_sequence(job, &job->inputs[i], enc, r)))
        goto nomem;
    return RF_OK;
nomem:
    rf_fill_mask_result_free(r);
    return rf_fail(err, RF_ERR_NOMEM, "out of memory for fill-mask results");
}

/* inputs, and the caller's encodings of them when given is not NULL. */
static rf_status fill_mask(rf_pipeline *pl, const rf_text *inputs, const rf_encoding *given,
                           int32_t n, int32_t top_k, rf_fill_mask_result *out,
                           rf_item_status *items, rf_error *err)
{
    const rf_model *model = rf_pipeline_model(pl);
    const rf_hparams *hp = rf_model_hparams(model);
    if (hp->head != RF_HEAD_MLM)
        return rf_fail(err, RF_ERR_UNSUPPORTED, "the model has no masked-LM head");
    for (int32_t i = 0; i < n; i++)
        out[i] = (rf_fill_mask_result){0};
    fill_mask_job job = {.model = model, .inputs = inputs, .V = hp->vocab_size, .out = out,
                         .top_k = top_k < 1 ? 1 : top_k > hp->vocab_size ? hp->vocab_size : top_k};
    if (!(job.probs = malloc(sizeof(float) * (size_t)job.V)))
        return rf_fail(err, RF_ERR_NOMEM, "out of memory for fill-mask scratch");
    rf_run_needs needs = {.mlm_masks = true};
    rf_status st = rf_pipeline_run(pl, inputs, given, n, &needs, fill_mask_row, &job, items, err);
    free(job.probs);
    if (st != RF_OK)
        for (int32_t i = 0; i < n; i++)
            rf_fill_mask_result_free(&out[i]);
    return st;
}

rf_status rf_fill_mask(rf_pipeline *pl, const rf_text *inputs, int32_t n, int32_t top_k,
                       rf_fill_mask_result *out, rf_item_status *items, rf_error *err)
{
    return fill_mask(pl, inputs, NULL, n, top_k, out, items, err);
}

rf_status rf_fill_mask_encodings(rf_pipeline *pl, const rf_text *inputs, const rf_encoding *encs,
                                 int32_t n, int32_t top_k, rf_fill_mask_result *out,
                                 rf_item_status *items, rf_error *err)
{
    return fill_mask(pl, inputs, encs, n, top_k, out, items, err);
}
