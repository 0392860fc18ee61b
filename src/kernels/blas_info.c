/*
 * blas_info.c — which OpenBLAS kernels this process runs, and which it
 * should run.
 *
 * Debian's OpenBLAS is built with DYNAMIC_ARCH: it picks a kernel family
 * ("core") from CPUID once, when the library is loaded, and 0.3.21 does not
 * know AMD Zen 4/5, so on those AVX-512 CPUs it falls back to the AVX2
 * Haswell/Zen kernels, whose registers are half as wide (the figure:
 * docs/performance.md, "Figures from the code's comments"). The environment
 * variable OPENBLAS_CORETYPE overrides the choice, but only if it is set
 * before the library initialises — the CLI therefore sets it and re-executes
 * itself (tools/roformer/blas_core.c); a program linking the library sets it
 * in its own environment before starting.
 */
#include "roformer.h"
#include "kernels/cpu.h"

#include <cblas.h>
#include <ctype.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
/* OpenBLAS core names whose sgemm uses 512-bit registers. */
static const char *const avx512_cores[] = {"skylakex", "cooperlake", "sapphirerapids"};

static int core_is_avx512(const char *core)
{
    char lower[32];
    size_t n = 0;
    for (; core[n] && n + 1 < sizeof lower; n++)
        lower[n] = (char)tolower((unsigned char)core[n]);
    lower[n] = '\0';
    for (size_t i = 0; i < sizeof avx512_cores / sizeof avx512_cores[0]; i++)
        if (!strcmp(lower, avx512_cores[i]))
            return 1;
    return 0;
}
#endif

rf_blas_info rf_blas_get_info(void)
{
    rf_blas_info info;
    info.core = openblas_get_corename();
    info.config = openblas_get_config();
    info.threads = openblas_get_num_threads();
    info.cpu_count = openblas_get_num_procs();
    return info;
}

const char *rf_blas_preferred_core(void)
{
#if defined(__x86_64__) || defined(__i386__)
    /* the CPU module also checks that the OS saves the AVX-512 registers
     * (XGETBV), so a VM that hides them gets NULL here */
    if (rf_cpu_has(RF_CPU_AVX512) && !core_is_avx512(openblas_get_corename()))
        return "SkylakeX";
#endif
    return NULL;
}
