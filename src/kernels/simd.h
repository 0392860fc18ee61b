/*
 * simd.h — which instruction set the element-wise kernels (GELU and the
 * other activations, softmax, LayerNorm, RMS norm) run with, chosen once at
 * run time.
 *
 * The kernels are written once on the vector type of vecmath.h (their
 * bodies in activations_vec.h, softmax_vec.h, layernorm_vec.h and
 * rmsnorm_vec.h) and compiled three times: for the x86-64 baseline (SSE2,
 * two registers per 8-float vector), for AVX2 with FMA (one 8-float
 * register), and for AVX-512 (one 16-float register, x86/kernels_avx512.c). The CPU is asked
 * through cpu.h; the baseline stays the fallback everywhere else.
 * On ARM64 the baseline build is the NEON build: Advanced SIMD is part of
 * ARMv8-A, so every 8-float vector is two q registers, with fused
 * multiply-adds. Tests force each level to compare every build with the
 * naive twins.
 *
 * The ARM64 builds of the int8 and bf16 products (SDOT, SMMLA, BFDOT /
 * BFMMLA) are marked per function like the x86 ones.
 */
#ifndef RF_SIMD_H
#define RF_SIMD_H

#include "roformer.h"

#include <stdbool.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RF_SIMD_X86 1
/* Mark the AVX2 (with FMA) and AVX-512 builds of a kernel. */
#define RF_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define RF_TARGET_AVX512 __attribute__((target("avx512f")))
/* Mark the F16C build of the f16 widening (fp16.c). */
#define RF_TARGET_F16C __attribute__((target("avx,f16c")))
#else
#define RF_SIMD_X86 0
#endif

#if defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define RF_SIMD_ARM64 1
/* Mark the builds of the int8 product on SDOT (ARMv8.2 dot product), on
 * SMMLA (I8MM) and of the bf16 product on BFDOT / BFMMLA (BF16). */
#define RF_TARGET_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#define RF_TARGET_I8MM __attribute__((target("arch=armv8.2-a+dotprod+i8mm")))
#define RF_TARGET_ARM_BF16 __attribute__((target("arch=armv8.2-a+bf16")))
#else
#define RF_SIMD_ARM64 0
#endif

typedef enum {
    RF_SIMD_BASELINE, /* whatever the compile flags give (SSE2 on x86-64) */
    RF_SIMD_AVX2,     /* AVX2 and FMA */
    RF_SIMD_AVX512,   /* AVX-512 (cpu.h: F, BW and VL) */
} rf_simd_level;

/* The level the kernels use: the best this CPU has, unless set. */
rf_simd_level rf_simd_level_get(void);
/* Forces a level (tests); one the CPU lacks is refused: returns false. */
bool rf_simd_level_set(rf_simd_level level);

#if RF_SIMD_X86
/* The AVX-512 builds (x86/kernels_avx512.c) of rf_bias_act,
 * rf_softmax_rows_online, rf_add_layernorm /
 * rf_layernorm and rf_add_rmsnorm / rf_rmsnorm (y NULL); called by those when the level is RF_SIMD_AVX512. */
void rf_bias_act_avx512(float *y, int rows, int cols, int ld, const float *bias,
                        rf_activation act);
void rf_softmax_rows_online_avx512(float *x, int rows, int n, int ld, const float *mask_bias,
                                   float *row_max, float *row_sum, float *rescale, bool bf16);
void rf_add_layernorm_avx512(float *x, const float *y, int rows, int n, const float *gamma,
                             const float *beta, float eps);
void rf_add_rmsnorm_avx512(float *x, const float *y, int rows, int n, float eps);
#endif

#endif
