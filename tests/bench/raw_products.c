/*
 * raw_products.c — one thread's rate of the int8 and bf16 products alone,
 * the inputs already quantized or rounded: rf_gemm_int8_s32 (int32 sums
 * stored) and rf_gemm_bf16 (f32 sums stored), on the shapes a
 * RoFormer-base layer runs, in G multiply-adds per second. Beside the
 * instructions' peaks of the same core (scripts/sgemm_cores.sh), this is
 * the raw product's share of its peak.
 *
 *   make && cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc tests/bench/raw_products.c \
 *       build/libroformer.a $(pkg-config --libs openblas libcjson libutf8proc libcurl libcrypto) \
 *       -lpthread -lm -o build/raw_products && build/raw_products [RUNS [INT8 [BF16]]]
 *
 * INT8 and BF16 name the builds ("amx", "vnni", "avx512bf16", ...; "-"
 * for the CPU's choice). Each product's best time of RUNS (default 15):
 * the thread's CPU time, so that other work on the machine inflates it
 * less. Not a test: never run by `make test`.
 */
#include "kernels/backend.h"
#include "kernels/gemm_bf16.h"
#include "kernels/gemm_int8.h"

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

static bool pick(const char *kind, const char *name)
{
    if (!name || !strcmp(name, "-"))
        return true;
    bool ok = rf_backend_set(rf_backend_find(rf_op_find(kind), name));
    if (!ok)
        fprintf(stderr, "raw_products: no %s build '%s' on this CPU\n", kind, name);
    return ok;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 15;
    if (runs < 1 || runs > 1000) {
        fprintf(stderr, "usage: raw_products [RUNS 1..1000 [INT8 [BF16]]]\n");
        return 2;
    }
    if (!pick("int8", argc > 2 ? argv[2] : NULL) || !pick("bf16", argc > 3 ? argv[3] : NULL))
        return 2;
    bool int8 = rf_int8_supported(), bf16 = rf_bf16_supported();
    /* Q|K|V, attention output, FFN up, FFN down at 8 x 128 tokens, and FFN up at 128 */
    const int shapes[][3] = {{1024, 2304, 768}, {1024, 768, 768}, {1024, 3072, 768},
                             {1024, 768, 3072}, {128, 3072, 768}};
    srand(1);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        float *X = malloc((size_t)M * K * sizeof *X), *W = malloc((size_t)N * K * sizeof *W);
        for (size_t i = 0; i < (size_t)M * K; i++)
            X[i] = (float)(rand() % 2001 - 1000) / 1000.0f;
        for (size_t i = 0; i < (size_t)N * K; i++)
            W[i] = (float)(rand() % 2001 - 1000) / 20000.0f;
        double macs = (double)M * N * K, best8 = 1e30, best16 = 1e30;
        if (int8) {
            size_t kb = (size_t)rf_int8_row_bytes(K), packed = rf_int8_packed_size(N, K);
            int8_t *Xq = aligned_alloc(64, ((size_t)M * kb + 63) / 64 * 64);
            int8_t *Wq = malloc((size_t)N * K);
            int8_t *panels = aligned_alloc(64, (packed + 63) / 64 * 64);
            float *scale = malloc((size_t)N * sizeof *scale);
            float *xscale = malloc((size_t)M * sizeof *xscale);
            int32_t *colsum = calloc(rf_int8_colsum_count(N), sizeof *colsum);
            int32_t *C = malloc((size_t)M * N * sizeof *C);
            memset(Xq, 0, (size_t)M * kb);
            rf_int8_quantize_rows(X, M, K, (size_t)K, Xq, xscale);
            for (int i = M - 1; i >= 0; i--) { /* rows of kb bytes, zero past K */
                memmove(Xq + (size_t)i * kb, Xq + (size_t)i * K, (size_t)K);
                memset(Xq + (size_t)i * kb + K, 0, kb - (size_t)K);
            }
            memset(panels, 0, packed);
            rf_int8_quantize_rows(W, N, K, (size_t)K, Wq, scale);
            rf_int8_pack_rows(Wq, 0, N, K, (size_t)K, panels, colsum);
            rf_int8_matrix Wm = {panels, scale, colsum};
            for (int r = 0; r < runs; r++) {
                double t0 = cpu_seconds();
                if (!rf_gemm_int8_s32(Xq, M, K, &Wm, N, C))
                    return fprintf(stderr, "raw_products: out of memory\n"), 1;
                double t = cpu_seconds() - t0;
                best8 = t < best8 ? t : best8;
            }
            free(Xq), free(Wq), free(panels), free(scale), free(xscale), free(colsum), free(C);
        }
        if (bf16) {
            uint16_t *Xb = malloc(rf_bf16_scratch_size(M, K) * sizeof *Xb);
            uint16_t *Wp = malloc(rf_bf16_packed_size(N, K) * sizeof *Wp);
            float *Y = malloc((size_t)M * N * sizeof *Y);
            rf_bf16_round(X, M, K, (size_t)K, 1.0f, Xb);
            rf_bf16_pack(W, N, K, Wp);
            for (int r = 0; r < runs; r++) {
                double t0 = cpu_seconds();
                rf_gemm_bf16(Xb, M, K, Wp, N, Y, N);
                double t = cpu_seconds() - t0;
                best16 = t < best16 ? t : best16;
            }
            free(Xb), free(Wp), free(Y);
        }
        printf("M %5d N %5d K %5d:", M, N, K);
        if (int8)
            printf("  int8 (%s) %7.1f", rf_backend_get(RF_OP_INT8)->name, macs / best8 * 1e-9);
        if (bf16)
            printf("  bf16 (%s) %7.1f", rf_backend_get(RF_OP_BF16)->name, macs / best16 * 1e-9);
        printf("  G multiply-adds/s\n");
        free(X), free(W);
    }
    return 0;
}
