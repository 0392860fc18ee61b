/*
 * units.h — a batch's inputs and results joined from its jobs, by unit,
 * and each unit's key for the cache (cache.h).
 *
 * A unit is what one result belongs to: an input, except for scm, whose
 * units are triplets (three inputs: A, B, C). An input is one encoding,
 * except for cosine rerank, whose inputs are (query, document): two.
 *
 * A unit's key is every byte its result depends on beyond the process's
 * settings: the model's load (its file's sha256, or an id of that load),
 * the compute type, the job and its options, the token ids and type ids of
 * its encodings and, for the jobs whose results point into the text
 * (fill-mask's sequence, NER's and QA's character offsets), the text. Two
 * units with equal keys have equal results, to the byte, whatever they are
 * batched with. Its value is its result as its kind packs it
 * (results.h); unpacking a value gives back the very bytes that were
 * packed.
 */
#ifndef RF_SERVE_UNITS_H
#define RF_SERVE_UNITS_H

#include "serve/kind.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    const serve_kind_ops *kind;
    int32_t n;                 /* inputs */
    int32_t units;             /* n / inputs_per_unit */
    rf_text *texts;            /* [n] (unset for token ids) */
    rf_encoding *encs;         /* [n * encodings_per_input] */
    serve_results out;         /* [units]: allocated once encs are set */
} serve_units;

/* Allocates u's inputs for `n` inputs of `kind`; false when out of memory
 * (free it still). */
bool serve_units_alloc(serve_units *u, const serve_kind_ops *kind, int32_t n);
/* Allocates u's results, for the encodings now in it (results.h). */
bool serve_units_alloc_results(serve_units *u, int32_t D, int32_t N);
/* Frees the inputs and the results. */
void serve_units_free(serve_units *u);

/* What a unit's key holds besides its inputs. */
typedef struct {
    const char *load_id;   /* the model's load */
    int32_t compute;       /* rf_compute_type */
    rf_pooling pooling;
    int32_t max_length;    /* the pipeline's truncation, which QA's windows follow */
} serve_key_context;

/* Appends unit i's key (job: the job it came from, for its options). */
void serve_units_key(const serve_units *u, int32_t i, const serve_job *job,
                     const serve_key_context *ctx, serve_bytes *key);

#endif
