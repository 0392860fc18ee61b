/*
 * gemm_bf16_avx512.c — the bf16 product on VDPBF16PS (AVX512_BF16), a
 * backend of gemm_bf16_backend.h. The rule of gemm_bf16.h picks it on AMD
 * CPUs (Zen 4 and 5), where VDPBF16PS runs at twice their f32 FMA rate;
 * on Intel's it runs at half (docs/compute.md has the rates).
 *
 * Blocking, per thread: rows in blocks of MC, inputs in chunks of KC_PAIRS
 * pairs (the MC x KC block of X stays in L2), and for each pair of
 * 16-column panels (a KC x 32 sliver of W, 24 KiB, stays in L1) a 12 x 32
 * tile of Y is accumulated in 24 registers: per pair of inputs, two loads
 * of W and 24 VDPBF16PS whose X operand is a broadcast from memory (MR x
 * NP panels in general, 12 x 2 the shape in use).
 * Partial sums go through Y between chunks; bias enters with the first
 * chunk and the activation follows the last, on the tile still in cache.
 */
#include "kernels/simd.h"

#if RF_SIMD_X86
#include "kernels/x86/gemm_bf16_avx512_nest.h"

#define PANEL RF_BF16_PANEL
#ifndef NP
#define NP 2           /* panels per register tile */
#endif
#ifndef MR
#define MR 12          /* rows per register tile: MR x NP accumulators */
#endif
#define NR (NP * PANEL) /* columns per register tile */
#define MC 192         /* rows per L2 block */
#define KC_PAIRS 192   /* pairs of inputs per chunk */

#define RF_TARGET_BF16 __attribute__((target("avx512f,avx512bw,avx512bf16")))

/* One tile: rows [0, mr) of A (bf16 pairs, lda pairs a row) times pairs
 * [0, n_pairs) of the NP panels from W0 (panel_stride apart), into Y
 * (cols <= NR valid columns). first: start from the bias (or 0), else
 * from Y (x86/gemm_bf16_avx512_nest.h). */
RF_TARGET_BF16 static inline __attribute__((always_inline)) void
tile(const int mr, const uint32_t *A, int lda, const uint16_t *W0, size_t panel_stride,
     int n_pairs, float *Y, int ldy, int cols, const float *bias, bool first)
{
    __m512 acc[MR][NP];
    __mmask16 mask[NP];
    rf_bf16_tile_start(mr, NP, &acc[0][0], mask, Y, ldy, cols, bias, first);
    for (int i = 0; i < n_pairs; i++) {
        __m512bh w[NP];
        for (int p = 0; p < NP; p++)
            w[p] = (__m512bh)_mm512_loadu_si512(
                (const void *)(W0 + p * panel_stride + (size_t)i * 2 * PANEL));
#pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            __m512bh a = (__m512bh)_mm512_set1_epi32((int)A[(size_t)r * lda + i]);
            for (int p = 0; p < NP; p++)
                acc[r][p] = _mm512_dpbf16_ps(acc[r][p], a, w[p]);
        }
    }
    rf_bf16_tile_store(mr, NP, &acc[0][0], mask, Y, ldy);
}

RF_TARGET_BF16 static void tile_any(int mr, const void *x, int row, int kp, const uint16_t *W0,
                                    size_t panel_stride, int n_pairs, float *Y, int ldy, int cols,
                                    const float *bias, bool first)
{
    const uint32_t *A = (const uint32_t *)x + (size_t)row * kp;
    switch (mr) {
#define TILE_CASE(n) \
    case n: tile(n, A, kp, W0, panel_stride, n_pairs, Y, ldy, cols, bias, first); break;
        TILE_CASE(1) TILE_CASE(2) TILE_CASE(3) TILE_CASE(4) TILE_CASE(5) TILE_CASE(6)
#if MR > 6
        TILE_CASE(7) TILE_CASE(8)
#endif
#if MR > 8
        TILE_CASE(9) TILE_CASE(10) TILE_CASE(11) TILE_CASE(12)
#endif
#undef TILE_CASE
    default: break;
    }
}

/* The tiles read the bf16 pairs where they are. */
static const void *chunk_pairs(const uint16_t *Xb, int kp, int mc, int rows, int kc, int n_pairs,
                               void *buf)
{
    (void)rows, (void)n_pairs, (void)buf;
    return (const uint32_t *)(const void *)Xb + (size_t)mc * kp + kc;
}

RF_TARGET_BF16 static void gemm(const uint16_t *Xb, int K, int m0, int m1, const uint16_t *Wp,
                                int n0, int n1, const float *b, rf_activation act,
                                const rf_block_post *post, float *Y, int ldy)
{
    rf_bf16_blocked(Xb, K, m0, m1, Wp, n0, n1, b, act, post, Y, ldy, MC, KC_PAIRS, MR, NR,
                    chunk_pairs, tile_any, NULL);
}

const rf_bf16_ops rf_bf16_ops_avx512bf16 = {
    .attention_fast = true,
    .packing = &rf_bf16_packing_avx512,
    .gemm = gemm,
};
#endif /* RF_SIMD_X86 */
