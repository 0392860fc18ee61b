/*
 * fma_peak.c — the fp32 FMA peak of one core: ten independent chains of
 * 256-bit fused multiply-adds (enough to cover the FMA latency on current
 * x86 cores), so sgemm GFLOP/s can be read as a fraction of the hardware's.
 * Built by scripts/sgemm_cores.sh with -mavx2 -mfma; not a test.
 */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
    const __m256 mul = _mm256_set1_ps(1.0000001f), add = _mm256_set1_ps(1e-7f);
    __m256 a0 = _mm256_set1_ps(0), a1 = _mm256_set1_ps(1), a2 = _mm256_set1_ps(2),
           a3 = _mm256_set1_ps(3), a4 = _mm256_set1_ps(4), a5 = _mm256_set1_ps(5),
           a6 = _mm256_set1_ps(6), a7 = _mm256_set1_ps(7), a8 = _mm256_set1_ps(8),
           a9 = _mm256_set1_ps(9);
    const long iters = 100000000;
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now_s();
        for (long i = 0; i < iters; i++) {
            a0 = _mm256_fmadd_ps(a0, mul, add);
            a1 = _mm256_fmadd_ps(a1, mul, add);
            a2 = _mm256_fmadd_ps(a2, mul, add);
            a3 = _mm256_fmadd_ps(a3, mul, add);
            a4 = _mm256_fmadd_ps(a4, mul, add);
            a5 = _mm256_fmadd_ps(a5, mul, add);
            a6 = _mm256_fmadd_ps(a6, mul, add);
            a7 = _mm256_fmadd_ps(a7, mul, add);
            a8 = _mm256_fmadd_ps(a8, mul, add);
            a9 = _mm256_fmadd_ps(a9, mul, add);
            /* keep every chain in a register and every FMA in the loop */
            __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5),
                             "+x"(a6), "+x"(a7), "+x"(a8), "+x"(a9));
        }
        double gflops = iters * 10.0 * 16 / (now_s() - t0) * 1e-9;
        best = gflops > best ? gflops : best;
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                             _mm256_add_ps(_mm256_add_ps(a4, a5),
                                           _mm256_add_ps(_mm256_add_ps(a6, a7), _mm256_add_ps(a8, a9))));
    float lanes[8];
    _mm256_storeu_ps(lanes, s);
    printf("# fp32 FMA peak, one core, AVX2: %.1f GFLOP/s (checksum %g)\n", best, lanes[0]);
    return 0;
}
