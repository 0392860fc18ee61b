/*
 * layernorm_vec.h — the vector body of rf_layernorm / rf_add_layernorm
 * (see layernorm.c), included once per instruction-set build like
 * activations_vec.h, by elementwise_build.h (elementwise.h).
 *
 * Sums run in RF_VLEN float lanes (as PyTorch's vectorised kernel keeps
 * partial sums). The mean is corrected in the second pass (the corrected
 * two-pass algorithm of Chan, Golub and LeVeque): pass 1 gives an estimate
 * m of the mean, pass 2 sums d = x - m and d^2, and the row is normalised
 * as (d - c) / sqrt(var + eps) with c = sum(d) / n and var = sum(d^2) / n -
 * c^2. The float error of the first sum, n eps |mean| at worst, then
 * moves no output: what is left is of order n eps times the row's spread,
 * whatever its mean.
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
    float mean = rf_v_add_sum(x, y, n, 0) / (float)n;
    /* pass 2: deviations from that estimate, their sum and sum of squares */
    rf_vf acc = rf_v_set1(0.0f), acc_sq = rf_v_set1(0.0f);
    for (int i = 0; i < vec; i += RF_VLEN) {
        rf_vf d = rf_v_load(x + i) - mean;
        acc += d;
        acc_sq += d * d;
    }
    float dev = rf_v_sum(acc), sq = rf_v_sum(acc_sq);
    for (int i = vec; i < n; i++) {
        float d = x[i] - mean;
        dev += d;
        sq += d * d;
    }
    float shift = dev / (float)n; /* the true mean minus the estimate */
    float var = sq / (float)n - shift * shift;
    float inv = 1.0f / sqrtf((var > 0.0f ? var : 0.0f) + eps);
    /* pass 3: normalise, scale, shift */
    for (int i = 0; i < vec; i += RF_VLEN)
        rf_v_store(x + i, (rf_v_load(x + i) - mean - shift) * inv * rf_v_load(gamma + i) +
                              rf_v_load(beta + i));
    for (int i = vec; i < n; i++)
        x[i] = (x[i] - mean - shift) * inv * gamma[i] + beta[i];
}

/* The kernel body: rows of n, contiguous; y NULL for LayerNorm alone. */
RF_VINLINE void add_layernorm_rows(float *x, const float *y, int rows, int n,
                                   const float *gamma, const float *beta, float eps)
{
    for (int r = 0; r < rows; r++)
        norm_row(x + (size_t)r * n, y ? y + (size_t)r * n : NULL, n, gamma, beta, eps);
}

#endif
