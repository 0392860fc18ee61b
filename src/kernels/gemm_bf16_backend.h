/*
 * gemm_bf16_backend.h — the bf16 product's backends, one per instruction
 * set, behind the driver gemm_bf16.c. The driver rounds the inputs, packs
 * the weights (the layout of gemm_bf16.h), splits the work over threads
 * and calls the `gemm` of the backend chosen once (rf_bf16_backend_get)
 * for each block of the output. A backend reads those two operands and
 * writes its block; it never calls back into the driver. Adding an
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
#include "kernels/cpu.h"

#include <stdbool.h>
#include <stdint.h>

/* K rounded up to even: the row length of packed inputs, in pairs. */
static inline int rf_bf16_k_pairs(int K)
{
    return (K + 1) / 2;
}

typedef void rf_bf16_gemm_fn(const uint16_t *Xb, int K, int m0, int m1, const uint16_t *Wp, int n0,
                             int n1, const float *b, rf_activation act, float *Y, int ldy);

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
 * rf_bf16_backend_amx          TDPBF16PS tiles (AMX-BF16), gemm_bf16_amx.c;
 * rf_bf16_backend_amx_emulated the same loops on amx_emulator.h's C
 *                           emulator of the tile instructions (AVX2; tests
 *                           only), gemm_bf16_amx_emulated.c;
 * rf_bf16_backend_avx512bf16   VDPBF16PS (AVX512_BF16), gemm_bf16_avx512.c;
 * rf_bf16_backend_f32fma       the bf16 operands widened to f32 in registers
 *                           and summed by f32 FMA (AVX512F),
 *                           gemm_bf16_f32fma.c.
 * ARM64 (BF16), gemm_bf16_neon.c:
 * rf_bf16_backend_bfmmla       BFMMLA, 2 x 2 outputs of 4 inputs each;
 * rf_bf16_backend_bfdot        BFDOT, 4 outputs of 2 inputs each. */

#endif
