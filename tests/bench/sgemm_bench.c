/*
 * sgemm_bench.c — GFLOP/s of OpenBLAS sgemm on the shapes a RoFormer-base
 * layer runs, with OpenBLAS's own threads or with the work split by hand.
 *
 *   sgemm_bench [--mode blas|split|splitn] [--threads T] [--runs N] [M N K]...
 *
 * C (M x N) = A (M x K) · Bᵀ, B (N x K) row-major: the nn.Linear layout the
 * engine multiplies with (M = tokens, N = out features, K = in features).
 * --mode blas:  openblas_set_num_threads(T), one sgemm call.
 * --mode split: OpenBLAS at one thread; T pthreads each call sgemm on their
 *               share of the M rows (each packs all of B);
 * --mode splitn: the same on shares of the N columns (multiples of 16; each
 *               packs its share of B, all of A).
 * The BLAS core is whatever OpenBLAS chose at load time (set
 * OPENBLAS_CORETYPE before starting to pick another). Prints one line per
 * shape with the median GFLOP/s over the runs. Not a test: never run by
 * `make test`.
 */
#include <cblas.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    int m, n, k;
    const float *a, *b;
    float *c;
    int ldc;
} gemm_job;

enum { MODE_BLAS, MODE_SPLIT_M, MODE_SPLIT_N };

static void *run_job(void *arg)
{
    gemm_job *j = arg;
    if (j->m > 0 && j->n > 0)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, j->m, j->n, j->k, 1.0f, j->a, j->k,
                    j->b, j->k, 0.0f, j->c, j->ldc);
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* One timed product: a single call (blas mode) or split over `threads`
 * pthreads by rows or columns. Returns seconds. */
static double time_once(int mode, int threads, int m, int n, int k, const float *a,
                        const float *b, float *c)
{
    double t0 = now_s();
    if (mode == MODE_BLAS) {
        gemm_job j = {m, n, k, a, b, c, n};
        run_job(&j);
    } else {
        pthread_t tid[16];
        gemm_job jobs[16];
        int rows = (m + threads - 1) / threads;
        int cols = ((n + threads - 1) / threads + 15) / 16 * 16;
        for (int t = 0; t < threads; t++) {
            if (mode == MODE_SPLIT_M) {
                int r0 = t * rows > m ? m : t * rows, r1 = r0 + rows > m ? m : r0 + rows;
                jobs[t] = (gemm_job){r1 - r0, n, k, a + (size_t)r0 * k, b, c + (size_t)r0 * n, n};
            } else {
                int c0 = t * cols > n ? n : t * cols, c1 = c0 + cols > n ? n : c0 + cols;
                jobs[t] = (gemm_job){m, c1 - c0, k, a, b + (size_t)c0 * k, c + c0, n};
            }
        }
        for (int t = 1; t < threads; t++)
            pthread_create(&tid[t], NULL, run_job, &jobs[t]);
        run_job(&jobs[0]);
        for (int t = 1; t < threads; t++)
            pthread_join(tid[t], NULL);
    }
    return now_s() - t0;
}

int main(int argc, char **argv)
{
    int mode = MODE_BLAS, threads = 1, runs = 20, i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
            i++;
            mode = !strcmp(argv[i], "split") ? MODE_SPLIT_M : !strcmp(argv[i], "splitn") ? MODE_SPLIT_N : MODE_BLAS;
        }
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: sgemm_bench [--mode blas|split|splitn] [--threads T] [--runs N] [M N K]...\n");
            return 2;
        }
    }
    if (threads < 1 || threads > 16 || runs < 1 || (argc - i) % 3) {
        fprintf(stderr, "sgemm_bench: bad arguments\n");
        return 2;
    }
    /* one layer's products at 8 x 128 and 1 x 128 tokens, and the FFN at
       8 x 512; N = 768 beside N = 2304 shows what one Q|K|V product on the
       stacked weights gains over three */
    static const int default_shapes[] = {1024, 768, 768, 1024, 2304, 768, 1024, 3072, 768,
                                         1024, 768, 3072, 128, 768, 768, 128, 2304, 768,
                                         128, 3072, 768, 4096, 3072, 768};
    const int *shapes = default_shapes;
    int n_shapes = (int)(sizeof default_shapes / sizeof default_shapes[0]) / 3;
    int *given = NULL;
    if (argc - i > 0) {
        n_shapes = (argc - i) / 3;
        given = malloc(sizeof(int) * 3 * n_shapes);
        for (int s = 0; s < 3 * n_shapes; s++)
            given[s] = atoi(argv[i + s]);
        shapes = given;
    }
    static const char *const mode_names[] = {"blas", "split", "splitn"};
    openblas_set_num_threads(mode == MODE_BLAS ? threads : 1);
    printf("# core %s, mode %s, threads %d, OpenBLAS threads %d\n", openblas_get_corename(),
           mode_names[mode], threads, openblas_get_num_threads());
    double *t = malloc(sizeof(double) * runs);
    for (int s = 0; s < n_shapes; s++) {
        int m = shapes[3 * s], n = shapes[3 * s + 1], k = shapes[3 * s + 2];
        float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * n * k),
              *c = malloc(sizeof(float) * m * n);
        for (long x = 0; x < (long)m * k; x++)
            a[x] = (float)((x * 7919) % 1000) / 1000.0f - 0.5f;
        for (long x = 0; x < (long)n * k; x++)
            b[x] = (float)((x * 104729) % 1000) / 1000.0f - 0.5f;
        for (int w = 0; w < 3; w++)
            time_once(mode, threads, m, n, k, a, b, c);
        for (int r = 0; r < runs; r++)
            t[r] = time_once(mode, threads, m, n, k, a, b, c);
        qsort(t, runs, sizeof(double), cmp_double);
        double flop = 2.0 * m * n * k;
        printf("M=%-5d N=%-5d K=%-5d  %7.1f GFLOP/s (median; best %.1f)\n", m, n, k,
               flop / t[runs / 2] * 1e-9, flop / t[0] * 1e-9);
        free(a);
        free(b);
        free(c);
    }
    free(t);
    free(given);
    return 0;
}
