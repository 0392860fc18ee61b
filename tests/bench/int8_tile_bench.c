/*
 * int8_tile_bench.c — what bounds the AVX2 int8 product: the inner loop of
 * src/kernels/gemm_int8.c (4 rows x 16 channels over K = 768, the operands
 * in L1) beside three other forms of the same loop, in products (MACs) per
 * second of one core:
 *   exact      the engine's: |x| by VPSIGNB, the weights given x's sign by
 *              VPSIGNB, VPMADDUBSW, VPMADDWD by ones, VPADDD
 *   exact-abs  the same with |x| made ahead (one VPSIGNB fewer per row)
 *   exact-i16  VPMADDWD on int16 inputs and weights widened by VPMOVSXBW
 *   saturating VPMADDUBSW on unsigned inputs as they are, VPMADDWD, VPADDD:
 *              ONNX Runtime's AVX2 u8 x s8 form, whose int16 pair sums can
 *              saturate (only the speed is measured here)
 * Each form's best time of many repeats, so other work on the machine
 * inflates it less. Not a test: never run by `make test`.
 *
 *   cc -O2 -std=c11 tests/bench/int8_tile_bench.c -o build/int8_tile_bench && build/int8_tile_bench
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROWS 4
#define K 768
#define TARGET __attribute__((target("avx2"), noinline))
#define INLINE __attribute__((target("avx2"), always_inline)) inline

static int8_t x8[ROWS * K], w8[16 * K] __attribute__((aligned(64)));
static uint8_t x_abs[ROWS * K];
static int16_t x16[ROWS * K];
static int32_t sums[ROWS * 16];

INLINE static __m256i broadcast4(const void *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

INLINE static void store(__m256i acc[ROWS][2])
{
    for (int r = 0; r < ROWS; r++) {
        _mm256_storeu_si256((__m256i *)(void *)(sums + r * 16), acc[r][0]);
        _mm256_storeu_si256((__m256i *)(void *)(sums + r * 16 + 8), acc[r][1]);
    }
}

/* mode 0: exact, 1: exact-abs, 2: saturating (weights in quads: 64 bytes
 * = 16 channels x 4 inputs, as the engine packs them) */
INLINE static void tile_u8(const int mode)
{
    __m256i acc[ROWS][2];
    const __m256i ones = _mm256_set1_epi16(1);
    for (int r = 0; r < ROWS; r++)
        acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (int i = 0; i < K / 4; i++) {
        __m256i w0 = _mm256_load_si256((const __m256i *)(const void *)(w8 + i * 64));
        __m256i w1 = _mm256_load_si256((const __m256i *)(const void *)(w8 + i * 64 + 32));
#pragma GCC unroll 4
        for (int r = 0; r < ROWS; r++) {
            __m256i a = broadcast4(x8 + r * K + i * 4), m, s0 = w0, s1 = w1;
            if (mode == 0)
                m = _mm256_sign_epi8(a, a);
            else
                m = broadcast4(x_abs + r * K + i * 4);
            if (mode != 2) {
                s0 = _mm256_sign_epi8(w0, a);
                s1 = _mm256_sign_epi8(w1, a);
            }
            acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(m, s0), ones));
            acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(m, s1), ones));
        }
    }
    store(acc);
}

TARGET static void exact(void) { tile_u8(0); }
TARGET static void exact_abs(void) { tile_u8(1); }
TARGET static void saturating(void) { tile_u8(2); }

/* weights in pairs: 32 bytes = 16 channels x 2 inputs, widened to int16 */
TARGET static void exact_i16(void)
{
    __m256i acc[ROWS][2];
    for (int r = 0; r < ROWS; r++)
        acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (int i = 0; i < K / 2; i++) {
        __m256i w0 = _mm256_cvtepi8_epi16(_mm_load_si128((const __m128i *)(const void *)(w8 + i * 32)));
        __m256i w1 = _mm256_cvtepi8_epi16(_mm_load_si128((const __m128i *)(const void *)(w8 + i * 32 + 16)));
#pragma GCC unroll 4
        for (int r = 0; r < ROWS; r++) {
            __m256i a = broadcast4(x16 + r * K + i * 2);
            acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(a, w0));
            acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(a, w1));
        }
    }
    store(acc);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* G products per second: the best of `repeats` timings of 200 tiles */
static double rate(void (*tile)(void), int repeats)
{
    double best = 1e30;
    for (int rep = 0; rep < repeats; rep++) {
        double t = now();
        for (int i = 0; i < 200; i++)
            tile();
        t = now() - t;
        best = t < best ? t : best;
    }
    return 200.0 * ROWS * 16 * K / best * 1e-9;
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 300;
    if (repeats < 1 || !__builtin_cpu_supports("avx2")) {
        fprintf(stderr, "usage: int8_tile_bench [REPEATS] (needs AVX2)\n");
        return 2;
    }
    srand(1);
    for (int i = 0; i < ROWS * K; i++) {
        x8[i] = (int8_t)(rand() % 255 - 127);
        x_abs[i] = (uint8_t)abs(x8[i]);
        x16[i] = x8[i];
    }
    for (int i = 0; i < 16 * K; i++)
        w8[i] = (int8_t)(rand() % 255 - 127);
    for (int round = 0; round < 3; round++)
        printf("G products/s: exact %.1f  exact-abs %.1f  exact-i16 %.1f  saturating %.1f\n",
               rate(exact, repeats), rate(exact_abs, repeats), rate(exact_i16, repeats),
               rate(saturating, repeats));
    return 0;
}
