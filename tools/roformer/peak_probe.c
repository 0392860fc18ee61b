/*
 * peak_probe.c — per-core multiply-add peaks of the products' instructions
 * (peak_probe.h): twelve independent chains of one instruction (more than
 * its latency times its ports on current x86 cores), each kernel built for
 * its instruction set by a target attribute and run only where the CPU has
 * it. scripts/sgemm_cores.sh measures the same peaks at length
 * (tests/bench/fma_peak.c); this is the few-millisecond version bench runs
 * when it reports.
 */
#include "peak_probe.h"

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <immintrin.h>

#define FOR_EACH_CHAIN(DO) DO(0) DO(1) DO(2) DO(3) DO(4) DO(5) DO(6) DO(7) DO(8) DO(9) DO(10) DO(11)

/* Each kernel runs `iters` rounds of one step per chain and returns a value
 * that depends on every chain; the empty asm keeps each chain in a
 * register and every step in the loop. */
__attribute__((target("avx2,fma"))) static float f32_fma_ymm(long iters)
{
    const __m256 mul = _mm256_set1_ps(1.0000001f), add = _mm256_set1_ps(1e-7f);
#define DECLARE(i) __m256 a##i = _mm256_set1_ps(i);
#define STEP(i) a##i = _mm256_fmadd_ps(a##i, mul, add); __asm__ volatile("" : "+x"(a##i));
#define SUM(i) sum = _mm256_add_ps(sum, a##i);
    FOR_EACH_CHAIN(DECLARE)
    for (long n = 0; n < iters; n++) {
        FOR_EACH_CHAIN(STEP)
    }
    __m256 sum = _mm256_setzero_ps();
    FOR_EACH_CHAIN(SUM)
#undef DECLARE
#undef STEP
#undef SUM
    return _mm256_cvtss_f32(sum);
}

__attribute__((target("avx512f"))) static float f32_fma_zmm(long iters)
{
    const __m512 mul = _mm512_set1_ps(1.0000001f), add = _mm512_set1_ps(1e-7f);
#define DECLARE(i) __m512 a##i = _mm512_set1_ps(i);
#define STEP(i) a##i = _mm512_fmadd_ps(a##i, mul, add); __asm__ volatile("" : "+v"(a##i));
#define SUM(i) sum = _mm512_add_ps(sum, a##i);
    FOR_EACH_CHAIN(DECLARE)
    for (long n = 0; n < iters; n++) {
        FOR_EACH_CHAIN(STEP)
    }
    __m512 sum = _mm512_setzero_ps();
    FOR_EACH_CHAIN(SUM)
#undef DECLARE
#undef STEP
#undef SUM
    return _mm512_reduce_add_ps(sum);
}

/* The AVX2 int8 build's exact form: |x| and the weights' sign by VPSIGNB,
 * VPMADDUBSW to int16 pairs, VPMADDWD to int32, VPADDD into the sums. */
__attribute__((target("avx2"))) static float int8_avx2(long iters)
{
    const __m256i x = _mm256_set1_epi32(0x01fe03fd), ones = _mm256_set1_epi16(1);
#define DECLARE(i) __m256i a##i = _mm256_set1_epi32(i), w##i = _mm256_set1_epi8((char)(i + 1));
#define STEP(i)                                                                                    \
    {                                                                                              \
        __m256i ax = _mm256_sign_epi8(x, w##i), sw = _mm256_sign_epi8(w##i, x);                    \
        a##i = _mm256_add_epi32(a##i, _mm256_madd_epi16(_mm256_maddubs_epi16(ax, sw), ones));      \
        __asm__ volatile("" : "+x"(a##i), "+x"(w##i));                                            \
    }
#define SUM(i) sum = _mm256_add_epi32(sum, a##i);
    FOR_EACH_CHAIN(DECLARE)
    for (long n = 0; n < iters; n++) {
        FOR_EACH_CHAIN(STEP)
    }
    __m256i sum = _mm256_setzero_si256();
    FOR_EACH_CHAIN(SUM)
#undef DECLARE
#undef STEP
#undef SUM
    return (float)_mm256_extract_epi32(sum, 0);
}

__attribute__((target("avx512f,avx512vnni"))) static float int8_vnni(long iters)
{
    const __m512i x = _mm512_set1_epi32(0x01020304), w = _mm512_set1_epi32(0x05060708);
#define DECLARE(i) __m512i a##i = _mm512_set1_epi32(i);
#define STEP(i) a##i = _mm512_dpbusd_epi32(a##i, x, w); __asm__ volatile("" : "+v"(a##i));
#define SUM(i) sum = _mm512_add_epi32(sum, a##i);
    FOR_EACH_CHAIN(DECLARE)
    for (long n = 0; n < iters; n++) {
        FOR_EACH_CHAIN(STEP)
    }
    __m512i sum = _mm512_setzero_si512();
    FOR_EACH_CHAIN(SUM)
#undef DECLARE
#undef STEP
#undef SUM
    return (float)_mm512_reduce_add_epi32(sum);
}

__attribute__((target("avx512f,avx512bf16"))) static float bf16_avx512(long iters)
{
    const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), w = (__m512bh)_mm512_set1_epi16(0x3400);
#define DECLARE(i) __m512 a##i = _mm512_set1_ps(i);
#define STEP(i) a##i = _mm512_dpbf16_ps(a##i, x, w); __asm__ volatile("" : "+v"(a##i));
#define SUM(i) sum = _mm512_add_ps(sum, a##i);
    FOR_EACH_CHAIN(DECLARE)
    for (long n = 0; n < iters; n++) {
        FOR_EACH_CHAIN(STEP)
    }
    __m512 sum = _mm512_setzero_ps();
    FOR_EACH_CHAIN(SUM)
#undef DECLARE
#undef STEP
#undef SUM
    return _mm512_reduce_add_ps(sum);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The best rate of the runs of at least 0.5 ms among 8 (the first ones
 * calibrate), in multiply-adds per second. */
static double best_rate(float (*chains)(long), double macs_per_step)
{
    long iters = 1000;
    double best = 0.0;
    for (int run = 0; run < 8; run++) {
        double t0 = now_s();
        float result = chains(iters);
        __asm__ volatile("" : : "g"(result)); /* the result is used */
        double dt = now_s() - t0;
        if (dt < 5e-4) { /* calibrating: too short to time */
            iters *= 4;
            continue;
        }
        double rate = 12.0 * macs_per_step * (double)iters / dt;
        best = rate > best ? rate : best;
    }
    return best;
}
#endif

double peak_probe(peak_instruction which)
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    switch (which) {
    case PEAK_F32_FMA:
        if (__builtin_cpu_supports("avx512f"))
            return best_rate(f32_fma_zmm, 16);
        return __builtin_cpu_supports("fma") ? best_rate(f32_fma_ymm, 8) : 0.0;
    case PEAK_INT8_AVX2:
        return __builtin_cpu_supports("avx2") ? best_rate(int8_avx2, 32) : 0.0;
    case PEAK_INT8_VNNI:
        return __builtin_cpu_supports("avx512vnni") ? best_rate(int8_vnni, 64) : 0.0;
    case PEAK_BF16_AVX512:
        return __builtin_cpu_supports("avx512bf16") ? best_rate(bf16_avx512, 32) : 0.0;
    }
#endif
    (void)which;
    return 0.0;
}

const char *peak_instruction_name(peak_instruction which)
{
    switch (which) {
    case PEAK_F32_FMA:
        return "f32 FMA";
    case PEAK_INT8_AVX2:
        return "AVX2 int8 (VPSIGNB x2, VPMADDUBSW, VPMADDWD, VPADDD)";
    case PEAK_INT8_VNNI:
        return "VPDPBUSD zmm";
    case PEAK_BF16_AVX512:
        return "VDPBF16PS zmm";
    }
    return "?";
}
