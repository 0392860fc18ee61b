/*
 * elementwise_build.h — one instruction set's build of the element-wise
 * kernels (elementwise.h), included once by the one file of each build
 * (elementwise_baseline.c, x86/elementwise_avx2.c,
 * x86/elementwise_avx512.c). The includer sets RF_VLEN (vecmath.h: 8
 * unless set) and RF_ELEMENTWISE_TARGET (the build's target attribute,
 * empty for the baseline) first; this header then compiles the bodies of
 * the *_vec.h headers into static functions of that target, and the
 * includer fills its rf_elementwise_ops (elementwise_ops.h) with
 * RF_ELEMENTWISE_OPS.
 *
 * Adding an element-wise kernel is its body in a *_vec.h header, its
 * function here, its member in rf_elementwise_ops and in
 * RF_ELEMENTWISE_OPS: every build then has it. Which build runs is the
 * kernels' table's row (backend.c).
 */
#ifndef RF_ELEMENTWISE_BUILD_H
#define RF_ELEMENTWISE_BUILD_H

#include "kernels/activations_vec.h"
#include "kernels/elementwise_ops.h"
#include "kernels/layernorm_vec.h"
#include "kernels/rmsnorm_vec.h"
#include "kernels/simd.h"
#include "kernels/softmax_vec.h"
#include "kernels/widen_vec.h"

RF_ELEMENTWISE_TARGET static void build_bias_act(float *y, int rows, int cols, int ld,
                                                 const float *bias, rf_activation act)
{
    bias_act_rows(y, rows, cols, ld, bias, act);
}

RF_ELEMENTWISE_TARGET static void build_softmax_rows_online(float *x, int rows, int n, int ld,
                                                            const float *mask_bias,
                                                            float *row_max, float *row_sum,
                                                            float *rescale, bool bf16)
{
    softmax_rows_online(x, rows, n, ld, mask_bias, row_max, row_sum, rescale, bf16);
}

RF_ELEMENTWISE_TARGET static void build_add_layernorm(float *x, const float *y, int rows, int n,
                                                      const float *gamma, const float *beta,
                                                      float eps)
{
    add_layernorm_rows(x, y, rows, n, gamma, beta, eps);
}

RF_ELEMENTWISE_TARGET static void build_add_rmsnorm(float *x, const float *y, int rows, int n,
                                                    float eps)
{
    add_rmsnorm_rows(x, y, rows, n, eps);
}

RF_ELEMENTWISE_TARGET static void build_widen_f16(const void *src, float *dst, size_t n)
{
    widen_f16_values(src, dst, n);
}

RF_ELEMENTWISE_TARGET static void build_widen_bf16(const void *src, float *dst, size_t n)
{
    widen_bf16_values(src, dst, n);
}

/* The build's rf_elementwise_ops: the functions above. */
#define RF_ELEMENTWISE_OPS                                                                       \
    {                                                                                            \
        .bias_act = build_bias_act, .softmax_rows_online = build_softmax_rows_online,            \
        .add_layernorm = build_add_layernorm, .add_rmsnorm = build_add_rmsnorm,                  \
        .widen_f16 = build_widen_f16, .widen_bf16 = build_widen_bf16,                            \
    }

#endif
