/*
 * softmax_vec.h — the vector body of rf_softmax_rows_online (see
 * softmax.c), a vector of floats at a time with
 * the polynomial exp of vecmath.h; included once per instruction-set build
 * like activations_vec.h, by elementwise_build.h (elementwise.h). Lanes past the end of a row are filled with -inf, whose exp
 * is exactly 0, so they add nothing to the sum.
 */
#ifndef RF_SOFTMAX_VEC_H
#define RF_SOFTMAX_VEC_H

#include "kernels/vecmath.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

/* Adds the mask to the row (when there is one) and returns its maximum. */
static inline __attribute__((always_inline)) float softmax_row_max(float *row, int n,
                                                                   const float *mask_bias)
{
    /* four running maxima, so that the compare-and-blend chains overlap
       (the maximum is exact in any order) */
    rf_vf vmax = rf_v_set1(-INFINITY), vmax1 = vmax, vmax2 = vmax, vmax3 = vmax;
    int j = 0;
    if (!mask_bias)
        for (; j + 4 * RF_VLEN <= n; j += 4 * RF_VLEN) {
            rf_vf v0 = rf_v_load(row + j), v1 = rf_v_load(row + j + RF_VLEN);
            rf_vf v2 = rf_v_load(row + j + 2 * RF_VLEN), v3 = rf_v_load(row + j + 3 * RF_VLEN);
            vmax = rf_v_select(v0 > vmax, v0, vmax);
            vmax1 = rf_v_select(v1 > vmax1, v1, vmax1);
            vmax2 = rf_v_select(v2 > vmax2, v2, vmax2);
            vmax3 = rf_v_select(v3 > vmax3, v3, vmax3);
        }
    for (; j + RF_VLEN <= n; j += RF_VLEN) {
        rf_vf v = rf_v_load(row + j);
        if (mask_bias) {
            v += rf_v_load(mask_bias + j);
            rf_v_store(row + j, v);
        }
        vmax = rf_v_select(v > vmax, v, vmax);
    }
    vmax = rf_v_select(vmax1 > vmax, vmax1, vmax);
    vmax = rf_v_select(vmax2 > vmax, vmax2, vmax);
    vmax = rf_v_select(vmax3 > vmax, vmax3, vmax);
    float max = -INFINITY;
    for (; j < n; j++) {
        if (mask_bias)
            row[j] += mask_bias[j];
        max = row[j] > max ? row[j] : max;
    }
    for (int i = 0; i < RF_VLEN; i++)
        max = vmax[i] > max ? vmax[i] : max;
    return max;
}

/* x rounded to the nearest bf16, ties to even, kept as a float (x >= 0:
 * the integer sum cannot carry into the sign). */
static inline __attribute__((always_inline)) rf_vf softmax_bf16_round(rf_vf x)
{
    rf_vi bits = (rf_vi)x;
    return (rf_vf)((bits + 0x7FFF + ((bits >> 16) & 1)) & ~0xFFFF);
}

/* row[j] = exp(row[j] - max), rounded to bf16 when `bf16` (from the
 * coarser exp that is enough for it); returns their sum. */
static inline __attribute__((always_inline)) float softmax_row_exp(float *row, int n, float max,
                                                                   bool bf16)
{
    rf_vf vsum = rf_v_set1(0.0f);
    int j;
    for (j = 0; j + RF_VLEN <= n; j += RF_VLEN) {
        rf_vf x = rf_v_load(row + j) - max;
        rf_vf e = bf16 ? softmax_bf16_round(rf_v_exp_for_bf16(x)) : rf_v_exp(x);
        rf_v_store(row + j, e);
        vsum += e;
    }
    if (j < n) {
        rf_vf x = rf_v_load_part(row + j, n - j, -INFINITY) - max;
        rf_vf e = bf16 ? softmax_bf16_round(rf_v_exp_for_bf16(x)) : rf_v_exp(x);
        rf_v_store_part(row + j, e, n - j);
        vsum += e;
    }
    float sum = 0.0f;
    for (int i = 0; i < RF_VLEN; i++)
        sum += vsum[i];
    return sum;
}

/* The kernel body of rf_softmax_rows_online. */
static inline __attribute__((always_inline)) void softmax_rows_online(float *x, int rows, int n,
                                                                      int ld,
                                                                      const float *mask_bias,
                                                                      float *row_max,
                                                                      float *row_sum,
                                                                      float *rescale,
                                                                      bool bf16)
{
    for (int r = 0; r < rows; r++) {
        float *row = x + (size_t)r * ld;
        float block_max = softmax_row_max(row, n, mask_bias);
        float max = block_max > row_max[r] ? block_max : row_max[r];
        rescale[r] = expf(row_max[r] - max);
        row_sum[r] = row_sum[r] * rescale[r] + softmax_row_exp(row, n, max, bf16);
        row_max[r] = max;
    }
}

#endif
