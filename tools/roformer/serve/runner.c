/*
 * runner.c — one library call for a batch of jobs (see runner.h). It joins
 * the jobs' inputs in queue order (serve_units), answers from the cache
 * the units it holds, runs each distinct unit left once, with per-input
 * statuses (so one bad input fails only its own request), copies each
 * result to the units equal to it and into the cache, then hands every job
 * its slice: vectors, probabilities and scm results are copied, the
 * fill-mask / NER / QA result structs are moved (the job frees them).
 * Per-token vectors (embed_all) lie back to back, each text's rows at its
 * offset: the sum of the lengths before it.
 * The texts of scm jobs are triplets (A, B, C), so a batch of them is one
 * rf_scm call over all their triplets.
 * Every job runs the encodings its request counted (the *_encodings
 * calls): no text is tokenized twice. Cosine rerank's are two per pair,
 * query and document, which it embeds apart.
 */
#include "serve/runner.h"

#include "serve/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct serve_runner {
    const rf_model *model;
    rf_pipeline *pl;
    rf_pipeline_params params;
    rf_pipeline *windowed_pl; /* the pipeline of the last windows asked, or NULL */
    int32_t window, stride;   /* its windows */
    rf_pooling pooling;
    int32_t D; /* hidden_size */
    int32_t N; /* num_labels */

    /* the cache, when there is one: results are kept for model `owner`
       as computed on its load `load`, named load_id in their keys */
    serve_cache *cache;
    int owner, load;
    const char *load_id;
    serve_bytes keys, value; /* a batch's keys, back to back; one value */
};

rf_status serve_runner_create(const rf_model *model, const rf_pipeline_params *params,
                              rf_pooling pooling, serve_runner **out, rf_error *err)
{
    *out = NULL;
    serve_runner *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err->message, sizeof err->message, "out of memory");
        return RF_ERR_NOMEM;
    }
    rf_status st = rf_pipeline_create(model, params, &r->pl, err);
    if (st != RF_OK) {
        free(r);
        return st;
    }
    const rf_hparams *hp = rf_model_hparams(model);
    r->model = model;
    r->params = *params;
    r->pooling = pooling;
    r->D = hp->hidden_size;
    r->N = hp->num_labels > 0 ? hp->num_labels : 1;
    *out = r;
    return RF_OK;
}

void serve_runner_set_cache(serve_runner *r, serve_cache *cache, int owner, int load,
                            const char *load_id)
{
    r->cache = cache;
    r->owner = owner;
    r->load = load;
    r->load_id = load_id;
}

void serve_runner_free(serve_runner *r)
{
    if (!r)
        return;
    rf_pipeline_free(r->pl);
    rf_pipeline_free(r->windowed_pl);
    serve_bytes_free(&r->keys);
    serve_bytes_free(&r->value);
    free(r);
}

/* Keeps the first k of each mask's top-K candidates (a prefix: the
 * candidates are sorted, so it is the top k). */
static void trim_top_k(rf_fill_mask_result *f, int32_t k)
{
    if (k >= f->top_k)
        return;
    for (int32_t m = 0; m < f->n_masks; m++) {
        memmove(f->ids + (size_t)m * k, f->ids + (size_t)m * f->top_k, sizeof *f->ids * k);
        memmove(f->scores + (size_t)m * k, f->scores + (size_t)m * f->top_k,
                sizeof *f->scores * k);
    }
    f->top_k = k;
}

static void fail_all(serve_job **jobs, int n, rf_status st, const rf_error *err)
{
    for (int j = 0; j < n; j++) {
        jobs[j]->status = st;
        jobs[j]->error = *err;
    }
}

/* The pipeline for jobs with these windows: the server's own without
 * windows, else one made for them (kept until other windows are asked). */
static rf_status pipeline_for(serve_runner *r, int32_t window, int32_t stride, rf_pipeline **pl,
                              rf_error *err)
{
    *pl = r->pl;
    if (!window)
        return RF_OK;
    if (!r->windowed_pl || r->window != window || r->stride != stride) {
        rf_pipeline_free(r->windowed_pl);
        r->windowed_pl = NULL;
        rf_pipeline_params p = r->params;
        p.window = window;
        p.stride = stride;
        p.max_length = 0; /* windows instead of truncation */
        rf_status st = rf_pipeline_create(r->model, &p, &r->windowed_pl, err);
        if (st != RF_OK)
            return st;
        r->window = window;
        r->stride = stride;
    }
    *pl = r->windowed_pl;
    return RF_OK;
}

/* ==== The library call ==== */

/* Runs u's inputs as the kind of `first` says, largest top_k for fill-mask. */
static rf_status call_library(serve_runner *r, rf_pipeline *pl, const serve_job *first,
                              int32_t top_k, serve_units *u, rf_error *err)
{
    int32_t n = u->n;
    rf_status st = rf_pipeline_set_truncation_side(pl, first->truncation_side, err);
    if (st != RF_OK)
        return st;
    rf_rerank_params rerank = rf_rerank_default_params();
    rerank.raw_scores = first->raw_scores;
    switch (u->kind) {
    case SERVE_KIND_RERANK:
        return rf_rerank_score_encodings(pl, u->encs, n, &rerank, u->probs, u->items, err);
    case SERVE_KIND_RERANK_COSINE:
        return rf_similarity_encodings(pl, u->encs, n, r->pooling, u->probs, u->items, err);
    case SERVE_KIND_CLASSIFY:
        return rf_classify_encodings(pl, u->encs, n, u->probs, u->items, err);
    case SERVE_KIND_LOGITS:
        return rf_classify_logits_encodings(pl, u->encs, n, u->probs, u->items, err);
    case SERVE_KIND_FILL_MASK:
        return rf_fill_mask_encodings(pl, u->texts, u->encs, n, top_k, u->fill, u->items, err);
    case SERVE_KIND_NER:
        return rf_token_classify_encodings(pl, u->texts, u->encs, n, u->ner, u->items, err);
    case SERVE_KIND_QA:
        return rf_qa_encodings(pl, u->texts, u->encs, n, first->max_answer_tokens,
                               first->doc_stride, u->qa, u->items, err);
    case SERVE_KIND_EMBED:
        return rf_embed_windowed_encodings(pl, u->encs, n, r->pooling, false, u->vectors,
                                           u->items, err);
    case SERVE_KIND_EMBED_IDS:
    case SERVE_KIND_EMBED_ALL:
        st = u->kind == SERVE_KIND_EMBED_ALL
                 ? rf_token_embeddings(pl, u->encs, n, u->vectors, err)
                 : rf_embed_encodings(pl, u->encs, n, r->pooling, u->vectors, err);
        for (int32_t i = 0; st == RF_OK && i < n; i++)
            u->items[i] = (rf_item_status){.status = RF_OK};
        return st;
    case SERVE_KIND_SCM: {
        rf_scm_params params = rf_scm_default_params();
        params.pooling = r->pooling;
        for (int32_t k = 0; k < u->units; k++)
            for (int s = 0; s < 3; s++) {
                u->triplets[k].doc[s] = u->texts[3 * k + s].text;
                u->triplets[k].len[s] = u->texts[3 * k + s].text_len;
            }
        return rf_scm_encodings(pl, u->triplets, u->encs, u->units, &params, u->scm, NULL,
                                u->items, err);
    }
    }
    return RF_ERR_INPUT;
}

/* ==== Which units run ==== */

/* What becomes of each unit of a batch. */
enum { UNIT_RUNS = -1, UNIT_CACHED = -2 }; /* else: the index of the equal unit that runs */

typedef struct {
    const serve_bytes *keys;
    const size_t *at; /* [units + 1] where each key starts in keys */
} key_order;

/* By key, then by index: equal keys end up side by side, the first first. */
static int by_key(const void *a, const void *b, void *arg)
{
    const key_order *o = arg;
    int32_t ia = *(const int32_t *)a, ib = *(const int32_t *)b;
    size_t la = o->at[ia + 1] - o->at[ia], lb = o->at[ib + 1] - o->at[ib];
    if (la != lb)
        return la < lb ? -1 : 1;
    int c = memcmp(o->keys->p + o->at[ia], o->keys->p + o->at[ib], la);
    return c ? c : (ia > ib) - (ia < ib);
}

typedef struct {
    serve_units *u;
    int32_t unit;
    const rf_model *model;
    bool ok;
} unpack_arg;

static void read_cached(const void *value, size_t len, void *arg)
{
    unpack_arg *a = arg;
    a->ok = serve_units_unpack(a->u, a->unit, a->model, value, len);
}

/* What r's keys hold besides the inputs. */
static serve_key_context key_context(const serve_runner *r)
{
    return (serve_key_context){.load_id = r->load_id ? r->load_id : "",
                               .compute = r->params.context.compute, .pooling = r->pooling,
                               .max_length = r->params.max_length};
}

/* Sets fate[i] for every unit: answered from the cache, run, or equal to a
 * unit that runs. Without keys (no cache and one unit, or out of memory)
 * every unit runs. */
static void plan_units(serve_runner *r, serve_units *all, serve_job *const *unit_job,
                       size_t *at, int32_t *fate, int32_t *order)
{
    int32_t U = all->units;
    r->keys.len = 0;
    r->keys.failed = false;
    for (int32_t i = 0; i < U; i++)
        fate[i] = UNIT_RUNS;
    if (!r->cache && U < 2)
        return;
    serve_key_context ctx = key_context(r);
    for (int32_t i = 0; i < U; i++) {
        at[i] = r->keys.len;
        serve_units_key(all, i, unit_job[i], &ctx, &r->keys);
    }
    at[U] = r->keys.len;
    if (r->keys.failed)
        return;
    int32_t misses = 0;
    for (int32_t i = 0; i < U; i++) {
        unpack_arg a = {.u = all, .unit = i, .model = r->model};
        if (r->cache && serve_cache_get(r->cache, r->owner, r->keys.p + at[i], at[i + 1] - at[i],
                                        read_cached, &a) && a.ok)
            fate[i] = UNIT_CACHED;
        else
            order[misses++] = i;
    }
    key_order o = {.keys = &r->keys, .at = at};
    qsort_r(order, (size_t)misses, sizeof *order, by_key, &o);
    for (int32_t k = 1; k < misses; k++) {
        int32_t prev = order[k - 1], i = order[k];
        size_t len = at[i + 1] - at[i];
        bool equal = len == at[prev + 1] - at[prev] &&
                     !memcmp(r->keys.p + at[i], r->keys.p + at[prev], len);
        if (equal)
            fate[i] = fate[prev] == UNIT_RUNS ? prev : fate[prev];
    }
}

/* Runs the units whose fate is UNIT_RUNS: in place when they are all of
 * them, else gathered into a smaller batch and moved back. */
static rf_status run_units(serve_runner *r, rf_pipeline *pl, serve_job *first, int32_t top_k,
                           serve_units *all, const int32_t *fate, rf_error *err)
{
    int32_t U = all->units, ipu = serve_units_inputs_per_unit(all->kind);
    int32_t epi = serve_units_encodings_per_input(all->kind), runs = 0, rows = 0;
    for (int32_t i = 0; i < U; i++)
        if (fate[i] == UNIT_RUNS) {
            runs++;
            rows += all->lengths ? all->lengths[i] : 0;
        }
    if (runs == U)
        return call_library(r, pl, first, top_k, all, err);
    if (runs == 0)
        return RF_OK;
    serve_units some;
    rf_status st = RF_OK;
    if (!serve_units_alloc(&some, all->kind, runs * ipu, rows, all->D, all->N)) {
        snprintf(err->message, sizeof err->message, "out of memory for a batch of %d inputs",
                 runs * ipu);
        st = RF_ERR_NOMEM;
        goto done;
    }
    for (int32_t i = 0, k = 0, row = 0; i < U; i++) {
        if (fate[i] != UNIT_RUNS)
            continue;
        size_t in = (size_t)i * ipu, to = (size_t)k * ipu;
        memcpy(some.texts + to, all->texts + in, sizeof *all->texts * ipu);
        memcpy(some.encs + to * epi, all->encs + in * epi, sizeof *all->encs * ipu * epi);
        if (all->lengths) {
            some.offsets[k] = row;
            some.lengths[k] = all->lengths[i];
            row += all->lengths[i];
        }
        k++;
    }
    st = call_library(r, pl, first, top_k, &some, err);
    for (int32_t i = 0, k = 0; st == RF_OK && i < U; i++)
        if (fate[i] == UNIT_RUNS)
            serve_units_move(all, i, &some, k++);
done:
    serve_units_free(&some);
    return st;
}

/* After the run: every unit that ran and succeeded goes into the cache,
 * and each unit equal to one that ran gets a copy of its result. */
static void share_results(serve_runner *r, serve_units *all, serve_job *const *unit_job,
                          const size_t *at, const int32_t *fate)
{
    if (r->keys.failed) /* no keys: every unit ran, none is kept */
        return;
    for (int32_t i = 0; i < all->units; i++) {
        int32_t from = fate[i] >= 0 ? fate[i] : i;
        if (fate[i] == UNIT_CACHED || (fate[i] == UNIT_RUNS && !r->cache))
            continue;
        if (all->items[from].status != RF_OK) {
            all->items[i] = all->items[from];
            continue;
        }
        r->value.len = 0;
        r->value.failed = false;
        serve_units_pack(all, from, unit_job[i]->top_k, r->model, &r->value);
        unpack_arg a = {.u = all, .unit = i, .model = r->model};
        if (fate[i] >= 0 && !r->value.failed)
            read_cached(r->value.p, r->value.len, &a);
        if (fate[i] >= 0 && !a.ok) {
            all->items[i] = (rf_item_status){.status = RF_ERR_NOMEM};
            snprintf(all->items[i].error.message, sizeof all->items[i].error.message,
                     "out of memory copying the result of an equal input");
        } else if (fate[i] == UNIT_RUNS && !r->value.failed) {
            serve_cache_put(r->cache, r->owner, r->load, r->keys.p + at[i], at[i + 1] - at[i],
                            r->value.p, r->value.len);
        }
    }
}

/* ==== A batch ==== */

/* Joins the jobs' inputs into `all` and notes each unit's job. */
static void join_jobs(serve_job **jobs, int n, serve_units *all, serve_job **unit_job)
{
    int32_t ipu = serve_units_inputs_per_unit(all->kind);
    int32_t epi = serve_units_encodings_per_input(all->kind);
    for (int j = 0, o = 0, row = 0; j < n; o += jobs[j]->n, j++) {
        memcpy(all->encs + (size_t)o * epi, jobs[j]->encs, sizeof *all->encs * jobs[j]->n * epi);
        if (jobs[j]->texts) /* NULL for token ids */
            memcpy(all->texts + o, jobs[j]->texts, sizeof *all->texts * jobs[j]->n);
        for (int32_t i = 0; all->lengths && i < jobs[j]->n; row += jobs[j]->lengths[i], i++) {
            all->offsets[o + i] = row;
            all->lengths[o + i] = jobs[j]->lengths[i];
        }
        for (int32_t i = 0; i < jobs[j]->n / ipu; i++)
            unit_job[o / ipu + i] = jobs[j];
    }
}

/* Counts the tokens each job ran: those of its units that ran. */
static void count_ran(const serve_units *all, serve_job **jobs, int n, const int32_t *fate)
{
    int32_t ipu = serve_units_inputs_per_unit(all->kind);
    for (int j = 0, unit = 0; j < n; j++) {
        jobs[j]->ran_tokens = 0;
        for (int32_t i = 0; i < jobs[j]->n / ipu; i++, unit++)
            for (int32_t k = 0; fate[unit] == UNIT_RUNS && jobs[j]->input_tokens && k < ipu; k++)
                jobs[j]->ran_tokens += jobs[j]->input_tokens[i * ipu + k];
    }
}

/* Hands each job its slice of the batch's results. */
static void slice_results(serve_units *all, serve_job **jobs, int n, int32_t D)
{
    bool scm = all->kind == SERVE_KIND_SCM;
    size_t P = serve_units_probs_per_input(all);
    for (int j = 0, o = 0; j < n; o += jobs[j]->n, j++) {
        serve_job *job = jobs[j];
        job->status = RF_OK;
        if (scm) {
            memcpy(job->items, all->items + o / 3, sizeof *all->items * (job->n / 3));
            memcpy(job->scm, all->scm + o / 3, sizeof *all->scm * (job->n / 3));
            continue;
        }
        memcpy(job->items, all->items + o, sizeof *all->items * job->n);
        if (all->lengths && job->n > 0) {
            int32_t count = 0;
            for (int32_t i = 0; i < job->n; i++)
                count += job->lengths[i];
            memcpy(job->vectors, all->vectors + (size_t)all->offsets[o] * D,
                   sizeof(float) * (size_t)count * D);
        } else if (all->vectors) {
            memcpy(job->vectors, all->vectors + (size_t)o * D, sizeof(float) * job->n * D);
        }
        if (P)
            memcpy(job->probs, all->probs + (size_t)o * P, sizeof(float) * job->n * P);
        for (int32_t i = 0; i < job->n; i++) {
            if (all->fill) {
                job->fill[i] = all->fill[o + i];
                all->fill[o + i] = (rf_fill_mask_result){0};
                trim_top_k(&job->fill[i], job->top_k);
            }
            if (all->ner) {
                job->ner[i] = all->ner[o + i];
                all->ner[o + i] = (rf_ner_result){0};
            }
            if (all->qa)
                job->qa[i] = all->qa[o + i];
        }
    }
}

bool serve_runner_answer_cached(const serve_runner *r, serve_job *job)
{
    if (!r->cache || job->n == 0)
        return false;
    int32_t rows = 0;
    for (int32_t i = 0; job->kind == SERVE_KIND_EMBED_ALL && i < job->n; i++)
        rows += job->lengths[i];
    serve_units all;
    serve_bytes key = {0};
    size_t U = job->n > 0 ? (size_t)job->n : 1;
    serve_job **unit_job = malloc(sizeof *unit_job * U);
    bool hits = serve_units_alloc(&all, job->kind, job->n, rows, r->D, r->N) && unit_job;
    if (hits)
        join_jobs(&job, 1, &all, unit_job);
    serve_key_context ctx = key_context(r);
    for (int32_t i = 0; hits && i < all.units; i++) {
        key.len = 0;
        serve_units_key(&all, i, job, &ctx, &key);
        unpack_arg a = {.u = &all, .unit = i, .model = r->model};
        hits = !key.failed && serve_cache_find(r->cache, key.p, key.len, read_cached, &a) && a.ok;
    }
    if (hits) {
        serve_cache_count_hits(r->cache, r->owner, all.units);
        job->ran_tokens = 0;
        slice_results(&all, &job, 1, r->D);
    }
    serve_units_free(&all);
    serve_bytes_free(&key);
    free(unit_job);
    return hits;
}

double serve_runner_run(serve_runner *r, serve_job **jobs, int n)
{
    serve_kind kind = jobs[0]->kind;
    int32_t total = 0, top_k = 1, rows = 0;
    for (int j = 0; j < n; j++) {
        total += jobs[j]->n;
        if (jobs[j]->top_k > top_k)
            top_k = jobs[j]->top_k;
        for (int32_t i = 0; kind == SERVE_KIND_EMBED_ALL && i < jobs[j]->n; i++)
            rows += jobs[j]->lengths[i];
    }
    serve_units all;
    bool ok = serve_units_alloc(&all, kind, total, rows, r->D, r->N);
    size_t U = all.units > 0 ? (size_t)all.units : 1;
    serve_job **unit_job = malloc(sizeof *unit_job * U);
    int32_t *fate = malloc(sizeof *fate * U), *order = malloc(sizeof *order * U);
    size_t *at = malloc(sizeof *at * (U + 1));
    rf_error err = {{0}};
    rf_status st = RF_OK;
    rf_pipeline *pl = NULL;
    rf_pipeline_stats before = {0}, after = {0};
    if (!ok || !unit_job || !fate || !order || !at) {
        snprintf(err.message, sizeof err.message, "out of memory for a batch of %d inputs", total);
        st = RF_ERR_NOMEM;
        goto done;
    }
    if ((st = pipeline_for(r, jobs[0]->window, jobs[0]->stride, &pl, &err)) != RF_OK)
        goto done;
    rf_pipeline_get_stats(pl, &before);
    join_jobs(jobs, n, &all, unit_job);
    plan_units(r, &all, unit_job, at, fate, order);
    if ((st = run_units(r, pl, jobs[0], top_k, &all, fate, &err)) != RF_OK)
        goto done;
    share_results(r, &all, unit_job, at, fate);
    count_ran(&all, jobs, n, fate);
    slice_results(&all, jobs, n, r->D);
done:
    if (st != RF_OK)
        fail_all(jobs, n, st, &err);
    serve_units_free(&all);
    free(unit_job);
    free(fate);
    free(order);
    free(at);
    if (pl)
        rf_pipeline_get_stats(pl, &after);
    return after.forward_seconds - before.forward_seconds;
}
