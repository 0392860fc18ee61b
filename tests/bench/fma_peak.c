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
 *   fma_peak [ROUNDS]   (default 100000000 rounds a run; AMX: 2000000)
 *
 * Likewise the limits of the int8 and bf16 compute types' products, where
 * the CPU has their instructions (a line names what is missing where it
 * does not): the AVX2 int8 build's instruction sequence, 256-bit VPDPBUSD
 * (AVX512-VNNI with AVX512VL, or AVX-VNNI) and VDPBF16PS, 512-bit VPDPBUSD (AVX512-VNNI: 16 lanes x 4 int8 multiply-adds each) and
 * 512-bit VDPBF16PS (AVX512_BF16: 16 lanes x 2 bf16 multiply-adds each),
 * twelve independent accumulators each, in G multiply-adds per second; and
 * the AMX tile units' TDPBSSD (int8) and TDPBF16PS (bf16) where the CPU has
 * AMX and Linux grants the tile state: four accumulator tiles of 16 x 16,
 * operands in tiles (no loads), 16 x 16 x 64 int8 or 16 x 16 x 32 bf16
 * multiply-adds per instruction.
 */
#include <cpuid.h>
#include <stdbool.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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

/* 256-bit VPDPBUSD: AVX512-VNNI with AVX512VL, or AVX-VNNI (the same
 * instruction, VEX-encoded, on CPUs without AVX-512). */
__attribute__((target("avx512f,avx512vl,avx512vnni"))) static float dpbusd_ymm_chains(long iters)
{
    const __m256i u8 = _mm256_set1_epi8(3), s8 = _mm256_set1_epi8(-2);
#define DECLARE(i) __m256i a##i = _mm256_set1_epi32(i);
#define STEP(i)                                                                                    \
    a##i = _mm256_dpbusd_epi32(a##i, u8, s8);                                                      \
    __asm__ volatile("" : "+v"(a##i));
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

__attribute__((target("avxvnni"))) static float dpbusd_avxvnni_chains(long iters)
{
    const __m256i u8 = _mm256_set1_epi8(3), s8 = _mm256_set1_epi8(-2);
#define DECLARE(i) __m256i a##i = _mm256_set1_epi32(i);
#define STEP(i)                                                                                    \
    a##i = _mm256_dpbusd_avx_epi32(a##i, u8, s8);                                                  \
    __asm__ volatile("" : "+x"(a##i));
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

__attribute__((target("avx512f,avx512vl,avx512bf16"))) static float dpbf16_ymm_chains(long iters)
{
    const __m256bh x = (__m256bh)_mm256_set1_epi16(0x3f80), y = (__m256bh)_mm256_set1_epi16(0x3380);
#define DECLARE(i) __m256 a##i = _mm256_set1_ps(i);
#define STEP(i)                                                                                    \
    a##i = _mm256_dpbf16_ps(a##i, x, y);                                                           \
    __asm__ volatile("" : "+v"(a##i));
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

/* AVX2 has no int8 dot product: the int8 `avx2` build's exact form per 4
 * inputs x 8 channels is VPSIGNB twice (|x|, the weights' sign),
 * VPMADDUBSW, VPMADDWD and VPADDD; the chains run that sequence. */
__attribute__((target("avx2"))) static float int8_avx2_chains(long iters)
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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Best of five runs (the least disturbed by anything else on the core), in
 * G operations per second, `per_instruction` operations per instruction
 * and chain. */
static long iters = 100000000;

static double peak_rate(float (*chains)(long), int per_instruction, float *checksum)
{
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_s();
        *checksum += chains(iters);
        double rate = iters * (double)CHAINS * per_instruction / (now_s() - t0) * 1e-9;
        best = rate > best ? rate : best;
    }
    return best;
}

/* GFLOP/s: an FMA is two flops per lane. */
static double peak_gflops(float (*fma_chains)(long), int lanes, float *checksum)
{
    return peak_rate(fma_chains, lanes * 2, checksum);
}

/* The AMX tile configuration: palette 1, tiles 0-7 of 16 rows x 64 bytes. */
struct tile_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} __attribute__((aligned(64)));

#define AMX_CHAINS(name, INSN)                                                                     \
    __attribute__((target("amx-tile,amx-int8,amx-bf16"))) static float name(long iters)           \
    {                                                                                              \
        static uint8_t in[1024] __attribute__((aligned(64)));                                      \
        static int32_t out[256] __attribute__((aligned(64)));                                      \
        struct tile_config c;                                                                      \
        memset(&c, 0, sizeof c);                                                                   \
        c.palette = 1;                                                                             \
        for (int t = 0; t < 8; t++) {                                                              \
            c.rows[t] = 16;                                                                        \
            c.colsb[t] = 64;                                                                       \
        }                                                                                          \
        _tile_loadconfig(&c);                                                                      \
        _tile_zero(0);                                                                             \
        _tile_zero(1);                                                                             \
        _tile_zero(2);                                                                             \
        _tile_zero(3);                                                                             \
        _tile_loadd(4, in, 64);                                                                    \
        _tile_loadd(5, in, 64);                                                                    \
        _tile_loadd(6, in, 64);                                                                    \
        _tile_loadd(7, in, 64);                                                                    \
        for (long n = 0; n < iters; n++) {                                                         \
            INSN(0, 4, 6);                                                                         \
            INSN(1, 4, 7);                                                                         \
            INSN(2, 5, 6);                                                                         \
            INSN(3, 5, 7);                                                                         \
        }                                                                                          \
        _tile_stored(0, out, 64);                                                                  \
        _tile_release();                                                                           \
        return (float)out[0];                                                                      \
    }
AMX_CHAINS(tdpbssd_tiles, _tile_dpbssd)
AMX_CHAINS(tdpbf16_tiles, _tile_dpbf16ps)

/* True when the CPU has AMX-TILE with AMX-INT8 and AMX-BF16 and Linux
 * grants this process the tile state (arch_prctl ARCH_REQ_XCOMP_PERM,
 * XFEATURE_XTILEDATA); else a line saying which is missing. */
static int amx_usable(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) || !(d & (1u << 25)) ||
        !(d & (1u << 22))) {
        printf("# AMX TDPBSSD / TDPBF16PS peaks: not available (no AMX-INT8 and AMX-BF16)\n");
        return 0;
    }
    if (syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) != 0) {
        printf("# AMX TDPBSSD / TDPBF16PS peaks: not available (Linux refused the tile state)\n");
        return 0;
    }
    return 1;
}

/* Best of five runs of `iters` rounds of the four tiles, in G
 * multiply-adds per second. */
static double amx_rate(float (*tiles)(long), int per_instruction, float *checksum)
{
    const long iters = 2000000;
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_s();
        *checksum += tiles(iters);
        double rate = iters * 4.0 * per_instruction / (now_s() - t0) * 1e-9;
        best = rate > best ? rate : best;
    }
    return best;
}

/* The int8 and bf16 products' instructions, where the CPU has them. */
static void int8_bf16_peaks(float *checksum)
{
    printf("# int8 AVX2 form (VPSIGNB x2, VPMADDUBSW, VPMADDWD, VPADDD), one core (%d chains): "
           "%.1f G multiply-adds/s\n", CHAINS, peak_rate(int8_avx2_chains, 8 * 4, checksum));
    bool vnni_vl = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                   __builtin_cpu_supports("avx512vnni");
    if (vnni_vl)
        printf("# int8 VPDPBUSD peak, one core (256-bit, EVEX, %d chains): %.1f G multiply-adds/s\n",
               CHAINS, peak_rate(dpbusd_ymm_chains, 8 * 4, checksum));
    else if (__builtin_cpu_supports("avxvnni"))
        printf("# int8 VPDPBUSD peak, one core (256-bit, AVX-VNNI, %d chains): %.1f G "
               "multiply-adds/s\n", CHAINS, peak_rate(dpbusd_avxvnni_chains, 8 * 4, checksum));
    else
        printf("# int8 VPDPBUSD 256-bit peak: not available (no AVX512-VNNI with AVX512VL, "
               "no AVX-VNNI)\n");
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bf16"))
        printf("# bf16 VDPBF16PS peak, one core (256-bit, %d chains): %.1f G multiply-adds/s\n",
               CHAINS, peak_rate(dpbf16_ymm_chains, 8 * 2, checksum));
    else
        printf("# bf16 VDPBF16PS 256-bit peak: not available (no AVX512_BF16 with AVX512VL)\n");
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
    if (amx_usable()) {
        printf("# int8 AMX TDPBSSD peak, one core (4 accumulator tiles): %.1f G multiply-adds/s\n",
               amx_rate(tdpbssd_tiles, 16 * 16 * 64, checksum));
        printf("# bf16 AMX TDPBF16PS peak, one core (4 accumulator tiles): %.1f G multiply-adds/s\n",
               amx_rate(tdpbf16_tiles, 16 * 16 * 32, checksum));
    }
}

int main(int argc, char **argv)
{
    /* fewer rounds fit a run in one scheduler slice on a crowded machine */
    if (argc > 1)
        iters = atol(argv[1]) > 0 ? atol(argv[1]) : iters;
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
