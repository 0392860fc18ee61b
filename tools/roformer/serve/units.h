/*
 * units.h — a batch's inputs and results joined from its jobs, by unit,
 * and what the cache (cache.h) keeps of a unit: its key and its value.
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
 * batched with. Its value is its result serialized; unpacking a value
 * gives back the very bytes that were packed.
 */
#ifndef RF_SERVE_UNITS_H
#define RF_SERVE_UNITS_H

#include "serve/job.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    serve_kind kind;
    int32_t D, N;              /* hidden_size, num_labels (at least 1) */
    int32_t n;                 /* inputs */
    int32_t units;             /* n, or n / 3 for scm */
    rf_text *texts;            /* [n] (unset for token ids) */
    rf_encoding *encs;         /* [n * encodings_per_input] */
    int32_t *offsets, *lengths; /* embed_all: [n] each input's first row and rows */
    int32_t rows;              /* embed_all: sum of lengths */
    float *vectors;            /* embed: [n][D]; embed_all: [rows][D] */
    float *probs;              /* classify, logits: [n][N]; rerank: [n] */
    rf_fill_mask_result *fill; /* [n] */
    rf_ner_result *ner;        /* [n] */
    rf_qa_result *qa;          /* [n] */
    rf_triplet *triplets;      /* scm: [units] */
    rf_scm_result *scm;        /* scm: [units] */
    rf_item_status *items;     /* [units] */
} serve_units;

int serve_units_inputs_per_unit(serve_kind kind);
int serve_units_encodings_per_input(serve_kind kind);
/* Floats of one input's result in u->probs: 0 when the kind keeps none there. */
size_t serve_units_probs_per_input(const serve_units *u);

/* Allocates u's arrays for `n` inputs of `kind` (rows: embed_all's rows);
 * false when out of memory (free it still). */
bool serve_units_alloc(serve_units *u, serve_kind kind, int32_t n, int32_t rows, int32_t D,
                       int32_t N);
/* Frees the arrays and any fill-mask / NER result still in them. */
void serve_units_free(serve_units *u);

/* A growing byte buffer: keys and values are built in one. */
typedef struct {
    unsigned char *p;
    size_t len, cap;
    bool failed;  /* out of memory: its contents are not to be used */
} serve_bytes;

void serve_bytes_free(serve_bytes *b);

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
/* Appends unit i's value, fill-mask cut to top_k candidates; unit i's item
 * must be RF_OK. `model` names NER's entity types. */
void serve_units_pack(const serve_units *u, int32_t i, int32_t top_k, const rf_model *model,
                      serve_bytes *value);
/* Unit i's result and item from a value (what serve_units_pack wrote);
 * false when out of memory. */
bool serve_units_unpack(serve_units *u, int32_t i, const rf_model *model, const void *value,
                        size_t len);
/* Moves unit `from` of `src` to unit `to` of `dst` (fill-mask and NER
 * results change owner), with its item. */
void serve_units_move(serve_units *dst, int32_t to, serve_units *src, int32_t from);

#endif
