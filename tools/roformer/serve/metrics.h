/*
 * metrics.h — the server's counters and histograms, written out in
 * Prometheus' text format for GET /metrics: requests by route and status,
 * request latency by route, batches (jobs, inputs and real tokens per
 * batch), forward-pass time per batch, the queue, requests dropped unrun. Beside them, the same
 * facts under text-embeddings-inference's names and labels (te_*), for the
 * dashboards made for TEI. Thread-safe.
 *
 * The gauges are read from the parts that own them when /metrics is asked
 * (serve_gauges); the rest is counted here as requests and batches end.
 * Everything but the HTTP gauges is counted per model: a server of one
 * model writes the series as they always were, one of several gives each
 * series a model="NAME" label.
 */
#ifndef RF_SERVE_METRICS_H
#define RF_SERVE_METRICS_H

#include "serve/cache.h"
#include "serve/log.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct serve_metrics serve_metrics;

/* `routes` names the route labels (index = route id), `models` the models
 * (index = the model's, as serve_log_entry.model), both kept by pointer. */
serve_metrics *serve_metrics_create(const char *const *routes, int n_routes,
                                    const char *const *models, int n_models);
void serve_metrics_free(serve_metrics *m);

void serve_metrics_request(serve_metrics *m, int model, int route, int status, double seconds);
/* An engine request's TEI metrics (for log->model): te_request_count /
 * _success / _failure and its duration, tokenization, queue and inference
 * times. */
void serve_metrics_tei_request(serve_metrics *m, int status, const serve_log_entry *log,
                               double seconds);
void serve_metrics_batch(serve_metrics *m, int model, int jobs, int32_t inputs, int32_t tokens,
                         double forward_seconds);
/* Why a request left the queue without running. */
typedef enum { SERVE_DROP_CLIENT_GONE, SERVE_DROP_QUEUE_TIMEOUT, SERVE_DROP_COUNT } serve_drop_reason;
/* A request of model `model` dropped unrun. */
void serve_metrics_dropped(serve_metrics *m, int model, serve_drop_reason reason);

/* A model's batcher at the moment /metrics is asked. */
typedef struct {
    int queued;     /* jobs waiting for the batcher */
    int running;    /* jobs in the batches the engine is running; 0: idle */
    serve_cache_stats cache; /* its results kept across requests (zeros: no cache) */
} serve_queue_gauges;

/* The server's state at the moment /metrics is asked. */
typedef struct {
    const serve_queue_gauges *models; /* [the models], filled by GET /metrics */
    int in_flight;  /* engine requests admitted and not yet answered */
    bool draining;  /* a stop signal has closed the listener; what has begun is
                       being answered */
} serve_gauges;

/* The exposition text (malloc'd, NUL-terminated), or NULL when out of memory. */
char *serve_metrics_render(serve_metrics *m, const serve_gauges *g);

#endif
