/*
 * layernorm.c — y = (x - mean) / sqrt(var + eps) * gamma + beta per row,
 * var the biased variance (torch.nn.LayerNorm). Mean and variance are
 * accumulated in double: rows are at most a few thousand wide, so this
 * costs little and keeps the result at float rounding of the exact value.
 */
#include "layernorm.h"

#include <math.h>
#include <stddef.h>

static void norm_row(float *restrict x, int n, const float *restrict gamma,
                     const float *restrict beta, float eps)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += x[i];
    double mean = sum / n;
    double sq = 0.0;
    for (int i = 0; i < n; i++) {
        double d = x[i] - mean;
        sq += d * d;
    }
    float inv = (float)(1.0 / sqrt(sq / n + eps));
    float m = (float)mean;
    for (int i = 0; i < n; i++)
        x[i] = (x[i] - m) * inv * gamma[i] + beta[i];
}

void rf_layernorm(float *x, int rows, int n, const float *gamma, const float *beta, float eps)
{
    for (int r = 0; r < rows; r++)
        norm_row(x + (size_t)r * n, n, gamma, beta, eps);
}

void rf_add_layernorm(float *x, const float *y, int rows, int n, const float *gamma,
                      const float *beta, float eps)
{
    for (int r = 0; r < rows; r++) {
        float *restrict xr = x + (size_t)r * n;
        const float *restrict yr = y + (size_t)r * n;
        for (int i = 0; i < n; i++)
            xr[i] += yr[i];
        norm_row(xr, n, gamma, beta, eps);
    }
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
