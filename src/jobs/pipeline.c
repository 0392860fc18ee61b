/*
 * pipeline.c — rf_pipeline: a context plus the batch buffers the jobs run
 * on, and the runner that tokenizes, length-groups, pads, runs and hands
 * back results in input order (see pipeline.h); also runs encodings a job
 * made itself, and counts where the time went (rf_pipeline_get_stats).
 *
 * The context is created on the first run, sized for `batch_size`
 * sequences of the longest length seen (rounded up to a multiple of 64),
 * and re-created only when a longer input arrives.
 *
 * A run's inputs are texts, tokenized here, or the encodings the caller
 * made of them (the *_encodings jobs); from then on both run alike, so the
 * two give the same bits.
 */
#include "jobs/pipeline.h"
#include "jobs/windows.h"

#include "base/clock.h"
#include "base/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rf_pipeline {
    const rf_model *model;
    rf_pipeline_params params;
    rf_context *ctx;
    int32_t ctx_len;           /* longest sequence the context was sized for */
    int32_t limit;             /* longest sequence the context accepts
                                  (rf_context_length_limit) */

    rf_encoding *encs;         /* [encs_cap] one per input of the current run */
    int32_t encs_cap;
    const rf_encoding *run_encs; /* the current run's encodings: encs, or the caller's */
    int32_t *order;            /* [order_cap] encodings that run, longest first, equal ones
                                  side by side */
    size_t order_cap;
    int32_t *first;            /* [first_cap] where each run of equal encodings starts in
                                  order, then where the last one ends */
    size_t first_cap;
    int32_t *rows;             /* [rows_cap] the encodings of one batch */
    size_t rows_cap;

    /* one batch, [B][L] row-major, B = batch_size */
    int32_t *ids, *types, *mask;
    size_t ids_cap, types_cap, mask_cap;
    float *hidden, *pooled, *logits, *start, *end;
    size_t hidden_cap, pooled_cap, logits_cap, start_cap, end_cap;
    int32_t *positions;        /* [L] MLM positions of the batch */
    uint8_t *is_mask_pos;      /* [L] scratch for collecting them */
    size_t positions_cap, is_mask_pos_cap;

    /* windows (rf_pipeline_run_pooled): the encodings that run, and the
       input each belongs to (item_of NULL: encoding i is input i) */
    rf_encoding *units;        /* [units_cap] inputs' encodings (shared) and windows (owned) */
    size_t units_cap;
    int32_t *item_of;          /* [item_of_cap] input of each unit */
    size_t item_of_cap;
    const int32_t *run_item_of; /* what run_batch maps failures through, or NULL */

    rf_pipeline_stats stats;
};

rf_pipeline_params rf_pipeline_default_params(void)
{
    return (rf_pipeline_params){.context = rf_context_default_params(),
                                .max_length = RF_MAX_LENGTH_MODEL, .batch_size = 8,
                                .window = 0, .stride = RF_STRIDE_DEFAULT,
                                .truncation_side = RF_TRUNCATE_RIGHT};
}

/* The parameters of the pipeline's context for max_len tokens: the
 * caller's, sized by the pipeline. */
static rf_context_params context_params(const rf_pipeline_params *p, int32_t max_len)
{
    rf_context_params cp = p->context;
    cp.max_batch = p->batch_size;
    cp.max_seq_len = max_len;
    cp.skip_padding = 1; /* every job reads real-token outputs only */
    return cp;
}

rf_status rf_pipeline_create(const rf_model *model, const rf_pipeline_params *params,
                             rf_pipeline **out, rf_error *err)
{
    *out = NULL;
    rf_pipeline_params p = params ? *params : rf_pipeline_default_params();
    const rf_hparams *hp = rf_model_hparams(model);
    const rf_context_params *c = &p.context;
    if (!(c->rope_factor <= 1024.0f) || (int)c->rope_scaling < RF_ROPE_SCALING_DEFAULT ||
        c->rope_scaling > RF_ROPE_SCALING_NTK)
        return rf_fail(err, RF_ERR_INPUT, "rope scaling %d with factor %g is not valid",
                       c->rope_scaling, (double)c->rope_factor);
    /* the defaults (roformer.h, "Defaults") */
    if (p.max_length < 0)
        p.max_length = p.window ? 0 : rf_model_default_max_length(model);
    if (p.stride < 0)
        p.stride = rf_window_default_stride(p.window);
    if (c->n_threads > RF_MAX_THREADS)
        return rf_fail(err, RF_ERR_INPUT, "n_threads %d is over the most a context runs, %d",
                       c->n_threads, RF_MAX_THREADS);
    rf_context_params cp = context_params(&p, 0);
    int32_t limit = rf_context_length_limit(model, &cp);
    if (p.max_length > limit && limit == hp->max_position)
        return rf_fail(err, RF_ERR_INPUT,
                       "max_length %d is over the model's maximum of %d (extend_positions "
                       "allows more)",
                       p.max_length, hp->max_position);
    if (p.max_length > limit)
        return rf_fail(err, RF_ERR_INPUT, "max_length %d is over the longest accepted, %d",
                       p.max_length, limit);
    if (p.window != 0 && (p.window <= 2 || p.window > limit))
        return rf_fail(err, RF_ERR_INPUT, "window %d is not in 3..%d (the longest accepted)",
                       p.window, limit);
    if (p.window != 0 && (p.stride < 0 || p.stride >= p.window - 2))
        return rf_fail(err, RF_ERR_INPUT,
                       "stride %d is not in 0..%d: it must be below the %d text tokens of a "
                       "window of %d",
                       p.stride, p.window - 3, p.window - 2, p.window);
    if (p.max_length > 0 && p.max_length < 2)
        return rf_fail(err, RF_ERR_INPUT, "max_length %d leaves no room for [CLS] and [SEP]",
                       p.max_length);
    if (p.truncation_side != RF_TRUNCATE_RIGHT && p.truncation_side != RF_TRUNCATE_LEFT)
        return rf_fail(err, RF_ERR_INPUT, "truncation_side %d is not right (0) or left (1)",
                       p.truncation_side);
    if (p.batch_size <= 0)
        p.batch_size = rf_pipeline_default_params().batch_size;
    rf_pipeline *pl = calloc(1, sizeof *pl);
    if (!pl)
        return rf_fail(err, RF_ERR_NOMEM, "out of memory creating a pipeline");
    pl->model = model;
    pl->params = p;
    pl->limit = limit;
    *out = pl;
    return RF_OK;
}

void rf_pipeline_free(rf_pipeline *pl)
{
    if (!pl)
        return;
    rf_context_free(pl->ctx);
    for (int32_t i = 0; i < pl->encs_cap; i++)
        rf_encoding_free(&pl->encs[i]);
    free(pl->encs);
    free(pl->order);
    free(pl->first);
    free(pl->rows);
    free(pl->ids);
    free(pl->types);
    free(pl->mask);
    free(pl->hidden);
    free(pl->pooled);
    free(pl->logits);
    free(pl->start);
    free(pl->end);
    free(pl->positions);
    free(pl->is_mask_pos);
    free(pl->units);
    free(pl->item_of);
    free(pl);
}

rf_status rf_pipeline_set_truncation_side(rf_pipeline *pl, rf_truncation_side side, rf_error *err)
{
    if (side != RF_TRUNCATE_RIGHT && side != RF_TRUNCATE_LEFT)
        return rf_fail(err, RF_ERR_INPUT, "truncation_side %d is not right (0) or left (1)",
                       side);
    pl->params.truncation_side = side;
    return RF_OK;
}

void rf_pipeline_get_stats(const rf_pipeline *pl, rf_pipeline_stats *stats)
{
    *stats = pl->stats;
}

const rf_model *rf_pipeline_model(const rf_pipeline *pl)
{
    return pl->model;
}

int32_t rf_pipeline_window(const rf_pipeline *pl)
{
    return pl->params.max_length > 0 ? pl->params.max_length : pl->limit;
}

int32_t rf_pipeline_length_limit(const rf_pipeline *pl)
{
    return pl->limit;
}

rf_status rf_item_fail(rf_item_status *items, int32_t i, rf_status status, const char *msg,
                       rf_error *err)
{
    if (status == RF_ERR_NOMEM || !items)
        return rf_fail(err, status, "input %d: %.480s", i + 1, msg);
    items[i].status = status;
    snprintf(items[i].error.message, sizeof items[i].error.message, "%s", msg);
    return RF_OK;
}

/* Grows *buf to hold `count` elements of `size` bytes (contents not kept). */
static bool reserve(void **buf, size_t *cap, size_t count, size_t size)
{
    if (count <= *cap)
        return true;
    void *grown = realloc(*buf, count * size);
    if (!grown)
        return false;
    *buf = grown;
    *cap = count;
    return true;
}

/* ==== Tokenizing ==== */

/* Longest first; equal lengths by their token ids and type ids, so equal
 * encodings end up side by side; then by index. */
static int by_length_desc(const void *a, const void *b, void *encs_arg)
{
    const rf_encoding *encs = encs_arg;
    int32_t ia = *(const int32_t *)a, ib = *(const int32_t *)b;
    const rf_encoding *ea = &encs[ia], *eb = &encs[ib];
    if (ea->n != eb->n)
        return ea->n > eb->n ? -1 : 1;
    int c = memcmp(ea->ids, eb->ids, sizeof *ea->ids * (size_t)ea->n);
    if (!c)
        c = memcmp(ea->type_ids, eb->type_ids, sizeof *ea->type_ids * (size_t)ea->n);
    return c ? c : (ia > ib) - (ia < ib);
}

/* Whether two encodings run alike: the same tokens and segments (the mask
 * is all ones; padding is the batch's). */
static bool same_encoding(const rf_encoding *a, const rf_encoding *b)
{
    return a->n == b->n && !memcmp(a->ids, b->ids, sizeof *a->ids * (size_t)a->n) &&
           !memcmp(a->type_ids, b->type_ids, sizeof *a->type_ids * (size_t)a->n);
}

/* Whether input i is a single text (not a pair): only those are cut into
 * windows. A given encoding is a pair when it ends in the second segment. */
static bool is_single(const rf_pipeline *pl, const rf_text *inputs, int32_t i)
{
    const rf_encoding *e = &pl->run_encs[i];
    return inputs ? !inputs[i].pair : e->type_ids[e->n - 1] == 0;
}

/* Tokenizes every input (or takes the caller's encodings, `given`, as
 * they are) into pl->run_encs; those that fail are recorded and left out
 * of pl->order, which ends up sorted longest first; *n_ok is its length. */
static rf_status prepare_all(rf_pipeline *pl, const rf_text *inputs, const rf_encoding *given,
                             int32_t n, bool windows, rf_item_status *items, int32_t *n_ok,
                             rf_error *err)
{
    if (!given && n > pl->encs_cap) {
        rf_encoding *encs = realloc(pl->encs, sizeof *encs * (size_t)n);
        if (!encs)
            return rf_fail(err, RF_ERR_NOMEM, "out of memory for %d inputs", n);
        memset(encs + pl->encs_cap, 0, sizeof *encs * (size_t)(n - pl->encs_cap));
        pl->encs = encs;
        pl->encs_cap = n;
    }
    if (!reserve((void **)&pl->order, &pl->order_cap, (size_t)n, sizeof *pl->order))
        return rf_fail(err, RF_ERR_NOMEM, "out of memory for %d inputs", n);
    const rf_hparams *hp = rf_model_hparams(pl->model);
    pl->run_encs = given ? given : pl->encs;
    int32_t ok = 0;
    for (int32_t i = 0; i < n; i++) {
        rf_error e;
        rf_status st = RF_OK;
        if (!given)
            st = rf_pipeline_tokenize(pl, &inputs[i], true, &pl->encs[i], &e);
        else if (given[i].n < 1)
            st = rf_fail(&e, RF_ERR_INPUT, "the encoding has no tokens");
        /* a single text longer than the window is cut into windows later */
        bool windowed = st == RF_OK && windows && pl->params.window > 0 &&
                        is_single(pl, given ? NULL : inputs, i);
        if (st == RF_OK && !windowed && pl->run_encs[i].n > pl->limit) {
            st = RF_ERR_INPUT;
            if (pl->limit == hp->max_position)
                snprintf(e.message, sizeof e.message,
                         "input is %d tokens long, over the model's maximum of %d, and "
                         "truncation is off (extend_positions or a window allow more)",
                         pl->run_encs[i].n, hp->max_position);
            else
                snprintf(e.message, sizeof e.message,
                         "input is %d tokens long, over the longest accepted, %d, and "
                         "truncation is off",
                         pl->run_encs[i].n, pl->limit);
        }
        if (st != RF_OK) {
            rf_status fst = rf_item_fail(items, i, st, e.message, err);
            if (fst != RF_OK)
                return fst;
            continue;
        }
        pl->order[ok++] = i;
    }
    if (ok > 1) /* order may still be NULL when there is nothing to sort */
        qsort_r(pl->order, (size_t)ok, sizeof *pl->order, by_length_desc,
                (void *)pl->run_encs);
    *n_ok = ok;
    return RF_OK;
}

/* ==== Running batches ==== */

static rf_status ensure_context(rf_pipeline *pl, int32_t L, rf_error *err)
{
    if (pl->ctx && L <= pl->ctx_len)
        return RF_OK;
    int32_t len = (L + 63) / 64 * 64;
    if (len > pl->limit)
        len = pl->limit;
    if (pl->ctx) { /* grow in place: threads and packed weights stay */
        rf_status st = rf_context_resize(pl->ctx, pl->params.batch_size, len, err);
        if (st == RF_OK)
            pl->ctx_len = len;
        return st;
    }
    rf_context_params cp = context_params(&pl->params, len);
    rf_status st = rf_context_create(pl->model, &cp, &pl->ctx, err);
    if (st != RF_OK)
        return st;
    pl->ctx_len = len;
    return RF_OK;
}

/* Collects the positions holding [MASK] in any row of the batch. */
static int32_t mask_positions(rf_pipeline *pl, int32_t B, int32_t L)
{
    int32_t mask_id = rf_model_hparams(pl->model)->mask_id, P = 0;
    memset(pl->is_mask_pos, 0, (size_t)L);
    for (int32_t r = 0; r < B; r++)
        for (int32_t t = 0; t < L; t++)
            if (pl->mask[(size_t)r * L + t] && pl->ids[(size_t)r * L + t] == mask_id)
                pl->is_mask_pos[t] = 1;
    for (int32_t t = 0; t < L; t++)
        if (pl->is_mask_pos[t])
            pl->positions[P++] = t;
    return P;
}

/* Runs B distinct encodings, group r's first, pl->order[groups[r]], for
 * the equal encodings pl->order[groups[r] .. groups[r + 1]): each of them
 * gets the row. */
static rf_status run_batch(rf_pipeline *pl, const rf_encoding *encs, const int32_t *groups,
                           int32_t B, const rf_run_needs *needs, rf_row_fn fn, void *job,
                           rf_item_status *items, rf_error *err)
{
    const rf_hparams *hp = rf_model_hparams(pl->model);
    if (!reserve((void **)&pl->rows, &pl->rows_cap, (size_t)B, sizeof *pl->rows))
        return rf_fail(err, RF_ERR_NOMEM, "out of memory for a batch of %d", B);
    int32_t *rows = pl->rows;
    for (int32_t r = 0; r < B; r++)
        rows[r] = pl->order[groups[r]];
    int32_t L = 0;
    for (int32_t r = 0; r < B; r++)
        if (encs[rows[r]].n > L)
            L = encs[rows[r]].n;
    size_t BL = (size_t)B * L, D = (size_t)hp->hidden_size;
    size_t N = hp->num_labels > 0 ? (size_t)hp->num_labels : 1;

    rf_status st = ensure_context(pl, L, err);
    if (st != RF_OK)
        return st;
    if (!reserve((void **)&pl->ids, &pl->ids_cap, BL, sizeof(int32_t)) ||
        !reserve((void **)&pl->types, &pl->types_cap, BL, sizeof(int32_t)) ||
        !reserve((void **)&pl->mask, &pl->mask_cap, BL, sizeof(int32_t)) ||
        !reserve((void **)&pl->positions, &pl->positions_cap, (size_t)L, sizeof(int32_t)) ||
        !reserve((void **)&pl->is_mask_pos, &pl->is_mask_pos_cap, (size_t)L, 1))
        return rf_fail(err, RF_ERR_NOMEM, "out of memory for a batch of %zu tokens", BL);

    /* Pass 1: right-pad each row to L. */
    for (int32_t r = 0; r < B; r++) {
        const rf_encoding *e = &encs[rows[r]];
        int32_t *ids = pl->ids + (size_t)r * L, *types = pl->types + (size_t)r * L,
                *mask = pl->mask + (size_t)r * L;
        for (int32_t t = 0; t < L; t++) {
            bool real = t < e->n;
            ids[t] = real ? e->ids[t] : hp->pad_id;
            types[t] = real ? e->type_ids[t] : 0;
            mask[t] = real ? 1 : 0;
        }
    }

    /* Pass 2: the output buffers this job reads. */
    rf_outputs out = {0};
    int32_t P = 0;
    if (needs->hidden) {
        if (!reserve((void **)&pl->hidden, &pl->hidden_cap, BL * D, sizeof(float)))
            return rf_fail(err, RF_ERR_NOMEM, "out of memory for hidden states");
        out.last_hidden_state = pl->hidden;
    }
    if (needs->pooled) {
        if (!reserve((void **)&pl->pooled, &pl->pooled_cap, (size_t)B * D, sizeof(float)))
            return rf_fail(err, RF_ERR_NOMEM, "out of memory for pooled outputs");
        out.pooled = pl->pooled;
    }
    if (needs->logits || needs->mlm_masks) {
        size_t count = 0;
        if (needs->mlm_masks) {
            P = mask_positions(pl, B, L);
            count = (size_t)B * P * (size_t)hp->vocab_size;
        } else {
            count = hp->head == RF_HEAD_TOKEN_CLS ? BL * N : (size_t)B * N;
        }
        if (count) {
            if (!reserve((void **)&pl->logits, &pl->logits_cap, count, sizeof(float)))
                return rf_fail(err, RF_ERR_NOMEM, "out of memory for logits");
            out.logits = pl->logits;
            if (needs->mlm_masks) {
                out.mlm_positions = pl->positions;
                out.n_mlm_positions = P;
            }
        }
    }
    if (needs->qa) {
        if (!reserve((void **)&pl->start, &pl->start_cap, BL, sizeof(float)) ||
            !reserve((void **)&pl->end, &pl->end_cap, BL, sizeof(float)))
            return rf_fail(err, RF_ERR_NOMEM, "out of memory for QA logits");
        out.start_logits = pl->start;
        out.end_logits = pl->end;
    }

    /* Pass 3: the forward pass. */
    rf_batch batch = {.batch = B, .seq_len = L, .input_ids = pl->ids,
                      .token_type_ids = pl->types, .attention_mask = pl->mask};
    double t0 = rf_clock_seconds();
    st = rf_forward(pl->ctx, &batch, &out, err);
    pl->stats.forward_seconds += rf_clock_seconds() - t0;
    if (st != RF_OK)
        return st;
    pl->stats.batches++;
    for (int32_t r = 0; r < B; r++)
        pl->stats.tokens += encs[rows[r]].n;

    /* Pass 4: each row back to its input. */
    for (int32_t r = 0; r < B; r++) {
        rf_row row = {.positions = pl->positions, .n_positions = P};
        if (out.last_hidden_state)
            row.hidden = pl->hidden + (size_t)r * L * D;
        if (out.pooled)
            row.pooled = pl->pooled + (size_t)r * D;
        if (out.logits)
            row.logits = pl->logits + (needs->mlm_masks ? (size_t)r * P * hp->vocab_size
                                       : hp->head == RF_HEAD_TOKEN_CLS ? (size_t)r * L * N
                                                                        : (size_t)r * N);
        if (out.start_logits) {
            row.start_logits = pl->start + (size_t)r * L;
            row.end_logits = pl->end + (size_t)r * L;
        }
        for (int32_t k = groups[r]; k < groups[r + 1]; k++) {
            int32_t at = pl->order[k];
            rf_error e;
            st = fn(job, at, &encs[at], &row, &e);
            int32_t item = pl->run_item_of ? pl->run_item_of[at] : at;
            if (st != RF_OK && (st = rf_item_fail(items, item, st, e.message, err)) != RF_OK)
                return st;
        }
    }
    return RF_OK;
}

/* Runs the first n of pl->order (indices into encs, longest first, equal
 * ones side by side) in batches of batch_size distinct encodings: equal
 * encodings run once, and each of them gets that run's row. */
static rf_status run_sorted(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                           const rf_run_needs *needs, rf_row_fn fn, void *job,
                           rf_item_status *items, rf_error *err)
{
    if (!reserve((void **)&pl->first, &pl->first_cap, (size_t)n + 1, sizeof *pl->first))
        return rf_fail(err, RF_ERR_NOMEM, "out of memory for %d inputs", n);
    int32_t G = 0;
    for (int32_t k = 0; k < n; k++)
        if (k == 0 || !same_encoding(&encs[pl->order[k]], &encs[pl->order[k - 1]]))
            pl->first[G++] = k;
    pl->first[G] = n;
    rf_status st = RF_OK;
    for (int32_t b = 0; st == RF_OK && b < G; b += pl->params.batch_size) {
        int32_t B = G - b < pl->params.batch_size ? G - b : pl->params.batch_size;
        st = run_batch(pl, encs, pl->first + b, B, needs, fn, job, items, err);
    }
    return st;
}

/* The start of a run over n inputs: n checked, every item OK. */
static rf_status start_run(int32_t n, rf_item_status *items, rf_error *err)
{
    if (n < 0)
        return rf_fail(err, RF_ERR_INPUT, "negative input count %d", n);
    if (items)
        for (int32_t i = 0; i < n; i++)
            items[i] = (rf_item_status){.status = RF_OK};
    return RF_OK;
}

rf_status rf_pipeline_run(rf_pipeline *pl, const rf_text *inputs, const rf_encoding *given,
                          int32_t n, const rf_run_needs *needs, rf_row_fn fn, void *job,
                          rf_item_status *items, rf_error *err)
{
    if (start_run(n, items, err) != RF_OK)
        return RF_ERR_INPUT;
    int32_t n_ok = 0;
    rf_status st = prepare_all(pl, inputs, given, n, false, items, &n_ok, err);
    if (st != RF_OK)
        return st;
    return run_sorted(pl, pl->run_encs, n_ok, needs, fn, job, items, err);
}

rf_status rf_pipeline_tokenize(rf_pipeline *pl, const rf_text *t, bool truncate,
                               rf_encoding *enc, rf_error *err)
{
    double t0 = rf_clock_seconds();
    rf_status st = rf_tokenize_truncated(pl->model, t->text ? t->text : "",
                                         t->text ? t->text_len : 0, t->pair,
                                         t->pair ? t->pair_len : 0,
                                         truncate ? pl->params.max_length : 0,
                                         (rf_truncation_side)pl->params.truncation_side, enc, err);
    pl->stats.tokenize_seconds += rf_clock_seconds() - t0;
    pl->stats.inputs++;
    return st;
}

rf_status rf_pipeline_run_encodings(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                                    const rf_run_needs *needs, rf_row_fn fn, void *job,
                                    rf_error *err)
{
    if (n < 0)
        return rf_fail(err, RF_ERR_INPUT, "negative encoding count %d", n);
    if (!reserve((void **)&pl->order, &pl->order_cap, (size_t)n, sizeof *pl->order))
        return rf_fail(err, RF_ERR_NOMEM, "out of memory for %d encodings", n);
    for (int32_t i = 0; i < n; i++) {
        if (encs[i].n < 1 || encs[i].n > pl->limit)
            return rf_fail(err, RF_ERR_INPUT, "encoding %d has %d tokens, not 1 to %d", i + 1,
                           encs[i].n, pl->limit);
        pl->order[i] = i;
    }
    if (n > 1)
        qsort_r(pl->order, (size_t)n, sizeof *pl->order, by_length_desc, (void *)encs);
    return run_sorted(pl, encs, n, needs, fn, job, NULL, err);
}

/* ==== Windows pooled into one result per input ==== */

typedef struct {
    rf_pipeline *pl;
    int32_t width;
    rf_vector_fn vec_fn;
    rf_finish_fn finish;
    void *job;
    float *out;          /* [n][width] */
    int32_t *n_windows;  /* [n] windows of each input (1 when not cut) */
    int32_t *done;       /* [n] windows of each input pooled so far; -1 once failed */
    float *vec;          /* [width] one window's vector */
} pooled_run;

/* One unit (a whole input or a window of one) ran: its vector joins the
 * input's mean; the last one divides and finishes. */
static rf_status pooled_row(void *arg, int32_t u, const rf_encoding *enc, const rf_row *row,
                            rf_error *err)
{
    pooled_run *r = arg;
    int32_t i = r->pl->item_of[u];
    if (r->done[i] < 0)
        return RF_OK; /* an earlier window of this input failed */
    float *dst = r->out + (size_t)i * r->width;
    rf_status st = r->vec_fn(r->job, enc, row, r->done[i] == 0 ? dst : r->vec, err);
    if (st != RF_OK) {
        r->done[i] = -1;
        rf_fill_nan(dst, r->width);
        return st;
    }
    if (r->done[i] > 0)
        for (int32_t c = 0; c < r->width; c++)
            dst[c] += r->vec[c];
    if (++r->done[i] == r->n_windows[i]) {
        if (r->n_windows[i] > 1)
            for (int32_t c = 0; c < r->width; c++)
                dst[c] /= (float)r->n_windows[i];
        if (r->finish)
            r->finish(r->job, dst);
    }
    return RF_OK;
}

/* Whether input i runs as windows: a single text longer than the window. */
static bool is_cut(const rf_pipeline *pl, const rf_text *inputs, int32_t i)
{
    return pl->params.window > 0 && pl->run_encs[i].n > pl->params.window &&
           is_single(pl, inputs, i);
}

/* The units of the inputs in pl->order[0, n_ok), into pl->units and
 * pl->item_of: first the windows of the inputs that are cut (owned, *owned
 * of them, also on failure), then the encodings of the others (shared with
 * pl->run_encs); *n_units in all. `inputs` NULL: the encodings are the
 * caller's. */
static rf_status plan_units(rf_pipeline *pl, const rf_text *inputs, int32_t n_ok,
                            pooled_run *r, int32_t *n_units, int32_t *owned, rf_error *err)
{
    int32_t U = 0, cap = 0, n_wins = 0;
    rf_window *wins = NULL;
    rf_status st = RF_OK;
    *n_units = *owned = 0;
    for (int32_t k = 0; k < n_ok && st == RF_OK; k++) {
        int32_t i = pl->order[k], first = n_wins;
        if (is_cut(pl, inputs, i))
            st = rf_windows_plan(i, pl->run_encs[i].n - 2, pl->params.window - 2, pl->params.stride,
                                 &wins, &n_wins, &cap);
        r->n_windows[i] = n_wins > first ? n_wins - first : 1;
        U += r->n_windows[i];
    }
    if (st == RF_OK && (!reserve((void **)&pl->units, &pl->units_cap, (size_t)U, sizeof *pl->units) ||
                        !reserve((void **)&pl->item_of, &pl->item_of_cap, (size_t)U, sizeof(int32_t))))
        st = RF_ERR_NOMEM;
    int32_t u = 0;
    for (int32_t w = 0; st == RF_OK && w < n_wins; w++) {
        pl->item_of[u] = wins[w].input;
        if (!rf_window_encoding(&pl->run_encs[wins[w].input], 1, &wins[w], &pl->units[u]))
            st = RF_ERR_NOMEM;
        *owned = ++u; /* a half-made window is freed too */
    }
    free(wins);
    if (st != RF_OK)
        return rf_fail(err, RF_ERR_NOMEM, "out of memory for the windows of %d inputs", n_ok);
    for (int32_t k = 0; k < n_ok; k++) {
        int32_t i = pl->order[k];
        if (is_cut(pl, inputs, i)) {
            pl->stats.windowed_inputs++;
            pl->stats.windows += r->n_windows[i];
            continue;
        }
        pl->item_of[u] = i;
        pl->units[u++] = pl->run_encs[i];
    }
    *n_units = u;
    return RF_OK;
}

rf_status rf_pipeline_run_pooled(rf_pipeline *pl, const rf_text *inputs,
                                 const rf_encoding *given, int32_t n, const rf_run_needs *needs,
                                 int32_t width, rf_vector_fn vec_fn, rf_finish_fn finish,
                                 void *job, float *out, rf_item_status *items, rf_error *err)
{
    if (start_run(n, items, err) != RF_OK)
        return RF_ERR_INPUT;
    size_t n_alloc = n ? (size_t)n : 1;
    pooled_run r = {.pl = pl, .width = width, .vec_fn = vec_fn, .finish = finish, .job = job,
                    .out = out, .n_windows = calloc(n_alloc, sizeof(int32_t)),
                    .done = calloc(n_alloc, sizeof(int32_t)),
                    .vec = malloc(sizeof(float) * (size_t)(width > 0 ? width : 1))};
    int32_t n_ok = 0, U = 0, owned = 0;
    rf_status st = r.n_windows && r.done && r.vec
                       ? prepare_all(pl, inputs, given, n, true, items, &n_ok, err)
                       : rf_fail(err, RF_ERR_NOMEM, "out of memory for %d inputs", n);
    if (st == RF_OK)
        st = plan_units(pl, given ? NULL : inputs, n_ok, &r, &U, &owned, err);
    if (st == RF_OK && !reserve((void **)&pl->order, &pl->order_cap, (size_t)U, sizeof *pl->order))
        st = rf_fail(err, RF_ERR_NOMEM, "out of memory for %d windows", U);
    if (st == RF_OK) {
        for (int32_t u = 0; u < U; u++)
            pl->order[u] = u;
        if (U > 1)
            qsort_r(pl->order, (size_t)U, sizeof *pl->order, by_length_desc, pl->units);
        pl->run_item_of = pl->item_of;
        st = run_sorted(pl, pl->units, U, needs, pooled_row, &r, items, err);
        pl->run_item_of = NULL;
    }
    for (int32_t u = 0; u < owned; u++)
        rf_encoding_free(&pl->units[u]);
    free(r.n_windows);
    free(r.done);
    free(r.vec);
    return st;
}
