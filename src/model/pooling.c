/*
 * pooling.c — from token hidden states to one sentence vector: [CLS]
 * pooling, mask-aware mean pooling (sentence-transformers' mean: padding is
 * left out), L2 normalisation and cosine similarity. The pooler head itself
 * (RoFormer-Sim's dense + activation on [CLS]) runs inside rf_forward.
 */
#include "roformer.h"

#include <math.h>
#include <string.h>

/* hidden[L][D] row-major; mask[L] (NULL = every token real). */
void rf_pool_hidden(const float *hidden, const int32_t *mask, int32_t L, int32_t D, rf_pooling pooling,
             float *out)
{
    if (pooling != RF_POOLING_MEAN) {
        memcpy(out, hidden, sizeof(float) * (size_t)D);
        return;
    }
    int32_t count = 0;
    for (int32_t t = 0; t < L; t++)
        count += !mask || mask[t];
    if (!count) {
        memset(out, 0, sizeof(float) * (size_t)D);
        return;
    }
    /* One double accumulator per column, one rounding per element. */
    for (int32_t d = 0; d < D; d++) {
        double acc = 0.0;
        for (int32_t t = 0; t < L; t++)
            if (!mask || mask[t])
                acc += hidden[(size_t)t * D + d];
        out[d] = (float)(acc / count);
    }
}

void rf_l2_normalize(float *x, int32_t n)
{
    double ss = 0.0;
    for (int32_t i = 0; i < n; i++)
        ss += (double)x[i] * x[i];
    if (ss == 0.0)
        return; /* a zero vector stays zero rather than NaN */
    float inv = (float)(1.0 / sqrt(ss));
    for (int32_t i = 0; i < n; i++)
        x[i] *= inv;
}

float rf_cosine(const float *a, const float *b, int32_t n)
{
    double ab = 0.0, aa = 0.0, bb = 0.0;
    for (int32_t i = 0; i < n; i++) {
        ab += (double)a[i] * b[i];
        aa += (double)a[i] * a[i];
        bb += (double)b[i] * b[i];
    }
    if (aa == 0.0 || bb == 0.0)
        return 0.0f;
    return (float)(ab / (sqrt(aa) * sqrt(bb)));
}
