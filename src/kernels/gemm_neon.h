/*
 * gemm_neon.h — the ARM64 builds of the int8 product (gemm_int8_neon.c)
 * and of the bf16 product (gemm_bf16_neon.c). gemm_int8.c and
 * gemm_bf16.c call them where the x86-64 build calls its AVX2 / AVX-512
 * code; they read and write the same packed layouts (gemm_int8.h,
 * gemm_bf16.h), so packing, scratch sizes and the threaded split are
 * shared.
 */
#ifndef RF_GEMM_NEON_H
#define RF_GEMM_NEON_H

#include "kernels/gemm_int8.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Quantizes rows [m0, m1) of X (K used, rows K apart) into Xq (rows of
 * rf_int8_row_bytes(K)), their scales and centers: the bytes of
 * rf_int8_quantize_row_naive. */
void rf_int8_quantize_rows_neon(const float *X, int K, int m0, int m1, int8_t *Xq, float *scale,
                                float *center);

/* Y rows [m0, m1), channels [n0, n1) (n0 a multiple of 16) of the int8
 * Linear from quantized rows (scales sx, centers cx), with `kernel`
 * (RF_INT8_NEON, RF_INT8_SDOT or RF_INT8_I8MM, which the CPU must have);
 * sx NULL: C (int32, rows ldy apart) gets the raw integer sums instead. */
void rf_int8_gemm_block_neon(rf_int8_kernel kernel, const int8_t *Xq, const float *sx,
                             const float *cx, int K, int m0, int m1, const rf_int8_matrix *W, int n0,
                             int n1, const float *b, rf_activation act, float *Y, int32_t *C,
                             int ldy);

/* The bf16 product's two builds, both on CPUs with BF16: BFMMLA (2 x 2
 * outputs of 4 inputs per instruction, the default) and BFDOT (4 outputs
 * of 2 inputs). rf_bf16_neon_tile_set (tests) refuses them without BF16. */
typedef enum {
    RF_BF16_BFMMLA,
    RF_BF16_BFDOT,
} rf_bf16_neon_tile;
rf_bf16_neon_tile rf_bf16_neon_tile_get(void);
bool rf_bf16_neon_tile_set(rf_bf16_neon_tile tile);

/* The pieces of gemm_bf16.h on ARM64 (rounding and packing in plain C,
 * the same bytes as the x86 build):
 * rf_bf16_round_neon: scale * rows [m0, m1) of X (rows ldx apart) to bf16
 *   pairs, as rf_bf16_round;
 * rf_bf16_pack_rows_neon, rf_bf16_pack_transposed_neon: as
 *   rf_bf16_pack_rows and rf_bf16_pack_transposed;
 * rf_bf16_gemm_block_neon: Y rows [m0, m1), columns [n0, n1) (n0 a
 *   multiple of 16, rows of Y ldy apart) = act(Xb . W^T + b). */
void rf_bf16_round_neon(const float *X, size_t ldx, int K, float scale, int m0, int m1,
                        uint16_t *out);
void rf_bf16_pack_rows_neon(const float *W, int N, int K, size_t ldw, uint16_t *dst);
void rf_bf16_pack_transposed_neon(const float *V, int K, int N, size_t ldv, uint16_t *dst);
void rf_bf16_gemm_block_neon(const uint16_t *Xb, int K, int m0, int m1, const uint16_t *Wp, int n0,
                             int n1, const float *b, rf_activation act, float *Y, int ldy);

#endif
