/*
 * gemm_bf16_neon.c — the bf16 product on ARM64 CPUs with BF16, two
 * kernels of gemm_bf16_backend.h (the operands rounded and packed in
 * plain C, gemm_bf16_round.c, into gemm_bf16.h's layout):
 *
 *   "bfmmla"        a 2 x 4 block of rows times a 2 x 4 block of columns
 *                   into 2 x 2 f32 sums. Two pairs of the panel,
 *                   interleaved by ZIP1 / ZIP2 of 32-bit lanes, are 4
 *                   inputs of 2 columns side by side: BFMMLA's operand.
 *   "bfdot"         the panel's 16 bytes of a pair (4 columns x 2 inputs)
 *                   against the row's pair broadcast: 4 columns' sums.
 *
 * Both multiply bf16 exactly and add in f32 (BFDOT and BFMMLA round to
 * odd, and flush subnormals, unless the CPU has FEAT_EBF16 and it is on),
 * so a sum differs from the exact one of the rounded operands by at most
 * one f32 ulp per step: the same bound as the x86 build's, doubled.
 * Tiles: MR rows x one 16-column panel, 16 float32x4 accumulators held for
 * the whole of K; the bias is added as the tile is stored (as the naive
 * twin does), the activation follows on the tile still in cache.
 */
#include "kernels/elementwise_ops.h"
#include "kernels/gemm_bf16_backend.h"
#include "kernels/simd.h"

#if RF_SIMD_ARM64
#include <arm_neon.h>

#define PANEL 16 /* output columns per panel (gemm_bf16.h) */
#define MR 4     /* rows per tile */

/* ==== Tiles: rows [0, mr) of A (bf16 pairs, lda pairs a row) times one
 * panel W over kp pairs, into T (mr x 16 f32). mr is a constant at every
 * call, so the loops unroll and the sums stay in registers. ==== */

RF_TARGET_ARM_BF16 static inline __attribute__((always_inline)) void
tile_bfdot(const int mr, const uint32_t *A, int lda, const uint16_t *W, int kp, float *T)
{
    float32x4_t acc[MR][4];
#pragma GCC unroll 4
    for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++)
            acc[r][v] = vdupq_n_f32(0.0f);
    for (int i = 0; i < kp; i++) {
        bfloat16x8_t w[4];
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++)
            w[v] = vreinterpretq_bf16_u16(vld1q_u16(W + (size_t)i * 2 * PANEL + v * 8));
#pragma GCC unroll 4
        for (int r = 0; r < mr; r++) {
            bfloat16x8_t a = vreinterpretq_bf16_u32(vdupq_n_u32(A[(size_t)r * lda + i]));
#pragma GCC unroll 4
            for (int v = 0; v < 4; v++)
                acc[r][v] = vbfdotq_f32(acc[r][v], w[v], a);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++)
            vst1q_f32(T + r * PANEL + 4 * v, acc[r][v]);
}

/* Pairs i and i + 1 (when `two`) of row `row`, zeros past the row's
 * pairs; rows past mr are zero. */
static inline __attribute__((always_inline)) uint32x2_t
row_pairs(const uint32_t *A, int lda, int row, int mr, int i, bool two)
{
    if (row >= mr)
        return vdup_n_u32(0);
    const uint32_t *a = A + (size_t)row * lda + i;
    return two ? vld1_u32(a) : vset_lane_u32(a[0], vdup_n_u32(0), 0);
}

RF_TARGET_ARM_BF16 static inline __attribute__((always_inline)) void
tile_bfmmla(const int mr, const uint32_t *A, int lda, const uint16_t *W, int kp, float *T)
{
    /* acc[p][c]: rows 2p, 2p + 1 x columns 2c, 2c + 1 */
    float32x4_t acc[MR / 2][8];
#pragma GCC unroll 2
    for (int p = 0; p < MR / 2; p++)
#pragma GCC unroll 8
        for (int c = 0; c < 8; c++)
            acc[p][c] = vdupq_n_f32(0.0f);
    for (int i = 0; i < kp; i += 2) {
        bool two = i + 1 < kp;
        bfloat16x8_t w[8];
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) {
            uint32x4_t q0 = vreinterpretq_u32_u16(vld1q_u16(W + (size_t)i * 2 * PANEL + v * 8));
            uint32x4_t q1 = two ? vreinterpretq_u32_u16(vld1q_u16(W + (size_t)(i + 1) * 2 * PANEL + v * 8))
                                : vdupq_n_u32(0);
            w[2 * v] = vreinterpretq_bf16_u32(vzip1q_u32(q0, q1));
            w[2 * v + 1] = vreinterpretq_bf16_u32(vzip2q_u32(q0, q1));
        }
#pragma GCC unroll 2
        for (int p = 0; p < (mr + 1) / 2; p++) {
            bfloat16x8_t a = vreinterpretq_bf16_u32(vcombine_u32(
                row_pairs(A, lda, 2 * p, mr, i, two), row_pairs(A, lda, 2 * p + 1, mr, i, two)));
#pragma GCC unroll 8
            for (int c = 0; c < 8; c++)
                acc[p][c] = vbfmmlaq_f32(acc[p][c], a, w[c]);
        }
    }
    /* a row's columns 4v..4v+3 are the low (row 2p) or high (row 2p + 1)
       halves of the column pairs 2v and 2v + 1 */
#pragma GCC unroll 2
    for (int p = 0; p < (mr + 1) / 2; p++)
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) {
            float64x2_t lo = vreinterpretq_f64_f32(acc[p][2 * v]);
            float64x2_t hi = vreinterpretq_f64_f32(acc[p][2 * v + 1]);
            vst1q_f32(T + 2 * p * PANEL + 4 * v, vreinterpretq_f32_f64(vzip1q_f64(lo, hi)));
            if (2 * p + 1 < mr)
                vst1q_f32(T + (2 * p + 1) * PANEL + 4 * v,
                          vreinterpretq_f32_f64(vzip2q_f64(lo, hi)));
        }
}

RF_TARGET_ARM_BF16 static void tile_any(bool bfdot, int mr, const uint32_t *A, int lda,
                                        const uint16_t *W, int kp, float *T)
{
    if (bfdot) {
        switch (mr) {
        case 1: tile_bfdot(1, A, lda, W, kp, T); break;
        case 2: tile_bfdot(2, A, lda, W, kp, T); break;
        case 3: tile_bfdot(3, A, lda, W, kp, T); break;
        default: tile_bfdot(MR, A, lda, W, kp, T); break;
        }
        return;
    }
    switch (mr) {
    case 1: tile_bfmmla(1, A, lda, W, kp, T); break;
    case 2: tile_bfmmla(2, A, lda, W, kp, T); break;
    case 3: tile_bfmmla(3, A, lda, W, kp, T); break;
    default: tile_bfmmla(MR, A, lda, W, kp, T); break;
    }
}

static void gemm_block(bool bfdot, const uint16_t *Xb, int K, int m0, int m1, const uint16_t *Wp,
                       int n0, int n1, const float *b, rf_activation act,
                       const rf_block_post *post, float *Y, int ldy)
{
    int kp = rf_bf16_k_pairs(K);
    size_t panel_stride = (size_t)kp * 2 * PANEL;
    const uint32_t *A = (const uint32_t *)(const void *)Xb;
    float T[MR * PANEL];
    int post_n0 = n0; /* the first column post has not seen */
    for (int n = n0; n < n1; n += PANEL) {
        const uint16_t *W = Wp + (size_t)(n / PANEL) * panel_stride;
        int cols = n1 - n < PANEL ? n1 - n : PANEL;
        for (int m = m0; m < m1; m += MR) {
            int mr = m1 - m < MR ? m1 - m : MR;
            tile_any(bfdot, mr, A + (size_t)m * kp, kp, W, kp, T);
            float *y = Y + (size_t)m * ldy + n;
            for (int r = 0; r < mr; r++)
                for (int c = 0; c < cols; c++)
                    y[(size_t)r * ldy + c] = T[r * PANEL + c] + (b ? b[n + c] : 0.0f);
            if (act != RF_ACT_LINEAR)
                rf_elementwise_baseline.bias_act(y, mr, cols, ldy, NULL, act);
        }
        rf_block_post_columns(post, Y, ldy, m0, m1, &post_n0, n + cols, n1);
    }
}

static void gemm_bfmmla(const uint16_t *Xb, int K, int m0, int m1, const uint16_t *Wp, int n0,
                        int n1, const float *b, rf_activation act, const rf_block_post *post,
                        float *Y, int ldy)
{
    gemm_block(false, Xb, K, m0, m1, Wp, n0, n1, b, act, post, Y, ldy);
}

static void gemm_bfdot(const uint16_t *Xb, int K, int m0, int m1, const uint16_t *Wp, int n0,
                       int n1, const float *b, rf_activation act, const rf_block_post *post,
                       float *Y, int ldy)
{
    gemm_block(true, Xb, K, m0, m1, Wp, n0, n1, b, act, post, Y, ldy);
}

/* BFDOT is never the rule's (BFMMLA needs the same and is faster): a
 * user's choice */
const rf_bf16_ops rf_bf16_ops_bfmmla = {
    .attention_fast = true,
    .packing = &rf_bf16_packing_c,
    .gemm = gemm_bfmmla,
};
const rf_bf16_ops rf_bf16_ops_bfdot = {
    .attention_fast = true,
    .packing = &rf_bf16_packing_c,
    .gemm = gemm_bfdot,
};
#endif /* RF_SIMD_ARM64 */
