/*
 * rmsnorm_vec.h — the vector body of rf_rmsnorm / rf_add_rmsnorm (see
 * rmsnorm.c), included once per instruction-set build like
 * layernorm_vec.h, by elementwise_build.h (elementwise.h).
 *
 * The mean of squares is summed in RF_VLEN float lanes, as PyTorch's
 * vectorised torch.mean(torch.square(x)) keeps partial sums.
 */
#ifndef RF_RMSNORM_VEC_H
#define RF_RMSNORM_VEC_H

#include "kernels/vecmath.h"

#include <math.h>
#include <stddef.h>

/* x = (x + y) / sqrt(mean((x + y)^2) + eps) over one row of n; y may be NULL. */
RF_VINLINE void rms_row(float *restrict x, const float *restrict y, int n, float eps)
{
    int vec = n / RF_VLEN * RF_VLEN;
    /* pass 1: the residual add, and the sum of squares */
    float sq = rf_v_add_sum(x, y, n, 1);
    float inv = 1.0f / sqrtf(sq / (float)n + eps);
    /* pass 2: scale */
    for (int i = 0; i < vec; i += RF_VLEN)
        rf_v_store(x + i, rf_v_load(x + i) * inv);
    for (int i = vec; i < n; i++)
        x[i] *= inv;
}

/* The kernel body: rows of n, contiguous; y NULL for the norm alone. */
RF_VINLINE void add_rmsnorm_rows(float *x, const float *y, int rows, int n, float eps)
{
    for (int r = 0; r < rows; r++)
        rms_row(x + (size_t)r * n, y ? y + (size_t)r * n : NULL, n, eps);
}

#endif
