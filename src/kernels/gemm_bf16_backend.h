/*
 * gemm_bf16_backend.h — the operations of the bf16 product's builds, one
 * per instruction set, behind the driver gemm_bf16.c: each an rf_bf16_ops
 * in a file of its own and a row of the kernels' one table (backend.c),
 * which names it, says what it needs and when the CPU's rule picks it.
 * Its members round the inputs and pack the weights (the layout of
 * gemm_bf16.h), and its `gemm` computes each block of the output while
 * the driver splits the work over threads. A build never calls back into
 * the driver nor into an entry point that reads the table (its
 * activations go through its own instruction set's element-wise build),
 * and never asks the CPU again. Adding an instruction set is one
 * file defining one rf_bf16_ops and a row of the table
 * (docs/architecture.md).
 *
 * A kernel computes Y rows [m0, m1), columns [n0, n1) (n0 a multiple of
 * 32, n1 <= N, rows of Y ldy apart) = act(Xb . W^T + b), where Xb holds
 * rows of rf_bf16_k_pairs(K) pairs of bf16 inputs and Wp the packed
 * weights (panels of 16 columns, padded with zero columns to a multiple of
 * 32); b may be NULL.
 */
#ifndef RF_GEMM_BF16_KERNELS_H
#define RF_GEMM_BF16_KERNELS_H

#include "roformer.h"
#include "kernels/block_post.h"
#include "kernels/cpu.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* K rounded up to even: the row length of packed inputs, in pairs. */
static inline int rf_bf16_k_pairs(int K)
{
    return (K + 1) / 2;
}

/* N rounded up to the kernels' blocks of 32 columns: the packed weights'
 * column count. */
static inline int rf_bf16_padded_n(int N)
{
    return (N + 31) / 32 * 32;
}

/* scale * rows [m0, m1) of X (rows ldx apart, K used) rounded to bf16
 * pairs: row r of out is rf_bf16_k_pairs(K) pairs, an odd K's last input
 * zero. */
typedef void rf_bf16_round_fn(const float *X, size_t ldx, int K, float scale, int m0, int m1,
                              uint16_t *out);
/* W (N x K, rows ldw apart) packed; rf_bf16_pack_transposed_fn: W = V^T,
 * V (K x N, rows ldv apart). */
typedef void rf_bf16_pack_rows_fn(const float *W, int N, int K, size_t ldw, uint16_t *dst);
typedef void rf_bf16_pack_transposed_fn(const float *V, int K, int N, size_t ldv, uint16_t *dst);

/* The two builds of rounding and packing, gemm_bf16_round.c: plain C, and
 * on VCVTNE2PS2BF16 (x86-64, AVX512_BF16). */
typedef struct {
    rf_bf16_round_fn *round_rows;
    rf_bf16_pack_rows_fn *pack_rows;
    rf_bf16_pack_transposed_fn *pack_transposed;
} rf_bf16_packing;
extern const rf_bf16_packing rf_bf16_packing_c, rf_bf16_packing_avx512;

/* Y rows [m0, m1), columns [n0, n1) = act(Xb . Wp^T + b), then post on
 * each block as it is finished (block_post.h; NULL: none). */
typedef void rf_bf16_gemm_fn(const uint16_t *Xb, int K, int m0, int m1, const uint16_t *Wp, int n0,
                             int n1, const float *b, rf_activation act,
                             const rf_block_post *post, float *Y, int ldy);

/* Their results differ in the last bits (the order of the f32 sums), so
 * the CPU picks one by a fixed rule (gemm_bf16.h), the rows' rules in the
 * table. The builds:
 * x86-64 (each needs what its name says; the table's row checks the CPU):
 * rf_bf16_ops_amx          TDPBF16PS tiles (AMX-BF16), x86/amx/gemm_bf16_amx.c;
 * rf_bf16_ops_amx_emulated the same loops on emulated/amx_emulator.h's C
 *                          emulator of the tile instructions (AVX2; tests
 *                          only), emulated/gemm_bf16_amx_emulated.c;
 * rf_bf16_ops_avx512bf16   VDPBF16PS (AVX512_BF16), x86/gemm_bf16_avx512.c;
 * rf_bf16_ops_f32fma       the bf16 operands widened to f32 in registers
 *                          and summed by f32 FMA (AVX512F; it rounds and
 *                          packs on AVX512_BF16), x86/gemm_bf16_f32fma.c.
 * ARM64 (BF16), arm/gemm_bf16_neon.c:
 * rf_bf16_ops_bfmmla       BFMMLA, 2 x 2 outputs of 4 inputs each;
 * rf_bf16_ops_bfdot        BFDOT, 4 outputs of 2 inputs each. */
typedef struct rf_bf16_ops rf_bf16_ops;
struct rf_bf16_ops {
    bool attention_fast; /* faster than f32 sgemm: attention's products run on it */
    const rf_bf16_packing *packing; /* its operands' rounding and packing */
    rf_bf16_gemm_fn *gemm;
};

extern const rf_bf16_ops rf_bf16_ops_amx, rf_bf16_ops_amx_emulated, rf_bf16_ops_avx512bf16,
    rf_bf16_ops_f32fma, rf_bf16_ops_bfmmla, rf_bf16_ops_bfdot;

#endif
