/*
 * elementwise_ops.h — what one instruction set's build of the
 * element-wise kernels is: an rf_elementwise_ops, filled by the build's
 * own file (elementwise_build.h) and a row of the kernels' table
 * (backend.c). A header of its own so that the builds and the table each
 * include it without including each other.
 */
#ifndef RF_ELEMENTWISE_OPS_H
#define RF_ELEMENTWISE_OPS_H

#include "roformer.h"
#include "kernels/cpu.h"

#include <stdbool.h>
#include <stddef.h>

/* One build of every element-wise kernel, each member with the arguments
 * of its entry point (activations.h, softmax.h, layernorm.h, rmsnorm.h,
 * widen.h); its name and CPU needs are its row of the kernels' table
 * (backend.c). */
typedef struct rf_elementwise_ops rf_elementwise_ops;
struct rf_elementwise_ops {
    void (*bias_act)(float *y, int rows, int cols, int ld, const float *bias,
                     rf_activation act);
    void (*softmax_rows_online)(float *x, int rows, int n, int ld, const float *mask_bias,
                                float *row_max, float *row_sum, float *rescale, bool bf16);
    void (*add_layernorm)(float *x, const float *y, int rows, int n, const float *gamma,
                          const float *beta, float eps);
    void (*add_rmsnorm)(float *x, const float *y, int rows, int n, float eps);
    void (*widen_f16)(const void *src, float *dst, size_t n);
    void (*widen_bf16)(const void *src, float *dst, size_t n);
};

/* elementwise_baseline.c, x86/elementwise_avx2.c, x86/elementwise_avx512.c */
extern const rf_elementwise_ops rf_elementwise_baseline, rf_elementwise_avx2,
    rf_elementwise_avx512;

#endif
