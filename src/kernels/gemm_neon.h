/*
 * gemm_neon.h — the ARM64 build of the bf16 product (gemm_bf16_neon.c).
 * gemm_bf16.c calls it where the x86-64 build calls its AVX-512 code; it
 * reads and writes the same packed layout (gemm_bf16.h), so packing,
 * scratch sizes and the threaded split are shared. (The int8 product's
 * ARM64 builds are backends of gemm_int8_backend.h.)
 */
#ifndef RF_GEMM_NEON_H
#define RF_GEMM_NEON_H

#include "roformer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
