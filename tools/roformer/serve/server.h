/*
 * server.h — what the parts of `roformer serve` share: the settings from
 * the command line and the long-lived objects (the models, metrics).
 * Filled by cmd_serve.c, read-only once the HTTP daemon runs. A request
 * runs on one model: the generation it took (models.h), whose
 * max_input_length and pooling are that model's, beside a pointer to this.
 */
#ifndef RF_SERVE_SERVER_H
#define RF_SERVE_SERVER_H

#include "roformer.h"
#include "serve/batcher.h"
#include "serve/log.h"
#include "serve/metrics.h"
#include "serve/models.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    /* settings */
    const char *host;
    int port;
    int32_t threads;
    int32_t compute;              /* rf_compute_type */
    rf_pooling pooling;
    int32_t max_batch_tokens;     /* real tokens per batch */
    int32_t max_batch_requests;   /* inputs per batch; 0: no cap but the tokens */
    int32_t max_client_batch;     /* inputs per request */
    int32_t max_concurrent;       /* requests admitted at once; more get 429 */
    int32_t max_input_length;     /* tokens per input; longer needs "truncate" (in the
                                     server: --max-input-length, 0 for each model's own) */
    bool auto_truncate;           /* a request that does not say "truncate" truncates */
    size_t payload_limit;         /* body bytes; more get 413 */
    const char *api_key;          /* NULL: no Authorization needed */
    const char *cors_origins;     /* --cors-allow-origin: "*" or origins joined by
                                     commas; NULL: no CORS headers */
    serve_log_format log_format;
    int replicas;                 /* batches of one model run at once */
    int32_t queue_timeout_ms;     /* a job queued longer is dropped unrun (503); 0: never */
    int32_t max_connections;      /* open connections in all; more are closed at once */
    int32_t max_connections_per_client; /* open connections per client address */
    int32_t request_timeout;      /* seconds: a connection silent this long is closed, and a
                                     request whose body is still arriving this long after
                                     its headers */
    int32_t cache_mb;             /* --cache-mb: MiB of results kept; 0: no cache */

    /* objects */
    serve_models *models;
    serve_metrics *metrics;
    serve_cache *cache;           /* NULL without --cache-mb */
} serve_server;

#endif
