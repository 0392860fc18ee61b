/*
 * amx.c — whether AMX can run in this process (see amx.h): CPUID, XCR0,
 * and the one arch_prctl request for the tile state.
 */
#include "kernels/amx.h"

#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Linux, arch/x86/include/uapi/asm/prctl.h and fpu/types.h */
#define RF_ARCH_GET_XCOMP_PERM 0x1022
#define RF_ARCH_REQ_XCOMP_PERM 0x1023
#define RF_XFEATURE_XTILEDATA 18

static bool has_int8, has_bf16;
static char reason[160] = "AMX not checked yet";
static pthread_once_t once = PTHREAD_ONCE_INIT;

static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static void check(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24))) {
        snprintf(reason, sizeof reason, "no AMX on this CPU");
        return;
    }
    bool int8 = d & (1u << 25), bf16 = d & (1u << 22);
    /* OSXSAVE (leaf 1, ECX bit 27) before XGETBV; XCR0 bits 17 (XTILECFG)
       and 18 (XTILEDATA) say the kernel saves the tile state */
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)) || (xgetbv0() & 0x60000) != 0x60000) {
        snprintf(reason, sizeof reason, "the kernel does not enable the AMX tile state (XCR0)");
        return;
    }
    if (syscall(SYS_arch_prctl, RF_ARCH_REQ_XCOMP_PERM, RF_XFEATURE_XTILEDATA) != 0) {
        snprintf(reason, sizeof reason, "arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA) refused: %s",
                 strerror(errno));
        return;
    }
    unsigned long perm = 0;
    if (syscall(SYS_arch_prctl, RF_ARCH_GET_XCOMP_PERM, &perm) != 0 ||
        !(perm & (1ul << RF_XFEATURE_XTILEDATA))) {
        snprintf(reason, sizeof reason, "the tile state was not granted (ARCH_GET_XCOMP_PERM)");
        return;
    }
    has_int8 = int8;
    has_bf16 = bf16;
    snprintf(reason, sizeof reason, "%s in use",
             int8 && bf16 ? "AMX-INT8 and AMX-BF16" : int8 ? "AMX-INT8" : bf16 ? "AMX-BF16"
                                                                               : "no AMX unit");
}

bool rf_amx_usable(rf_amx_feature feature)
{
    pthread_once(&once, check);
    return feature == RF_AMX_INT8 ? has_int8 : has_bf16;
}

const char *rf_amx_reason(void)
{
    pthread_once(&once, check);
    return reason;
}
#else
bool rf_amx_usable(rf_amx_feature feature)
{
    (void)feature;
    return false;
}

const char *rf_amx_reason(void)
{
    return "no AMX on this CPU";
}
#endif

const rf_amx_config *rf_amx_config_16x64(void)
{
    static const rf_amx_config config = {
        .palette = 1,
        .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
        .rows = {16, 16, 16, 16, 16, 16, 16, 16},
    };
    return &config;
}
