/*
 * gemm_bf16_f32fma.c — the bf16 product on f32 FMA (AVX-512), a backend of
 * gemm_bf16_backend.h, for Intel CPUs with AVX512_BF16 but no AMX-BF16
 * (Cooper Lake; Sapphire Rapids and later where the OS refuses the tile
 * state). There VDPBF16PS runs at half the f32 FMA rate (docs/compute.md
 * has the rates): widening bf16 to f32 is a 16-bit shift, and each
 * product of two bf16 values is exact in f32, so f32 FMA on the same
 * rounded operands computes the same sums as VDPBF16PS (up to the order
 * of the f32 adds) at the FMA rate.
 *
 * Blocking, per thread: rows in blocks of MC, inputs in chunks of
 * KC_PAIRS pairs; each chunk of the row block's inputs is widened once
 * into `xf` (MC x 2 KC_PAIRS f32, 48 KiB, in L2), then for each pair of
 * 16-column panels (KC_PAIRS x 32 bf16, 16 KiB, in L1) a 12 x 32 tile of
 * Y is accumulated in 24 registers: per pair of inputs, two 64-byte loads
 * of W widened in registers (a shift for the even input, a mask for the
 * odd), and 48 FMAs whose X operand is a broadcast from xf. Partial sums
 * go through Y between chunks; bias enters with the first chunk and the
 * activation follows the last, on the tile still in cache.
 */
#include "kernels/simd.h"

#if RF_SIMD_X86
#include "kernels/x86/gemm_bf16_avx512_nest.h"

#define PANEL RF_BF16_PANEL
#define NP 2          /* panels per register tile */
#define MR 12         /* rows per register tile: MR x NP accumulators */
#define NR (NP * PANEL)
#define MC 48         /* rows per block */
#define KC_PAIRS 128  /* pairs of inputs per chunk */

#define RF_TARGET_F32FMA __attribute__((target("avx512f,avx512bw,avx512vl")))

/* Rows [0, rows) of A (bf16, lda pairs a row), pairs [0, n_pairs),
 * widened into xf (rows 2 KC_PAIRS floats apart, inputs in order). */
RF_TARGET_F32FMA static void widen_rows(const uint16_t *A, int lda, int rows, int n_pairs,
                                        float *xf)
{
    int n = 2 * n_pairs;
    for (int r = 0; r < rows; r++) {
        const uint16_t *a = A + (size_t)r * lda * 2;
        float *x = xf + (size_t)r * 2 * KC_PAIRS;
        for (int k = 0; k < n; k += 16) {
            __mmask16 m = rf_bf16_col_mask(n - k);
            __m512i h = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, a + k));
            _mm512_mask_storeu_ps(x + k, m, _mm512_castsi512_ps(_mm512_slli_epi32(h, 16)));
        }
    }
}

/* One tile: rows [0, mr) of xf times pairs [0, n_pairs) of the NP panels
 * from W0 (panel_stride apart), into Y (cols <= NR valid columns). first:
 * start from the bias (or 0), else from Y (x86/gemm_bf16_avx512_nest.h). */
RF_TARGET_F32FMA static inline __attribute__((always_inline)) void
tile(const int mr, const float *xf, const uint16_t *W0, size_t panel_stride, int n_pairs,
     float *Y, int ldy, int cols, const float *bias, bool first)
{
    __m512 acc[MR][NP];
    __mmask16 mask[NP];
    const __m512i odd = _mm512_set1_epi32((int)0xffff0000u);
    rf_bf16_tile_start(mr, NP, &acc[0][0], mask, Y, ldy, cols, bias, first);
    for (int i = 0; i < n_pairs; i++) {
        __m512 we[NP], wo[NP];
        for (int p = 0; p < NP; p++) {
            __m512i w = _mm512_loadu_si512(
                (const void *)(W0 + p * panel_stride + (size_t)i * 2 * PANEL));
            we[p] = _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
            wo[p] = _mm512_castsi512_ps(_mm512_and_si512(w, odd));
        }
#pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            __m512 xe = _mm512_set1_ps(xf[(size_t)r * 2 * KC_PAIRS + 2 * i]);
            __m512 xo = _mm512_set1_ps(xf[(size_t)r * 2 * KC_PAIRS + 2 * i + 1]);
            for (int p = 0; p < NP; p++)
                acc[r][p] = _mm512_fmadd_ps(xo, wo[p], _mm512_fmadd_ps(xe, we[p], acc[r][p]));
        }
    }
    rf_bf16_tile_store(mr, NP, &acc[0][0], mask, Y, ldy);
}

RF_TARGET_F32FMA static void tile_any(int mr, const void *x, int row, int kp, const uint16_t *W0,
                                      size_t panel_stride, int n_pairs, float *Y, int ldy, int cols,
                                      const float *bias, bool first)
{
    (void)kp;
    const float *xf = (const float *)x + (size_t)row * 2 * KC_PAIRS;
    switch (mr) {
#define TILE_CASE(n) \
    case n: tile(n, xf, W0, panel_stride, n_pairs, Y, ldy, cols, bias, first); break;
        TILE_CASE(1) TILE_CASE(2) TILE_CASE(3) TILE_CASE(4) TILE_CASE(5) TILE_CASE(6)
        TILE_CASE(7) TILE_CASE(8) TILE_CASE(9) TILE_CASE(10) TILE_CASE(11) TILE_CASE(12)
#undef TILE_CASE
    default: break;
    }
}

/* The tiles read the chunk widened into buf (xf). */
RF_TARGET_F32FMA static const void *chunk_widened(const uint16_t *Xb, int kp, int mc, int rows,
                                                  int kc, int n_pairs, void *buf)
{
    widen_rows(Xb + ((size_t)mc * kp + kc) * 2, kp, rows, n_pairs, buf);
    return buf;
}

RF_TARGET_F32FMA static void gemm(const uint16_t *Xb, int K, int m0, int m1, const uint16_t *Wp,
                                  int n0, int n1, const float *b, rf_activation act,
                                  const rf_block_post *post, float *Y, int ldy)
{
    float xf[MC * 2 * KC_PAIRS] __attribute__((aligned(64)));
    rf_bf16_blocked(Xb, K, m0, m1, Wp, n0, n1, b, act, post, Y, ldy, MC, KC_PAIRS, MR, NR,
                    chunk_widened, tile_any, xf);
}

const rf_bf16_ops rf_bf16_ops_f32fma = {
    .packing = &rf_bf16_packing_avx512,
    .gemm = gemm,
};
#endif /* RF_SIMD_X86 */
