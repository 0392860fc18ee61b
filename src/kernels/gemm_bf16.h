/*
 * gemm_bf16.h — the Linear layer in bfloat16 (opt-in compute type
 * RF_COMPUTE_BF16), and attention's products in bf16.
 *
 * Debian's OpenBLAS has no bf16 GEMM (no sbgemm in its build), so this is
 * the one matrix product of the engine outside OpenBLAS. Inputs and
 * weights are rounded to bf16 (nearest, ties to even); products are
 * summed in f32, so the result differs from the f32 product by that
 * rounding of the operands, and between kernels only by the order of the
 * f32 sums.
 *
 * Weights are packed once (rf_context_create) into panels of 16 output
 * columns: panel p holds, for each pair of inputs k = 2i, 2i + 1, the 32
 * values W[16p + j][2i + e] at [i][j][e]: one 64-byte line, the operand of
 * one VDPBF16PS for 16 outputs, and 16 consecutive lines one AMX B tile
 * (32 inputs x 16 columns). N is padded with zero columns to a multiple
 * of 32, K with a zero column to an even count.
 *
 * The product runs on one of several builds (gemm_bf16_backend.h),
 * chosen once from the CPU by a fixed rule (docs/compute.md), since their
 * results differ in the last bits (and their speed; docs/performance.md):
 *   AMX-BF16 usable                     -> "amx"
 *   else AVX512_BF16 on an AMD CPU      -> "avx512bf16" (Zen 4, 5)
 *   else AVX512_BF16 (Intel, no AMX)    -> "f32fma" (VDPBF16PS runs
 *                                          at half the f32 FMA rate there)
 *   ARM64 with BF16                     -> "bfmmla"
 * rf_backend_set overrides the rule (a user's choice, tests).
 */
#ifndef RF_GEMM_BF16_H
#define RF_GEMM_BF16_H

#include "roformer.h"
#include "kernels/block_post.h"
#include "kernels/gemm_bf16_backend.h" /* rf_bf16_k_pairs */
#include "kernels/parallel.h"
#include "kernels/partition.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when this CPU runs bf16 compute (AVX512F + AVX512_BF16, or
 * AMX-BF16; on ARM64, BF16). RF_BF16_CPU_NEEDS names it for messages. */
bool rf_bf16_supported(void);
#if defined(__aarch64__)
#define RF_BF16_CPU_NEEDS "BF16 (BFDOT, BFMMLA)"
#else
#define RF_BF16_CPU_NEEDS "AVX512_BF16"
#endif

/* Which build runs is the kernels' table's choice (backend.h,
 * RF_OP_BF16): the rule above on the first call unless set; without bf16
 * support it still names one, which is not used. Set it before any
 * context is created: a context decides at creation whether attention
 * runs in bf16 (rf_bf16_attention_fast). */

/* Whether bf16 and int8 compute run attention's two products in bf16:
 * where the build in use is faster than f32 sgemm (its attention_fast:
 * AMX, VDPBF16PS on AMD, BFMMLA and BFDOT), else they stay f32 (Intel
 * without AMX). */
bool rf_bf16_attention_fast(void);

/* uint16 elements of W (N x K) packed. */
size_t rf_bf16_packed_size(int N, int K);
/* Packs the f32 W (N x K, row-major, an nn.Linear weight) into `dst`
 * (rf_bf16_packed_size(N, K) elements), rounding to bf16. */
void rf_bf16_pack(const float *W, int N, int K, uint16_t *dst);

/* uint16 elements of the scratch rf_linear_bf16 needs for M rows of K. */
size_t rf_bf16_scratch_size(int M, int K);

/* Y (M x N) = act(X (M x K) . W^T + b) with W packed by rf_bf16_pack and
 * X rounded to bf16 into `scratch` (rf_bf16_scratch_size), then post on
 * each finished block (block_post.h; NULL: none). Shared across the
 * pool's threads by rf_linear_bf16_partition; the result does not depend
 * on the number of threads. Needs rf_bf16_supported(). */
void rf_linear_bf16(const rf_parallel *pool, const float *X, int M, int K, const uint16_t *W_packed,
                    const float *b, int N, rf_activation act, const rf_block_post *post, float *Y,
                    uint16_t *scratch);
/* rf_linear_bf16 in two steps, so that a row-wise pass over X can round
 * its rows while they are in cache: rf_bf16_prepare_rows rounds rows
 * [r0, r1) of X (rows of K) into the scratch (any thread, any split of the
 * rows), then rf_linear_bf16_prepared runs the product on them. */
void rf_bf16_prepare_rows(const float *X, int K, int r0, int r1, uint16_t *scratch);
void rf_linear_bf16_prepared(const rf_parallel *pool, int M, int K, const uint16_t *W_packed,
                             const float *b, int N, rf_activation act, const rf_block_post *post,
                             float *Y, const uint16_t *scratch);
/* How rf_linear_bf16 shares an M x N x K product among n_threads: units
 * of one row by the kernels' 32-column blocks. */
rf_partition rf_linear_bf16_partition(int M, int N, int K, int n_threads);

/* Single-thread pieces of a product, for attention (Q K^T and P V of one
 * head, whose operands change with every input):
 * rf_bf16_round: scale * X (M x K, rows ldx apart) rounded to bf16 rows of
 *   rf_bf16_k_pairs(K) pairs (rf_bf16_scratch_size(M, K) elements);
 * rf_bf16_pack_rows: W (N x K, rows ldw apart) packed as rf_bf16_pack does;
 * rf_bf16_pack_transposed: W = V^T packed, V (K x N, rows ldv apart);
 * rf_gemm_bf16: Y (M x N, rows ldy apart) = X . W^T from the two above. */
void rf_bf16_round(const float *X, int M, int K, size_t ldx, float scale, uint16_t *out);
void rf_bf16_pack_rows(const float *W, int N, int K, size_t ldw, uint16_t *dst);
void rf_bf16_pack_transposed(const float *V, int K, int N, size_t ldv, uint16_t *dst);
void rf_gemm_bf16(const uint16_t *Xb, int M, int K, const uint16_t *W_packed, int N, float *Y,
                  int ldy);

/* Naive twin: X and W rounded to bf16, products summed in double, then
 * the naive bias + activation. W is the f32 (N x K) matrix. */
void rf_linear_bf16_naive(const float *X, int M, int K, const float *W, const float *b, int N,
                          rf_activation act, float *Y);

#endif
