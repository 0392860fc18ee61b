/*
 * int8_bench.c — one thread's rate of the int8 Linear (rf_linear_int8:
 * quantizing the inputs, the product, scaling) beside the f32 one
 * (rf_linear: OpenBLAS sgemm) on the shapes a RoFormer-base layer runs.
 *
 *   make && cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc tests/bench/int8_bench.c \
 *       build/libroformer.a $(pkg-config --libs openblas libcjson libutf8proc) -lpthread -lm \
 *       -o build/int8_bench && build/int8_bench [RUNS [KERNEL [ROWS]]]
 *
 * Y (M x N) = X (M x K) · Wᵀ, M = tokens, N = out features, K = in features.
 * The product's build is KERNEL ("amx", "vnni", "avx2", ...) or the one
 * the kernels' table picks (the best the CPU has: AMX, else VNNI, else
 * AVX2; I8MM, else SDOT, else NEON). ROWS replaces every shape's M (the
 * AMX / VNNI crossover at short inputs). Times are the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so a
 * machine shared with other work inflates them less than wall time; prints
 * the median GOP/s (2 M N K per product) of each. Not a test: never run by
 * `make test`.
 */
#include "kernels/backend.h"
#include "kernels/gemm_int8.h"
#include "kernels/linalg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    if (argc > 2 && !rf_backend_set(rf_backend_find(RF_OP_INT8, argv[2]))) {
        fprintf(stderr, "int8_bench: no int8 build '%s' on this CPU\n", argv[2]);
        return 2;
    }
    if (runs < 1 || runs > 1000 || !rf_int8_supported()) {
        fprintf(stderr, "usage: int8_bench [RUNS 1..1000] (needs AVX2)\n");
        return 2;
    }
    /* Q|K|V, attention output, FFN up, FFN down at 8 x 128 tokens, and FFN up at 128 */
    const int shapes[][3] = {{1024, 2304, 768}, {1024, 768, 768}, {1024, 3072, 768},
                             {1024, 768, 3072}, {128, 3072, 768}};
    rf_blas_single_thread();
    srand(1);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int M = argc > 3 ? atoi(argv[3]) : shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        float *X = malloc((size_t)M * K * sizeof *X), *W = malloc((size_t)N * K * sizeof *W);
        float *Y = malloc((size_t)M * N * sizeof *Y), *scale = malloc((size_t)N * sizeof *scale);
        int8_t *Wq = malloc((size_t)N * K);
        size_t packed = rf_int8_packed_size(N, K), scratch = rf_int8_scratch_size(M, K);
        int8_t *panels = aligned_alloc(64, (packed + 63) / 64 * 64);
        int32_t *colsum = calloc(rf_int8_colsum_count(N), sizeof *colsum);
        void *xq = aligned_alloc(64, (scratch + 63) / 64 * 64);
        for (size_t i = 0; i < (size_t)M * K; i++)
            X[i] = (float)(rand() % 2001 - 1000) / 1000.0f;
        for (size_t i = 0; i < (size_t)N * K; i++)
            W[i] = (float)(rand() % 2001 - 1000) / 20000.0f;
        memset(panels, 0, packed);
        rf_int8_quantize_rows(W, N, K, (size_t)K, Wq, scale);
        rf_int8_pack_rows(Wq, 0, N, K, (size_t)K, panels, colsum);
        rf_int8_matrix Wm = {panels, scale, colsum};
        double *t8 = malloc((size_t)runs * sizeof *t8), *t32 = malloc((size_t)runs * sizeof *t32);
        for (int r = 0; r < runs; r++) {
            double t0 = cpu_seconds();
            rf_linear_int8(NULL, X, M, K, &Wm, NULL, N, RF_ACT_LINEAR, NULL, Y, xq);
            double t1 = cpu_seconds();
            rf_linear(NULL, X, M, K, W, NULL, N, RF_ACT_LINEAR, NULL, NULL, Y);
            t8[r] = t1 - t0;
            t32[r] = cpu_seconds() - t1;
        }
        qsort(t8, (size_t)runs, sizeof *t8, by_value);
        qsort(t32, (size_t)runs, sizeof *t32, by_value);
        double ops = 2.0 * M * N * K;
        printf("M %5d N %5d K %5d: int8 %6.1f GOP/s, f32 sgemm %6.1f GFLOP/s, int8 / f32 %.2fx\n",
               M, N, K, ops / t8[runs / 2] * 1e-9, ops / t32[runs / 2] * 1e-9,
               t32[runs / 2] / t8[runs / 2]);
        free(X), free(W), free(Y), free(scale), free(Wq), free(panels), free(colsum), free(xq), free(t8), free(t32);
    }
    printf("int8 product: %s\n", rf_backend_get(RF_OP_INT8)->name);
    return 0;
}
