/*
 * answer_span.c — choosing the answer of extractive QA from start/end
 * logits, as HF's QuestionAnsweringPipeline does for one window: only
 * context tokens may start or end the answer, start <= end, at most
 * max_answer_tokens long; the best pair maximises start + end logits
 * (equivalently the product of the two probabilities), and the score is
 * that product, with softmax over the answer tokens and [CLS]: HF masks
 * every other token with -10000 but leaves [CLS] in (for "no answer"),
 * then zeroes [CLS] after the softmax.
 */
#include "roformer.h"

#include <math.h>

bool rf_best_span(const float *start_logits, const float *end_logits, const uint8_t *allowed,
                  int32_t n, int32_t max_answer_tokens, int32_t *start, int32_t *end,
                  float *score)
{
    if (max_answer_tokens < 1)
        max_answer_tokens = 1;
    int32_t best_s = -1, best_e = -1;
    float best = -INFINITY;
    float max_s = -INFINITY, max_e = -INFINITY;

    /* Pass 1: the best pair, O(n * max_answer_tokens). */
    for (int32_t s = 0; s < n; s++) {
        if (!allowed[s])
            continue;
        if (start_logits[s] > max_s)
            max_s = start_logits[s];
        if (end_logits[s] > max_e)
            max_e = end_logits[s];
        if (allowed[s] != RF_SPAN_ANSWER)
            continue;
        for (int32_t e = s; e < n && e - s < max_answer_tokens; e++) {
            if (allowed[e] != RF_SPAN_ANSWER)
                continue;
            float v = start_logits[s] + end_logits[e];
            if (v > best) {
                best = v;
                best_s = s;
                best_e = e;
            }
        }
    }
    if (best_s < 0)
        return false;

    /* Pass 2: the softmax normalisers over every token that counts. */
    double zs = 0.0, ze = 0.0;
    for (int32_t i = 0; i < n; i++) {
        if (!allowed[i])
            continue;
        zs += exp((double)start_logits[i] - max_s);
        ze += exp((double)end_logits[i] - max_e);
    }
    *start = best_s;
    *end = best_e;
    *score = (float)(exp((double)start_logits[best_s] - max_s) / zs *
                     exp((double)end_logits[best_e] - max_e) / ze);
    return true;
}
