/*
 * gemm_int8_shared_avx512.c — what the x86-64 backends that need AVX-512
 * anyway (VNNI, AMX) share (gemm_int8_backend.h): quantizing input rows 16
 * values at a time, signed or + 128 (VPDPBUSD's unsigned operand), and the
 * epilogue, where a tile row of 16 integer sums is one register, so the
 * scaling, the center's share, the bias and the activation run 16 channels
 * at a time. A file of its own because the vector width of the activations
 * (activations_vec.h on vecmath.h) is fixed per translation unit. Both do
 * the same operations per value as their AVX2 twins
 * (x86/gemm_int8_shared_avx2.c), in the same order, with explicit FMAs, so the
 * bytes and outputs are the same.
 */
#define RF_VLEN 16

#include "kernels/activations_vec.h"
#include "kernels/gemm_int8_backend.h"
#include "kernels/simd.h"

#include <math.h>
#include <string.h>

#if RF_SIMD_X86
#include <immintrin.h>

#define RF_TARGET_AVX512BW __attribute__((target("avx512f,avx512bw")))

/* Pass 2 of quantize_rows_vec: centered, scaled, rounded to nearest even
 * and narrowed with saturation, 16 at a time; flip: + 128. */
RF_TARGET_AVX512BW static int narrow_row(const float *x, int K, float c, float inv, int8_t *q,
                                         bool flip)
{
    const __m128i sign = _mm_set1_epi8(flip ? (char)0x80 : 0);
    __m512 vinv = _mm512_set1_ps(inv), vc = _mm512_set1_ps(c);
    int k = 0;
    for (; k + 16 <= K; k += 16) {
        __m512i v = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x + k), vc), vinv));
        _mm_storeu_si128((__m128i *)(void *)(q + k), _mm_xor_si128(_mm512_cvtsepi32_epi8(v), sign));
    }
    return k;
}

#include "kernels/gemm_int8_quantize_vec.h"

RF_TARGET_AVX512BW void rf_int8_quantize_rows_avx512(const float *X, int K, int m0, int m1,
                                                     int8_t *Xq, float *scale, float *center)
{
    quantize_rows_vec(X, K, m0, m1, Xq, scale, center, false);
}

RF_TARGET_AVX512BW void rf_int8_quantize_rows_avx512_u8(const float *X, int K, int m0, int m1,
                                                        int8_t *Xq, float *scale, float *center)
{
    quantize_rows_vec(X, K, m0, m1, Xq, scale, center, true);
}

const rf_int8_operands rf_int8_operands_avx512 = {rf_int8_quantize_rows_avx512, false,
                                                  rf_int8_row_sum_avx2};
const rf_int8_operands rf_int8_operands_avx512_u8 = {rf_int8_quantize_rows_avx512_u8, true,
                                                     rf_int8_row_sum_avx2};

/* Whole tiles 16 channels at a time; raw sums and the last, narrower
 * panel through the AVX2 epilogue. */
RF_TARGET_AVX512 void rf_int8_store_tile_avx512(const rf_int8_product *p, const int32_t *C, int m,
                                                int mr, int n0, int cols)
{
    if (!p->sx || cols < RF_INT8_PANEL) {
        rf_int8_store_tile_avx2(p, C, m, mr, n0, cols);
        return;
    }
    int ldy = p->ldy;
    __m512 w = _mm512_loadu_ps(p->W->scale + n0);
    __m512 w_sums = _mm512_mul_ps(w, _mm512_cvtepi32_ps(_mm512_loadu_si512(p->W->colsum + n0)));
    __m512 b = p->bias ? _mm512_loadu_ps(p->bias + n0) : _mm512_setzero_ps();
    float *Y = p->Y + (size_t)m * ldy + n0;
    for (int r = 0; r < mr; r++) {
        __m512 s = _mm512_mul_ps(_mm512_set1_ps(p->sx[m + r]), w);
        __m512 o = _mm512_fmadd_ps(_mm512_set1_ps(p->cx[m + r]), w_sums, b);
        __m512 v = _mm512_cvtepi32_ps(_mm512_loadu_si512(C + r * RF_INT8_PANEL));
        /* the activation through a pointer: clang refuses a vector
           argument between this AVX-512 function and the plain inline
           ones (activations_vec.h) */
        float *y = Y + (size_t)r * ldy;
        _mm512_storeu_ps(y, _mm512_fmadd_ps(v, s, o));
        rf_act_at(y, p->act);
    }
}
#endif
