/*
 * gemm_bf16_round.c — rounding inputs to bf16 pairs and packing weights
 * into the layout of gemm_bf16.h, the members of gemm_bf16_backend.h that
 * the backends share: an AVX512_BF16 build (VCVTNE2PS2BF16, for the x86-64
 * backends that run on the instructions) and a plain C one (ARM64, and the
 * tile emulator's backend, which runs on any CPU with AVX2). Both round to
 * nearest even; VCVTNE2PS2BF16 also takes subnormal inputs as zero.
 */
#include "kernels/gemm_bf16_backend.h"
#include "kernels/fp16.h"
#include "kernels/simd.h"

#include <string.h>

#define PANEL 16 /* output columns per panel */

/* Plain C: rounds scale * rows [m0, m1) of X (rows ldx apart) to bf16
 * pairs, as the AVX512_BF16 build below. */
static void round_rows_c(const float *X, size_t ldx, int K, float scale, int m0, int m1,
                         uint16_t *out)
{
    int kp = rf_bf16_k_pairs(K);
    for (int r = m0; r < m1; r++) {
        const float *x = X + (size_t)r * ldx;
        uint16_t *o = out + (size_t)r * kp * 2;
        for (int k = 0; k < K; k++)
            o[k] = rf_f32_to_bf16(scale * x[k]);
        if (K & 1)
            o[K] = 0;
    }
}

/* Plain C: packs the N x K matrix whose element (n, k) is W[n * n_step + k
 * * k_step]: pair i of column n at uint32 (n / 16) * kp * 16 + i * 16 + n
 * % 16, low half input 2i; columns up to the padded count and the odd K's
 * last input are zero. */
static void pack_strided_c(const float *W, int N, int K, size_t n_step, size_t k_step,
                           uint16_t *dst)
{
    int kp = rf_bf16_k_pairs(K), n_pad = rf_bf16_padded_n(N);
    for (int n = 0; n < n_pad; n++) {
        uint16_t *col = dst + ((size_t)(n / PANEL) * kp * PANEL + n % PANEL) * 2;
        for (int k = 0; k < 2 * kp; k++)
            col[(size_t)(k / 2) * PANEL * 2 + k % 2] =
                n < N && k < K ? rf_f32_to_bf16(W[(size_t)n * n_step + (size_t)k * k_step]) : 0;
    }
}

static void pack_rows_c(const float *W, int N, int K, size_t ldw, uint16_t *dst)
{
    pack_strided_c(W, N, K, ldw, 1, dst);
}

static void pack_transposed_c(const float *V, int K, int N, size_t ldv, uint16_t *dst)
{
    pack_strided_c(V, N, K, 1, ldv, dst);
}

const rf_bf16_packing rf_bf16_packing_c = {round_rows_c, pack_rows_c, pack_transposed_c};

#if RF_SIMD_X86
#include "kernels/x86/gemm_bf16_avx512_nest.h"

#define RF_TARGET_BF16 __attribute__((target("avx512f,avx512bw,avx512bf16")))

/* Rounds scale * rows [m0, m1) of X (rows ldx apart, K used) to bf16
 * pairs: row r of `out` is kp = ceil(K / 2) uint32, the odd K padded with
 * a zero. */
RF_TARGET_BF16 static void round_rows_avx512(const float *X, size_t ldx, int K, float scale,
                                             int m0, int m1, uint16_t *out)
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
RF_TARGET_BF16 static void pack_transposed_avx512(const float *V, int K, int N, size_t ldv,
                                                 uint16_t *dst)
{
    int kp = rf_bf16_k_pairs(K), np = rf_bf16_padded_n(N) / PANEL;
    for (int i = 0; i < kp; i++) {
        const float *r0 = V + (size_t)(2 * i) * ldv, *r1 = r0 + ldv;
        bool has_r1 = 2 * i + 1 < K;
        for (int p = 0; p < np; p++) {
            __mmask16 m = rf_bf16_col_mask(N - p * PANEL);
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
RF_TARGET_BF16 static void pack_rows_avx512(const float *W, int N, int K, size_t ldw, uint16_t *dst)
{
    int kp = rf_bf16_k_pairs(K), n_pad = rf_bf16_padded_n(N);
    uint32_t *out = (uint32_t *)(void *)dst;
    for (int n = 0; n < n_pad; n++) {
        uint32_t *col = out + (size_t)(n / PANEL) * kp * PANEL + n % PANEL;
        for (int k = 0; k < 2 * kp; k += 32) {
            uint32_t pairs[16];
            if (n < N) {
                __mmask16 m0 = rf_bf16_col_mask(K - k), m1 = rf_bf16_col_mask(K - k - PANEL);
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

const rf_bf16_packing rf_bf16_packing_avx512 = {round_rows_avx512, pack_rows_avx512,
                                                pack_transposed_avx512};
#endif /* RF_SIMD_X86 */
