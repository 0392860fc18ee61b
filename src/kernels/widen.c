/*
 * widen.c — widening whole f16 / bf16 tensors to f32 at load time.
 *
 * A base-size model holds ~10^8 weights, so the loop runs on the vectors
 * of the element-wise build in use (widen_vec.h, elementwise.h), and the
 * scalar conversions of fp16.h are the reference. Both are exact.
 */
#include "kernels/widen.h"
#include "kernels/elementwise.h"

void rf_widen_f16(const void *src, float *dst, size_t n)
{
    rf_elementwise()->widen_f16(src, dst, n);
}

void rf_widen_bf16(const void *src, float *dst, size_t n)
{
    rf_elementwise()->widen_bf16(src, dst, n);
}
