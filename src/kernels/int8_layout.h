/*
 * int8_layout.h — the layout of the int8 product's operands (gemm_int8.h),
 * which its driver (gemm_int8.c) and its backends (gemm_int8_backend.h)
 * both read.
 *
 * Packed weights: panels of 16 output channels; panel p holds, for each
 * quad of inputs k = 4i..4i+3, the 64 bytes Wq[16p + j][4i + e] at
 * [i][j][e], so one 32-byte load feeds 8 channels x 4 inputs. N is padded
 * with zero channels to a multiple of 16, K with zero inputs to a multiple
 * of 4. Beside the panels, each channel's sum of its Wq (colsum).
 *
 * Quantized inputs: rows of rf_int8_row_bytes(K) bytes, zero past K; a
 * backend with unsigned_inputs stores every byte + 128.
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
