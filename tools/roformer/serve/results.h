/*
 * results.h — a job's or a batch's results (serve_results, job.h),
 * allocated, moved, packed and freed as their kind says (kind.h).
 */
#ifndef RF_SERVE_RESULTS_H
#define RF_SERVE_RESULTS_H

#include "serve/kind.h"

/* Results of `units` units of `kind` whose inputs are encs[] (per_token
 * kinds: a row per token of encs[i]), for a model of hidden size D and N
 * labels; false when out of memory (free them still). */
bool serve_results_alloc(serve_results *r, const serve_kind_ops *kind, int32_t units,
                         const rf_encoding *encs, int32_t D, int32_t N);
/* Frees the rows and what they own; *r is zeroed. */
void serve_results_free(serve_results *r);

/* Moves unit `from` of src to unit `to` of dst, with its item (kind.h's
 * move). */
void serve_results_move(serve_results *dst, int32_t to, serve_results *src, int32_t from,
                        int32_t top_k);
/* Appends unit i's value for the cache; its item must be RF_OK. */
void serve_results_pack(const serve_results *r, int32_t i, int32_t top_k, const rf_model *model,
                        serve_bytes *value);
/* Unit i's rows from a value (its item RF_OK); false when out of memory. */
bool serve_results_unpack(serve_results *r, int32_t i, const rf_model *model, const void *value,
                          size_t len);

#endif
