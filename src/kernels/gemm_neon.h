/*
 * gemm_neon.h — the ARM64 builds of the int8 product (gemm_int8_neon.c).
 * gemm_int8.c calls them where the x86-64 build calls its AVX2 / AVX-512
 * code; they read and write the same packed layout (gemm_int8.h), so
 * packing, scratch sizes and the threaded split are shared. (The bf16
 * product's ARM64 kernels: gemm_bf16_kernels.h.)
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

#endif
