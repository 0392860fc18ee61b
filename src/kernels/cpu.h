/*
 * cpu.h — what this CPU (and the OS under it) lets the process run: the one
 * place that asks (CPUID and XCR0 through the compiler's
 * __builtin_cpu_supports and <cpuid.h> on x86-64, the hardware capability
 * words on ARM64, the tile-state request for AMX). Every other file asks
 * rf_cpu_has() in the words below, so "AVX-512" means one thing in the
 * whole tree: AVX512F, BW and VL together (every AVX-512 CPU since
 * Skylake-SP; the kernels use byte, word and 256-bit masked forms freely).
 *
 * The answers are read once (thread-safe) and never change; AMX's request
 * to the OS is made then too, so that a tile instruction never meets a
 * process that was not granted the state.
 */
#ifndef RF_CPU_H
#define RF_CPU_H

#include <stdbool.h>
#include <stdint.h>

/* One feature each; a kernel's needs are a set of them (RF_CPU_NEEDS). */
typedef enum {
    RF_CPU_AVX2,        /* x86-64: AVX2 and FMA */
    RF_CPU_AVX512,      /* x86-64: AVX512F, AVX512BW and AVX512VL */
    RF_CPU_AVX512_VNNI, /* x86-64: AVX-512 and AVX512-VNNI (VPDPBUSD) */
    RF_CPU_AVX512_BF16, /* x86-64: AVX-512 and AVX512_BF16 (VDPBF16PS, VCVTNE2PS2BF16) */
    RF_CPU_AMX_INT8,    /* x86-64: AMX-TILE and AMX-INT8, the tile state granted */
    RF_CPU_AMX_BF16,    /* x86-64: AMX-TILE and AMX-BF16, the tile state granted */
    RF_CPU_AMD,         /* x86-64: the vendor is AMD (CPUID leaf 0, "AuthenticAMD") */
    RF_CPU_NEON,        /* ARM64: Advanced SIMD (every ARMv8-A CPU) */
    RF_CPU_ARM_DOTPROD, /* ARM64: SDOT / UDOT (HWCAP_ASIMDDP) */
    RF_CPU_ARM_I8MM,    /* ARM64: SMMLA (HWCAP2_I8MM) */
    RF_CPU_ARM_BF16,    /* ARM64: BFDOT / BFMMLA (HWCAP2_BF16) */
    RF_CPU_FEATURE_COUNT
} rf_cpu_feature;

/* A set of features, one bit each: RF_CPU_NEEDS(RF_CPU_AVX512_BF16) |
 * RF_CPU_NEEDS(RF_CPU_AMD). */
typedef uint32_t rf_cpu_set;
#define RF_CPU_NEEDS(feature) ((rf_cpu_set)1u << (feature))
#define RF_CPU_ALL_KNOWN (RF_CPU_NEEDS(RF_CPU_FEATURE_COUNT) - 1u)

/* True when this process can run the feature. */
bool rf_cpu_has(rf_cpu_feature feature);
/* True when it can run every feature of `set` (the empty set: true). */
bool rf_cpu_has_all(rf_cpu_set set);
/* The feature's short name ("avx512", "amx-int8", ...), NULL outside the enum. */
const char *rf_cpu_feature_name(rf_cpu_feature feature);

/* One line on AMX in this process: "AMX-INT8 and AMX-BF16 in use", or why
 * not ("no AMX on this CPU", "the kernel does not enable the AMX tile
 * state (XCR0)", "arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA) refused:
 * ..."). Static storage. */
const char *rf_cpu_amx_reason(void);

#endif
