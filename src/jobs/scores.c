/*
 * scores.c — turning logits into what a job reports: softmax probabilities
 * and the top-k indices (HF pipelines: TextClassificationPipeline,
 * FillMaskPipeline, which take softmax then topk).
 */
#include "roformer.h"

#include <math.h>

void rf_softmax(const float *x, int32_t n, float *out)
{
    if (n <= 0)
        return;
    float max = x[0];
    for (int32_t i = 1; i < n; i++)
        if (x[i] > max)
            max = x[i];
    /* Sum in double: with 50,000 vocab logits float accumulation drifts. */
    double sum = 0.0;
    for (int32_t i = 0; i < n; i++) {
        out[i] = expf(x[i] - max);
        sum += out[i];
    }
    float inv = (float)(1.0 / sum);
    for (int32_t i = 0; i < n; i++)
        out[i] *= inv;
}

/* Keeps idx[0..kept) sorted by x descending; a later index with an equal
 * value goes after the earlier ones, so ties resolve to the lower index. */
int32_t rf_top_k(const float *x, int32_t n, int32_t k, int32_t *idx)
{
    if (k > n)
        k = n;
    if (k <= 0)
        return 0;
    int32_t kept = 0;
    for (int32_t i = 0; i < n; i++) {
        if (kept == k && !(x[i] > x[idx[k - 1]]))
            continue;
        int32_t j = kept < k ? kept++ : k - 1;
        while (j > 0 && x[i] > x[idx[j - 1]]) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = i;
    }
    return k;
}
