/*
 * units.c — a batch's joined inputs and results, and each unit's key for
 * the cache (see units.h).
 *
 * Keys are int32 fields then bytes, in a fixed order per job; lengths
 * come before what they measure, so no two different inputs write the
 * same key.
 */
#include "serve/units.h"

#include "serve/results.h"

#include <stdlib.h>
#include <string.h>

bool serve_units_alloc(serve_units *u, const serve_kind_ops *kind, int32_t n)
{
    size_t T = n > 0 ? (size_t)n : 1;
    *u = (serve_units){.kind = kind, .n = n, .units = n / kind->inputs_per_unit,
                       .texts = calloc(T, sizeof *u->texts),
                       .encs = calloc(T * (size_t)kind->encodings_per_input, sizeof *u->encs)};
    return u->texts && u->encs;
}

bool serve_units_alloc_results(serve_units *u, int32_t D, int32_t N)
{
    return serve_results_alloc(&u->out, u->kind, u->units, u->encs, D, N);
}

void serve_units_free(serve_units *u)
{
    serve_results_free(&u->out);
    free(u->texts);
    free(u->encs);
    *u = (serve_units){0};
}

static void key_encoding(const rf_encoding *e, serve_bytes *key)
{
    serve_bytes_put_i32(key, e->n);
    serve_bytes_put(key, e->ids, sizeof *e->ids * (size_t)e->n);
    serve_bytes_put(key, e->type_ids, sizeof *e->type_ids * (size_t)e->n);
}

static void key_text(const rf_text *t, serve_bytes *key)
{
    serve_bytes_put_i32(key, (int32_t)t->text_len);
    serve_bytes_put(key, t->text, t->text_len);
    serve_bytes_put_i32(key, t->pair ? (int32_t)t->pair_len : -1);
    if (t->pair)
        serve_bytes_put(key, t->pair, t->pair_len);
}

void serve_units_key(const serve_units *u, int32_t i, const serve_job *job,
                     const serve_key_context *ctx, serve_bytes *key)
{
    size_t id_len = strlen(ctx->load_id);
    serve_bytes_put_i32(key, (int32_t)id_len);
    serve_bytes_put(key, ctx->load_id, id_len);
    const int32_t fields[] = {ctx->compute, u->kind->kind, ctx->pooling, ctx->max_length,
                              job->truncation_side, job->window, job->stride};
    serve_bytes_put(key, fields, sizeof fields);
    u->kind->key_options(job, key);
    int per_unit = u->kind->inputs_per_unit * u->kind->encodings_per_input;
    for (int k = 0; k < per_unit; k++)
        key_encoding(&u->encs[(size_t)i * per_unit + k], key);
    if (u->kind->keys_text)
        key_text(&u->texts[i], key);
}
