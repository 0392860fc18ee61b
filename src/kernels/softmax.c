/*
 * softmax.c — max-subtracted row softmax (see softmax.h): the entry point
 * into the chosen build of softmax_vec.h (elementwise.h) and the naive twin,
 * libm exp in double.
 */
#include "kernels/softmax.h"
#include "kernels/elementwise.h"

#include <math.h>
#include <stddef.h>

void rf_softmax_rows_online(float *x, int rows, int n, int ld, const float *mask_bias,
                            float *row_max, float *row_sum, float *rescale, bool bf16)
{
    rf_elementwise()->softmax_rows_online(x, rows, n, ld, mask_bias, row_max, row_sum, rescale,
                                          bf16);
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
