/*
 * activations.c — HF ACT2FN for the names RoFormer configs use:
 *   gelu      0.5 x (1 + erf(x / sqrt 2))                            (exact form, HF "gelu")
 *   gelu_new  0.5 x (1 + tanh(u)) = x sigmoid(2u),
 *             u = sqrt(2/pi) (x + 0.044715 x^3)                     (HF NewGELUActivation)
 *   relu, silu/swish x sigmoid(x), tanh = 1 - 2 / (exp(2x) + 1), linear (identity).
 *
 * The fast pass (activations_vec.h, one build per instruction set, the
 * one elementwise.h chose) works on a vector of floats at a time with the polynomial
 * exp/erf of vecmath.h (agreeing with libm to a few 1e-7) and adds the
 * Linear layer's bias in the same sweep; the naive twin computes each
 * element in double with libm.
 */
#include "kernels/activations.h"
#include "kernels/activations_vec.h"
#include "kernels/elementwise.h"

#include <math.h>

void rf_bias_act(float *y, int rows, int cols, int ld, const float *bias, rf_activation act)
{
    rf_elementwise()->bias_act(y, rows, cols, ld, bias, act);
}

float rf_act_naive(rf_activation act, float xf)
{
    double x = xf;
    switch (act) {
    case RF_ACT_GELU: return (float)(0.5 * x * (1.0 + erf(x * RF_SQRT1_2)));
    case RF_ACT_GELU_NEW: return (float)(0.5 * x * (1.0 + tanh(RF_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))));
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
