/*
 * jobs_qa.c — extractive question answering (HF QuestionAnsweringPipeline
 * on one window): the best span of context tokens (answer_span.c), given
 * back as character and byte offsets into the context.
 *
 * Limits: one window per input; a context longer than the model allows
 * needs truncation (max_length), which cuts the longer text first.
 */
#include "pipeline.h"

#include "error.h"

#include <stdlib.h>

typedef struct {
    const rf_text *inputs;
    int32_t max_answer_tokens;
    uint8_t *allowed; /* [allowed_cap] scratch */
    int32_t allowed_cap;
    rf_qa_result *out;
} qa_job;

static rf_status qa_row(void *job_arg, int32_t i, const rf_encoding *enc, const rf_row *row,
                        rf_error *err)
{
    qa_job *job = job_arg;
    if (!job->inputs[i].pair)
        return rf_fail(err, RF_ERR_INPUT, "qa needs a question and a context");
    if (enc->n > job->allowed_cap) {
        uint8_t *grown = realloc(job->allowed, (size_t)enc->n);
        if (!grown)
            return rf_fail(err, RF_ERR_NOMEM, "out of memory for QA spans");
        job->allowed = grown;
        job->allowed_cap = enc->n;
    }
    /* Only context tokens (second segment, not [SEP]) may be answers;
     * [CLS] (position 0) still counts in the softmax, as in HF. */
    for (int32_t t = 0; t < enc->n; t++)
        job->allowed[t] = enc->type_ids[t] == 1 && enc->start[t] >= 0 ? RF_SPAN_ANSWER
                          : t == 0                                     ? RF_SPAN_SOFTMAX_ONLY
                                                                       : 0;
    int32_t s, e;
    float score;
    if (!rf_best_span(row->start_logits, row->end_logits, job->allowed, enc->n,
                      job->max_answer_tokens, &s, &e, &score))
        return rf_fail(err, RF_ERR_INPUT, "the context is empty (or truncated away)");
    const char *context = job->inputs[i].pair;
    job->out[i] = (rf_qa_result){
        .score = score, .start_token = s, .end_token = e,
        .byte_start = enc->start[s], .byte_end = enc->end[e],
        .start = rf_char_count(context, enc->start[s]), .end = rf_char_count(context, enc->end[e])};
    return RF_OK;
}

rf_status rf_qa(rf_pipeline *pl, const rf_text *inputs, int32_t n, int32_t max_answer_tokens,
                rf_qa_result *out, rf_item_status *items, rf_error *err)
{
    const rf_hparams *hp = rf_model_hparams(rf_pipeline_model(pl));
    if (hp->head != RF_HEAD_QA)
        return rf_fail(err, RF_ERR_UNSUPPORTED, "the model has no question-answering head");
    for (int32_t i = 0; i < n; i++)
        out[i] = (rf_qa_result){.start = -1, .end = -1, .byte_start = -1, .byte_end = -1,
                                .start_token = -1, .end_token = -1};
    qa_job job = {.inputs = inputs, .max_answer_tokens = max_answer_tokens, .out = out};
    rf_run_needs needs = {.qa = true};
    rf_status st = rf_pipeline_run(pl, inputs, n, &needs, qa_row, &job, items, err);
    free(job.allowed);
    return st;
}
