/*
 * token_jobs.c — per-token vectors and embeddings of given token ids (see
 * token_jobs.h), as rows of the library's internal pipeline.
 */
#include "serve/token_jobs.h"

#include "jobs/pipeline.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const int32_t *offsets, *lengths;
    int32_t D;
    rf_pooling pooling;
    float *out;
} token_job;

static rf_status tokens_row(void *arg, int32_t i, const rf_encoding *enc, const rf_row *row,
                            rf_error *err)
{
    token_job *job = arg;
    if (enc->n != job->lengths[i]) {
        snprintf(err->message, sizeof err->message, "%d tokens, where %d were counted", enc->n,
                 job->lengths[i]);
        return RF_ERR_INPUT;
    }
    memcpy(job->out + (size_t)job->offsets[i] * job->D, row->hidden,
           sizeof(float) * (size_t)enc->n * job->D);
    return RF_OK;
}

rf_status serve_embed_tokens(rf_pipeline *pl, const rf_text *texts, int32_t n,
                             const int32_t *offsets, const int32_t *lengths, float *out,
                             rf_item_status *items, rf_error *err)
{
    token_job job = {.offsets = offsets, .lengths = lengths, .out = out,
                     .D = rf_model_hparams(rf_pipeline_model(pl))->hidden_size};
    rf_run_needs needs = {.hidden = true};
    return rf_pipeline_run(pl, texts, n, &needs, tokens_row, &job, items, err);
}

static rf_status ids_row(void *arg, int32_t i, const rf_encoding *enc, const rf_row *row,
                         rf_error *err)
{
    (void)err;
    token_job *job = arg;
    rf_pool_row(row, enc, job->pooling, job->D, job->out + (size_t)i * job->D);
    return RF_OK;
}

rf_status serve_embed_ids(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                          rf_pooling pooling, float *out, rf_error *err)
{
    token_job job = {.pooling = pooling, .out = out,
                     .D = rf_model_hparams(rf_pipeline_model(pl))->hidden_size};
    rf_run_needs needs = {.hidden = pooling != RF_POOLING_POOLER,
                          .pooled = pooling == RF_POOLING_POOLER};
    return rf_pipeline_run_encodings(pl, encs, n, &needs, ids_row, &job, err);
}
