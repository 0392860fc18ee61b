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
#include "kernels/activations.h"
#include "kernels/gemm_bf16_backend.h"
#include "kernels/simd.h"

#if RF_SIMD_X86
#include <immintrin.h>

#define PANEL 16       /* output columns per panel */
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

static __mmask16 col_mask(int cols)
{
    return cols >= PANEL ? (__mmask16)0xffff : (__mmask16)((1u << (cols > 0 ? cols : 0)) - 1u);
}

/* One tile: rows [0, mr) of A (bf16 pairs, lda pairs a row) times pairs
 * [0, n_pairs) of the NP panels from W0 (panel_stride apart), into Y
 * (cols <= NR valid columns). first: start from the bias (or 0), else
 * from Y. mr is a constant at every call, so the loops unroll and the
 * accumulators stay in registers. */
RF_TARGET_BF16 static inline __attribute__((always_inline)) void
tile(const int mr, const uint32_t *A, int lda, const uint16_t *W0, size_t panel_stride,
     int n_pairs, float *Y, int ldy, int cols, const float *bias, bool first)
{
    __m512 acc[MR][NP];
    __mmask16 mask[NP];
    for (int p = 0; p < NP; p++)
        mask[p] = col_mask(cols - p * PANEL);
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++)
        for (int p = 0; p < NP; p++)
            acc[r][p] = first ? (bias ? _mm512_maskz_loadu_ps(mask[p], bias + p * PANEL)
                                      : _mm512_setzero_ps())
                              : _mm512_maskz_loadu_ps(mask[p], Y + (size_t)r * ldy + p * PANEL);
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
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++)
        for (int p = 0; p < NP; p++)
            _mm512_mask_storeu_ps(Y + (size_t)r * ldy + p * PANEL, mask[p], acc[r][p]);
}

RF_TARGET_BF16 static void tile_any(int mr, const uint32_t *A, int lda, const uint16_t *W0,
                                    size_t panel_stride, int n_pairs, float *Y, int ldy, int cols,
                                    const float *bias, bool first)
{
    switch (mr) {
#define TILE_CASE(n) \
    case n: tile(n, A, lda, W0, panel_stride, n_pairs, Y, ldy, cols, bias, first); break;
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

RF_TARGET_BF16 static void gemm(const uint16_t *Xb, int K, int m0, int m1, const uint16_t *Wp,
                                int n0, int n1, const float *b, rf_activation act, float *Y,
                                int ldy)
{
    int kp = rf_bf16_k_pairs(K);
    size_t panel_stride = (size_t)kp * 2 * PANEL;
    const uint32_t *A = (const uint32_t *)(const void *)Xb;
    for (int mc = m0; mc < m1; mc += MC) {
        int mc_end = mc + MC < m1 ? mc + MC : m1;
        for (int kc = 0; kc < kp; kc += KC_PAIRS) {
            int n_pairs = kp - kc < KC_PAIRS ? kp - kc : KC_PAIRS;
            bool first = kc == 0, last = kc + n_pairs == kp;
            for (int n = n0; n < n1; n += NR) {
                const uint16_t *W0 = Wp + (size_t)(n / PANEL) * panel_stride + (size_t)kc * 2 * PANEL;
                int cols = n1 - n < NR ? n1 - n : NR;
                for (int m = mc; m < mc_end; m += MR) {
                    int mr = mc_end - m < MR ? mc_end - m : MR;
                    float *y = Y + (size_t)m * ldy + n;
                    tile_any(mr, A + (size_t)m * kp + kc, kp, W0, panel_stride, n_pairs, y, ldy,
                             cols, b ? b + n : NULL, first);
                    if (last && act != RF_ACT_LINEAR)
                        rf_bias_act(y, mr, cols, ldy, NULL, act);
                }
            }
        }
    }
}

const rf_bf16_backend rf_bf16_backend_avx512bf16 = {
    .name = "avx512bf16",
    .needs = RF_CPU_NEEDS(RF_CPU_AVX512_BF16),
    .rule = RF_CPU_NEEDS(RF_CPU_AVX512_BF16) | RF_CPU_NEEDS(RF_CPU_AMD),
    .why = "AVX512_BF16 on AMD (VDPBF16PS at twice the f32 FMA rate)",
    .attention_fast = true,
    .gemm = gemm,
};
#endif /* RF_SIMD_X86 */
