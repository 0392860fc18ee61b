/*
 * jobs_encodings.c — the jobs on encodings the caller made
 * (rf_embed_encodings, rf_token_embeddings): the server tokenizes each
 * request once to count and check its tokens, or takes token ids as
 * given, and runs those encodings as they are, batched by length like
 * every job.
 */
#include "jobs/pipeline.h"

#include "base/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t D;
    rf_pooling pooling;
    bool normalize;
    const int64_t *offsets; /* token rows: [n] first row of each encoding */
    float *out;
} encodings_job;

static rf_status pooled_row(void *arg, int32_t i, const rf_encoding *enc, const rf_row *row,
                            rf_error *err)
{
    (void)err;
    encodings_job *job = arg;
    float *vec = job->out + (size_t)i * job->D;
    rf_pool_row(row, enc, job->pooling, job->D, vec);
    if (job->normalize)
        rf_l2_normalize(vec, job->D);
    return RF_OK;
}

rf_status rf_embed_encodings(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                             rf_pooling pooling, bool normalize, float *out,
                             rf_item_status *items, rf_error *err)
{
    const rf_model *model = rf_pipeline_model(pl);
    rf_status st = rf_model_check_pooling(model, pooling, err);
    if (st != RF_OK)
        return st;
    encodings_job job = {.pooling = pooling, .normalize = normalize, .out = out,
                         .D = rf_model_hparams(model)->hidden_size};
    rf_fill_nan(out, (int64_t)n * job.D); /* the rows of inputs that fail stay so */
    rf_run_needs needs = {.hidden = pooling != RF_POOLING_POOLER,
                          .pooled = pooling == RF_POOLING_POOLER};
    return rf_pipeline_run(pl, NULL, encs, n, &needs, pooled_row, &job, items, err);
}

static rf_status token_rows(void *arg, int32_t i, const rf_encoding *enc, const rf_row *row,
                            rf_error *err)
{
    (void)err;
    encodings_job *job = arg;
    memcpy(job->out + (size_t)job->offsets[i] * job->D, row->hidden,
           sizeof(float) * (size_t)enc->n * job->D);
    return RF_OK;
}

rf_status rf_token_embeddings(rf_pipeline *pl, const rf_encoding *encs, int32_t n, float *out,
                              rf_item_status *items, rf_error *err)
{
    if (n < 0)
        return rf_fail(err, RF_ERR_INPUT, "negative encoding count %d", n);
    int64_t *offsets = malloc(sizeof *offsets * (size_t)(n > 0 ? n : 1));
    if (!offsets)
        return rf_fail(err, RF_ERR_NOMEM, "out of memory for %d encodings", n);
    int64_t row = 0;
    for (int32_t i = 0; i < n; row += encs[i].n > 0 ? encs[i].n : 0, i++)
        offsets[i] = row;
    encodings_job job = {.offsets = offsets, .out = out,
                         .D = rf_model_hparams(rf_pipeline_model(pl))->hidden_size};
    rf_fill_nan(out, row * job.D); /* the rows of inputs that fail stay so */
    rf_run_needs needs = {.hidden = true};
    rf_status st = rf_pipeline_run(pl, NULL, encs, n, &needs, token_rows, &job, items, err);
    free(offsets);
    return st;
}
