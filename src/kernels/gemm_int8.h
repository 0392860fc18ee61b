/*
 * gemm_int8.h — the Linear layer in 8-bit integers (opt-in compute type
 * RF_COMPUTE_INT8), on CPUs with AVX2 and on ARM64.
 *
 * Quantization (symmetric, no zero points):
 *   weights  per output channel n: s_w[n] = max_k |W[n][k]| / 127,
 *            Wq[n][k] = round(W[n][k] / s_w[n])               in [-127, 127]
 *   inputs   per row i, at run time, around its center c_x[i] = (max_k
 *            X[i][k] + min_k X[i][k]) / 2: s_x[i] = (max - min) / 254,
 *            Xq[i][k] = round((X[i][k] - c_x[i]) / s_x[i])    in [-127, 127]
 *   Y[i][n] = act(s_x[i] s_w[n] sum_k Xq[i][k] Wq[n][k]
 *                 + c_x[i] s_w[n] sum_k Wq[n][k] + b[n])
 * The center costs nothing in the product (the weights' sums are packed
 * with them) and doubles the resolution of one-signed rows such as GELU
 * outputs, where a symmetric range would leave half the codes unused.
 * (round: to nearest, ties to even). The integer sums are exact (int32).
 *
 * The AVX2 product is VPMADDUBSW (u8 x s8 -> pairs summed in saturating
 * int16) then VPMADDWD by ones (-> int32). Its first operand is unsigned,
 * so it gets |Xq| and the weights get the sign of Xq (VPSIGNB on both):
 * |Xq| * (+-Wq) = Xq * Wq, and a pair sums to at most 2 * 127 * 127 =
 * 32258 < 32767, so nothing saturates and the sum is exact. (ONNX
 * Runtime's AVX2 u8 x s8 form, with u8 activations up to 255, can
 * saturate there, and with these per-channel and per-row scales, which
 * put codes near both ends of the range, it does often enough to fail the
 * accuracy tests: docs/performance.md, "ONNX Runtime's saturating form".
 * The price of the exact sums is one VPSIGNB per product and 7 bits of
 * magnitude for the inputs instead of 8.)
 *
 * Packed weights and quantized rows: int8_layout.h.
 *
 * On CPUs with AVX512-VNNI (and AVX512BW) the product is VPDPBUSD instead,
 * reading the same panels, 16 channels per instruction: u8 x s8 summed
 * straight into int32, so the inputs go in as Xq + 128 (a sign-bit flip)
 * and 128 * colsum[n] comes off the sums afterwards, which are then the
 * same exact integers. With AMX-INT8 it is TDPBSSD (s8 x s8, exact), 16
 * consecutive quads of a panel being one B tile. The tests compare every
 * build with the naive sums, exactly, on every CPU that has it, and the
 * AMX build's loops on a C emulator of the tiles everywhere
 * (gemm_int8_backend.h lists the builds, backend.c's table chooses).
 */
#ifndef RF_GEMM_INT8_H
#define RF_GEMM_INT8_H

#include "roformer.h"
#include "kernels/block_post.h"
#include "kernels/int8_layout.h"
#include "kernels/parallel.h"
#include "kernels/partition.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when this CPU runs the int8 kernel (AVX2 on x86-64; every ARM64
 * CPU). Which build runs is the kernels' table's choice (backend.h,
 * RF_OP_INT8): the best the CPU has (AMX where the OS grants the tiles,
 * else VNNI, else AVX2; I8MM, else SDOT, else NEON), unless set. All give
 * the same sums. */
bool rf_int8_supported(void);

/* Entries of a packed matrix's colsum: N padded like the panels (the
 * padding channels' sums are 0). */
size_t rf_int8_colsum_count(int N);

/* Bytes of W (N x K) packed. */
size_t rf_int8_packed_size(int N, int K);

/* Quantizes rows of the f32 W (N x K, rows ldw apart) per row as above:
 * Wq (N x K, row-major) and scale [N]. What the converter stores
 * (--dtype q8) and what int8 compute does to f32 weights. */
void rf_int8_quantize_rows(const float *W, int N, int K, size_t ldw, int8_t *Wq, float *scale);

/* The inverse: out (N x K) = Wq[n][k] * scale[n] (f32 compute from a q8
 * file). */
void rf_int8_dequantize_rows(const int8_t *Wq, const float *scale, size_t N, size_t K, float *out);

/* Packs rows [n0, n0 + n) of a packed matrix of K inputs from Wq (n x K,
 * rows ldw apart), and their sums into colsum[n0 .. n0 + n). `dst`
 * (rf_int8_packed_size of the whole matrix) and colsum must be zeroed
 * first, once: padding is never written. Several calls fill one matrix
 * from separate tensors (Q, K and V). */
void rf_int8_pack_rows(const int8_t *Wq, int n0, int n, int K, size_t ldw, int8_t *dst,
                       int32_t *colsum);

/* Bytes of the scratch rf_linear_int8 needs for M rows of K inputs (the
 * quantized rows and their scales). */
size_t rf_int8_scratch_size(int M, int K);

/* Y (M x N) = act(X (M x K) . W^T + b) as above, X quantized per row into
 * `scratch` (rf_int8_scratch_size, 64-byte aligned), then post on each
 * finished tile (block_post.h; NULL: none). Shared across the pool's
 * threads by rf_linear_int8_partition; the result does not depend on the
 * number of threads. Needs rf_int8_supported(). */
void rf_linear_int8(const rf_parallel *pool, const float *X, int M, int K, const rf_int8_matrix *W,
                    const float *b, int N, rf_activation act, const rf_block_post *post, float *Y,
                    void *scratch);
/* rf_linear_int8 in two steps, so that a row-wise pass over X can
 * quantize its rows while they are in cache: rf_int8_prepare_rows
 * quantizes rows [r0, r1) of X (M x K) into the scratch (any thread, any
 * split of the rows), then rf_linear_int8_prepared runs the product on
 * them. */
void rf_int8_prepare_rows(const float *X, int M, int K, int r0, int r1, void *scratch);
void rf_linear_int8_prepared(const rf_parallel *pool, int M, int K, const rf_int8_matrix *W,
                             const float *b, int N, rf_activation act, const rf_block_post *post,
                             float *Y, void *scratch);
/* How rf_linear_int8 shares an M x N x K product among n_threads: units
 * of one row by one 16-channel panel. */
rf_partition rf_linear_int8_partition(int M, int N, int K, int n_threads);

/* The integer product alone, for tests: C (M x N) = Xq . Wq^T in int32,
 * Xq with rows of rf_int8_row_bytes(K), W packed. One thread. False when
 * out of memory (a build that reads its inputs offset gets a copy). */
bool rf_gemm_int8_s32(const int8_t *Xq, int M, int K, const rf_int8_matrix *W, int N, int32_t *C);

/* Naive twins. rf_int8_quantize_row_naive: one input row as above,
 * scalar (returns the scale, *center the center).
 * rf_linear_int8_naive: X and W quantized by the naive rules, integer sums
 * in int64, the same epilogue; W is the f32 (N x K) matrix. */
float rf_int8_quantize_row_naive(const float *x, int K, int8_t *q, float *center);
void rf_linear_int8_naive(const float *X, int M, int K, const float *W, const float *b, int N,
                          rf_activation act, float *Y);

#endif
