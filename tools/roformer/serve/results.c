/*
 * results.c — results as their kind lays them out (see results.h).
 */
#include "serve/results.h"

#include <stdlib.h>

bool serve_results_alloc(serve_results *r, const serve_kind_ops *kind, int32_t units,
                         const rf_encoding *encs, int32_t D, int32_t N)
{
    size_t U = units > 0 ? (size_t)units : 1;
    *r = (serve_results){.kind = kind, .units = units, .row_bytes = kind->row_bytes(D, N),
                         .items = calloc(U, sizeof *r->items),
                         .first = malloc(sizeof *r->first * U),
                         .count = malloc(sizeof *r->count * U)};
    if (!r->items || !r->first || !r->count)
        return false;
    for (int32_t i = 0; i < units; i++) {
        r->first[i] = r->n_rows;
        r->count[i] = kind->per_token ? encs[i].n : 1;
        r->n_rows += r->count[i];
    }
    /* zeroed: the structs that own memory are freed as they are */
    r->rows = calloc(r->n_rows > 0 ? (size_t)r->n_rows : 1, r->row_bytes);
    return r->rows != NULL;
}

void serve_results_free(serve_results *r)
{
    if (r->rows)
        r->kind->release(r->rows, r->n_rows);
    free(r->rows);
    free(r->items);
    free(r->first);
    free(r->count);
    *r = (serve_results){0};
}

void serve_results_move(serve_results *dst, int32_t to, serve_results *src, int32_t from,
                        int32_t top_k)
{
    dst->items[to] = src->items[from];
    dst->kind->move(dst, to, src, from, top_k);
}

void serve_results_pack(const serve_results *r, int32_t i, int32_t top_k, const rf_model *model,
                        serve_bytes *value)
{
    r->kind->pack(r, i, top_k, model, value);
}

bool serve_results_unpack(serve_results *r, int32_t i, const rf_model *model, const void *value,
                          size_t len)
{
    r->items[i] = (rf_item_status){.status = RF_OK};
    return r->kind->unpack(r, i, model, value, len);
}
