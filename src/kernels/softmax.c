/*
 * softmax.c — max-subtracted row softmax (see softmax.h): the dispatch to
 * the instruction-set builds of softmax_vec.h (simd.h) and the naive twin,
 * libm exp in double.
 */
#include "kernels/softmax.h"
#include "kernels/simd.h"
#include "kernels/softmax_vec.h"

#include <math.h>
#include <stddef.h>

static void softmax_rows_online_baseline(float *x, int rows, int n, int ld,
                                         const float *mask_bias, float *row_max,
                                         float *row_sum, float *rescale, bool bf16)
{
    softmax_rows_online(x, rows, n, ld, mask_bias, row_max, row_sum, rescale, bf16);
}

#if RF_SIMD_X86
RF_TARGET_AVX2 static void softmax_rows_online_avx2(float *x, int rows, int n, int ld,
                                                    const float *mask_bias, float *row_max,
                                                    float *row_sum, float *rescale, bool bf16)
{
    softmax_rows_online(x, rows, n, ld, mask_bias, row_max, row_sum, rescale, bf16);
}

#endif

void rf_softmax_rows_online(float *x, int rows, int n, int ld, const float *mask_bias,
                            float *row_max, float *row_sum, float *rescale, bool bf16)
{
#if RF_SIMD_X86
    switch (rf_simd_level_get()) {
    case RF_SIMD_AVX512:
        rf_softmax_rows_online_avx512(x, rows, n, ld, mask_bias, row_max, row_sum, rescale,
                                      bf16);
        return;
    case RF_SIMD_AVX2:
        softmax_rows_online_avx2(x, rows, n, ld, mask_bias, row_max, row_sum, rescale, bf16);
        return;
    case RF_SIMD_BASELINE: break;
    }
#endif
    softmax_rows_online_baseline(x, rows, n, ld, mask_bias, row_max, row_sum, rescale, bf16);
}

void rf_softmax_rows_naive(float *x, int rows, int n, int ld, const float *mask_bias)
{
    for (int r = 0; r < rows; r++) {
        float *row = x + (size_t)r * ld;
        double max = -INFINITY;
        for (int j = 0; j < n; j++) {
            row[j] += mask_bias ? mask_bias[j] : 0.0f;
            if (row[j] > max)
                max = row[j];
        }
        double sum = 0.0;
        for (int j = 0; j < n; j++)
            sum += exp(row[j] - max);
        for (int j = 0; j < n; j++)
            row[j] = (float)(exp(row[j] - max) / sum);
    }
}
