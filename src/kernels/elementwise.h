/*
 * elementwise.h — which instruction set the element-wise kernels (GELU
 * and the other activations, softmax, LayerNorm, RMS norm) run with,
 * chosen once at run time, and the table of their builds that the choice
 * reads.
 *
 * The kernels are written once on the vector type of vecmath.h (their
 * bodies in activations_vec.h, softmax_vec.h, layernorm_vec.h and
 * rmsnorm_vec.h) and compiled once per instruction set, each build one
 * file that fills one rf_elementwise_ops (elementwise_ops.h,
 * elementwise_build.h): the x86-64 baseline (SSE2, two registers per
 * 8-float vector, elementwise_baseline.c), AVX2 with FMA (one 8-float
 * register, x86/elementwise_avx2.c) and AVX-512 (one 16-float register,
 * x86/elementwise_avx512.c). The CPU is asked through cpu.h; the baseline
 * stays the fallback everywhere else. On ARM64 the baseline build is the
 * NEON build: Advanced SIMD is part of ARMv8-A, so every 8-float vector
 * is two q registers, with fused multiply-adds. Each kernel's entry point
 * (activations.c, softmax.c, layernorm.c, rmsnorm.c) calls its member of
 * rf_elementwise(), with no choice of its own. Tests force each level to
 * compare every build with the naive twins.
 */
#ifndef RF_ELEMENTWISE_H
#define RF_ELEMENTWISE_H

#include "kernels/elementwise_ops.h"

#include <stdbool.h>

typedef enum {
    RF_SIMD_BASELINE, /* whatever the compile flags give (SSE2 on x86-64) */
    RF_SIMD_AVX2,     /* AVX2 and FMA */
    RF_SIMD_AVX512,   /* AVX-512 (cpu.h: F, BW and VL) */
} rf_simd_level;

/* The level the kernels use: the best this CPU has, unless set. */
rf_simd_level rf_simd_level_get(void);
/* Forces a level (tests); one the CPU lacks is refused: returns false. */
bool rf_simd_level_set(rf_simd_level level);

/* The build of rf_simd_level_get()'s level. */
const rf_elementwise_ops *rf_elementwise(void);

#endif
