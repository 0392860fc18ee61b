/*
 * simd.h — which instruction set the element-wise kernels (GELU and the
 * other activations, softmax) run with, chosen once at run time.
 *
 * The kernels are written once on the vector type of vecmath.h and compiled
 * twice: for the x86-64 baseline (SSE2, two registers per vector) and, on
 * x86-64 CPUs with AVX2, for AVX2 (one 8-float register per vector). The
 * CPU is asked with __builtin_cpu_supports; the baseline stays the fallback
 * everywhere else. Tests force each level to compare both with the naive
 * twins.
 */
#ifndef RF_SIMD_H
#define RF_SIMD_H

#include <stdbool.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RF_SIMD_X86 1
/* Marks the AVX2 build of a kernel. */
#define RF_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define RF_SIMD_X86 0
#endif

typedef enum {
    RF_SIMD_BASELINE, /* whatever the compile flags give (SSE2 on x86-64) */
    RF_SIMD_AVX2,
} rf_simd_level;

/* The level the kernels use: the best this CPU has, unless set. */
rf_simd_level rf_simd_level_get(void);
/* Forces a level (tests); one the CPU lacks is refused: returns false. */
bool rf_simd_level_set(rf_simd_level level);

#endif
