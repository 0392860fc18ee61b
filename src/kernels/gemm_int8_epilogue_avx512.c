/*
 * gemm_int8_epilogue_avx512.c — the int8 product's epilogue on AVX-512: a
 * tile row of 16 integer sums is one register, so the scaling, the
 * center's share, the bias and the activation run 16 channels at a time.
 * A file of its own because the vector width of the activations
 * (activations_vec.h on vecmath.h) is fixed per translation unit. The same
 * operations per channel as the AVX2 epilogue (gemm_int8_x86.c), in the
 * same order, with explicit FMAs.
 */
#define RF_VLEN 16

#include "kernels/activations_vec.h"
#include "kernels/gemm_int8_backend.h"
#include "kernels/simd.h"

#include <string.h>

#if RF_SIMD_X86
#include <immintrin.h>

RF_TARGET_AVX512 void rf_int8_store_tile_avx512(const rf_int8_product *p, const int32_t *C, int m,
                                                int mr, int n0)
{
    int ldy = p->ldy;
    __m512 w = _mm512_loadu_ps(p->W->scale + n0);
    __m512 w_sums = _mm512_mul_ps(w, _mm512_cvtepi32_ps(_mm512_loadu_si512(p->W->colsum + n0)));
    __m512 b = p->bias ? _mm512_loadu_ps(p->bias + n0) : _mm512_setzero_ps();
    float *Y = p->Y + (size_t)m * ldy + n0;
    for (int r = 0; r < mr; r++) {
        __m512 s = _mm512_mul_ps(_mm512_set1_ps(p->sx[m + r]), w);
        __m512 o = _mm512_fmadd_ps(_mm512_set1_ps(p->cx[m + r]), w_sums, b);
        __m512 v = _mm512_cvtepi32_ps(_mm512_loadu_si512(C + r * RF_INT8_PANEL));
        rf_vf y = (rf_vf)_mm512_fmadd_ps(v, s, o);
        rf_v_store(Y + (size_t)r * ldy, act_v(y, p->act));
    }
}
#endif
