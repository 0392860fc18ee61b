/*
 * kind.h — what makes a job kind (serve_kind, job.h): one row of
 * kinds.c's table, written with SERVE_KIND_ROW, which takes every field,
 * so that a row missing one does not compile.
 *
 * A kind's results are rows (serve_results, job.h): one per unit, or with
 * per_token one per token of the unit's input (per_token kinds have one
 * encoding per unit). Its functions: the bytes of a row (what it
 * allocates), the library call (what it runs), the options its results
 * depend on (its key for the cache), a unit's rows moved, packed into a
 * cache value and unpacked, and what its rows own freed. The answer is
 * written per route, from the rows (routes.c).
 */
#ifndef RF_SERVE_KIND_H
#define RF_SERVE_KIND_H

#include "serve/bytes.h"
#include "serve/job.h"

/* One library call: a batch's inputs, the results to fill and what every
 * job of it shares. */
typedef struct {
    rf_pipeline *pl;
    rf_pooling pooling;
    const serve_job *first;  /* the options every job of the call shares */
    int32_t top_k;           /* fill-mask: the largest any job asked */
    int32_t n;               /* inputs: out->units * inputs_per_unit */
    const rf_text *texts;    /* [n] (unset for token ids) */
    const rf_encoding *encs; /* [n * encodings_per_input] */
    serve_results *out;
} serve_call;

typedef struct serve_kind_ops {
    serve_kind kind;
    const char *name;
    int32_t inputs_per_unit;     /* scm: 3, a triplet */
    int32_t encodings_per_input; /* cosine rerank: 2, query and document */
    bool per_token;              /* a row per token of the input, else one per unit */
    bool keys_text;              /* the result points into the text (a sequence,
                                    character offsets): its key holds the text */
    /* The bytes of one row, for a model of hidden size D and N labels. */
    size_t (*row_bytes)(int32_t D, int32_t N);
    /* Runs c->n inputs, filling c->out's rows and items. */
    rf_status (*run)(const serve_call *c, rf_error *err);
    /* Appends the job's options its results depend on. */
    void (*key_options)(const serve_job *job, serve_bytes *key);
    /* Moves unit `from`'s rows of src to unit `to` of dst (what they own
     * changes hands; dst's are freed first); fill-mask keeps top_k
     * candidates. */
    void (*move)(serve_results *dst, int32_t to, serve_results *src, int32_t from,
                 int32_t top_k);
    /* Appends unit i's rows (fill-mask: top_k candidates); `model` names
     * NER's entity types. */
    void (*pack)(const serve_results *r, int32_t i, int32_t top_k, const rf_model *model,
                 serve_bytes *value);
    /* Unit i's rows from what pack wrote; false when out of memory. */
    bool (*unpack)(serve_results *r, int32_t i, const rf_model *model, const void *value,
                   size_t len);
    /* Frees what rows[0..n) own (not the rows). */
    void (*release)(void *rows, int32_t n);
} serve_kind_ops;

#define SERVE_KIND_ROW(kind_, name_, inputs_per_unit_, encodings_per_input_, per_token_,      \
                       keys_text_, row_bytes_, run_, key_options_, move_, pack_, unpack_,     \
                       release_)                                                              \
    {.kind = kind_, .name = name_, .inputs_per_unit = inputs_per_unit_,                       \
     .encodings_per_input = encodings_per_input_, .per_token = per_token_,                    \
     .keys_text = keys_text_, .row_bytes = row_bytes_, .run = run_,                           \
     .key_options = key_options_, .move = move_, .pack = pack_, .unpack = unpack_,            \
     .release = release_}

#endif
