/*
 * metrics.c — counters and fixed-bucket histograms behind one mutex (see
 * metrics.h); rendering takes a snapshot under the lock and prints it.
 * Metric names follow Prometheus' conventions (_total, _seconds, le=).
 */
#include "serve/metrics.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const int statuses[] = {200, 204, 400, 401, 404, 405, 413, 422, 429, 500, 503};
enum { N_STATUS = sizeof statuses / sizeof statuses[0] };

static const double latency_le[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                    0.25,  0.5,    1,     2.5,  5,     10};
static const double count_le[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
static const double tokens_le[] = {16, 64, 256, 1024, 4096, 16384, 65536};
enum { N_LATENCY = 13, N_COUNT = 11, N_TOKENS = 7 };

typedef struct {
    int64_t bucket[16]; /* counts per upper bound, not cumulative */
    int64_t count;
    double sum;
} histogram;

/* TEI's "method" label: one input or a list; its "err" label: the error
 * type, lower-cased (the last is every other type). */
static const char *const tei_methods[] = {"single", "batch"};
static const char *const tei_errors[] = {"validation", "tokenizer", "empty",   "overloaded",
                                         "unhealthy",  "backend",   "other"};
enum { N_TEI_ERRORS = 7 };

typedef struct {
    int64_t count[2], success[2], failure[N_TEI_ERRORS];
    histogram duration, tokenization, queue, inference;
} tei_requests;

/* What is counted for one model. */
typedef struct {
    int64_t *requests;   /* [n_routes][N_STATUS] */
    histogram *latency;  /* [n_routes] */
    histogram batch_jobs, batch_inputs, batch_tokens, forward;
    tei_requests tei;
    int64_t dropped[SERVE_DROP_COUNT]; /* requests taken out of the queue unrun */
} model_metrics;

static const char *const drop_reasons[SERVE_DROP_COUNT] = {"client_gone", "queue_timeout"};

struct serve_metrics {
    pthread_mutex_t lock;
    const char *const *routes;
    int n_routes;
    const char *const *models;
    int n_models;
    model_metrics *per_model; /* [n_models] */
};

serve_metrics *serve_metrics_create(const char *const *routes, int n_routes,
                                    const char *const *models, int n_models)
{
    serve_metrics *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    *m = (serve_metrics){.routes = routes, .n_routes = n_routes, .models = models,
                         .n_models = n_models};
    pthread_mutex_init(&m->lock, NULL);
    m->per_model = calloc((size_t)n_models, sizeof *m->per_model);
    for (int k = 0; m->per_model && k < n_models; k++) {
        model_metrics *mm = &m->per_model[k];
        mm->requests = calloc((size_t)n_routes * N_STATUS, sizeof *mm->requests);
        mm->latency = calloc((size_t)n_routes, sizeof *mm->latency);
        if (!mm->requests || !mm->latency) {
            serve_metrics_free(m);
            return NULL;
        }
    }
    if (!m->per_model) {
        serve_metrics_free(m);
        return NULL;
    }
    return m;
}

void serve_metrics_free(serve_metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->lock);
    for (int k = 0; m->per_model && k < m->n_models; k++) {
        free(m->per_model[k].requests);
        free(m->per_model[k].latency);
    }
    free(m->per_model);
    free(m);
}

/* A model index from a caller, kept in range (a request refused before its
 * model was known counts for the first). */
static model_metrics *model_at(serve_metrics *m, int model)
{
    return &m->per_model[model >= 0 && model < m->n_models ? model : 0];
}

static void observe(histogram *h, const double *le, int n, double v)
{
    int b = 0;
    while (b < n && v > le[b])
        b++;
    h->bucket[b]++; /* b == n: only in +Inf */
    h->count++;
    h->sum += v;
}

void serve_metrics_request(serve_metrics *m, int model, int route, int status, double seconds)
{
    if (route < 0 || route >= m->n_routes)
        return;
    int s = 0;
    while (s < N_STATUS && statuses[s] != status)
        s++;
    pthread_mutex_lock(&m->lock);
    model_metrics *mm = model_at(m, model);
    if (s < N_STATUS)
        mm->requests[(size_t)route * N_STATUS + s]++;
    observe(&mm->latency[route], latency_le, N_LATENCY, seconds);
    pthread_mutex_unlock(&m->lock);
}

void serve_metrics_tei_request(serve_metrics *m, int status, const serve_log_entry *log,
                               double seconds)
{
    int e = 0;
    while (e < N_TEI_ERRORS - 1 &&
           !(log->error_type && !strcasecmp(log->error_type, tei_errors[e])))
        e++;
    pthread_mutex_lock(&m->lock);
    tei_requests *t = &model_at(m, log->model)->tei;
    t->count[log->batch]++;
    if (status == 200) {
        t->success[log->batch]++;
        observe(&t->duration, latency_le, N_LATENCY, seconds);
        observe(&t->tokenization, latency_le, N_LATENCY, log->tokenize_seconds);
        observe(&t->queue, latency_le, N_LATENCY, log->queue_seconds);
        observe(&t->inference, latency_le, N_LATENCY, log->inference_seconds);
    } else {
        t->failure[e]++;
    }
    pthread_mutex_unlock(&m->lock);
}

void serve_metrics_batch(serve_metrics *m, int model, int jobs, int32_t inputs, int32_t tokens,
                         double forward_seconds)
{
    pthread_mutex_lock(&m->lock);
    model_metrics *mm = model_at(m, model);
    observe(&mm->batch_jobs, count_le, N_COUNT, jobs);
    observe(&mm->batch_inputs, count_le, N_COUNT, inputs);
    observe(&mm->batch_tokens, tokens_le, N_TOKENS, tokens);
    observe(&mm->forward, latency_le, N_LATENCY, forward_seconds);
    pthread_mutex_unlock(&m->lock);
}

void serve_metrics_dropped(serve_metrics *m, int model, serve_drop_reason reason)
{
    pthread_mutex_lock(&m->lock);
    model_at(m, model)->dropped[reason]++;
    pthread_mutex_unlock(&m->lock);
}

/* One histogram's _bucket/_sum/_count lines; `labels` is "" or 'route="x",'. */
static void print_histogram(FILE *f, const char *name, const char *labels, const histogram *h,
                            const double *le, int n)
{
    int64_t cumulative = 0;
    for (int b = 0; b < n; b++) {
        cumulative += h->bucket[b];
        fprintf(f, "%s_bucket{%sle=\"%g\"} %lld\n", name, labels, le[b], (long long)cumulative);
    }
    fprintf(f, "%s_bucket{%sle=\"+Inf\"} %lld\n", name, labels, (long long)h->count);
    char plain[128] = "";
    if (labels[0]) /* the labels without their trailing comma */
        snprintf(plain, sizeof plain, "{%.*s}", (int)strlen(labels) - 1, labels);
    fprintf(f, "%s_sum%s %.9g\n%s_count%s %lld\n", name, plain, h->sum, name, plain,
            (long long)h->count);
}

static void print_header(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Model k's label: "" when the server has one model (the series as they
 * were before there could be several), else 'model="NAME",'. */
static void model_label(const serve_metrics *m, int k, char *buf, size_t n)
{
    if (m->n_models == 1)
        buf[0] = '\0';
    else
        snprintf(buf, n, "model=\"%s\",", m->models[k]);
}

/* One sample per model of a value without other labels: `name v` with one
 * model, `name{model="NAME"} v` with several. */
static void print_per_model(FILE *f, const serve_metrics *m, const char *name, const int64_t *v)
{
    for (int k = 0; k < m->n_models; k++) {
        if (m->n_models == 1)
            fprintf(f, "%s %lld\n", name, (long long)v[k]);
        else
            fprintf(f, "%s{model=\"%s\"} %lld\n", name, m->models[k], (long long)v[k]);
    }
}

/* A histogram with no label but the model's, with its header; `at` is
 * its offset in model_metrics. */
static void print_model_histogram(FILE *f, const serve_metrics *m, const char *name,
                                  const char *help, size_t at, const double *le, int n)
{
    print_header(f, name, "histogram", help);
    for (int k = 0; k < m->n_models; k++) {
        char labels[160];
        model_label(m, k, labels, sizeof labels);
        print_histogram(f, name, labels,
                        (const histogram *)((const char *)&m->per_model[k] + at), le, n);
    }
}

/* The batches as the batcher formed them, under roformer's names or TEI's
 * (names and helps: inputs, real tokens, forward-pass seconds). */
static void print_batch_histograms(FILE *f, const serve_metrics *m, const char *const names[3],
                                   const char *const helps[3])
{
    print_model_histogram(f, m, names[0], helps[0], offsetof(model_metrics, batch_inputs),
                          count_le, N_COUNT);
    print_model_histogram(f, m, names[1], helps[1], offsetof(model_metrics, batch_tokens),
                          tokens_le, N_TOKENS);
    print_model_histogram(f, m, names[2], helps[2], offsetof(model_metrics, forward), latency_le,
                          N_LATENCY);
}

/* A TEI counter by one label (`key`, its values `values`), per model;
 * `of` picks the counts of model k; zeros left out when `skip_zero`. */
static void print_tei_counter(FILE *f, const serve_metrics *m, const char *name, const char *help,
                              const char *key, const char *const *values, int n_values,
                              const int64_t *(*of)(const tei_requests *), bool skip_zero)
{
    print_header(f, name, "counter", help);
    for (int k = 0; k < m->n_models; k++) {
        char labels[160];
        model_label(m, k, labels, sizeof labels);
        const int64_t *counts = of(&m->per_model[k].tei);
        for (int v = 0; v < n_values; v++)
            if (!skip_zero || counts[v])
                fprintf(f, "%s{%s%s=\"%s\"} %lld\n", name, labels, key, values[v],
                        (long long)counts[v]);
    }
}

static const int64_t *tei_count(const tei_requests *t) { return t->count; }
static const int64_t *tei_success(const tei_requests *t) { return t->success; }
static const int64_t *tei_failure(const tei_requests *t) { return t->failure; }

/* TEI's names: requests by method, failures by error, times in seconds,
 * the queue, and the batches as the batcher formed them. */
static void print_tei(FILE *f, const serve_metrics *m, const int64_t *queued)
{
    print_tei_counter(f, m, "te_request_count", "engine requests received, by method", "method",
                      tei_methods, 2, tei_count, false);
    print_tei_counter(f, m, "te_request_success", "engine requests answered 200, by method",
                      "method", tei_methods, 2, tei_success, false);
    print_tei_counter(f, m, "te_request_failure", "engine requests refused or failed, by error",
                      "err", tei_errors, N_TEI_ERRORS, tei_failure, true);
    static const char *const names[] = {"te_request_duration", "te_request_tokenization_duration",
                                        "te_request_queue_duration",
                                        "te_request_inference_duration"};
    static const char *const helps[] = {"seconds from headers to response of a successful request",
                                        "seconds counting its tokens", "seconds in the queue",
                                        "seconds of its batch's forward passes"};
    const size_t at[] = {offsetof(model_metrics, tei.duration),
                         offsetof(model_metrics, tei.tokenization),
                         offsetof(model_metrics, tei.queue), offsetof(model_metrics, tei.inference)};
    for (int k = 0; k < 4; k++)
        print_model_histogram(f, m, names[k], helps[k], at[k], latency_le, N_LATENCY);
    print_header(f, "te_queue_size", "gauge", "jobs waiting for the batcher");
    print_per_model(f, m, "te_queue_size", queued);
    static const char *const batch_names[] = {"te_batch_next_size", "te_batch_next_tokens",
                                              "te_batch_inference_duration"};
    static const char *const batch_helps[] = {"inputs per batch", "real tokens per batch",
                                              "seconds of forward passes per batch"};
    print_batch_histograms(f, m, batch_names, batch_helps);
}

/* The cache's series (--cache-mb), per model. */
static void print_cache(FILE *f, const serve_metrics *m, const serve_gauges *g)
{
    static const struct {
        const char *name, *type, *help;
        size_t at;
    } series[] = {
        {"roformer_cache_hits_total", "counter", "inputs answered from the cache",
         offsetof(serve_cache_stats, hits)},
        {"roformer_cache_misses_total", "counter", "inputs looked up and not found in the cache",
         offsetof(serve_cache_stats, misses)},
        {"roformer_cache_evictions_total", "counter",
         "results dropped, least recently used first, to stay within --cache-mb",
         offsetof(serve_cache_stats, evictions)},
        {"roformer_cache_bytes", "gauge",
         "bytes the cache holds for the model: keys, values and each entry's bookkeeping",
         offsetof(serve_cache_stats, bytes)},
    };
    int64_t v[64];
    for (size_t s = 0; s < sizeof series / sizeof series[0]; s++) {
        print_header(f, series[s].name, series[s].type, series[s].help);
        for (int k = 0; k < m->n_models && k < 64; k++)
            v[k] = *(const int64_t *)((const char *)&g->models[k].cache + series[s].at);
        print_per_model(f, m, series[s].name, v);
    }
}

char *serve_metrics_render(serve_metrics *m, const serve_gauges *g)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    int64_t *queued = calloc((size_t)m->n_models * 2, sizeof *queued);
    if (!f || !queued) {
        if (f)
            fclose(f);
        free(text);
        free(queued);
        return NULL;
    }
    int64_t *running = queued + m->n_models;
    for (int k = 0; k < m->n_models; k++) {
        queued[k] = g->models[k].queued;
        running[k] = g->models[k].running;
    }
    pthread_mutex_lock(&m->lock);
    print_header(f, "roformer_requests_total", "counter", "HTTP requests by route and status");
    for (int k = 0; k < m->n_models; k++) {
        char labels[160];
        model_label(m, k, labels, sizeof labels);
        const int64_t *requests = m->per_model[k].requests;
        for (int r = 0; r < m->n_routes; r++)
            for (int s = 0; s < N_STATUS; s++)
                if (requests[(size_t)r * N_STATUS + s])
                    fprintf(f, "roformer_requests_total{%sroute=\"%s\",status=\"%d\"} %lld\n",
                            labels, m->routes[r], statuses[s],
                            (long long)requests[(size_t)r * N_STATUS + s]);
    }
    print_header(f, "roformer_request_duration_seconds", "histogram",
                 "time from the request's headers to its response, by route");
    for (int k = 0; k < m->n_models; k++) {
        for (int r = 0; r < m->n_routes; r++) {
            const histogram *h = &m->per_model[k].latency[r];
            if (!h->count)
                continue;
            char model[160], labels[320];
            model_label(m, k, model, sizeof model);
            snprintf(labels, sizeof labels, "%sroute=\"%s\",", model, m->routes[r]);
            print_histogram(f, "roformer_request_duration_seconds", labels, h, latency_le,
                            N_LATENCY);
        }
    }
    print_header(f, "roformer_requests_dropped_total", "counter",
                 "requests taken out of the queue without running: their client had hung up "
                 "(client_gone) or they waited longer than --queue-timeout (queue_timeout)");
    for (int k = 0; k < m->n_models; k++) {
        char labels[160];
        model_label(m, k, labels, sizeof labels);
        for (int d = 0; d < SERVE_DROP_COUNT; d++)
            fprintf(f, "roformer_requests_dropped_total{%sreason=\"%s\"} %lld\n", labels,
                    drop_reasons[d], (long long)m->per_model[k].dropped[d]);
    }
    print_header(f, "roformer_queue_size", "gauge", "jobs waiting for the batcher");
    print_per_model(f, m, "roformer_queue_size", queued);
    print_header(f, "roformer_requests_in_flight", "gauge",
                 "requests admitted and not yet answered (limit: --max-concurrent-requests)");
    fprintf(f, "roformer_requests_in_flight %d\n", g->in_flight);
    print_header(f, "roformer_batch_running_jobs", "gauge",
                 "requests in the batch the engine is running now (0: idle)");
    print_per_model(f, m, "roformer_batch_running_jobs", running);
    print_header(f, "roformer_draining", "gauge",
                 "1 once SIGTERM or SIGINT has closed the listener and the requests begun "
                 "are being answered, else 0");
    fprintf(f, "roformer_draining %d\n", g->draining ? 1 : 0);
    print_model_histogram(f, m, "roformer_batch_jobs", "requests run together in one batch",
                          offsetof(model_metrics, batch_jobs), count_le, N_COUNT);
    static const char *const batch_names[] = {"roformer_batch_inputs", "roformer_batch_tokens",
                                              "roformer_inference_duration_seconds"};
    static const char *const batch_helps[] = {"inputs (sequences) per batch",
                                              "real tokens per batch",
                                              "forward-pass time per batch"};
    print_batch_histograms(f, m, batch_names, batch_helps);
    print_cache(f, m, g);
    print_tei(f, m, queued);
    pthread_mutex_unlock(&m->lock);
    free(queued);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
