/*
 * elementwise.c — run-time choice of the element-wise kernels' instruction
 * set (see elementwise.h), from the CPU's features (cpu.h), and the table
 * of their builds by level.
 */
#include "kernels/elementwise.h"
#include "kernels/simd.h"

/* The builds this architecture has, by level; a level without one is
 * never chosen. */
static const rf_elementwise_ops *const builds[RF_SIMD_AVX512 + 1] = {
    [RF_SIMD_BASELINE] = &rf_elementwise_baseline,
#if RF_SIMD_X86
    [RF_SIMD_AVX2] = &rf_elementwise_avx2,
    [RF_SIMD_AVX512] = &rf_elementwise_avx512,
#endif
};

static bool cpu_has(rf_simd_level level)
{
    return builds[level] && rf_cpu_has_all(builds[level]->needs);
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
    if ((unsigned)level > RF_SIMD_AVX512 || !cpu_has(level))
        return false;
    __atomic_store_n(&chosen, (int)level, __ATOMIC_RELAXED);
    return true;
}

const rf_elementwise_ops *rf_elementwise(void)
{
    return builds[rf_simd_level_get()];
}
