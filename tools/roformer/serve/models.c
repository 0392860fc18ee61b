/*
 * models.c — the served models and their generations (see models.h).
 *
 * Reference counts: a generation counts the requests running on it plus
 * one while it is its model's current; weights count the generations on
 * them. The current pointer is swapped and taken under its model's mutex,
 * so a request never takes a generation whose count has reached zero.
 */
#include "serve/models.h"

#include "serve/kinds.h"
#include "serve/results.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One mapping of one file's weights, shared by the names on that file. */
typedef struct {
    atomic_int refs;
    rf_model *model;
    char sha256[65];
    char load_id[72];         /* names this load in cache keys: the file's sha256, or an
                                 id no other load of this process has */
    time_t loaded_at;
} weights;

typedef struct {
    serve_generation pub;     /* first: a serve_generation * is one of these */
    atomic_int refs;
    weights *w;
    serve_runner **runners;   /* [n_runners], one per replica */
    int n_runners;
} generation;

/* One name. */
typedef struct {
    serve_models *ms;
    int index;
    const char *name, *path;  /* the command line's */
    pthread_mutex_t lock;     /* guards current */
    generation *current;
} model_entry;

struct serve_models {
    serve_model_settings settings;
    int n;
    model_entry *models;      /* [n] */
    pthread_mutex_t reload_lock; /* one reload at a time */
};

/* ==== Weights ==== */

static void weights_release(weights *w)
{
    if (w && atomic_fetch_sub(&w->refs, 1) == 1) {
        rf_model_free(w->model);
        free(w);
    }
}

/* Loads `path` (its sha256 first, so that it is the checksum of what was
 * loaded unless the file changes during the load). */
static weights *weights_load(const char *path, rf_error *err)
{
    weights *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err->message, sizeof err->message, "out of memory");
        return NULL;
    }
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
        rf_sha256_file(path, w->sha256, err) != RF_OK) {
        free(w);
        return NULL;
    }
    if (rf_model_load(path, &w->model, err) != RF_OK) {
        free(w);
        return NULL;
    }
    atomic_init(&w->refs, 1);
    w->loaded_at = time(NULL);
    static atomic_int loads_without_sha;
    if (w->sha256[0])
        snprintf(w->load_id, sizeof w->load_id, "%s", w->sha256);
    else
        snprintf(w->load_id, sizeof w->load_id, "load %d",
                 atomic_fetch_add(&loads_without_sha, 1) + 1);
    return w;
}

/* ==== Generations ==== */

static void generation_free(generation *g)
{
    if (!g)
        return;
    serve_batcher_stop(g->pub.batcher);
    for (int r = 0; r < g->n_runners; r++)
        serve_runner_free(g->runners[r]);
    free(g->runners);
    weights_release(g->w);
    free(g);
}

static void *free_elsewhere(void *arg)
{
    generation_free(arg);
    return NULL;
}

void serve_generation_release(serve_generation *pub)
{
    generation *g = (generation *)pub;
    if (!g || atomic_fetch_sub(&g->refs, 1) != 1)
        return;
    /* The last reference can go on one of g's own batcher threads (a request
       whose connection closed while it was queued is freed there), which
       cannot join itself: another thread frees g. Should no thread start,
       g is left allocated rather than freed under a running thread. */
    if (g->pub.batcher && serve_batcher_is_own_thread(g->pub.batcher)) {
        pthread_t t;
        if (pthread_create(&t, NULL, free_elsewhere, g) == 0)
            pthread_detach(t);
        return;
    }
    generation_free(g);
}

static void on_batch(void *arg, int jobs, int32_t inputs, int32_t tokens, double seconds)
{
    model_entry *e = arg;
    serve_metrics_batch(e->ms->settings.metrics, e->index, jobs, inputs, tokens, seconds);
}

/* Runs one short input so that the context exists (and a compute type the
 * CPU lacks fails here, not on the first request). */
static int warm_up(serve_runner *runner, const rf_model *model, rf_error *err)
{
    rf_text text = {.text = "warm up", .text_len = 7};
    rf_encoding enc = {0};
    if (rf_tokenize(model, text.text, text.text_len, NULL, 0, 0, &enc, err) != RF_OK)
        return -1;
    serve_job job = {.kind = SERVE_KIND_EMBED, .texts = &text, .encs = &enc, .n = 1};
    const rf_hparams *hp = rf_model_hparams(model);
    if (!serve_results_alloc(&job.out, serve_kind_ops_of(job.kind), 1, &enc, hp->hidden_size,
                             hp->num_labels > 0 ? hp->num_labels : 1)) {
        serve_results_free(&job.out);
        rf_encoding_free(&enc);
        snprintf(err->message, sizeof err->message, "out of memory");
        return -1;
    }
    serve_job *batch = &job;
    serve_runner_run(runner, &batch, 1);
    serve_results_free(&job.out);
    rf_encoding_free(&enc);
    if (job.status != RF_OK) {
        *err = job.error;
        return -1;
    }
    return 0;
}

/* A generation of model e on weights w (it takes a reference to w): the
 * limits checked against the model, a warmed-up runner per replica, the
 * batcher. NULL with err set when the model cannot be served so. */
static generation *generation_start(model_entry *e, weights *w, int number, rf_error *err,
                                    bool *usage)
{
    *usage = true; /* until the settings are found to fit the model */
    const serve_model_settings *set = &e->ms->settings;
    const rf_model *model = w->model;
    int32_t limit = rf_context_length_limit(model, &set->context);
    if (set->max_input_length > limit) {
        snprintf(err->message, sizeof err->message,
                 "--max-input-length %d is over the model's maximum of %d%s",
                 set->max_input_length, limit,
                 limit == rf_model_hparams(model)->max_position
                     ? " (--extend-positions allows more)"
                     : "");
        return NULL;
    }
    rf_pooling pooling = set->pooling_given ? set->pooling : rf_model_default_pooling(model);
    rf_error perr;
    if (rf_model_check_pooling(model, pooling, &perr) != RF_OK) {
        snprintf(err->message, sizeof err->message, "--pooling %s: %.400s", rf_pooling_name(pooling),
                 perr.message);
        return NULL;
    }
    *usage = false;
    generation *g = calloc(1, sizeof *g);
    serve_runner **runners = calloc((size_t)set->replicas, sizeof *runners);
    if (!g || !runners) {
        free(g);
        free(runners);
        snprintf(err->message, sizeof err->message, "out of memory");
        return NULL;
    }
    atomic_fetch_add(&w->refs, 1);
    *g = (generation){.w = w, .runners = runners};
    g->pub = (serve_generation){
        .model = model,
        .max_input_length = set->max_input_length ? set->max_input_length
                                                  : rf_model_max_input_length(model),
        .pooling = pooling, .sha256 = w->sha256, .loaded_at = w->loaded_at, .number = number};
    atomic_init(&g->refs, 1);

    /* The batch's inputs run sorted by length in forward passes of the
       pipeline's default 8 sequences, which pad less than larger ones
       (docs/performance.md, "roformer serve: sequences per forward pass"). */
    rf_pipeline_params pp = rf_pipeline_default_params();
    pp.context = set->context;
    pp.max_length = g->pub.max_input_length;
    for (; g->n_runners < set->replicas; g->n_runners++) {
        serve_runner **r = &runners[g->n_runners];
        if (serve_runner_create(model, &pp, pooling, r, err) != RF_OK)
            goto fail;
        if (warm_up(*r, model, err) != 0) {
            serve_runner_free(*r);
            goto fail;
        }
        /* after the warm-up, which is no request */
        if (set->cache)
            serve_runner_set_cache(*r, set->cache, e->index, number, w->load_id);
    }
    if (serve_batcher_start(runners, g->n_runners, set->max_batch_tokens,
                            set->max_batch_requests, on_batch, e, &g->pub.batcher) != 0) {
        snprintf(err->message, sizeof err->message, "cannot start the batcher");
        goto fail;
    }
    serve_batcher_set_queue_timeout(g->pub.batcher, set->queue_timeout);
    g->pub.cache_runner = set->cache ? runners[0] : NULL;
    return g;
fail:
    generation_free(g);
    return NULL;
}

/* ==== The models ==== */

/* Whether two paths name one file (the same device and inode), else the
 * same string. */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return strcmp(a, b) == 0;
}

/* Loads the file of every model, once per file: loaded[i] gets a
 * reference for each model on it (the caller releases them). Where a file
 * fails, its models' errs[i] say why and loaded[i] stays NULL. */
static int load_files(serve_models *ms, weights **loaded, rf_error *errs)
{
    bool *tried = calloc((size_t)ms->n, sizeof *tried);
    if (!tried)
        return -1;
    for (int i = 0; i < ms->n; i++) {
        if (tried[i])
            continue;
        rf_error err;
        weights *w = weights_load(ms->models[i].path, &err);
        for (int j = i; j < ms->n; j++) {
            if (tried[j] || !same_file(ms->models[i].path, ms->models[j].path))
                continue;
            tried[j] = true;
            if (!w) {
                errs[j] = err;
                continue;
            }
            if (j != i)
                atomic_fetch_add(&w->refs, 1);
            loaded[j] = w;
        }
    }
    free(tried);
    return 0;
}

int serve_models_load(const char *const *names, const char *const *paths, int n,
                      const serve_model_settings *settings, serve_models **out)
{
    serve_models *ms = calloc(1, sizeof *ms);
    model_entry *models = calloc((size_t)n, sizeof *models);
    weights **loaded = calloc((size_t)n, sizeof *loaded);
    rf_error *errs = calloc((size_t)n, sizeof *errs);
    int rc = -1;
    if (!ms || !models || !loaded || !errs) {
        fprintf(stderr, "roformer: error: out of memory\n");
        free(ms);
        free(models);
        goto done;
    }
    *ms = (serve_models){.settings = *settings, .n = n, .models = models};
    pthread_mutex_init(&ms->reload_lock, NULL);
    for (int i = 0; i < n; i++) {
        models[i] = (model_entry){.ms = ms, .index = i, .name = names[i], .path = paths[i]};
        pthread_mutex_init(&models[i].lock, NULL);
    }
    if (load_files(ms, loaded, errs) != 0) {
        fprintf(stderr, "roformer: error: out of memory\n");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        rf_error err = errs[i];
        bool usage = false;
        if (loaded[i])
            models[i].current = generation_start(&models[i], loaded[i], 1, &err, &usage);
        if (usage) { /* as the command line's other mistakes (cli.h) */
            fprintf(stderr, "roformer serve: %s%s%s\nTry 'roformer serve --help'.\n",
                    n > 1 ? names[i] : "", n > 1 ? ": " : "", err.message);
            rc = -2;
            goto done;
        }
        if (!models[i].current) {
            fprintf(stderr, "roformer: error: %s\n", err.message);
            goto done;
        }
    }
    *out = ms;
    ms = NULL;
    rc = 0;
done:
    for (int i = 0; loaded && i < n; i++)
        weights_release(loaded[i]);
    free(loaded);
    free(errs);
    serve_models_free(ms);
    return rc;
}

void serve_models_free(serve_models *ms)
{
    if (!ms)
        return;
    for (int i = 0; i < ms->n; i++) {
        /* a model refused at start-up has no generation yet */
        if (ms->models[i].current)
            serve_generation_release(&ms->models[i].current->pub);
        pthread_mutex_destroy(&ms->models[i].lock);
    }
    pthread_mutex_destroy(&ms->reload_lock);
    free(ms->models);
    free(ms);
}

int serve_models_count(const serve_models *ms) { return ms->n; }

const char *serve_models_name(const serve_models *ms, int i) { return ms->models[i].name; }

int serve_models_find(const serve_models *ms, const char *name, size_t len)
{
    for (int i = 0; i < ms->n; i++)
        if (strlen(ms->models[i].name) == len && !memcmp(ms->models[i].name, name, len))
            return i;
    return -1;
}

void serve_models_list(const serve_models *ms, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < ms->n && at < n; i++) {
        int w = snprintf(buf + at, n - at, "%s%s", i ? ", " : "", ms->models[i].name);
        at += w > 0 ? (size_t)w : 0;
    }
}

serve_generation *serve_models_acquire(serve_models *ms, int i)
{
    model_entry *e = &ms->models[i];
    pthread_mutex_lock(&e->lock);
    generation *g = e->current;
    atomic_fetch_add(&g->refs, 1);
    pthread_mutex_unlock(&e->lock);
    return &g->pub;
}

int serve_models_reload(serve_models *ms, serve_reload_result *results)
{
    pthread_mutex_lock(&ms->reload_lock);
    weights **loaded = calloc((size_t)ms->n, sizeof *loaded);
    rf_error *errs = calloc((size_t)ms->n, sizeof *errs);
    int ok = 0;
    if (!loaded || !errs || load_files(ms, loaded, errs) != 0) {
        for (int i = 0; i < ms->n; i++)
            results[i] = (serve_reload_result){.ok = false, .message = "out of memory"};
        goto done;
    }
    for (int i = 0; i < ms->n; i++) {
        model_entry *e = &ms->models[i];
        rf_error err = errs[i];
        generation *old = e->current; /* only reloads change it, and they take turns */
        bool usage;
        generation *g =
            loaded[i] ? generation_start(e, loaded[i], old->pub.number + 1, &err, &usage) : NULL;
        serve_reload_result *res = &results[i];
        if (!g) {
            *res = (serve_reload_result){.ok = false};
            snprintf(res->message, sizeof res->message,
                     "%s: not reloaded, still serving load %d (sha256 %.12s): %.200s", e->name,
                     old->pub.number, old->pub.sha256[0] ? old->pub.sha256 : "none",
                     err.message);
        } else {
            pthread_mutex_lock(&e->lock);
            e->current = g;
            pthread_mutex_unlock(&e->lock);
            /* requests already on the old one keep it until they finish; what
               they compute is not kept (older than this drop) */
            if (ms->settings.cache)
                serve_cache_drop_owner(ms->settings.cache, i, g->pub.number);
            serve_generation_release(&old->pub);
            *res = (serve_reload_result){.ok = true};
            snprintf(res->message, sizeof res->message, "%s: reloaded %.200s (load %d, sha256 %.12s)",
                     e->name, e->path, g->pub.number, g->pub.sha256[0] ? g->pub.sha256 : "none");
            ok++;
        }
        fprintf(stderr, "roformer serve: reload: %s\n", res->message);
    }
done:
    for (int i = 0; loaded && i < ms->n; i++)
        weights_release(loaded[i]);
    free(loaded);
    free(errs);
    pthread_mutex_unlock(&ms->reload_lock);
    return ok;
}
