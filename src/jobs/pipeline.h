/*
 * pipeline.h — the batch runner every job is built on (internal).
 *
 * rf_pipeline_run tokenizes the inputs, sorts them by length (longest
 * first, so the context is sized once), cuts them into batches of
 * `batch_size`, right-pads each batch to its longest row (pad id, type 0,
 * mask 0), runs rf_forward and hands each input's slice of the outputs to
 * the job's row callback, addressed by the input's original index.
 * Equal encodings of one call (the same token ids and type ids) run once:
 * each of them gets that one row, so a batch of duplicates costs what its
 * distinct inputs cost (rf_pipeline_stats.tokens counts those).
 */
#ifndef RF_PIPELINE_H
#define RF_PIPELINE_H

#include "roformer.h"

#include <math.h>

/* Which outputs of rf_forward a job reads. */
typedef struct {
    bool hidden;    /* last_hidden_state */
    bool pooled;    /* the pooler output */
    bool logits;    /* sequence or token classification logits */
    bool mlm_masks; /* MLM logits at the [MASK] positions of each batch */
    bool qa;        /* start and end logits */
} rf_run_needs;

/* One input's outputs. L is the padded length of its batch; the input's
 * own tokens are the first enc->n. N = num_labels, V = vocab_size,
 * D = hidden_size. */
typedef struct {
    const float *hidden;         /* [L][D] */
    const float *pooled;         /* [D] */
    const float *logits;         /* sequence cls [N]; token cls [L][N]; MLM [P][V] */
    const int32_t *positions;    /* MLM: [P] the token position of each logits row */
    int32_t n_positions;         /* P: every [MASK] position of the batch */
    const float *start_logits;   /* [L] */
    const float *end_logits;     /* [L] */
} rf_row;

/* Called once per input that tokenized and ran; `i` is its index in the
 * inputs. A non-OK return fails that input only (RF_ERR_NOMEM fails all). */
typedef rf_status (*rf_row_fn)(void *job, int32_t i, const rf_encoding *enc, const rf_row *row,
                               rf_error *err);

/* The sentence vector of one row into out[D]: the pooler's output, or the
 * [CLS] / mean / max / last-token pooling of the input's own enc->n tokens
 * (padding never enters it). The run needs `pooled` for RF_POOLING_POOLER, else
 * `hidden`. */
void rf_pool_row(const rf_row *row, const rf_encoding *enc, rf_pooling pooling, int32_t D,
                 float *out);

/* Runs `inputs` through the model: their texts, tokenized here, or when
 * `given` is not NULL the caller's encodings of them, as they are (an
 * empty one, or one longer than rf_pipeline_length_limit, fails its input;
 * `inputs` may then be NULL when the job reads no text). `items` as in the
 * public job calls: when non-NULL it is initialised here and receives
 * per-input failures. */
rf_status rf_pipeline_run(rf_pipeline *pl, const rf_text *inputs, const rf_encoding *given,
                          int32_t n, const rf_run_needs *needs, rf_row_fn fn, void *job,
                          rf_item_status *items, rf_error *err);

/* A pooled job's vector of one window (or of a whole input): `width`
 * floats into vec. */
typedef rf_status (*rf_vector_fn)(void *job, const rf_encoding *enc, const rf_row *row,
                                  float *vec, rf_error *err);
/* Called once per input that ran, on its pooled vector (in place). */
typedef void (*rf_finish_fn)(void *job, float *vec);

/* rf_pipeline_run for jobs with one vector per input (embeddings,
 * classification logits), with the pipeline's windows: each input's
 * single text (given: an encoding whose last type id is 0) longer than
 * params.window runs as windows, and out[i]
 * ([n][width]) receives the mean of its windows' vectors (exactly the one
 * vector when it is not cut), then finish(job, out[i]) (finish may be
 * NULL). Rows of failed inputs are left as they were, or NaN when one of
 * their windows failed. */
rf_status rf_pipeline_run_pooled(rf_pipeline *pl, const rf_text *inputs,
                                 const rf_encoding *given, int32_t n, const rf_run_needs *needs,
                                 int32_t width, rf_vector_fn vec_fn, rf_finish_fn finish,
                                 void *job, float *out, rf_item_status *items, rf_error *err);

/* rf_tokenize, truncated at the pipeline's max_length or not at all, for a
 * job that makes its own encodings; counted in the pipeline's stats. */
rf_status rf_pipeline_tokenize(rf_pipeline *pl, const rf_text *t, bool truncate,
                               rf_encoding *enc, rf_error *err);
/* Runs encodings the job made itself (QA's windows over a long context),
 * batched by length as rf_pipeline_run does; fn gets the index into encs.
 * Each must hold 1 to rf_pipeline_length_limit tokens. A failure of fn fails the call. */
rf_status rf_pipeline_run_encodings(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                                    const rf_run_needs *needs, rf_row_fn fn, void *job,
                                    rf_error *err);

const rf_model *rf_pipeline_model(const rf_pipeline *pl);
/* The longest sequence the pipeline runs: max_length, else
 * rf_pipeline_length_limit. */
int32_t rf_pipeline_window(const rf_pipeline *pl);
/* rf_pipeline_length_limit is public (roformer.h). */

/* Records input i's failure `msg` in items, or, when items is NULL, turns
 * it into the whole call's error. Returns what the caller should return. */
rf_status rf_item_fail(rf_item_status *items, int32_t i, rf_status status, const char *msg,
                       rf_error *err);

/* x[0, count) = NaN: the rows of inputs that fail (a negative count:
 * none). */
static inline void rf_fill_nan(float *x, int64_t count)
{
    for (int64_t k = 0; k < count; k++)
        x[k] = NAN;
}

/* Number of characters (code points) in the first `bytes` bytes of the
 * valid UTF-8 string s: the byte span of a token becomes a character span. */
static inline int32_t rf_char_count(const char *s, int32_t bytes)
{
    int32_t chars = 0;
    for (int32_t i = 0; i < bytes; i++)
        chars += ((unsigned char)s[i] & 0xC0) != 0x80;
    return chars;
}

#endif
