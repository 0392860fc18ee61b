/*
 * metrics.c — counters and fixed-bucket histograms behind one mutex (see
 * metrics.h); rendering takes a snapshot under the lock and prints it.
 * Metric names follow Prometheus' conventions (_total, _seconds, le=).
 */
#include "serve/metrics.h"

#include <pthread.h>
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

struct serve_metrics {
    pthread_mutex_t lock;
    const char *const *routes;
    int n_routes;
    int64_t *requests;   /* [n_routes][N_STATUS] */
    histogram *latency;  /* [n_routes] */
    histogram batch_jobs, batch_inputs, batch_tokens, forward;
    tei_requests tei;
    int64_t dropped[SERVE_DROP_COUNT]; /* requests taken out of the queue unrun */
};

static const char *const drop_reasons[SERVE_DROP_COUNT] = {"client_gone", "queue_timeout"};

serve_metrics *serve_metrics_create(const char *const *routes, int n_routes)
{
    serve_metrics *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->routes = routes;
    m->n_routes = n_routes;
    m->requests = calloc((size_t)n_routes * N_STATUS, sizeof *m->requests);
    m->latency = calloc((size_t)n_routes, sizeof *m->latency);
    if (!m->requests || !m->latency) {
        free(m->requests);
        free(m->latency);
        free(m);
        return NULL;
    }
    pthread_mutex_init(&m->lock, NULL);
    return m;
}

void serve_metrics_free(serve_metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->lock);
    free(m->requests);
    free(m->latency);
    free(m);
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

void serve_metrics_request(serve_metrics *m, int route, int status, double seconds)
{
    if (route < 0 || route >= m->n_routes)
        return;
    int s = 0;
    while (s < N_STATUS && statuses[s] != status)
        s++;
    pthread_mutex_lock(&m->lock);
    if (s < N_STATUS)
        m->requests[(size_t)route * N_STATUS + s]++;
    observe(&m->latency[route], latency_le, N_LATENCY, seconds);
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
    tei_requests *t = &m->tei;
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

void serve_metrics_batch(serve_metrics *m, int jobs, int32_t inputs, int32_t tokens,
                         double forward_seconds)
{
    pthread_mutex_lock(&m->lock);
    observe(&m->batch_jobs, count_le, N_COUNT, jobs);
    observe(&m->batch_inputs, count_le, N_COUNT, inputs);
    observe(&m->batch_tokens, tokens_le, N_TOKENS, tokens);
    observe(&m->forward, latency_le, N_LATENCY, forward_seconds);
    pthread_mutex_unlock(&m->lock);
}

void serve_metrics_dropped(serve_metrics *m, serve_drop_reason reason)
{
    pthread_mutex_lock(&m->lock);
    m->dropped[reason]++;
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

/* A histogram without labels, with its header. */
static void print_plain_histogram(FILE *f, const char *name, const char *help, const histogram *h,
                                  const double *le, int n)
{
    print_header(f, name, "histogram", help);
    print_histogram(f, name, "", h, le, n);
}

/* The batches as the batcher formed them, under roformer's names or TEI's
 * (names and helps: inputs, real tokens, forward-pass seconds). */
static void print_batch_histograms(FILE *f, const serve_metrics *m, const char *const names[3],
                                   const char *const helps[3])
{
    print_plain_histogram(f, names[0], helps[0], &m->batch_inputs, count_le, N_COUNT);
    print_plain_histogram(f, names[1], helps[1], &m->batch_tokens, tokens_le, N_TOKENS);
    print_plain_histogram(f, names[2], helps[2], &m->forward, latency_le, N_LATENCY);
}

/* TEI's names: requests by method, failures by error, times in seconds,
 * the queue, and the batches as the batcher formed them. */
static void print_tei(FILE *f, const serve_metrics *m, int queued)
{
    const tei_requests *t = &m->tei;
    print_header(f, "te_request_count", "counter", "engine requests received, by method");
    for (int k = 0; k < 2; k++)
        fprintf(f, "te_request_count{method=\"%s\"} %lld\n", tei_methods[k],
                (long long)t->count[k]);
    print_header(f, "te_request_success", "counter", "engine requests answered 200, by method");
    for (int k = 0; k < 2; k++)
        fprintf(f, "te_request_success{method=\"%s\"} %lld\n", tei_methods[k],
                (long long)t->success[k]);
    print_header(f, "te_request_failure", "counter", "engine requests refused or failed, by error");
    for (int e = 0; e < N_TEI_ERRORS; e++)
        if (t->failure[e])
            fprintf(f, "te_request_failure{err=\"%s\"} %lld\n", tei_errors[e],
                    (long long)t->failure[e]);
    static const char *const names[] = {"te_request_duration", "te_request_tokenization_duration",
                                        "te_request_queue_duration",
                                        "te_request_inference_duration"};
    static const char *const helps[] = {"seconds from headers to response of a successful request",
                                        "seconds counting its tokens", "seconds in the queue",
                                        "seconds of its batch's forward passes"};
    const histogram *hs[] = {&t->duration, &t->tokenization, &t->queue, &t->inference};
    for (int k = 0; k < 4; k++)
        print_plain_histogram(f, names[k], helps[k], hs[k], latency_le, N_LATENCY);
    print_header(f, "te_queue_size", "gauge", "jobs waiting for the batcher");
    fprintf(f, "te_queue_size %d\n", queued);
    static const char *const batch_names[] = {"te_batch_next_size", "te_batch_next_tokens",
                                              "te_batch_inference_duration"};
    static const char *const batch_helps[] = {"inputs per batch", "real tokens per batch",
                                              "seconds of forward passes per batch"};
    print_batch_histograms(f, m, batch_names, batch_helps);
}

char *serve_metrics_render(serve_metrics *m, const serve_gauges *g)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return NULL;
    pthread_mutex_lock(&m->lock);
    print_header(f, "roformer_requests_total", "counter", "HTTP requests by route and status");
    for (int r = 0; r < m->n_routes; r++)
        for (int s = 0; s < N_STATUS; s++)
            if (m->requests[(size_t)r * N_STATUS + s])
                fprintf(f, "roformer_requests_total{route=\"%s\",status=\"%d\"} %lld\n",
                        m->routes[r], statuses[s],
                        (long long)m->requests[(size_t)r * N_STATUS + s]);
    print_header(f, "roformer_request_duration_seconds", "histogram",
                 "time from the request's headers to its response, by route");
    for (int r = 0; r < m->n_routes; r++) {
        if (!m->latency[r].count)
            continue;
        char labels[96];
        snprintf(labels, sizeof labels, "route=\"%s\",", m->routes[r]);
        print_histogram(f, "roformer_request_duration_seconds", labels, &m->latency[r],
                        latency_le, N_LATENCY);
    }
    print_header(f, "roformer_requests_dropped_total", "counter",
                 "requests taken out of the queue without running: their client had hung up "
                 "(client_gone) or they waited longer than --queue-timeout (queue_timeout)");
    for (int d = 0; d < SERVE_DROP_COUNT; d++)
        fprintf(f, "roformer_requests_dropped_total{reason=\"%s\"} %lld\n", drop_reasons[d],
                (long long)m->dropped[d]);
    print_header(f, "roformer_queue_size", "gauge", "jobs waiting for the batcher");
    fprintf(f, "roformer_queue_size %d\n", g->queued);
    print_header(f, "roformer_requests_in_flight", "gauge",
                 "requests admitted and not yet answered (limit: --max-concurrent-requests)");
    fprintf(f, "roformer_requests_in_flight %d\n", g->in_flight);
    print_header(f, "roformer_batch_running_jobs", "gauge",
                 "requests in the batch the engine is running now (0: idle)");
    fprintf(f, "roformer_batch_running_jobs %d\n", g->running);
    print_header(f, "roformer_draining", "gauge",
                 "1 once SIGTERM or SIGINT has closed the listener and the requests begun "
                 "are being answered, else 0");
    fprintf(f, "roformer_draining %d\n", g->draining ? 1 : 0);
    print_plain_histogram(f, "roformer_batch_jobs", "requests run together in one batch",
                          &m->batch_jobs, count_le, N_COUNT);
    static const char *const batch_names[] = {"roformer_batch_inputs", "roformer_batch_tokens",
                                              "roformer_inference_duration_seconds"};
    static const char *const batch_helps[] = {"inputs (sequences) per batch",
                                              "real tokens per batch",
                                              "forward-pass time per batch"};
    print_batch_histograms(f, m, batch_names, batch_helps);
    print_tei(f, m, g->queued);
    pthread_mutex_unlock(&m->lock);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
