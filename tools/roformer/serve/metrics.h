/*
 * metrics.h — the server's counters and histograms, written out in
 * Prometheus' text format for GET /metrics: requests by route and status,
 * request latency by route, batches (jobs, inputs and real tokens per
 * batch), forward-pass time per batch, the queue. Beside them, the same
 * facts under text-embeddings-inference's names and labels (te_*), for the
 * dashboards made for TEI. Thread-safe.
 */
#ifndef RF_SERVE_METRICS_H
#define RF_SERVE_METRICS_H

#include "serve/log.h"

#include <stdint.h>

typedef struct serve_metrics serve_metrics;

/* `routes` names the route labels (index = route id), kept by pointer. */
serve_metrics *serve_metrics_create(const char *const *routes, int n_routes);
void serve_metrics_free(serve_metrics *m);

void serve_metrics_request(serve_metrics *m, int route, int status, double seconds);
/* An engine request's TEI metrics: te_request_count / _success / _failure
 * and its duration, tokenization, queue and inference times. */
void serve_metrics_tei_request(serve_metrics *m, int status, const serve_log_entry *log,
                               double seconds);
void serve_metrics_batch(serve_metrics *m, int jobs, int32_t inputs, int32_t tokens,
                         double forward_seconds);
/* The exposition text (malloc'd, NUL-terminated), or NULL when out of memory. */
char *serve_metrics_render(serve_metrics *m, int queued, int in_flight);

#endif
