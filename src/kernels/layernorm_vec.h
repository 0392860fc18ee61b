/*
 * layernorm_vec.h — the vector body of rf_layernorm / rf_add_layernorm
 * (see layernorm.c), included once per instruction-set build like
 * activations_vec.h: by layernorm.c (8 floats: baseline and AVX2) and by
 * kernels_avx512.c (16 floats).
 *
 * Sums run in RF_VLEN float lanes (as PyTorch's vectorised kernel keeps
 * partial sums), mean first and then the squared deviations around it
 * (two passes: no cancellation).
 */
#ifndef RF_LAYERNORM_VEC_H
#define RF_LAYERNORM_VEC_H

#include "kernels/vecmath.h"

#include <math.h>
#include <stddef.h>

/* x = LN(x + y) * gamma + beta over one row of n; y may be NULL. */
RF_VINLINE void norm_row(float *restrict x, const float *restrict y, int n,
                         const float *restrict gamma, const float *restrict beta, float eps)
{
    int vec = n / RF_VLEN * RF_VLEN;
    /* pass 1: the residual add, and the mean */
    rf_vf acc = rf_v_set1(0.0f);
    for (int i = 0; i < vec; i += RF_VLEN) {
        rf_vf v = rf_v_load(x + i);
        if (y) {
            v += rf_v_load(y + i);
            rf_v_store(x + i, v);
        }
        acc += v;
    }
    float sum = rf_v_sum(acc);
    for (int i = vec; i < n; i++) {
        if (y)
            x[i] += y[i];
        sum += x[i];
    }
    float mean = sum / (float)n;
    /* pass 2: biased variance around the mean */
    acc = rf_v_set1(0.0f);
    for (int i = 0; i < vec; i += RF_VLEN) {
        rf_vf d = rf_v_load(x + i) - mean;
        acc += d * d;
    }
    float sq = rf_v_sum(acc);
    for (int i = vec; i < n; i++)
        sq += (x[i] - mean) * (x[i] - mean);
    float inv = 1.0f / sqrtf(sq / (float)n + eps);
    /* pass 3: normalise, scale, shift */
    for (int i = 0; i < vec; i += RF_VLEN)
        rf_v_store(x + i, (rf_v_load(x + i) - mean) * inv * rf_v_load(gamma + i) +
                              rf_v_load(beta + i));
    for (int i = vec; i < n; i++)
        x[i] = (x[i] - mean) * inv * gamma[i] + beta[i];
}

/* The kernel body: rows of n, contiguous; y NULL for LayerNorm alone. */
RF_VINLINE void add_layernorm_rows(float *x, const float *y, int rows, int n,
                                   const float *gamma, const float *beta, float eps)
{
    for (int r = 0; r < rows; r++)
        norm_row(x + (size_t)r * n, y ? y + (size_t)r * n : NULL, n, gamma, beta, eps);
}

#endif
