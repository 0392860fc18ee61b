/*
 * elementwise.h — the build of the element-wise kernels (GELU and the
 * other activations, softmax, LayerNorm, RMS norm, the f16 / bf16
 * widening) that runs: the kernels' table's choice (backend.h,
 * RF_OP_ELEMENTWISE), made once at run time.
 *
 * The kernels are written once on the vector type of vecmath.h (their
 * bodies in activations_vec.h, softmax_vec.h, layernorm_vec.h,
 * rmsnorm_vec.h and widen_vec.h) and compiled once per instruction set,
 * each build one file that fills one rf_elementwise_ops
 * (elementwise_ops.h, elementwise_build.h): the x86-64 baseline (SSE2,
 * two registers per 8-float vector, elementwise_baseline.c), AVX2 with
 * FMA (one 8-float register, x86/elementwise_avx2.c) and AVX-512 (one
 * 16-float register, x86/elementwise_avx512.c). The baseline stays the
 * fallback everywhere else. On ARM64 the baseline build is the NEON
 * build: Advanced SIMD is part of ARMv8-A, so every 8-float vector is two
 * q registers, with fused multiply-adds. Each kernel's entry point
 * (activations.c, softmax.c, layernorm.c, rmsnorm.c, widen.c) calls its
 * member of rf_elementwise(), with no choice of its own. Tests set each
 * row to compare every build with the naive twins.
 */
#ifndef RF_ELEMENTWISE_H
#define RF_ELEMENTWISE_H

#include "kernels/backend.h"
#include "kernels/elementwise_ops.h"

/* The build in use. */
static inline const rf_elementwise_ops *rf_elementwise(void)
{
    return rf_backend_get(RF_OP_ELEMENTWISE)->elementwise;
}

#endif
