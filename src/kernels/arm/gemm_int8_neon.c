/*
 * gemm_int8_neon.c — the int8 Linear's product on ARM64 (see gemm_int8.h
 * for the quantization and the packed layout), in three builds chosen at
 * run time (gemm_int8.c, gemm_int8_backend.h):
 *
 *   RF_INT8_NEON  every ARMv8-A CPU: SMULL (int8 x int8 -> int16, exact:
 *                 |product| <= 128 * 128) then SADALP (pairs of int16
 *                 added into int32, exact).
 *   RF_INT8_SDOT  ARMv8.2 dot product: one SDOT adds 4 products into each
 *                 int32 lane. The packed panel's 16 bytes of a quad (4
 *                 channels x 4 inputs) against the row's quad broadcast
 *                 give 4 channels' sums at once: the layout is SDOT's.
 *   RF_INT8_I8MM  SMMLA: a 2 x 8 block of rows times a 2 x 8 block of
 *                 channels into 2 x 2 int32 sums. Two quads of the panel,
 *                 interleaved by ZIP1 / ZIP2 of 32-bit lanes, are the 8
 *                 inputs of 2 channels side by side: SMMLA's operand.
 *
 * All three sum in int32 without saturation, so they give the naive sums
 * exactly (|sum| <= K * 127 * 127 < 2^31 for any K of a model).
 * Tiles: MR rows x the panel's 16 channels, 16 int32x4 accumulators
 * (8 for RF_INT8_NEON's 2 rows of half-sums), held for the whole of K.
 */
#include "kernels/elementwise_ops.h"
#include "kernels/gemm_int8_backend.h"
#include "kernels/simd.h"

#if RF_SIMD_ARM64
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#define PANEL RF_INT8_PANEL /* output channels per panel (gemm_int8.h) */
#define MR 4                /* rows per SDOT / SMMLA tile */
#define MR_NEON 2           /* rows per SMULL tile */

/* Pass 2 of quantize_rows_vec: 8 values at a time centered, rounded to
 * nearest even (FCVTNS) and narrowed; |value| <= 127, so nothing
 * saturates. */
static inline __attribute__((always_inline)) int narrow_row(const float *x, int K, float c,
                                                            float inv, int8_t *q, bool flip)
{
    (void)flip; /* the NEON rows are signed */
    float32x4_t vinv = vdupq_n_f32(inv), vc = vdupq_n_f32(c);
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        int32x4_t a = vcvtnq_s32_f32(vmulq_f32(vsubq_f32(vld1q_f32(x + k), vc), vinv));
        int32x4_t b = vcvtnq_s32_f32(vmulq_f32(vsubq_f32(vld1q_f32(x + k + 4), vc), vinv));
        vst1_s8(q + k, vqmovn_s16(vcombine_s16(vqmovn_s32(a), vqmovn_s32(b))));
    }
    return k;
}

#include "kernels/gemm_int8_quantize_vec.h"

static void quantize_rows(const float *X, int K, int m0, int m1, int8_t *Xq, float *scale,
                          float *center)
{
    quantize_rows_vec(X, K, m0, m1, Xq, scale, center, false);
}

/* ==== Tiles: rows [0, mr) of A (rows lda bytes apart) times one packed
 * panel over kq quads, into C (mr x 16 int32); signed sums, so colsum is
 * not needed. mr is a constant at every call, so the loops unroll and the
 * sums stay in registers. ==== */

/* Quad i of the panel W: 16 channels x 4 inputs, channel-major in 4
 * vectors of 4 channels. */
static inline __attribute__((always_inline)) void panel_quad(const int8_t *W, int i, int8x16_t w[4])
{
    #pragma GCC unroll 8
    for (int v = 0; v < 4; v++)
        w[v] = vld1q_s8(W + (size_t)i * 64 + v * 16);
}

/* Quad i of row r of A in each 32-bit lane. */
static inline __attribute__((always_inline)) int8x16_t
row_quad(const int8_t *A, size_t lda, int r, int i)
{
    int32_t quad;
    memcpy(&quad, A + (size_t)r * lda + (size_t)i * 4, 4);
    return vreinterpretq_s8_s32(vdupq_n_s32(quad));
}

static inline __attribute__((always_inline)) void
tile_smull(const int mr, const int8_t *A, size_t lda, const int8_t *W, int kq,
           const int32_t *colsum, int32_t *C)
{
    (void)colsum;
    /* acc[r][h]: lanes (channel 2h', inputs 0-1), (2h', 2-3), (2h'+1, 0-1),
       (2h'+1, 2-3) of the 4 channels of vector h / 2 */
    int32x4_t acc[MR_NEON][8];
    #pragma GCC unroll 8
    for (int r = 0; r < mr; r++)
        #pragma GCC unroll 8
        for (int h = 0; h < 8; h++)
            acc[r][h] = vdupq_n_s32(0);
    for (int i = 0; i < kq; i++) {
        int8x16_t w[4];
        panel_quad(W, i, w);
        #pragma GCC unroll 8
        for (int r = 0; r < mr; r++) {
            int8x16_t a = row_quad(A, lda, r, i);
            #pragma GCC unroll 8
            for (int v = 0; v < 4; v++) {
                acc[r][2 * v] = vpadalq_s16(acc[r][2 * v], vmull_s8(vget_low_s8(a), vget_low_s8(w[v])));
                acc[r][2 * v + 1] = vpadalq_s16(acc[r][2 * v + 1], vmull_high_s8(a, w[v]));
            }
        }
    }
    #pragma GCC unroll 8
    for (int r = 0; r < mr; r++)
        #pragma GCC unroll 8
        for (int v = 0; v < 4; v++)
            vst1q_s32(C + r * PANEL + 4 * v, vpaddq_s32(acc[r][2 * v], acc[r][2 * v + 1]));
}

RF_TARGET_DOTPROD static inline __attribute__((always_inline)) void
tile_sdot(const int mr, const int8_t *A, size_t lda, const int8_t *W, int kq,
          const int32_t *colsum, int32_t *C)
{
    (void)colsum;
    int32x4_t acc[MR][4];
    #pragma GCC unroll 8
    for (int r = 0; r < mr; r++)
        #pragma GCC unroll 8
        for (int v = 0; v < 4; v++)
            acc[r][v] = vdupq_n_s32(0);
    for (int i = 0; i < kq; i++) {
        int8x16_t w[4];
        panel_quad(W, i, w);
        #pragma GCC unroll 8
        for (int r = 0; r < mr; r++) {
            int8x16_t a = row_quad(A, lda, r, i);
            #pragma GCC unroll 8
            for (int v = 0; v < 4; v++)
                acc[r][v] = vdotq_s32(acc[r][v], w[v], a);
        }
    }
    #pragma GCC unroll 8
    for (int r = 0; r < mr; r++)
        #pragma GCC unroll 8
        for (int v = 0; v < 4; v++)
            vst1q_s32(C + r * PANEL + 4 * v, acc[r][v]);
}

/* 8 bytes of row `row` at quad i (and i + 1 when `two`), zeros past the
 * row's quads; rows past mr are zero. */
static inline __attribute__((always_inline)) int8x8_t
row_octet(const int8_t *A, size_t lda, int row, int mr, int i, bool two)
{
    if (row >= mr)
        return vdup_n_s8(0);
    int32_t q[2] = {0, 0};
    memcpy(q, A + (size_t)row * lda + (size_t)i * 4, two ? 8 : 4);
    return vreinterpret_s8_s32(vld1_s32(q));
}

RF_TARGET_I8MM static inline __attribute__((always_inline)) void
tile_smmla(const int mr, const int8_t *A, size_t lda, const int8_t *W, int kq,
           const int32_t *colsum, int32_t *C)
{
    (void)colsum;
    /* acc[p][c]: rows 2p, 2p + 1 x channels 2c, 2c + 1 */
    int32x4_t acc[MR / 2][8];
    #pragma GCC unroll 8
    for (int p = 0; p < MR / 2; p++)
        #pragma GCC unroll 8
        for (int c = 0; c < 8; c++)
            acc[p][c] = vdupq_n_s32(0);
    for (int i = 0; i < kq; i += 2) {
        bool two = i + 1 < kq;
        int8x16_t w[8];
        #pragma GCC unroll 8
        for (int v = 0; v < 4; v++) {
            int32x4_t q0 = vreinterpretq_s32_s8(vld1q_s8(W + (size_t)i * 64 + v * 16));
            int32x4_t q1 = two ? vreinterpretq_s32_s8(vld1q_s8(W + (size_t)(i + 1) * 64 + v * 16))
                               : vdupq_n_s32(0);
            w[2 * v] = vreinterpretq_s8_s32(vzip1q_s32(q0, q1));
            w[2 * v + 1] = vreinterpretq_s8_s32(vzip2q_s32(q0, q1));
        }
        #pragma GCC unroll 8
        for (int p = 0; p < (mr + 1) / 2; p++) {
            int8x16_t a = vcombine_s8(row_octet(A, lda, 2 * p, mr, i, two),
                                      row_octet(A, lda, 2 * p + 1, mr, i, two));
            #pragma GCC unroll 8
            for (int c = 0; c < 8; c++)
                acc[p][c] = vmmlaq_s32(acc[p][c], a, w[c]);
        }
    }
    /* a row's 4 channels 4v..4v+3 are the low (row 2p) or high (row
       2p + 1) halves of the channel pairs 2v and 2v + 1 */
    #pragma GCC unroll 8
    for (int p = 0; p < (mr + 1) / 2; p++)
        #pragma GCC unroll 8
        for (int v = 0; v < 4; v++) {
            int64x2_t lo = vreinterpretq_s64_s32(acc[p][2 * v]);
            int64x2_t hi = vreinterpretq_s64_s32(acc[p][2 * v + 1]);
            vst1q_s32(C + 2 * p * PANEL + 4 * v, vreinterpretq_s32_s64(vzip1q_s64(lo, hi)));
            if (2 * p + 1 < mr)
                vst1q_s32(C + (2 * p + 1) * PANEL + 4 * v,
                          vreinterpretq_s32_s64(vzip2q_s64(lo, hi)));
        }
}

/* Y (rows ldy apart) for a tile, `cols` of the 16 channels from n:
 * s_x[r] s_w[n] C + c_x[r] s_w[n] colsum[n] + bias[n], the terms grouped
 * as in rf_linear_int8_naive. */
static void dequantize_tile(const int32_t *C, int mr, int cols, const float *sx, const float *cx,
                            const float *sw, const int32_t *colsum, const float *bias, float *Y,
                            int ldy)
{
    #pragma GCC unroll 8
    for (int r = 0; r < mr; r++)
        for (int n = 0; n < cols; n++)
            Y[(size_t)r * ldy + n] = (float)C[r * PANEL + n] * (sx[r] * sw[n]) +
                                     (cx[r] * (sw[n] * (float)colsum[n]) + (bias ? bias[n] : 0.0f));
}

/* The epilogue: Y for a tile with the activation, or the raw sums. */
static void store_tile(const rf_int8_product *p, const int32_t *C, int m, int mr, int n, int cols)
{
    if (!p->sx) {
        rf_int8_store_sums(p, C, m, mr, n, cols);
        return;
    }
    float *y = p->Y + (size_t)m * p->ldy + n;
    dequantize_tile(C, mr, cols, p->sx + m, p->cx + m, p->W->scale + n, p->W->colsum + n,
                    p->bias ? p->bias + n : NULL, y, p->ldy);
    if (p->act != RF_ACT_LINEAR)
        rf_elementwise_baseline.bias_act(y, mr, cols, p->ldy, NULL, p->act);
}

RF_INT8_TILE_BLOCK(block_neon, , tile_smull, MR_NEON, store_tile)
RF_INT8_TILE_BLOCK(block_sdot, RF_TARGET_DOTPROD, tile_sdot, MR, store_tile)
RF_INT8_TILE_BLOCK(block_i8mm, RF_TARGET_I8MM, tile_smmla, MR, store_tile)

static int32_t row_sum(const int8_t *w, int K)
{
    int32_t sum = 0;
    for (int k = 0; k < K; k++)
        sum += w[k];
    return sum;
}

static const rf_int8_operands operands = {quantize_rows, false, row_sum};

const rf_int8_ops rf_int8_ops_neon = {
    .operands = &operands,
    .block = block_neon,
};
const rf_int8_ops rf_int8_ops_sdot = {
    .operands = &operands,
    .block = block_sdot,
};
const rf_int8_ops rf_int8_ops_i8mm = {
    .operands = &operands,
    .block = block_i8mm,
};
#endif /* RF_SIMD_ARM64 */
