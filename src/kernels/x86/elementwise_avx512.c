/*
 * elementwise_avx512.c — the element-wise kernels built for AVX-512
 * (elementwise.h): 16-float vectors, one zmm register each. The vector width is
 * fixed per translation unit (vecmath.h), so this build sets RF_VLEN
 * before any header.
 */
#define RF_VLEN 16

#include "kernels/simd.h"

#if RF_SIMD_X86
#define RF_ELEMENTWISE_TARGET RF_TARGET_AVX512

#include "kernels/elementwise_build.h"

const rf_elementwise_ops rf_elementwise_avx512 = RF_ELEMENTWISE_OPS;
#endif
