/*
 * models.h — the models one `roformer serve` serves, by name, and the
 * generation of each that new requests run on.
 *
 * A generation is what one load of a model's file made: the weights (one
 * mapping per file, shared by every name on that file), a runner per
 * replica and the batcher that feeds them. A request takes a reference to
 * the model's current generation and runs on it to the end; a reload (SIGHUP,
 * POST /admin/reload) loads every file again and makes the new generations
 * current, and an old one is freed when its last request gives it back:
 *
 *     name "a" ──current──▶ generation 2 ──▶ weights of a.gguf (load 2)
 *                           generation 1 ──▶ weights of a.gguf (load 1)
 *                           ▲ still held by the requests queued before
 *                             the reload; freed with the last of them
 *                             (answered, or dropped unrun)
 *
 * A file that fails to load leaves its names on their old generation.
 */
#ifndef RF_SERVE_MODELS_H
#define RF_SERVE_MODELS_H

#include "roformer.h"
#include "serve/batcher.h"
#include "serve/cache.h"
#include "serve/metrics.h"

#include <stdbool.h>
#include <time.h>

typedef struct serve_models serve_models;

/* What every model is loaded with (the command line's). */
typedef struct {
    rf_context_params context;  /* n_threads: each replica's */
    int replicas;               /* runners (contexts) per model, each a batch at once */
    int32_t max_input_length;   /* 0: each model's own (rf_model_max_input_length) */
    bool pooling_given;         /* --pooling, else each model's default */
    rf_pooling pooling;
    int32_t max_batch_tokens, max_batch_requests;
    double queue_timeout;       /* seconds a job may wait queued; 0: no limit */
    serve_metrics *metrics;     /* batches are counted here, under the model's index */
    serve_cache *cache;         /* results kept across requests (--cache-mb), under the
                                   model's index; NULL: none */
} serve_model_settings;

/* One load of one model, as a request runs on it. */
typedef struct {
    const rf_model *model;
    serve_batcher *batcher;
    int32_t max_input_length;   /* tokens per input */
    rf_pooling pooling;
    const char *sha256;         /* of the file: 64 hex digits; "" for a directory or hf: name */
    const serve_runner *cache_runner; /* a replica whose cache answers a request all of
                                         whose inputs it holds; NULL: no cache */
    time_t loaded_at;           /* when its file was loaded */
    int number;                 /* 1 for the first load, then one more per reload */
} serve_generation;

/* A reload's outcome for one model. */
typedef struct {
    bool ok;
    char message[320];          /* what happened, one line */
} serve_reload_result;

/* Loads the model of each name from its path (one load per file, shared
 * by the names on it) and starts each one's first generation. Names and
 * paths are kept by pointer, `settings` is copied. On failure prints why
 * and returns -1, or -2 when the settings do not fit a model (a usage
 * error: --max-input-length over its maximum, a --pooling it lacks). */
int serve_models_load(const char *const *names, const char *const *paths, int n,
                      const serve_model_settings *settings, serve_models **out);
/* Stops every batcher (after what is queued) and frees everything; every
 * request must have given its generation back. */
void serve_models_free(serve_models *ms);

int serve_models_count(const serve_models *ms);
/* Model i's name; index -1 when no model has `name` (len bytes). */
const char *serve_models_name(const serve_models *ms, int i);
int serve_models_find(const serve_models *ms, const char *name, size_t len);
/* The names joined by ", ", for messages. */
void serve_models_list(const serve_models *ms, char *buf, size_t n);

/* Model i's current generation, with a reference the caller gives back. */
serve_generation *serve_models_acquire(serve_models *ms, int i);
void serve_generation_release(serve_generation *g);

/* Loads every model's file again (one reload at a time) and makes what
 * loaded current; results[i] says what happened to model i (and is logged,
 * one line per model). A model that reloaded loses its cached results.
 * Returns how many reloaded. */
int serve_models_reload(serve_models *ms, serve_reload_result *results);

#endif
