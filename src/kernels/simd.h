/*
 * simd.h — the marks of the instruction-set builds: which architecture
 * this file is compiled for (RF_SIMD_X86, RF_SIMD_ARM64), and the target
 * attribute of each build's functions (RF_TARGET_*). Every build of a
 * kernel is compiled on every architecture with the same flags: its body
 * sits inside the architecture's #if and its functions carry the target
 * of their instruction set; the CPU is asked at run time (cpu.h) before
 * any of them runs. Which build runs is the kernels' table's choice
 * (backend.h).
 */
#ifndef RF_SIMD_H
#define RF_SIMD_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RF_SIMD_X86 1
/* Mark the AVX2 (with FMA) and AVX-512 builds of a kernel. */
#define RF_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define RF_TARGET_AVX512 __attribute__((target("avx512f")))
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

#endif
