/*
 * elementwise_avx2.c — the element-wise kernels built for AVX2 with FMA
 * (elementwise.h): 8-float vectors, one ymm register each.
 */
#include "kernels/simd.h"

#if RF_SIMD_X86
#define RF_ELEMENTWISE_TARGET RF_TARGET_AVX2

#include "kernels/elementwise_build.h"

const rf_elementwise_ops rf_elementwise_avx2 = RF_ELEMENTWISE_OPS;
#endif
