/*
 * jobs_classify.c — sequence classification: the probabilities of each
 * label (HF TextClassificationPipeline: softmax, or sigmoid for a single
 * label), or the head's logits as they are (rf_classify_logits).
 */
#include "jobs/pipeline.h"

#include "error.h"

#include <math.h>
#include <string.h>

typedef struct {
    int32_t N;
    bool raw;     /* logits as they are, no softmax / sigmoid */
    float *out;   /* [n][N] */
} classify_job;

static rf_status classify_row(void *job_arg, int32_t i, const rf_encoding *enc,
                              const rf_row *row, rf_error *err)
{
    (void)enc;
    (void)err;
    classify_job *job = job_arg;
    float *dst = job->out + (size_t)i * job->N;
    if (job->raw)
        memcpy(dst, row->logits, sizeof *dst * (size_t)job->N);
    else if (job->N == 1)
        dst[0] = 1.0f / (1.0f + expf(-row->logits[0]));
    else
        rf_softmax(row->logits, job->N, dst);
    return RF_OK;
}

static rf_status classify(rf_pipeline *pl, const rf_text *inputs, int32_t n, bool raw, float *out,
                          rf_item_status *items, rf_error *err)
{
    const rf_hparams *hp = rf_model_hparams(rf_pipeline_model(pl));
    if (hp->head != RF_HEAD_SEQ_CLS || hp->num_labels < 1)
        return rf_fail(err, RF_ERR_UNSUPPORTED,
                       "the model has no sequence-classification head");
    for (size_t k = 0; k < (size_t)(n > 0 ? n : 0) * hp->num_labels; k++)
        out[k] = NAN;
    classify_job job = {.N = hp->num_labels, .raw = raw, .out = out};
    rf_run_needs needs = {.logits = true};
    return rf_pipeline_run(pl, inputs, n, &needs, classify_row, &job, items, err);
}

rf_status rf_classify(rf_pipeline *pl, const rf_text *inputs, int32_t n, float *probs,
                      rf_item_status *items, rf_error *err)
{
    return classify(pl, inputs, n, false, probs, items, err);
}

rf_status rf_classify_logits(rf_pipeline *pl, const rf_text *inputs, int32_t n, float *logits,
                             rf_item_status *items, rf_error *err)
{
    return classify(pl, inputs, n, true, logits, items, err);
}
