/*
 * stored_matrix.h — a weight matrix kept as the model file stores it when
 * that is not f32 (q8, f16 or bf16), pointing into the file, and its rows
 * widened to f32 on demand. Part of a model's weights (weights.h), read by
 * the encoder's embedding lookup and the packing of the layers' weights,
 * none of which needs the others for it.
 */
#ifndef RF_STORED_MATRIX_H
#define RF_STORED_MATRIX_H

#include "roformer.h"

#include <stddef.h>

/* q8: int8 rows and one f32 scale per row, i.e. per output channel; f16 /
 * bf16: the values. data NULL: not kept this way (f32 in the file, or
 * widened at load). */
typedef struct {
    rf_dtype type;       /* RF_DTYPE_Q8, RF_DTYPE_F16 or RF_DTYPE_BF16 */
    const void *data;    /* (N, K) row-major */
    const float *scale;  /* q8: (N) */
} rf_stored_matrix;

/* out (rows x K) = rows [row0, row0 + rows) of m, a matrix of K columns,
 * in f32: f16 and bf16 widened exactly, q8 as q * scale of its row. */
void rf_stored_matrix_widen(const rf_stored_matrix *m, size_t row0, size_t rows, size_t K,
                            float *out);

#endif
