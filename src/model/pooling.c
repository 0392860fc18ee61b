/*
 * pooling.c — from token hidden states to one sentence vector: [CLS]
 * pooling, and sentence-transformers' Pooling modes over the real tokens
 * (padding left out): mean, max and last token; L2 normalisation and
 * cosine similarity. The pooler head itself
 * (RoFormer-Sim's dense + activation on [CLS]) runs inside rf_forward.
 */
#include "roformer.h"

#include <math.h>
#include <string.h>

/* hidden[L][D] row-major; mask[L] (NULL = every token real). */

/* sentence-transformers' max: the largest value of each column over the
 * real tokens (its masked positions are set to -1e9 first, which no real
 * value reaches). */
static void pool_max(const float *hidden, const int32_t *mask, int32_t L, int32_t D, float *out)
{
    bool any = false;
    for (int32_t t = 0; t < L; t++) {
        if (mask && !mask[t])
            continue;
        const float *h = hidden + (size_t)t * D;
        for (int32_t d = 0; d < D; d++)
            out[d] = !any || h[d] > out[d] ? h[d] : out[d];
        any = true;
    }
    if (!any)
        memset(out, 0, sizeof(float) * (size_t)D);
}

void rf_pool_hidden(const float *hidden, const int32_t *mask, int32_t L, int32_t D, rf_pooling pooling,
             float *out)
{
    int32_t count = 0, last = -1;
    for (int32_t t = 0; t < L; t++)
        if (!mask || mask[t]) {
            count++;
            last = t;
        }
    if (pooling == RF_POOLING_MAX) {
        pool_max(hidden, mask, L, D, out);
        return;
    }
    if (pooling == RF_POOLING_LAST) {
        if (last < 0)
            memset(out, 0, sizeof(float) * (size_t)D);
        else
            memcpy(out, hidden + (size_t)last * D, sizeof(float) * (size_t)D);
        return;
    }
    if (pooling != RF_POOLING_MEAN) { /* [CLS], the first position */
        memcpy(out, hidden, sizeof(float) * (size_t)D);
        return;
    }
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
