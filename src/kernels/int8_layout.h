/*
 * int8_layout.h — what the int8 product's driver (gemm_int8.c) and its
 * builds (gemm_int8_backend.h) both read: the length of a quantized row
 * and a packed weight matrix (the layout itself: gemm_int8.h).
 */
#ifndef RF_INT8_LAYOUT_H
#define RF_INT8_LAYOUT_H

#include <stdint.h>

#define RF_INT8_PANEL 16 /* output channels per packed panel */

/* K rounded up to a multiple of 4: the row length, in bytes, of
 * quantized inputs. */
static inline int rf_int8_row_bytes(int K)
{
    return (K + 3) / 4 * 4;
}

/* A weight matrix ready for rf_linear_int8. */
typedef struct {
    const int8_t *panels; /* rf_int8_packed_size(N, K) bytes, 64-byte aligned */
    const float *scale;   /* [N] s_w, per output channel */
    const int32_t *colsum; /* [rf_int8_colsum_count(N)] sum over k of Wq[n][k] */
} rf_int8_matrix;

#endif
