/*
 * rmsnorm.c — y = x / sqrt(mean(x^2) + eps) per row (RoFormer-v2): the
 * dispatch to the instruction-set builds of rmsnorm_vec.h (simd.h) and the
 * naive twin, which accumulates in double.
 */
#include "kernels/rmsnorm.h"
#include "kernels/rmsnorm_vec.h"
#include "kernels/simd.h"

static void add_rmsnorm_baseline(float *x, const float *y, int rows, int n, float eps)
{
    add_rmsnorm_rows(x, y, rows, n, eps);
}

#if RF_SIMD_X86
RF_TARGET_AVX2 static void add_rmsnorm_avx2(float *x, const float *y, int rows, int n, float eps)
{
    add_rmsnorm_rows(x, y, rows, n, eps);
}
#endif

void rf_add_rmsnorm(float *x, const float *y, int rows, int n, float eps)
{
#if RF_SIMD_X86
    switch (rf_simd_level_get()) {
    case RF_SIMD_AVX512: rf_add_rmsnorm_avx512(x, y, rows, n, eps); return;
    case RF_SIMD_AVX2: add_rmsnorm_avx2(x, y, rows, n, eps); return;
    case RF_SIMD_BASELINE: break;
    }
#endif
    add_rmsnorm_baseline(x, y, rows, n, eps);
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
