/*
 * simd.c — run-time choice of the element-wise kernels' instruction set
 * (see simd.h), from the CPU's features (cpu.h).
 */
#include "kernels/simd.h"
#include "kernels/cpu.h"

static bool cpu_has(rf_simd_level level)
{
    switch (level) {
    case RF_SIMD_BASELINE: return true;
    case RF_SIMD_AVX2: return RF_SIMD_X86 && rf_cpu_has(RF_CPU_AVX2);
    case RF_SIMD_AVX512: return RF_SIMD_X86 && rf_cpu_has(RF_CPU_AVX512);
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

bool rf_simd_level_set(rf_simd_level level)
{
    if (!cpu_has(level))
        return false;
    __atomic_store_n(&chosen, (int)level, __ATOMIC_RELAXED);
    return true;
}
