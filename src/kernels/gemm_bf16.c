/*
 * gemm_bf16.c — the bf16 Linear layer (see gemm_bf16.h for the packed
 * weight layout), the single-thread pieces attention uses (rounding rows,
 * packing rows or a transposed matrix, one product), and the naive twin.
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
#include "kernels/gemm_bf16.h"
#include "kernels/activations.h"
#include "formats/fp16.h"
#include "kernels/gemm_neon.h"
#include "kernels/linalg.h"
#include "kernels/simd.h"

#include <string.h>

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

static int padded_n(int N)
{
    return (N + NR - 1) / NR * NR;
}

size_t rf_bf16_packed_size(int N, int K)
{
    return (size_t)padded_n(N) * (size_t)rf_bf16_k_pairs(K) * 2;
}

size_t rf_bf16_scratch_size(int M, int K)
{
    return (size_t)M * (size_t)rf_bf16_k_pairs(K) * 2;
}

bool rf_bf16_supported(void)
{
#if RF_SIMD_X86
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
#else
    return rf_cpu_has_arm_bf16();
#endif
}

#if RF_SIMD_X86
#include <immintrin.h>

#define RF_TARGET_BF16 __attribute__((target("avx512f,avx512bw,avx512bf16")))

static __mmask16 col_mask(int cols)
{
    return cols >= PANEL ? (__mmask16)0xffff : (__mmask16)((1u << (cols > 0 ? cols : 0)) - 1u);
}

/* Rounds scale * rows [m0, m1) of X (rows ldx apart, K used) to bf16
 * pairs: row r of `out` is kp = ceil(K / 2) uint32, the odd K padded with
 * a zero. */
RF_TARGET_BF16 static void round_rows(const float *X, size_t ldx, int K, float scale, int m0,
                                      int m1, uint16_t *out)
{
    int kp = rf_bf16_k_pairs(K);
    __m512 s = _mm512_set1_ps(scale);
    for (int r = m0; r < m1; r++) {
        const float *x = X + (size_t)r * ldx;
        uint16_t *o = out + (size_t)r * kp * 2;
        int k = 0;
        for (; k + 32 <= K; k += 32) {
            __m512 lo = _mm512_mul_ps(s, _mm512_loadu_ps(x + k));
            __m512 hi = _mm512_mul_ps(s, _mm512_loadu_ps(x + k + 16));
            _mm512_storeu_si512((void *)(o + k), (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
        }
        for (; k < K; k++)
            o[k] = rf_f32_to_bf16(scale * x[k]);
        if (K & 1)
            o[K] = 0;
    }
}

/* 16 floats rounded to bf16, each in the low half of a 32-bit lane. */
RF_TARGET_BF16 static inline __m512i bf16_lanes(__m512 x)
{
    return _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(x));
}

/* Packs W = V^T (N x K) where V is K x N, rows ldv apart: the pair of
 * inputs i of panel p is rows 2i and 2i + 1 of V at columns 16p..16p+15,
 * interleaved, one 64-byte store. */
RF_TARGET_BF16 static void pack_transposed(const float *V, int K, int N, size_t ldv, uint16_t *dst)
{
    int kp = rf_bf16_k_pairs(K), np = padded_n(N) / PANEL;
    for (int i = 0; i < kp; i++) {
        const float *r0 = V + (size_t)(2 * i) * ldv, *r1 = r0 + ldv;
        bool has_r1 = 2 * i + 1 < K;
        for (int p = 0; p < np; p++) {
            __mmask16 m = col_mask(N - p * PANEL);
            __m512i lo = bf16_lanes(_mm512_maskz_loadu_ps(m, r0 + p * PANEL));
            __m512i hi = has_r1 ? bf16_lanes(_mm512_maskz_loadu_ps(m, r1 + p * PANEL))
                                : _mm512_setzero_si512();
            __m512i pairs = _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16));
            _mm512_storeu_si512((void *)(dst + ((size_t)p * kp + i) * 2 * PANEL), pairs);
        }
    }
}

/* Packs W (N x K, rows ldw apart): each row rounded 32 inputs at a time,
 * its 16 pairs then stored 16 pairs apart (one per input pair of the
 * row's panel); rows past N are zero. */
RF_TARGET_BF16 static void pack_rows(const float *W, int N, int K, size_t ldw, uint16_t *dst)
{
    int kp = rf_bf16_k_pairs(K), n_pad = padded_n(N);
    uint32_t *out = (uint32_t *)(void *)dst;
    for (int n = 0; n < n_pad; n++) {
        uint32_t *col = out + (size_t)(n / PANEL) * kp * PANEL + n % PANEL;
        for (int k = 0; k < 2 * kp; k += 32) {
            uint32_t pairs[16];
            if (n < N) {
                __mmask16 m0 = col_mask(K - k), m1 = col_mask(K - k - PANEL);
                __m512 lo = _mm512_maskz_loadu_ps(m0, W + (size_t)n * ldw + k);
                __m512 hi = _mm512_maskz_loadu_ps(m1, W + (size_t)n * ldw + k + PANEL);
                _mm512_storeu_si512((void *)pairs, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
            } else {
                memset(pairs, 0, sizeof pairs);
            }
            for (int q = 0; q < 16 && k / 2 + q < kp; q++)
                col[(size_t)(k / 2 + q) * PANEL] = pairs[q];
        }
    }
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

/* Y rows [m0, m1), columns [n0, n1) (n0 a multiple of NR), rows of Y ldy
 * apart. */
RF_TARGET_BF16 static void gemm_block(const uint16_t *Xb, int K, int m0, int m1, const uint16_t *Wp,
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
#elif RF_SIMD_ARM64
/* The ARM64 builds (gemm_bf16_neon.c) in the x86 builds' place. */
static void round_rows(const float *X, size_t ldx, int K, float scale, int m0, int m1,
                       uint16_t *out)
{
    rf_bf16_round_neon(X, ldx, K, scale, m0, m1, out);
}

static void pack_rows(const float *W, int N, int K, size_t ldw, uint16_t *dst)
{
    rf_bf16_pack_rows_neon(W, N, K, ldw, dst);
}

static void pack_transposed(const float *V, int K, int N, size_t ldv, uint16_t *dst)
{
    rf_bf16_pack_transposed_neon(V, K, N, ldv, dst);
}

static void gemm_block(const uint16_t *Xb, int K, int m0, int m1, const uint16_t *Wp, int n0,
                       int n1, const float *b, rf_activation act, float *Y, int ldy)
{
    rf_bf16_gemm_block_neon(Xb, K, m0, m1, Wp, n0, n1, b, act, Y, ldy);
}
#endif /* RF_SIMD_X86, RF_SIMD_ARM64 */

struct bf16_job {
    const float *X;
    const uint16_t *W;
    const float *b;
    int M, K, N, n_blocks;
    rf_activation act;
    float *Y;
    uint16_t *Xb;
    bool split_rows;
};

static void round_task(void *arg, int block, int thread)
{
    (void)thread;
    const struct bf16_job *j = arg;
    int s, n;
    rf_block_range(j->M, j->n_blocks, block, 1, &s, &n);
#if RF_SIMD_X86 || RF_SIMD_ARM64
    round_rows(j->X, (size_t)j->K, j->K, 1.0f, s, s + n, j->Xb);
#endif
}

static void gemm_task(void *arg, int block, int thread)
{
    (void)thread;
    const struct bf16_job *j = arg;
    int s, n;
#if RF_SIMD_X86 || RF_SIMD_ARM64
    if (j->split_rows) {
        rf_block_range(j->M, j->n_blocks, block, 1, &s, &n);
        if (n > 0)
            gemm_block(j->Xb, j->K, s, s + n, j->W, 0, j->N, j->b, j->act, j->Y, j->N);
    } else {
        rf_block_range(j->N, j->n_blocks, block, NR, &s, &n);
        if (n > 0)
            gemm_block(j->Xb, j->K, 0, j->M, j->W, s, s + n, j->b, j->act, j->Y, j->N);
    }
#else
    (void)j, (void)s, (void)n;
#endif
}

void rf_linear_bf16(const rf_parallel *pool, const float *X, int M, int K, const uint16_t *W_packed,
                    const float *b, int N, rf_activation act, float *Y, uint16_t *scratch)
{
    struct bf16_job job = {X, W_packed, b, M, K, N, 1, act, Y, scratch, true};
    job.n_blocks = rf_linear_blocks(pool, M, N, K, &job.split_rows);
    int n_threads = rf_parallel_threads(pool);
    /* every thread reads all rows when columns are split: round them first */
    int round_blocks = n_threads < M ? n_threads : 1;
    struct bf16_job round = job;
    round.n_blocks = round_blocks;
    rf_parallel_run(pool, round_blocks, round_task, &round);
    rf_parallel_run(pool, job.n_blocks, gemm_task, &job);
}

void rf_bf16_round(const float *X, int M, int K, size_t ldx, float scale, uint16_t *out)
{
#if RF_SIMD_X86 || RF_SIMD_ARM64
    round_rows(X, ldx, K, scale, 0, M, out);
#else
    (void)X, (void)M, (void)K, (void)ldx, (void)scale, (void)out;
#endif
}

void rf_bf16_pack(const float *W, int N, int K, uint16_t *dst)
{
    rf_bf16_pack_rows(W, N, K, (size_t)K, dst);
}

void rf_bf16_pack_rows(const float *W, int N, int K, size_t ldw, uint16_t *dst)
{
#if RF_SIMD_X86 || RF_SIMD_ARM64
    pack_rows(W, N, K, ldw, dst);
#else
    (void)W, (void)N, (void)K, (void)ldw, (void)dst;
#endif
}

void rf_bf16_pack_transposed(const float *V, int K, int N, size_t ldv, uint16_t *dst)
{
#if RF_SIMD_X86 || RF_SIMD_ARM64
    pack_transposed(V, K, N, ldv, dst);
#else
    (void)V, (void)K, (void)N, (void)ldv, (void)dst;
#endif
}

void rf_gemm_bf16(const uint16_t *Xb, int M, int K, const uint16_t *W_packed, int N, float *Y,
                  int ldy)
{
#if RF_SIMD_X86 || RF_SIMD_ARM64
    gemm_block(Xb, K, 0, M, W_packed, 0, N, NULL, RF_ACT_LINEAR, Y, ldy);
#else
    (void)Xb, (void)M, (void)K, (void)W_packed, (void)N, (void)Y, (void)ldy;
#endif
}

void rf_linear_bf16_naive(const float *X, int M, int K, const float *W, const float *b, int N,
                          rf_activation act, float *Y)
{
    for (int i = 0; i < M; i++)
        for (int n = 0; n < N; n++) {
            double sum = 0.0;
            for (int k = 0; k < K; k++)
                sum += (double)rf_bf16_to_f32(rf_f32_to_bf16(X[(size_t)i * K + k])) *
                       (double)rf_bf16_to_f32(rf_f32_to_bf16(W[(size_t)n * K + k]));
            Y[(size_t)i * N + n] = (float)sum;
        }
    rf_bias_act_naive(Y, M, N, N, b, act);
}
