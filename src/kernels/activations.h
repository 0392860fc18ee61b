/*
 * activations.h — the element-wise activations of RoFormer (HF ACT2FN names
 * in rf_activation) and the fused "add bias, then activate" pass that
 * follows every Linear layer.
 */
#ifndef RF_ACTIVATIONS_H
#define RF_ACTIVATIONS_H

#include "roformer.h"

/* y[r][c] = act(y[r][c] + bias[c]) for a rows x cols block with row stride
 * ld; bias may be NULL (no bias). */
void rf_bias_act(float *y, int rows, int cols, int ld, const float *bias, rf_activation act);

/* Naive twin: one element at a time, computed in double. */
float rf_act_naive(rf_activation act, float x);
void rf_bias_act_naive(float *y, int rows, int cols, int ld, const float *bias,
                       rf_activation act);

#endif
