/*
 * softmax.c — max-subtracted row softmax (see softmax.h).
 */
#include "softmax.h"

#include <math.h>
#include <stddef.h>

void rf_softmax_rows(float *x, int rows, int n, int ld, const float *mask_bias)
{
    for (int r = 0; r < rows; r++) {
        float *restrict row = x + (size_t)r * ld;
        if (mask_bias) {
            const float *restrict m = mask_bias;
            for (int j = 0; j < n; j++)
                row[j] += m[j];
        }
        float max = row[0];
        for (int j = 1; j < n; j++)
            max = row[j] > max ? row[j] : max;
        float sum = 0.0f;
        for (int j = 0; j < n; j++) {
            row[j] = expf(row[j] - max);
            sum += row[j];
        }
        float inv = 1.0f / sum;
        for (int j = 0; j < n; j++)
            row[j] *= inv;
    }
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
