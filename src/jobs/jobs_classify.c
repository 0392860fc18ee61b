/*
 * jobs_classify.c — sequence classification: the probabilities of each
 * label (HF TextClassificationPipeline: softmax, or sigmoid for a single
 * label), or the head's logits as they are (rf_classify_logits). A text
 * cut into windows (rf_pipeline_params.window) gets the mean of its
 * windows' logits.
 */
#include "jobs/pipeline.h"

#include "base/error.h"

#include <math.h>
#include <string.h>

typedef struct {
    int32_t N;
    bool raw;     /* logits as they are, no softmax / sigmoid */
} classify_job;

/* One window's (or input's) logits. */
static rf_status classify_vector(void *job_arg, const rf_encoding *enc, const rf_row *row,
                                 float *vec, rf_error *err)
{
    (void)enc;
    (void)err;
    classify_job *job = job_arg;
    memcpy(vec, row->logits, sizeof *vec * (size_t)job->N);
    return RF_OK;
}

/* After the mean of the windows' logits: softmax, or sigmoid for one label. */
static void classify_finish(void *job_arg, float *vec)
{
    classify_job *job = job_arg;
    if (job->raw)
        return;
    if (job->N == 1)
        vec[0] = 1.0f / (1.0f + expf(-vec[0]));
    else
        rf_softmax(vec, job->N, vec);
}

/* inputs, or the caller's encodings of them (given, not NULL). */
static rf_status classify(rf_pipeline *pl, const rf_text *inputs, const rf_encoding *given,
                          int32_t n, bool raw, float *out, rf_item_status *items, rf_error *err)
{
    const rf_hparams *hp = rf_model_hparams(rf_pipeline_model(pl));
    if (hp->head != RF_HEAD_SEQ_CLS || hp->num_labels < 1)
        return rf_fail(err, RF_ERR_UNSUPPORTED,
                       "the model has no sequence-classification head");
    rf_fill_nan(out, (int64_t)n * hp->num_labels);
    classify_job job = {.N = hp->num_labels, .raw = raw};
    rf_run_needs needs = {.logits = true};
    return rf_pipeline_run_pooled(pl, inputs, given, n, &needs, hp->num_labels, classify_vector,
                                  classify_finish, &job, out, items, err);
}

rf_status rf_classify(rf_pipeline *pl, const rf_text *inputs, int32_t n, float *probs,
                      rf_item_status *items, rf_error *err)
{
    return classify(pl, inputs, NULL, n, false, probs, items, err);
}

rf_status rf_classify_logits(rf_pipeline *pl, const rf_text *inputs, int32_t n, float *logits,
                             rf_item_status *items, rf_error *err)
{
    return classify(pl, inputs, NULL, n, true, logits, items, err);
}

rf_status rf_classify_encodings(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                                float *probs, rf_item_status *items, rf_error *err)
{
    return classify(pl, NULL, encs, n, false, probs, items, err);
}

rf_status rf_classify_logits_encodings(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                                       float *logits, rf_item_status *items, rf_error *err)
{
    return classify(pl, NULL, encs, n, true, logits, items, err);
}
