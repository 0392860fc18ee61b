/*
 * activations_vec.h — the vector body of rf_bias_act (see activations.c)
 * and rf_act_at, the activation of the int8 products' epilogues, written
 * on the vector type of vecmath.h and included once per instruction-set
 * build: by elementwise_build.h in each element-wise build (elementwise.h: 8
 * floats for the baseline and AVX2, 16 for AVX-512) and by the epilogues
 * of x86/gemm_int8_shared_avx2.c (8) and x86/gemm_int8_shared_avx512.c
 * (16), each of which sets RF_VLEN first or takes the default.
 */
#ifndef RF_ACTIVATIONS_VEC_H
#define RF_ACTIVATIONS_VEC_H

#include "roformer.h"
#include "kernels/vecmath.h"

#define RF_SQRT1_2 0.70710678118654752440
#define RF_SQRT_2_OVER_PI 0.79788456080286535588

static inline __attribute__((always_inline)) rf_vf gelu_v(rf_vf x)
{
    /* as torch computes it in float32: from x = -5.55 down, erf rounds
       to -1 and GELU to 0, within 8e-8 of the true value */
    rf_vf half_x = 0.5f * x;
    return half_x + half_x * rf_v_erf(x * (float)RF_SQRT1_2);
}

static inline __attribute__((always_inline)) rf_vf gelu_new_v(rf_vf x)
{
    rf_vf u = (float)RF_SQRT_2_OVER_PI * (x + 0.044715f * x * x * x);
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

/* act(v), for the products' epilogues (the switch is on a value fixed for
 * the whole product, so it predicts). bias_act_rows below keeps one loop
 * per activation instead: with this switch inside its loop, which GCC does
 * not unswitch at -O2, GELU over a row ran slower (docs/performance.md). */
static inline __attribute__((always_inline)) rf_vf act_v(rf_vf v, rf_activation act)
{
    switch (act) {
    case RF_ACT_GELU: return gelu_v(v);
    case RF_ACT_GELU_NEW: return gelu_new_v(v);
    case RF_ACT_RELU: return relu_v(v);
    case RF_ACT_SILU: return silu_v(v);
    case RF_ACT_TANH: return tanh_v(v);
    case RF_ACT_LINEAR: break;
    }
    return v;
}

/* p[0 .. RF_VLEN) = act(p[...]), for a product's epilogue right after it
 * stores the vector (once inlined, the compiler keeps it in registers). A
 * pointer, not a vector, crosses the call: clang refuses a vector argument
 * between a function built for AVX2 and one built for the baseline. */
static inline __attribute__((always_inline)) void rf_act_at(float *p, rf_activation act)
{
    rf_v_store(p, act_v(rf_v_load(p), act));
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

#endif
