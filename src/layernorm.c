/*
 * layernorm.c — y = (x - mean) / sqrt(var + eps) * gamma + beta per row,
 * var the biased variance (torch.nn.LayerNorm). The fast pass sums in
 * float vector lanes (RF_VLEN partial sums per row, as PyTorch's vectorised
 * kernel does), mean first and then the squared deviations; the naive twin
 * accumulates in double.
 */
#include "layernorm.h"
#include "vecmath.h"

#include <math.h>
#include <stddef.h>

/* Sum of the RF_VLEN lanes, in a fixed order. */
RF_VINLINE float lane_sum(rf_vf v)
{
    float sum = 0.0f;
    for (int i = 0; i < RF_VLEN; i++)
        sum += v[i];
    return sum;
}

static void norm_row(float *restrict x, int n, const float *restrict gamma,
                     const float *restrict beta, float eps)
{
    int vec = n / RF_VLEN * RF_VLEN;
    /* pass 1: mean */
    rf_vf acc = rf_v_set1(0.0f);
    for (int i = 0; i < vec; i += RF_VLEN)
        acc += rf_v_load(x + i);
    float sum = lane_sum(acc);
    for (int i = vec; i < n; i++)
        sum += x[i];
    float mean = sum / (float)n;
    /* pass 2: biased variance around the mean (two passes: no cancellation) */
    acc = rf_v_set1(0.0f);
    for (int i = 0; i < vec; i += RF_VLEN) {
        rf_vf d = rf_v_load(x + i) - mean;
        acc += d * d;
    }
    float sq = lane_sum(acc);
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
