/*
 * runner.c — one library call for a batch of jobs (see runner.h). It joins
 * the jobs' inputs in queue order (serve_units), answers from the cache
 * the units it holds, runs each distinct unit left once, with per-input
 * statuses (so one bad input fails only its own request), copies each
 * result to the units equal to it and into the cache, then hands every job
 * its slice. What a kind runs and how its results are copied, moved and
 * cached is its row of the kinds' table (kinds.h): nothing here depends
 * on the kind.
 */
#include "serve/runner.h"

#include "serve/results.h"
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

/* Runs u's inputs as their kind says, largest top_k for fill-mask. */
static rf_status call_library(const serve_runner *r, rf_pipeline *pl, const serve_job *first,
                              int32_t top_k, serve_units *u, rf_error *err)
{
    rf_status st = rf_pipeline_set_truncation_side(pl, first->truncation_side, err);
    if (st != RF_OK)
        return st;
    serve_call call = {.pl = pl, .pooling = r->pooling, .first = first, .top_k = top_k,
                       .n = u->n, .texts = u->texts, .encs = u->encs, .out = &u->out};
    return u->kind->run(&call, err);
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
    a->ok = serve_results_unpack(&a->u->out, a->unit, a->model, value, len);
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
    int32_t U = all->units, ipu = all->kind->inputs_per_unit;
    int32_t epi = all->kind->encodings_per_input, runs = 0;
    for (int32_t i = 0; i < U; i++)
        runs += fate[i] == UNIT_RUNS;
    if (runs == U)
        return call_library(r, pl, first, top_k, all, err);
    if (runs == 0)
        return RF_OK;
    serve_units some;
    rf_status st = RF_OK;
    bool ok = serve_units_alloc(&some, all->kind, runs * ipu);
    for (int32_t i = 0, k = 0; ok && i < U; i++) {
        if (fate[i] != UNIT_RUNS)
            continue;
        size_t in = (size_t)i * ipu, to = (size_t)k++ * ipu;
        memcpy(some.texts + to, all->texts + in, sizeof *all->texts * ipu);
        memcpy(some.encs + to * epi, all->encs + in * epi, sizeof *all->encs * ipu * epi);
    }
    if (!ok || !serve_units_alloc_results(&some, r->D, r->N)) {
        snprintf(err->message, sizeof err->message, "out of memory for a batch of %d inputs",
                 runs * ipu);
        st = RF_ERR_NOMEM;
        goto done;
    }
    st = call_library(r, pl, first, top_k, &some, err);
    for (int32_t i = 0, k = 0; st == RF_OK && i < U; i++)
        if (fate[i] == UNIT_RUNS)
            serve_results_move(&all->out, i, &some.out, k++, top_k);
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
    rf_item_status *items = all->out.items;
    for (int32_t i = 0; i < all->units; i++) {
        int32_t from = fate[i] >= 0 ? fate[i] : i;
        if (fate[i] == UNIT_CACHED || (fate[i] == UNIT_RUNS && !r->cache))
            continue;
        if (items[from].status != RF_OK) {
            items[i] = items[from];
            continue;
        }
        r->value.len = 0;
        r->value.failed = false;
        serve_results_pack(&all->out, from, unit_job[i]->top_k, r->model, &r->value);
        unpack_arg a = {.u = all, .unit = i, .model = r->model};
        if (fate[i] >= 0 && !r->value.failed)
            read_cached(r->value.p, r->value.len, &a);
        if (fate[i] >= 0 && !a.ok) {
            items[i] = (rf_item_status){.status = RF_ERR_NOMEM};
            snprintf(items[i].error.message, sizeof items[i].error.message,
                     "out of memory copying the result of an equal input");
        } else if (fate[i] == UNIT_RUNS && !r->value.failed) {
            serve_cache_put(r->cache, r->owner, r->load, r->keys.p + at[i], at[i + 1] - at[i],
                            r->value.p, r->value.len);
        }
    }
}

/* ==== A batch ==== */

/* The units of jobs[0..n) of one kind: their inputs joined in queue
 * order, each unit's job noted, and the results allocated for them.
 * false when out of memory (free `all` still). */
static bool join_jobs(const serve_runner *r, serve_job **jobs, int n, serve_units *all,
                      serve_job **unit_job)
{
    int32_t ipu = all->kind->inputs_per_unit, epi = all->kind->encodings_per_input;
    for (int j = 0, o = 0; j < n; o += jobs[j]->n, j++) {
        memcpy(all->encs + (size_t)o * epi, jobs[j]->encs, sizeof *all->encs * jobs[j]->n * epi);
        if (jobs[j]->texts) /* NULL for token ids */
            memcpy(all->texts + o, jobs[j]->texts, sizeof *all->texts * jobs[j]->n);
        for (int32_t i = 0; i < jobs[j]->n / ipu; i++)
            unit_job[o / ipu + i] = jobs[j];
    }
    return serve_units_alloc_results(all, r->D, r->N);
}

/* Counts the tokens each job ran: those of its units that ran. */
static void count_ran(const serve_units *all, serve_job **jobs, int n, const int32_t *fate)
{
    int32_t ipu = all->kind->inputs_per_unit;
    for (int j = 0, unit = 0; j < n; j++) {
        jobs[j]->ran_tokens = 0;
        for (int32_t i = 0; i < jobs[j]->n / ipu; i++, unit++)
            for (int32_t k = 0; fate[unit] == UNIT_RUNS && jobs[j]->input_tokens && k < ipu; k++)
                jobs[j]->ran_tokens += jobs[j]->input_tokens[i * ipu + k];
    }
}

/* Hands each job its units' results (fill-mask cut to the job's top_k). */
static void slice_results(serve_units *all, serve_job **jobs, int n)
{
    for (int j = 0, o = 0; j < n; o += jobs[j]->out.units, j++) {
        jobs[j]->status = RF_OK;
        for (int32_t i = 0; i < jobs[j]->out.units; i++)
            serve_results_move(&jobs[j]->out, i, &all->out, o + i, jobs[j]->top_k);
    }
}

/* The units of jobs[0..n): *all, with a job per unit, out of memory when
 * false (free both still). */
static bool batch_units(const serve_runner *r, serve_job **jobs, int n, serve_units *all,
                        serve_job ***unit_job)
{
    int32_t total = 0;
    for (int j = 0; j < n; j++)
        total += jobs[j]->n;
    bool ok = serve_units_alloc(all, jobs[0]->out.kind, total);
    *unit_job = malloc(sizeof **unit_job * (all->units > 0 ? (size_t)all->units : 1));
    return ok && *unit_job && join_jobs(r, jobs, n, all, *unit_job);
}

bool serve_runner_answer_cached(const serve_runner *r, serve_job *job)
{
    if (!r->cache || job->n == 0)
        return false;
    serve_units all;
    serve_bytes key = {0};
    serve_job **unit_job;
    bool hits = batch_units(r, &job, 1, &all, &unit_job);
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
        slice_results(&all, &job, 1);
    }
    serve_units_free(&all);
    serve_bytes_free(&key);
    free(unit_job);
    return hits;
}

double serve_runner_run(serve_runner *r, serve_job **jobs, int n)
{
    int32_t top_k = 1;
    for (int j = 0; j < n; j++)
        if (jobs[j]->top_k > top_k)
            top_k = jobs[j]->top_k;
    serve_units all;
    serve_job **unit_job;
    bool ok = batch_units(r, jobs, n, &all, &unit_job);
    size_t U = all.units > 0 ? (size_t)all.units : 1;
    int32_t *fate = malloc(sizeof *fate * U), *order = malloc(sizeof *order * U);
    size_t *at = malloc(sizeof *at * (U + 1));
    rf_error err = {{0}};
    rf_status st = RF_OK;
    rf_pipeline *pl = NULL;
    rf_pipeline_stats before = {0}, after = {0};
    if (!ok || !fate || !order || !at) {
        snprintf(err.message, sizeof err.message, "out of memory for a batch of %d inputs", all.n);
        st = RF_ERR_NOMEM;
        goto done;
    }
    if ((st = pipeline_for(r, jobs[0]->window, jobs[0]->stride, &pl, &err)) != RF_OK)
        goto done;
    rf_pipeline_get_stats(pl, &before);
    plan_units(r, &all, unit_job, at, fate, order);
    if ((st = run_units(r, pl, jobs[0], top_k, &all, fate, &err)) != RF_OK)
        goto done;
    share_results(r, &all, unit_job, at, fate);
    count_ran(&all, jobs, n, fate);
    slice_results(&all, jobs, n);
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
