/*
 * gemm_bf16_backend.h — the bf16 product's backends, one per instruction
 * set, behind the driver gemm_bf16.c. The driver chooses a backend once
 * (rf_bf16_backend_get); its members round the inputs and pack the
 * weights (the layout of gemm_bf16.h), and its `gemm` computes each block
 * of the output while the driver splits the work over threads. A backend
 * never calls back into the driver nor asks the CPU again. Adding an
 * instruction set is one file defining one rf_bf16_backend, and a row of
 * the driver's table (docs/architecture.md).
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
 * the CPU picks one by a fixed rule (gemm_bf16.h): the first backend of
 * the table whose `rule` set the CPU has. */
typedef struct rf_bf16_backend rf_bf16_backend;
struct rf_bf16_backend {
    const char *name;    /* its word: ROFORMER_KERNEL=bf16=NAME, info, bench */
    rf_cpu_set needs;    /* what the CPU must have to run it (cpu.h) */
    rf_cpu_set rule;     /* what makes the rule pick it; 0: never */
    const char *why;     /* the rule's reason, for info */
    bool tests_only;     /* never chosen by the CPU nor by a user's word */
    bool attention_fast; /* faster than f32 sgemm: attention's products run on it */
    const rf_bf16_packing *packing; /* its operands' rounding and packing */
    rf_bf16_gemm_fn *gemm;
};

extern const rf_bf16_backend rf_bf16_backend_amx, rf_bf16_backend_amx_emulated,
    rf_bf16_backend_avx512bf16, rf_bf16_backend_f32fma, rf_bf16_backend_bfmmla,
    rf_bf16_backend_bfdot;
/* The driver's table of those this build has, in the rule's order, the
 * tests' own last (gemm_bf16.c). */
extern const rf_bf16_backend *const rf_bf16_backends[];
extern const int rf_bf16_backend_count;

/* x86-64 (each needs what its name says; the driver checks the CPU):
 * rf_bf16_backend_amx          TDPBF16PS tiles (AMX-BF16), x86/amx/gemm_bf16_amx.c;
 * rf_bf16_backend_amx_emulated the same loops on emulated/amx_emulator.h's C
 *                           emulator of the tile instructions (AVX2; tests
 *                           only), emulated/gemm_bf16_amx_emulated.c;
 * rf_bf16_backend_avx512bf16   VDPBF16PS (AVX512_BF16), x86/gemm_bf16_avx512.c;
 * rf_bf16_backend_f32fma       the bf16 operands widened to f32 in registers
 *                           and summed by f32 FMA (AVX512F; it rounds and
 *                           packs on AVX512_BF16), x86/gemm_bf16_f32fma.c.
 * ARM64 (BF16), arm/gemm_bf16_neon.c:
 * rf_bf16_backend_bfmmla       BFMMLA, 2 x 2 outputs of 4 inputs each;
 * rf_bf16_backend_bfdot        BFDOT, 4 outputs of 2 inputs each. */

#endif
