/*
 * linalg.c — sgemm wrapper, the threaded Linear layer, and their naive
 * twins (see linalg.h for the weight layout).
 *
 * Threading: OpenBLAS runs at one thread; rf_linear cuts the product into
 * one block per engine thread. Rows (M) are cut when there are enough of
 * them to keep each block's sgemm efficient; otherwise columns (N), in
 * multiples of 16 so that every block starts on a 64-byte boundary of Y's
 * rows when N allows.
 */
#include "kernels/linalg.h"
#include "kernels/activations.h"

#include <cblas.h>
#include <stddef.h>

/* Products smaller than this many multiply-adds are not worth a thread. */
#define SPLIT_MIN_MACS (1L << 18)
/* Cut along M only when every block keeps at least this many rows. Each
 * block's sgemm packs all of its share of W: below this, packing the whole
 * weight matrix once per thread costs more than the column cut's smaller
 * blocks. */
#define SPLIT_MIN_ROWS 128

void rf_gemm(bool b_trans, int M, int N, int K, float alpha, const float *A, int lda,
             const float *B, int ldb, float beta, float *C, int ldc)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, b_trans ? CblasTrans : CblasNoTrans, M, N, K,
                alpha, A, lda, B, ldb, beta, C, ldc);
}

void rf_gemm_naive(bool b_trans, int M, int N, int K, float alpha, const float *A, int lda,
                   const float *B, int ldb, float beta, float *C, int ldc)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double sum = 0.0;
            for (int k = 0; k < K; k++) {
                float b = b_trans ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];
                sum += (double)A[(size_t)i * lda + k] * b;
            }
            float *c = &C[(size_t)i * ldc + j];
            /* beta == 0 must not read C (it may hold garbage), as in BLAS */
            *c = (float)(alpha * sum + (beta == 0.0f ? 0.0 : (double)beta * *c));
        }
}

struct linear_job {
    const float *X, *W, *b;
    int M, K, N;
    rf_activation act;
    float *Y;
    bool split_rows;
    int n_blocks;
};

void rf_block_range(int n, int n_blocks, int block, int align, int *start, int *len)
{
    int per = (n + n_blocks - 1) / n_blocks;
    per = (per + align - 1) / align * align;
    int s = per * block;
    if (s > n)
        s = n;
    int e = s + per > n ? n : s + per;
    *start = s;
    *len = e - s;
}

void rf_linear_1(const float *X, int M, int K, const float *W, const float *b, int N,
                 rf_activation act, float *Y)
{
    rf_gemm(true, M, N, K, 1.0f, X, K, W, K, 0.0f, Y, N);
    rf_bias_act(Y, M, N, N, b, act);
}

bool rf_linear_splits_rows(const rf_parallel *pool, int M)
{
    return M >= SPLIT_MIN_ROWS * rf_parallel_threads(pool);
}

bool rf_linear_block(int M, int N, int n_blocks, bool split_rows, int block, int col_align,
                     int *m0, int *m1, int *n0, int *n1)
{
    int start, len;
    rf_block_range(split_rows ? M : N, n_blocks, block, split_rows ? 1 : col_align, &start, &len);
    *m0 = split_rows ? start : 0;
    *m1 = split_rows ? start + len : M;
    *n0 = split_rows ? 0 : start;
    *n1 = split_rows ? N : start + len;
    return len > 0;
}

static void linear_task(void *arg, int task, int thread)
{
    (void)thread;
    const struct linear_job *j = arg;
    int m0, m1, n0, n1;
    if (!rf_linear_block(j->M, j->N, j->n_blocks, j->split_rows, task, 16, &m0, &m1, &n0, &n1))
        return;
    if (j->split_rows) {
        rf_linear_1(j->X + (size_t)m0 * j->K, m1 - m0, j->K, j->W, j->b, j->N, j->act,
                    j->Y + (size_t)m0 * j->N);
    } else {
        rf_gemm(true, j->M, n1 - n0, j->K, 1.0f, j->X, j->K, j->W + (size_t)n0 * j->K, j->K,
                0.0f, j->Y + n0, j->N);
        rf_bias_act(j->Y + n0, j->M, n1 - n0, j->N, j->b ? j->b + n0 : NULL, j->act);
    }
}

int rf_linear_blocks(const rf_parallel *pool, int M, int N, int K, bool *split_rows)
{
    int n_threads = rf_parallel_threads(pool);
    *split_rows = true;
    if (n_threads < 2 || (long)M * N * K < SPLIT_MIN_MACS)
        return 1;
    *split_rows = rf_linear_splits_rows(pool, M);
    return n_threads;
}

void rf_linear(const rf_parallel *pool, const float *X, int M, int K, const float *W, const float *b,
               int N, rf_activation act, float *Y)
{
    struct linear_job job = {X, W, b, M, K, N, act, Y, true, 1};
    job.n_blocks = rf_linear_blocks(pool, M, N, K, &job.split_rows);
    rf_parallel_run(pool, job.n_blocks, linear_task, &job);
}

void rf_linear_naive(const float *X, int M, int K, const float *W, const float *b, int N,
                     rf_activation act, float *Y)
{
    rf_gemm_naive(true, M, N, K, 1.0f, X, K, W, K, 0.0f, Y, N);
    rf_bias_act_naive(Y, M, N, N, b, act);
}

void rf_blas_single_thread(void)
{
    openblas_set_num_threads(1);
}
