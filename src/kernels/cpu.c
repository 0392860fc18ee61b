/*
 * cpu.c — the CPU's features (cpu.h), read once: the instruction sets from
 * the compiler's CPU model (__builtin_cpu_supports, which also checks that
 * the OS saves the registers, XGETBV), what it does not name from CPUID,
 * the ARM64 ones from getauxval, and AMX from CPUID, XCR0 and one
 * arch_prctl request for the tile state. AMX is asked about apart from the
 * rest, the first time a caller wants it: the request enlarges every
 * signal frame of the process, which only a process that runs tiles
 * should pay.
 */
#include "kernels/cpu.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CPU_X86 1
#include <cpuid.h>
#else
#define CPU_X86 0
#endif

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>

/* Bits of AT_HWCAP and AT_HWCAP2 (Linux, arch/arm64 uapi hwcap.h), named
 * here for C libraries whose headers predate them. */
#define RF_HWCAP_ASIMDDP (1ul << 20)
#define RF_HWCAP2_I8MM (1ul << 13)
#define RF_HWCAP2_BF16 (1ul << 14)
#endif

#define BIT(f) RF_CPU_NEEDS(f)
#define AMX_BITS (BIT(RF_CPU_AMX_INT8) | BIT(RF_CPU_AMX_BF16))

static const char *const names[RF_CPU_FEATURE_COUNT] = {
    [RF_CPU_AVX2] = "avx2",
    [RF_CPU_AVX512] = "avx512",
    [RF_CPU_AVX512_VNNI] = "avx512-vnni",
    [RF_CPU_AVX512_BF16] = "avx512-bf16",
    [RF_CPU_AMX_INT8] = "amx-int8",
    [RF_CPU_AMX_BF16] = "amx-bf16",
    [RF_CPU_AMD] = "amd",
    [RF_CPU_NEON] = "neon",
    [RF_CPU_ARM_DOTPROD] = "dotprod",
    [RF_CPU_ARM_I8MM] = "i8mm",
    [RF_CPU_ARM_BF16] = "arm-bf16",
};

/* ==== Everything but AMX ==== */

static rf_cpu_set read_features(void)
{
    rf_cpu_set s = 0;
#if CPU_X86
    unsigned a, b, c, d;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        s |= BIT(RF_CPU_AVX2);
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl")) {
        s |= BIT(RF_CPU_AVX512);
        if (__builtin_cpu_supports("avx512vnni"))
            s |= BIT(RF_CPU_AVX512_VNNI);
        if (__builtin_cpu_supports("avx512bf16"))
            s |= BIT(RF_CPU_AVX512_BF16);
    }
    /* the vendor string "AuthenticAMD" in EBX, EDX, ECX */
    if (__get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541u && d == 0x69746e65u &&
        c == 0x444d4163u)
        s |= BIT(RF_CPU_AMD);
#elif defined(__aarch64__)
    s |= BIT(RF_CPU_NEON);
#if defined(__linux__)
    unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
    if (hw & RF_HWCAP_ASIMDDP)
        s |= BIT(RF_CPU_ARM_DOTPROD);
    if (hw2 & RF_HWCAP2_I8MM)
        s |= BIT(RF_CPU_ARM_I8MM);
    if (hw2 & RF_HWCAP2_BF16)
        s |= BIT(RF_CPU_ARM_BF16);
#endif
#endif
    return s;
}

static rf_cpu_set features;
static pthread_once_t features_once = PTHREAD_ONCE_INIT;

static void init_features(void)
{
    features = read_features();
}

/* ==== AMX ==== */

static rf_cpu_set amx;
static char amx_reason[160] = "no AMX on this CPU";
static pthread_once_t amx_once = PTHREAD_ONCE_INIT;

#if CPU_X86 && defined(__linux__)
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Linux, arch/x86/include/uapi/asm/prctl.h and fpu/types.h */
#define RF_ARCH_GET_XCOMP_PERM 0x1022
#define RF_ARCH_REQ_XCOMP_PERM 0x1023
#define RF_XFEATURE_XTILEDATA 18

static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static void init_amx(void)
{
    unsigned a, b, c, d;
    /* CPUID leaf 7: AMX-TILE (EDX bit 24), AMX-INT8 (25), AMX-BF16 (22) */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)))
        return;
    bool int8 = d & (1u << 25), bf16 = d & (1u << 22);
    /* OSXSAVE (leaf 1, ECX bit 27) before XGETBV; XCR0 bits 17 (XTILECFG)
       and 18 (XTILEDATA) say the kernel saves the tile state */
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)) || (xgetbv0() & 0x60000) != 0x60000) {
        snprintf(amx_reason, sizeof amx_reason,
                 "the kernel does not enable the AMX tile state (XCR0)");
        return;
    }
    if (syscall(SYS_arch_prctl, RF_ARCH_REQ_XCOMP_PERM, RF_XFEATURE_XTILEDATA) != 0) {
        snprintf(amx_reason, sizeof amx_reason,
                 "arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA) refused: %s", strerror(errno));
        return;
    }
    unsigned long perm = 0;
    if (syscall(SYS_arch_prctl, RF_ARCH_GET_XCOMP_PERM, &perm) != 0 ||
        !(perm & (1ul << RF_XFEATURE_XTILEDATA))) {
        snprintf(amx_reason, sizeof amx_reason,
                 "the tile state was not granted (ARCH_GET_XCOMP_PERM)");
        return;
    }
    amx = (int8 ? BIT(RF_CPU_AMX_INT8) : 0) | (bf16 ? BIT(RF_CPU_AMX_BF16) : 0);
    snprintf(amx_reason, sizeof amx_reason, "%s in use",
             int8 && bf16 ? "AMX-INT8 and AMX-BF16" : int8 ? "AMX-INT8" : bf16 ? "AMX-BF16"
                                                                               : "no AMX unit");
}
#else
static void init_amx(void)
{
}
#endif

/* ==== Questions ==== */

bool rf_cpu_has_all(rf_cpu_set set)
{
    pthread_once(&features_once, init_features);
    rf_cpu_set have = features;
    if (set & AMX_BITS) {
        pthread_once(&amx_once, init_amx);
        have |= amx;
    }
    return (set & ~have) == 0;
}

bool rf_cpu_has(rf_cpu_feature feature)
{
    return (unsigned)feature < RF_CPU_FEATURE_COUNT && rf_cpu_has_all(BIT(feature));
}

const char *rf_cpu_feature_name(rf_cpu_feature feature)
{
    return (unsigned)feature < RF_CPU_FEATURE_COUNT ? names[feature] : NULL;
}

const char *rf_cpu_amx_reason(void)
{
    pthread_once(&amx_once, init_amx);
    return amx_reason;
}
