/*
 * jobs_qa.c — extractive question answering (HF QuestionAnsweringPipeline):
 * the best span of context tokens (answer_span.c), given back as character
 * and byte offsets into the context.
 *
 * With doc_stride >= 0 a long context is read in windows, as HF's pipeline
 * does (truncation="only_second" with a stride): every window is [CLS]
 * question [SEP] part of the context [SEP], at most the pipeline's
 * max_length (else the model's maximum) long, and starts doc_stride context
 * tokens before the previous one ends. Each window has its own softmax; the
 * answer is the best-scoring span of all windows, the earliest window on a
 * tie. With doc_stride < 0 there is one window: the input as the other jobs
 * see it (truncated at max_length, or failing when too long without it).
 */
#include "jobs/pipeline.h"
#include "jobs/windows.h"

#include "base/error.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const rf_text *inputs;
    int32_t max_answer_tokens;
    const rf_window *windows;
    uint8_t *allowed; /* [allowed_cap] scratch */
    int32_t allowed_cap;
    int32_t *best_window; /* [n] the window of out[i], -1 before any */
    rf_qa_result *out;
} qa_job;

static rf_status qa_row(void *job_arg, int32_t w, const rf_encoding *enc, const rf_row *row,
                        rf_error *err)
{
    qa_job *job = job_arg;
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
                                                                       : RF_SPAN_LEFT_OUT;
    int32_t s, e, i = job->windows[w].input;
    float score;
    if (!rf_best_span(row->start_logits, row->end_logits, job->allowed, enc->n,
                      job->max_answer_tokens, &s, &e, &score))
        return RF_OK; /* a window without context tokens: only an empty context has one */
    /* windows run in length order, not window order: ties are broken here */
    int32_t best = job->best_window[i];
    if (best >= 0 && (score < job->out[i].score || (score == job->out[i].score && w > best)))
        return RF_OK;
    const char *context = job->inputs[i].pair;
    job->best_window[i] = w;
    job->out[i] = (rf_qa_result){
        .score = score, .start_token = s, .end_token = e,
        .byte_start = enc->start[s], .byte_end = enc->end[e],
        .start = rf_char_count(context, enc->start[s]), .end = rf_char_count(context, enc->end[e])};
    return RF_OK;
}

/* The number of leading tokens of enc that are [CLS] question [SEP]. */
static int32_t header_length(const rf_encoding *enc)
{
    int32_t h = 1;
    while (h < enc->n && enc->type_ids[h] == 0)
        h++;
    return h;
}

int32_t rf_qa_window_tokens(const rf_encoding *enc, int32_t window, int32_t doc_stride)
{
    int32_t header = header_length(enc), context = enc->n - header - 1;
    int32_t room = window - header - 1; /* context tokens per window, as plan_windows */
    if (enc->n <= window || room < 1 || doc_stride < 0 || doc_stride >= room)
        return enc->n;
    int32_t n = rf_windows_count(context, room, doc_stride);
    return n * (header + 1) + context + (n - 1) * doc_stride;
}

/* Appends the windows of input i (full encoding `enc`) to j->windows;
 * window <= 0 asks for one window over the whole encoding. Fails with
 * RF_ERR_INPUT (in *e) when the question leaves no room for context or
 * the stride no progress. */
static rf_status plan_windows(const rf_encoding *enc, int32_t i, int32_t window,
                              int32_t doc_stride, rf_window **wins, int32_t *n_wins,
                              int32_t *cap, rf_error *e)
{
    int32_t header = header_length(enc), context = enc->n - header - 1;
    int32_t room = window > 0 ? window - header - 1 : context; /* context tokens per window */
    if (window > 0 && room < 1)
        return rf_fail(e, RF_ERR_INPUT,
                       "the question takes %d of the %d tokens of a window, leaving none for "
                       "the context",
                       header, window);
    if (context > room && doc_stride >= room)
        return rf_fail(e, RF_ERR_INPUT,
                       "doc_stride %d is not below the %d context tokens a window holds",
                       doc_stride, room);
    return rf_windows_plan(i, context, room, doc_stride, wins, n_wins, cap);
}

/* Tokenizes every input into fulls (or takes the caller's encodings,
 * `given`) and plans its windows; an input that fails is recorded (items)
 * and gets none. *used points at the encodings planned. */
static rf_status plan_all(rf_pipeline *pl, const rf_text *inputs, const rf_encoding *given,
                          int32_t n, int32_t doc_stride, rf_encoding *fulls,
                          const rf_encoding **used, rf_window **wins, int32_t *n_wins,
                          rf_item_status *items, rf_error *err)
{
    *used = given ? given : fulls;
    int32_t max_position = rf_pipeline_length_limit(pl);
    int32_t window = doc_stride >= 0 ? rf_pipeline_window(pl) : 0, cap = 0;
    for (int32_t i = 0; i < n; i++) {
        rf_error e = {0};
        rf_status st = RF_OK;
        if (!inputs[i].pair)
            st = rf_fail(&e, RF_ERR_INPUT, "qa needs a question and a context");
        if (st == RF_OK && !given)
            st = rf_pipeline_tokenize(pl, &inputs[i], doc_stride < 0, &fulls[i], &e);
        else if (st == RF_OK && given[i].n < 3)
            st = rf_fail(&e, RF_ERR_INPUT, "an encoding of %d tokens holds no question and "
                         "context", given[i].n);
        const rf_encoding *full = &(*used)[i];
        if (st == RF_OK && doc_stride < 0 && full->n > max_position)
            st = rf_fail(&e, RF_ERR_INPUT,
                         "input is %d tokens long, over the model's maximum of %d, and "
                         "truncation is off (extend_positions allows more)",
                         full->n, max_position);
        if (st == RF_OK)
            st = plan_windows(full, i, window, doc_stride, wins, n_wins, &cap, &e);
        if (st == RF_ERR_NOMEM)
            return rf_fail(err, RF_ERR_NOMEM, "out of memory planning QA windows");
        if (st != RF_OK && (st = rf_item_fail(items, i, st, e.message, err)) != RF_OK)
            return st;
    }
    return RF_OK;
}

/* inputs, and the caller's encodings of them when given is not NULL. */
static rf_status qa(rf_pipeline *pl, const rf_text *inputs, const rf_encoding *given, int32_t n,
                    int32_t max_answer_tokens, int32_t doc_stride, rf_qa_result *out,
                    rf_item_status *items, rf_error *err)
{
    const rf_hparams *hp = rf_model_hparams(rf_pipeline_model(pl));
    if (hp->head != RF_HEAD_QA)
        return rf_fail(err, RF_ERR_UNSUPPORTED, "the model has no question-answering head");
    if (n < 0)
        return rf_fail(err, RF_ERR_INPUT, "negative input count %d", n);
    if (max_answer_tokens <= 0)
        max_answer_tokens = RF_QA_MAX_ANSWER_TOKENS;
    for (int32_t i = 0; i < n; i++) {
        out[i] = (rf_qa_result){.start = -1, .end = -1, .byte_start = -1, .byte_end = -1,
                                .start_token = -1, .end_token = -1};
        if (items)
            items[i] = (rf_item_status){.status = RF_OK};
    }
    size_t n_alloc = n ? (size_t)n : 1;
    rf_encoding *fulls = given ? NULL : calloc(n_alloc, sizeof *fulls), *encs = NULL;
    const rf_encoding *used = NULL;
    int32_t *best_window = malloc(n_alloc * sizeof *best_window), n_wins = 0;
    rf_window *wins = NULL;
    rf_status st = (given || fulls) && best_window
                       ? plan_all(pl, inputs, given, n, doc_stride, fulls, &used, &wins,
                                  &n_wins, items, err)
                       : rf_fail(err, RF_ERR_NOMEM, "out of memory for %d QA inputs", n);
    if (st == RF_OK && n_wins > 0 && !(encs = calloc((size_t)n_wins, sizeof *encs)))
        st = rf_fail(err, RF_ERR_NOMEM, "out of memory for %d QA windows", n_wins);
    for (int32_t w = 0; st == RF_OK && w < n_wins; w++)
        if (!rf_window_encoding(&used[wins[w].input], header_length(&used[wins[w].input]),
                                &wins[w], &encs[w]))
            st = rf_fail(err, RF_ERR_NOMEM, "out of memory for QA windows");

    /* Run the windows; each input keeps its best span. */
    qa_job job = {.inputs = inputs, .max_answer_tokens = max_answer_tokens, .windows = wins,
                  .best_window = best_window, .out = out};
    for (int32_t i = 0; best_window && i < n; i++)
        best_window[i] = -1;
    rf_run_needs needs = {.qa = true};
    if (st == RF_OK)
        st = rf_pipeline_run_encodings(pl, encs, n_wins, &needs, qa_row, &job, err);
    /* an input that planned windows but got no span had no context tokens */
    for (int32_t w = 0; st == RF_OK && w < n_wins; w++) {
        int32_t i = wins[w].input;
        if (best_window[i] < 0 && (w + 1 == n_wins || wins[w + 1].input != i))
            st = rf_item_fail(items, i, RF_ERR_INPUT, "the context is empty", err);
    }

    for (int32_t w = 0; encs && w < n_wins; w++)
        rf_encoding_free(&encs[w]);
    for (int32_t i = 0; fulls && i < n; i++)
        rf_encoding_free(&fulls[i]);
    free(encs);
    free(fulls);
    free(wins);
    free(job.allowed);
    free(best_window);
    return st;
}

rf_status rf_qa(rf_pipeline *pl, const rf_text *inputs, int32_t n, int32_t max_answer_tokens,
                int32_t doc_stride, rf_qa_result *out, rf_item_status *items, rf_error *err)
{
    return qa(pl, inputs, NULL, n, max_answer_tokens, doc_stride, out, items, err);
}

rf_status rf_qa_encodings(rf_pipeline *pl, const rf_text *inputs, const rf_encoding *encs,
                          int32_t n, int32_t max_answer_tokens, int32_t doc_stride,
                          rf_qa_result *out, rf_item_status *items, rf_error *err)
{
    return qa(pl, inputs, encs, n, max_answer_tokens, doc_stride, out, items, err);
}
