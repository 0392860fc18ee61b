/*
 * compute_compare.h — what the tests of a reduced-precision compute type
 * (test_bf16, test_int8) share when they set it beside the engine's f32
 * result: one forward pass of a reference case into freshly allocated
 * outputs of the model's head, and the argmax and top-two margin of a
 * strided row of logits.
 */
#ifndef RF_TEST_COMPUTE_COMPARE_H
#define RF_TEST_COMPUTE_COMPARE_H

#include "reference_cases.h"
#include "roformer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    float *last, *logits, *start, *end;
} outputs;

static void free_outputs(outputs *o)
{
    free(o->last);
    free(o->logits);
    free(o->start);
    free(o->end);
}

static rf_status run(rf_context *ctx, const rf_hparams *hp, const test_case *c, outputs *o,
                     rf_error *err)
{
    size_t BL = (size_t)c->B * c->L;
    memset(o, 0, sizeof *o);
    rf_batch batch = {c->B, c->L, c->ids, c->types, c->mask};
    rf_outputs out = {0};
    out.last_hidden_state = o->last = malloc(BL * hp->hidden_size * sizeof(float));
    if (hp->head == RF_HEAD_SEQ_CLS)
        out.logits = o->logits = malloc((size_t)c->B * hp->num_labels * sizeof(float));
    else if (hp->head == RF_HEAD_TOKEN_CLS)
        out.logits = o->logits = malloc(BL * hp->num_labels * sizeof(float));
    else if (hp->head == RF_HEAD_QA) {
        out.start_logits = o->start = malloc(BL * sizeof(float));
        out.end_logits = o->end = malloc(BL * sizeof(float));
    }
    return rf_forward(ctx, &batch, &out, err);
}

static int argmax(const float *v, int n, int stride)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (v[(size_t)i * stride] > v[(size_t)best * stride])
            best = i;
    return best;
}

/* The gap between the largest and the second largest of n values. */
static float top2_margin(const float *v, int n, int stride)
{
    float a = -INFINITY, b = -INFINITY;
    for (int i = 0; i < n; i++) {
        float x = v[(size_t)i * stride];
        if (x > a) {
            b = a;
            a = x;
        } else if (x > b) {
            b = x;
        }
    }
    return a - b;
}

#endif
