/*
 * gemm_int8_shared_avx2.c — what the x86-64 backends of the int8 product
 * share, on AVX2 (gemm_int8_backend.h): quantizing input rows, a weight
 * row's sum and the epilogue that turns a tile of integer sums into
 * outputs.
 */
#include "kernels/gemm_int8_backend.h"
#include "kernels/elementwise_ops.h"
#include "kernels/activations_vec.h"
#include "kernels/simd.h"

#include <math.h>

#if RF_SIMD_X86
#include <immintrin.h>

#define PANEL RF_INT8_PANEL

/* The sum of K int8 values, 32 at a time: VPMADDUBSW by ones sums pairs
 * (at most 2 * 128 in magnitude: no saturation), VPMADDWD by ones sums
 * those pairs into int32 lanes. */
RF_TARGET_AVX2 int32_t rf_int8_row_sum_avx2(const int8_t *w, int K)
{
    const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
    __m256i acc = _mm256_setzero_si256();
    int k = 0;
    for (; k + 32 <= K; k += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(w + k));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, v), ones16));
    }
    int32_t lanes[8], sum = 0;
    _mm256_storeu_si256((__m256i *)(void *)lanes, acc);
    for (int i = 0; i < 8; i++)
        sum += lanes[i];
    for (; k < K; k++)
        sum += w[k];
    return sum;
}

/* Pass 2 of quantize_rows_vec, 32 values at a time centered, rounded
 * (nearest even) and narrowed; the packs interleave 128-bit lanes, the
 * permute undoes it. */
RF_TARGET_AVX2 static int narrow_row(const float *x, int K, float c, float inv, int8_t *q,
                                     bool flip)
{
    (void)flip; /* the AVX2 rows are signed */
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    __m256 vinv = _mm256_set1_ps(inv), vc = _mm256_set1_ps(c);
    int k = 0;
#define Q8(off) _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + k + (off)), vc), vinv))
    for (; k + 32 <= K; k += 32) {
        __m256i a = Q8(0), b = Q8(8), cc = Q8(16), d = Q8(24);
        __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(cc, d));
        _mm256_storeu_si256((__m256i *)(void *)(q + k), _mm256_permutevar8x32_epi32(bytes, order));
    }
#undef Q8
    return k;
}

#include "kernels/gemm_int8_quantize_vec.h"

/* Quantizes rows [m0, m1) of X (K used, rows K apart) into Xq (rows of
 * rf_int8_row_bytes(K)), their scales and centers, as
 * rf_int8_quantize_row_naive (the same operations, so the same bytes). */
RF_TARGET_AVX2 void rf_int8_quantize_rows_avx2(const float *X, int K, int m0, int m1, int8_t *Xq,
                                               float *scale, float *center)
{
    quantize_rows_vec(X, K, m0, m1, Xq, scale, center, false);
}

/* Y (rows ldy apart) for a tile, `cols` of the 16 channels from n0:
 * act(s_x[r] s_w[n] C + c_x[r] s_w[n] colsum[n] + bias[n]) (the second
 * term puts back the center each input row was quantized around); the
 * activation on each vector as it is stored. */
RF_TARGET_AVX2 void rf_int8_store_tile_avx2(const rf_int8_product *p, const int32_t *C, int m,
                                            int mr, int n0, int cols)
{
    if (!p->sx) {
        rf_int8_store_sums(p, C, m, mr, n0, cols);
        return;
    }
    const float *sx = p->sx + m, *cx = p->cx + m, *sw = p->W->scale + n0;
    const int32_t *colsum = p->W->colsum + n0;
    const float *bias = p->bias ? p->bias + n0 : NULL;
    rf_activation act = p->act;
    int ldy = p->ldy;
    float *Y = p->Y + (size_t)m * ldy + n0;
    for (int r = 0; r < mr; r++) {
        float *y = Y + (size_t)r * ldy;
        int n = 0;
        for (; n + 8 <= cols; n += 8) {
            __m256 w = _mm256_loadu_ps(sw + n);
            __m256 s = _mm256_mul_ps(_mm256_set1_ps(sx[r]), w);
            __m256 sums = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(const void *)(colsum + n)));
            __m256 b = bias ? _mm256_loadu_ps(bias + n) : _mm256_setzero_ps();
            __m256 o = _mm256_fmadd_ps(_mm256_set1_ps(cx[r]), _mm256_mul_ps(w, sums), b);
            __m256 v = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(const void *)(C + r * PANEL + n)));
            _mm256_storeu_ps(y + n, _mm256_fmadd_ps(v, s, o));
            rf_act_at(y + n, act);
        }
        int tail = n;
        for (; n < cols; n++)
            y[n] = (float)C[r * PANEL + n] * (sx[r] * sw[n]) +
                   (cx[r] * (sw[n] * (float)colsum[n]) + (bias ? bias[n] : 0.0f));
        if (n > tail)
            rf_elementwise_avx2.bias_act(y + tail, 1, n - tail, ldy, NULL, act);
    }
}

const rf_int8_operands rf_int8_operands_avx2 = {rf_int8_quantize_rows_avx2, false,
                                                rf_int8_row_sum_avx2};
#endif
