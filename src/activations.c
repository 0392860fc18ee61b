/*
 * activations.c — HF ACT2FN for the names RoFormer configs use:
 *   gelu      0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2)    (exact form, HF "gelu")
 *   gelu_new  0.5 x (1 + tanh(u)) = x sigmoid(2u),
 *             u = sqrt(2/pi) (x + 0.044715 x^3)                     (HF NewGELUActivation)
 *   relu, silu/swish x sigmoid(x), tanh = 1 - 2 / (exp(2x) + 1), linear (identity).
 *
 * The fast pass works on a vector of floats at a time with the polynomial exp/erfc
 * of vecmath.h (agreeing with libm to a few 1e-7) and adds the Linear
 * layer's bias in the same sweep; the naive twin computes each element in
 * double with libm.
 */
#include "activations.h"
#include "simd.h"
#include "vecmath.h"

#include <math.h>

#define SQRT1_2 0.70710678118654752440
#define SQRT_2_OVER_PI 0.79788456080286535588

static inline __attribute__((always_inline)) rf_vf v_abs(rf_vf x)
{
    return (rf_vf)((rf_vi)x & 0x7fffffff);
}

static inline __attribute__((always_inline)) rf_vf gelu_v(rf_vf x)
{
    /* q = erfc(|x| / sqrt 2); erfc(-z) = 2 - erfc(z) for the positive side */
    rf_vf q = rf_v_erfc(v_abs(x) * (float)SQRT1_2);
    return rf_v_select(x >= 0.0f, x * (1.0f - 0.5f * q), 0.5f * x * q);
}

static inline __attribute__((always_inline)) rf_vf gelu_new_v(rf_vf x)
{
    rf_vf u = (float)SQRT_2_OVER_PI * (x + 0.044715f * x * x * x);
    return x / (1.0f + rf_v_exp(-2.0f * u));
}

static inline __attribute__((always_inline)) rf_vf silu_v(rf_vf x)
{
    return x / (1.0f + rf_v_exp(-x));
}

static inline __attribute__((always_inline)) rf_vf tanh_v(rf_vf x)
{
    return 1.0f - 2.0f / (rf_v_exp(2.0f * x) + 1.0f);
}

static inline __attribute__((always_inline)) rf_vf relu_v(rf_vf x)
{
    return rf_v_select(x > 0.0f, x, rf_v_set1(0.0f));
}

static inline __attribute__((always_inline)) rf_vf linear_v(rf_vf x)
{
    return x;
}

/* row[c] = f(row[c] + bias[c]); inlined once per activation. */
static inline __attribute__((always_inline)) void map_row(float *row, const float *bias, int cols, rf_vf (*f)(rf_vf))
{
    int c = 0;
    for (; c + RF_VLEN <= cols; c += RF_VLEN) {
        rf_vf v = rf_v_load(row + c);
        if (bias)
            v += rf_v_load(bias + c);
        rf_v_store(row + c, f(v));
    }
    if (c < cols) {
        int n = cols - c;
        rf_vf v = rf_v_load_part(row + c, n, 0.0f);
        if (bias)
            v += rf_v_load_part(bias + c, n, 0.0f);
        rf_v_store_part(row + c, f(v), n);
    }
}

/* The kernel body, compiled into each instruction-set build below. */
static inline __attribute__((always_inline)) void bias_act_rows(float *y, int rows, int cols,
                                                                int ld, const float *bias,
                                                                rf_activation act)
{
    rf_vf (*f)(rf_vf) = linear_v;
    for (int r = 0; r < rows; r++) {
        float *row = y + (size_t)r * ld;
        switch (act) {
        case RF_ACT_GELU: map_row(row, bias, cols, gelu_v); break;
        case RF_ACT_GELU_NEW: map_row(row, bias, cols, gelu_new_v); break;
        case RF_ACT_RELU: map_row(row, bias, cols, relu_v); break;
        case RF_ACT_SILU: map_row(row, bias, cols, silu_v); break;
        case RF_ACT_TANH: map_row(row, bias, cols, tanh_v); break;
        case RF_ACT_LINEAR:
            if (bias)
                map_row(row, bias, cols, f);
            break;
        }
    }
}

static void bias_act_baseline(float *y, int rows, int cols, int ld, const float *bias,
                              rf_activation act)
{
    bias_act_rows(y, rows, cols, ld, bias, act);
}

#if RF_SIMD_X86
RF_TARGET_AVX2 static void bias_act_avx2(float *y, int rows, int cols, int ld,
                                         const float *bias, rf_activation act)
{
    bias_act_rows(y, rows, cols, ld, bias, act);
}
#endif

void rf_bias_act(float *y, int rows, int cols, int ld, const float *bias, rf_activation act)
{
#if RF_SIMD_X86
    if (rf_simd_level_get() == RF_SIMD_AVX2) {
        bias_act_avx2(y, rows, cols, ld, bias, act);
        return;
    }
#endif
    bias_act_baseline(y, rows, cols, ld, bias, act);
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
