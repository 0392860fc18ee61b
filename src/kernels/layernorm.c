/*
 * layernorm.c — y = (x - mean) / sqrt(var + eps) * gamma + beta per row,
 * var the biased variance (torch.nn.LayerNorm): the entry point into the
 * chosen build of layernorm_vec.h (elementwise.h) and the naive twin,
 * which accumulates in double.
 */
#include "kernels/layernorm.h"
#include "kernels/elementwise.h"

#include <math.h>
#include <stddef.h>

void rf_add_layernorm(float *x, const float *y, int rows, int n, const float *gamma,
                      const float *beta, float eps)
{
    rf_elementwise()->add_layernorm(x, y, rows, n, gamma, beta, eps);
}

void rf_layernorm(float *x, int rows, int n, const float *gamma, const float *beta, float eps)
{
    rf_add_layernorm(x, NULL, rows, n, gamma, beta, eps);
}

void rf_add_layernorm_naive(float *x, const float *y, int rows, int n, const float *gamma,
                            const float *beta, float eps)
{
    for (int r = 0; r < rows; r++) {
        double mean = 0.0, var = 0.0;
        for (int i = 0; i < n; i++)
            mean += (double)x[(size_t)r * n + i] + (y ? y[(size_t)r * n + i] : 0.0f);
        mean /= n;
        for (int i = 0; i < n; i++) {
            double v = (double)x[(size_t)r * n + i] + (y ? y[(size_t)r * n + i] : 0.0f);
            var += (v - mean) * (v - mean);
        }
        var /= n;
        for (int i = 0; i < n; i++) {
            double v = (double)x[(size_t)r * n + i] + (y ? y[(size_t)r * n + i] : 0.0f);
            x[(size_t)r * n + i] = (float)((v - mean) / sqrt(var + eps) * gamma[i] + beta[i]);
        }
    }
}
