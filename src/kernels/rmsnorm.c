/*
 * rmsnorm.c — y = x / sqrt(mean(x^2) + eps) per row (RoFormer-v2): the
 * entry point into the chosen build of rmsnorm_vec.h (elementwise.h) and the
 * naive twin, which accumulates in double.
 */
#include "kernels/rmsnorm.h"
#include "kernels/elementwise.h"

#include <math.h>
#include <stddef.h>

void rf_add_rmsnorm(float *x, const float *y, int rows, int n, float eps)
{
    rf_elementwise()->add_rmsnorm(x, y, rows, n, eps);
}

void rf_rmsnorm(float *x, int rows, int n, float eps)
{
    rf_add_rmsnorm(x, NULL, rows, n, eps);
}

void rf_add_rmsnorm_naive(float *x, const float *y, int rows, int n, float eps)
{
    for (int r = 0; r < rows; r++) {
        float *row = x + (size_t)r * n;
        const float *add = y ? y + (size_t)r * n : NULL;
        double sq = 0.0;
        for (int i = 0; i < n; i++) {
            double v = (double)row[i] + (add ? add[i] : 0.0f);
            sq += v * v;
        }
        double scale = 1.0 / sqrt(sq / n + eps);
        for (int i = 0; i < n; i++)
            row[i] = (float)(((double)row[i] + (add ? add[i] : 0.0f)) * scale);
    }
}
