/*
 * tensor_map.h — the one table of a RoFormer model's tensors: GGUF name,
 * HF checkpoint name, PyTorch shape, and where the loader puts it. The
 * converter (writer) and the loader (reader) both walk this table, in this
 * order, so the file's tensor order is fixed. Documented in models/README.md.
 */
#ifndef RF_TENSOR_MAP_H
#define RF_TENSOR_MAP_H

#include "formats/weights.h"
#include "roformer.h"

typedef struct {
    char gguf[48];        /* GGUF name, e.g. "blk.3.attn_q.weight" */
    char hf[96];          /* HF name; base-model tensors without the "roformer." prefix */
    bool base;            /* HF name takes the base-model prefix ("roformer." or "") */
    bool optional;        /* may be absent (the untied MLM decoder weight) */
    int n_dims;           /* 1 or 2 */
    int64_t shape[2];     /* PyTorch order: (out, in) for matrices */
    const float **slot;   /* where the loader stores the f32 pointer; NULL when w is NULL */
} rf_tensor_entry;

/* Builds the table for `hp` (head, pooler, embedding projection decide
 * which tensors exist). `w` may be NULL (converter); then slots are NULL.
 * The loader must have allocated w->layers. Returns the entry count, or
 * -1 when out of memory; free *out with free(). */
int rf_tensor_map(const rf_hparams *hp, rf_weights *w, rf_tensor_entry **out);

#endif
