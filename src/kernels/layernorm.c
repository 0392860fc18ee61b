/*
 * layernorm.c — y = (x - mean) / sqrt(var + eps) * gamma + beta per row,
 * var the biased variance (torch.nn.LayerNorm): the dispatch to the
 * instruction-set builds of layernorm_vec.h (simd.h) and the naive twin,
 * which accumulates in double.
 */
#include "kernels/layernorm.h"
#include "kernels/layernorm_vec.h"
#include "kernels/simd.h"

static void add_layernorm_baseline(float *x, const float *y, int rows, int n,
                                   const float *gamma, const float *beta, float eps)
{
    add_layernorm_rows(x, y, rows, n, gamma, beta, eps);
}

#if RF_SIMD_X86
RF_TARGET_AVX2 static void add_layernorm_avx2(float *x, const float *y, int rows, int n,
                                              const float *gamma, const float *beta, float eps)
{
    add_layernorm_rows(x, y, rows, n, gamma, beta, eps);
}
#endif

void rf_add_layernorm(float *x, const float *y, int rows, int n, const float *gamma,
                      const float *beta, float eps)
{
#if RF_SIMD_X86
    switch (rf_simd_level_get()) {
    case RF_SIMD_AVX512: rf_add_layernorm_avx512(x, y, rows, n, gamma, beta, eps); return;
    case RF_SIMD_AVX2: add_layernorm_avx2(x, y, rows, n, gamma, beta, eps); return;
    case RF_SIMD_BASELINE: break;
    }
#endif
    add_layernorm_baseline(x, y, rows, n, gamma, beta, eps);
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
