/*
 * fma_peak.c — the fp32 FMA peak of one core, so sgemm GFLOP/s can be read
 * as a fraction of the hardware's: twelve independent chains of fused
 * multiply-adds (more than FMA latency x FMA ports on current x86 cores,
 * 4 x 2), once with 256-bit AVX2 FMAs and, when the CPU has AVX-512F, once
 * with 512-bit FMAs. The larger of the two is the CPU's fp32 peak (AVX-512
 * doubles it where the FMA units are 512 bits wide, and not where they run
 * 512-bit FMAs as two halves). Each kernel is built for its instruction set
 * by a function target attribute and picked at run time, so one plain `cc`
 * build runs on every x86-64 CPU. Built by scripts/sgemm_cores.sh; not a test.
 *
 * Likewise the limits of the int8 and bf16 compute types' products, where
 * the CPU has their instructions (a line says so where it does not):
 * 512-bit VPDPBUSD (AVX512-VNNI: 16 lanes x 4 int8 multiply-adds each) and
 * 512-bit VDPBF16PS (AVX512_BF16: 16 lanes x 2 bf16 multiply-adds each),
 * twelve independent accumulators each, in G multiply-adds per second.
 * And where the CPU has AMX-BF16 and Linux grants the tile state, AMX
 * TDPBF16PS (16 x 16 f32 sums of 32 bf16 products each per instruction)
 * into four accumulator tiles, with no loads in the loop.
 */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define CHAINS 12
#define FOR_EACH_CHAIN(DO) DO(0) DO(1) DO(2) DO(3) DO(4) DO(5) DO(6) DO(7) DO(8) DO(9) DO(10) DO(11)

/* Each kernel runs `iters` rounds of one FMA per chain and returns a value
 * that depends on every chain, so none can be dropped. The empty asm keeps
 * each chain in a register and every FMA in the loop. */
__attribute__((target("avx2,fma"))) static float fma_chains_avx2(long iters)
{
    const __m256 mul = _mm256_set1_ps(1.0000001f), add = _mm256_set1_ps(1e-7f);
#define DECLARE(i) __m256 a##i = _mm256_set1_ps(i);
#define STEP(i)                                                                                    \
    a##i = _mm256_fmadd_ps(a##i, mul, add);                                                        \
    __asm__ volatile("" : "+x"(a##i));
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

__attribute__((target("avx512f"))) static float fma_chains_avx512(long iters)
{
    const __m512 mul = _mm512_set1_ps(1.0000001f), add = _mm512_set1_ps(1e-7f);
#define DECLARE(i) __m512 a##i = _mm512_set1_ps(i);
#define STEP(i)                                                                                    \
    a##i = _mm512_fmadd_ps(a##i, mul, add);                                                        \
    __asm__ volatile("" : "+v"(a##i));
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
    return _mm512_cvtss_f32(sum);
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static float dpbusd_chains(long iters)
{
    const __m512i u8 = _mm512_set1_epi8(3), s8 = _mm512_set1_epi8(-2);
#define DECLARE(i) __m512i a##i = _mm512_set1_epi32(i);
#define STEP(i)                                                                                    \
    a##i = _mm512_dpbusd_epi32(a##i, u8, s8);                                                      \
    __asm__ volatile("" : "+v"(a##i));
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
    return (float)_mm_cvtsi128_si32(_mm512_castsi512_si128(sum));
}

__attribute__((target("avx512f,avx512bf16"))) static float dpbf16_chains(long iters)
{
    const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), y = (__m512bh)_mm512_set1_epi16(0x3380);
#define DECLARE(i) __m512 a##i = _mm512_set1_ps(i);
#define STEP(i)                                                                                    \
    a##i = _mm512_dpbf16_ps(a##i, x, y);                                                           \
    __asm__ volatile("" : "+v"(a##i));
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
    return _mm512_cvtss_f32(sum);
}

/* LDTILECFG's operand: palette 1, tiles 0-7 of 16 rows x 64 bytes. */
struct tile_config {
    unsigned char palette, start_row, reserved[14];
    unsigned short colsb[16];
    unsigned char rows[16];
} __attribute__((aligned(64)));

/* Four independent accumulators (tiles 4-7) from two A and two B tiles
 * loaded once; each TDPBF16PS is 16 x 16 x 32 multiply-adds. */
__attribute__((target("amx-tile,amx-bf16"))) static float tdpbf16ps_tiles(long iters)
{
    static struct tile_config cfg = {.palette = 1};
    static unsigned short ones[16 * 32] __attribute__((aligned(64)));
    static float out[16 * 16] __attribute__((aligned(64)));
    for (int t = 0; t < 8; t++) {
        cfg.colsb[t] = 64;
        cfg.rows[t] = 16;
    }
    for (int i = 0; i < 16 * 32; i++)
        ones[i] = 0x3380; /* bf16 6e-8: the sums stay small */
    _tile_loadconfig(&cfg);
    _tile_loadd(0, ones, 64);
    _tile_loadd(1, ones, 64);
    _tile_loadd(2, ones, 64);
    _tile_loadd(3, ones, 64);
    _tile_zero(4);
    _tile_zero(5);
    _tile_zero(6);
    _tile_zero(7);
    for (long n = 0; n < iters; n++) {
        _tile_dpbf16ps(4, 0, 2);
        _tile_dpbf16ps(5, 0, 3);
        _tile_dpbf16ps(6, 1, 2);
        _tile_dpbf16ps(7, 1, 3);
    }
    _tile_stored(4, out, 64);
    _tile_release();
    return out[0];
}

/* AMX-BF16 (CPUID leaf 7: EDX bits 24 and 22), the OS saving the tile
 * state (XCR0 bits 17 and 18), and the process granted it once
 * (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)). */
static int amx_bf16_usable(void)
{
#if defined(__linux__)
    unsigned a, b, c, d;
    __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
    if (!(d & (1u << 24)) || !(d & (1u << 22)))
        return 0;
    __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
    if (!(c & (1u << 27)))
        return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 0x60000) == 0x60000 && syscall(SYS_arch_prctl, 0x1023, 18) == 0;
#else
    return 0;
#endif
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Best of five runs of `iters` iterations (the least disturbed by
 * anything else on the core), in G operations per second,
 * `per_iteration` operations each. */
static double rate_of(float (*kernel)(long), long iters, double per_iteration, float *checksum)
{
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_s();
        *checksum += kernel(iters);
        double rate = iters * per_iteration / (now_s() - t0) * 1e-9;
        best = rate > best ? rate : best;
    }
    return best;
}

/* The chained kernels: `per_instruction` operations per instruction and
 * chain. */
static double peak_rate(float (*chains)(long), int per_instruction, float *checksum)
{
    return rate_of(chains, 100000000, (double)CHAINS * per_instruction, checksum);
}

/* GFLOP/s: an FMA is two flops per lane. */
static double peak_gflops(float (*fma_chains)(long), int lanes, float *checksum)
{
    return peak_rate(fma_chains, lanes * 2, checksum);
}

/* The int8 and bf16 products' instructions, where the CPU has them. */
static void int8_bf16_peaks(float *checksum)
{
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vnni"))
        printf("# int8 VPDPBUSD peak, one core (512-bit, %d chains): %.1f G multiply-adds/s\n",
               CHAINS, peak_rate(dpbusd_chains, 16 * 4, checksum));
    else
        printf("# int8 VPDPBUSD peak: not available (no AVX512-VNNI)\n");
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16"))
        printf("# bf16 VDPBF16PS peak, one core (512-bit, %d chains): %.1f G multiply-adds/s\n",
               CHAINS, peak_rate(dpbf16_chains, 16 * 2, checksum));
    else
        printf("# bf16 VDPBF16PS peak: not available (no AVX512_BF16)\n");
    if (amx_bf16_usable()) {
        /* 4 instructions of 16 x 16 x 32 multiply-adds an iteration */
        printf("# bf16 AMX TDPBF16PS peak, one core (4 accumulator tiles): %.1f G multiply-adds/s\n",
               rate_of(tdpbf16ps_tiles, 2000000, 4.0 * 16 * 16 * 32, checksum));
    } else {
        printf("# bf16 AMX TDPBF16PS peak: not available (no AMX-BF16, or the OS refused the tile "
               "state)\n");
    }
}

int main(void)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        printf("# fp32 FMA peak: this CPU has no AVX2 with FMA; not measured\n");
        return 0;
    }
    float checksum = 0;
    double avx2 = peak_gflops(fma_chains_avx2, 8, &checksum);
    printf("# fp32 FMA peak, one core, AVX2 (256-bit FMAs, %d chains): %.1f GFLOP/s\n", CHAINS,
           avx2);
    double peak = avx2;
    const char *peak_from = "AVX2";
    if (__builtin_cpu_supports("avx512f")) {
        double avx512 = peak_gflops(fma_chains_avx512, 16, &checksum);
        printf("# fp32 FMA peak, one core, AVX-512 (512-bit FMAs, %d chains): %.1f GFLOP/s\n",
               CHAINS, avx512);
        if (avx512 > peak) {
            peak = avx512;
            peak_from = "AVX-512";
        }
    } else {
        printf("# fp32 FMA peak, one core, AVX-512: not available (no AVX-512F)\n");
    }
    int8_bf16_peaks(&checksum);
    printf("# this CPU's fp32 peak: %.1f GFLOP/s per core (%s) (checksum %g)\n", peak, peak_from,
           checksum);
    return 0;
}
