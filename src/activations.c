/*
 * activations.c — HF ACT2FN for the names RoFormer configs use:
 *   gelu      0.5 x (1 + erf(x / sqrt 2))                 (exact, HF "gelu")
 *   gelu_new  0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))  (HF NewGELUActivation)
 *   relu, silu/swish x * sigmoid(x), tanh, linear (identity).
 * The fast pass switches on the activation once per row block and runs a
 * plain loop over contiguous floats; the naive twin computes each element
 * in double.
 */
#include "activations.h"

#include <math.h>

#define SQRT1_2 0.70710678118654752440
#define SQRT_2_OVER_PI 0.79788456080286535588

void rf_bias_act(float *y, int rows, int cols, int ld, const float *bias, rf_activation act)
{
    for (int r = 0; r < rows; r++) {
        float *restrict row = y + (size_t)r * ld;
        if (bias) {
            const float *restrict b = bias;
            for (int c = 0; c < cols; c++)
                row[c] += b[c];
        }
        switch (act) {
        case RF_ACT_GELU:
            for (int c = 0; c < cols; c++)
                row[c] = 0.5f * row[c] * (1.0f + erff(row[c] * (float)SQRT1_2));
            break;
        case RF_ACT_GELU_NEW:
            for (int c = 0; c < cols; c++) {
                float x = row[c];
                row[c] = 0.5f * x * (1.0f + tanhf((float)SQRT_2_OVER_PI * (x + 0.044715f * x * x * x)));
            }
            break;
        case RF_ACT_RELU:
            for (int c = 0; c < cols; c++)
                row[c] = row[c] > 0.0f ? row[c] : 0.0f;
            break;
        case RF_ACT_SILU:
            for (int c = 0; c < cols; c++)
                row[c] = row[c] / (1.0f + expf(-row[c]));
            break;
        case RF_ACT_TANH:
            for (int c = 0; c < cols; c++)
                row[c] = tanhf(row[c]);
            break;
        case RF_ACT_LINEAR:
            break;
        }
    }
}

float rf_act_naive(rf_activation act, float xf)
{
    double x = xf;
    switch (act) {
    case RF_ACT_GELU: return (float)(0.5 * x * (1.0 + erf(x * SQRT1_2)));
    case RF_ACT_GELU_NEW: return (float)(0.5 * x * (1.0 + tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))));
    case RF_ACT_RELU: return x > 0.0 ? xf : 0.0f;
    case RF_ACT_SILU: return (float)(x / (1.0 + exp(-x)));
    case RF_ACT_TANH: return (float)tanh(x);
    case RF_ACT_LINEAR: return xf;
    }
    return xf;
}

void rf_bias_act_naive(float *y, int rows, int cols, int ld, const float *bias,
                       rf_activation act)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            float *v = &y[(size_t)r * ld + c];
            *v = rf_act_naive(act, bias ? *v + bias[c] : *v);
        }
}
