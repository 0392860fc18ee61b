/*
 * simd.c — run-time choice of the element-wise kernels' instruction set
 * (see simd.h), and the CPU checks of the int8 and bf16 products' builds
 * (VNNI on x86-64; SDOT, SMMLA and BFDOT / BFMMLA on ARM64).
 */
#include "kernels/simd.h"

#if RF_SIMD_ARM64
#include <sys/auxv.h>

/* Bits of AT_HWCAP and AT_HWCAP2 (Linux, arch/arm64 uapi hwcap.h), named
 * here for C libraries whose headers predate them. */
#define RF_HWCAP_ASIMDDP (1ul << 20)
#define RF_HWCAP2_I8MM (1ul << 13)
#define RF_HWCAP2_BF16 (1ul << 14)
#endif

static bool cpu_has(rf_simd_level level)
{
    switch (level) {
    case RF_SIMD_BASELINE: return true;
    case RF_SIMD_AVX2:
#if RF_SIMD_X86
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
        return false;
#endif
    case RF_SIMD_AVX512:
#if RF_SIMD_X86
        return __builtin_cpu_supports("avx512f");
#else
        return false;
#endif
    }
    return false;
}

/* -1: not chosen yet. A plain int read and written whole: the first
 * callers may race to store the same answer. */
static int chosen = -1;

rf_simd_level rf_simd_level_get(void)
{
    int level = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
    if (level < 0) {
        level = cpu_has(RF_SIMD_AVX512) ? RF_SIMD_AVX512
                : cpu_has(RF_SIMD_AVX2) ? RF_SIMD_AVX2 : RF_SIMD_BASELINE;
        __atomic_store_n(&chosen, level, __ATOMIC_RELAXED);
    }
    return (rf_simd_level)level;
}

bool rf_cpu_has_avx2_fma(void)
{
    return cpu_has(RF_SIMD_AVX2);
}

bool rf_cpu_has_avx512_vnni(void)
{
#if RF_SIMD_X86
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni");
#else
    return false;
#endif
}

bool rf_simd_level_set(rf_simd_level level)
{
    if (!cpu_has(level))
        return false;
    __atomic_store_n(&chosen, (int)level, __ATOMIC_RELAXED);
    return true;
}

bool rf_cpu_has_arm_dotprod(void)
{
#if RF_SIMD_ARM64
    return (getauxval(AT_HWCAP) & RF_HWCAP_ASIMDDP) != 0;
#else
    return false;
#endif
}

bool rf_cpu_has_arm_i8mm(void)
{
#if RF_SIMD_ARM64
    return (getauxval(AT_HWCAP2) & RF_HWCAP2_I8MM) != 0;
#else
    return false;
#endif
}

bool rf_cpu_has_arm_bf16(void)
{
#if RF_SIMD_ARM64
    return (getauxval(AT_HWCAP2) & RF_HWCAP2_BF16) != 0;
#else
    return false;
#endif
}
