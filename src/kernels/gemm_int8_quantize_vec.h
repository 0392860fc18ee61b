/*
 * gemm_int8_quantize_vec.h — the loop that quantizes input rows (rows in
 * of gemm_int8_backend.h) on vecmath.h's vector type, included by each
 * build of it: x86/gemm_int8_shared_avx2.c (8 floats), x86/gemm_int8_shared_avx512.c
 * (16) and arm/gemm_int8_neon.c (8, two registers). The includer defines first
 * narrow_row(x, K, c, inv, q, flip): pass 2 over whole vectors, (x - c) *
 * inv rounded to nearest even and narrowed with the instruction set's
 * conversions, returning where the scalar tail starts.
 *
 * quantize_rows_vec has no target attribute of its own, as vecmath.h's
 * helpers have none: it is inlined into the includer's function of that
 * target. Clang refuses a vector argument or result passed between
 * functions of different targets, even inlined ones, so a narrow_row with
 * a target attribute is an ordinary call (once a row), not inlined here.
 *
 * Pass 1's lanes keep min and max as MINPS and MAXPS do ((a < b) ? a : b)
 * and are reduced in lane order, as rf_int8_quantize_row_naive reads the
 * row: the same values whatever the width.
 */
#ifndef RF_GEMM_INT8_QUANTIZE_VEC_H
#define RF_GEMM_INT8_QUANTIZE_VEC_H

#include "kernels/gemm_int8_backend.h"
#include "kernels/vecmath.h"

/* flip: store q + 128 (the sign bit flipped), VPDPBUSD's unsigned operand */
RF_VINLINE void quantize_rows_vec(const float *X, int K, int m0, int m1, int8_t *Xq,
                                   float *scale, float *center, const bool flip)
{
    int kb = rf_int8_row_bytes(K);
    for (int r = m0; r < m1; r++) {
        const float *x = X + (size_t)r * K;
        int8_t *q = Xq + (size_t)r * kb;
        /* pass 1: min and max */
        rf_vf vmin = rf_v_set1(x[0]), vmax = vmin;
        int k = 0;
        for (; k + RF_VLEN <= K; k += RF_VLEN) {
            rf_vf v = rf_v_load(x + k);
            vmin = rf_v_select(vmin < v, vmin, v);
            vmax = rf_v_select(vmax > v, vmax, v);
        }
        float min = vmin[0], max = vmax[0];
        for (int i = 1; i < RF_VLEN; i++) {
            min = vmin[i] < min ? vmin[i] : min;
            max = vmax[i] > max ? vmax[i] : max;
        }
        float inv = rf_int8_row_scale(x, k, K, min, max, scale + r, center + r), c = center[r];
        /* pass 2 */
        k = narrow_row(x, K, c, inv, q, flip);
        rf_int8_row_tail(x, k, K, kb, c, inv, q);
        for (; flip && k < kb; k++)
            q[k] = (int8_t)((uint8_t)q[k] ^ 0x80u);
    }
}

#endif
