/*
 * linalg.h — every matrix product of the engine, and the one place that
 * calls cblas_sgemm.
 *
 * Weights are PyTorch nn.Linear matrices: W is (out x in), row-major, so
 * a Linear layer over T rows of X (T x in) is
 *
 *     Y (T x out) = X (T x in) . W^T
 *     = cblas_sgemm(RowMajor, NoTrans, Trans, M = T, N = out, K = in,
 *                   1, X, lda = in, W, ldb = in, 0, Y, ldc = out)
 *
 * i.e. W is read as its own transpose without a copy.
 */
#ifndef RF_LINALG_H
#define RF_LINALG_H

#include "roformer.h"
#include "kernels/block_post.h"
#include "kernels/parallel.h"

#include <stdbool.h>
#include <stdint.h>

/* C (M x N) = alpha * A (M x K) . op(B) + beta * C, all row-major;
 * op(B) = B^T when b_trans (B is N x K), else B (K x N). One thread. */
void rf_gemm(bool b_trans, int M, int N, int K, float alpha, const float *A, int lda,
             const float *B, int ldb, float beta, float *C, int ldc);
/* Naive twin: triple loop, sums in double. */
void rf_gemm_naive(bool b_trans, int M, int N, int K, float alpha, const float *A, int lda,
                   const float *B, int ldb, float beta, float *C, int ldc);

/* The rows of a product as segments, each computed the same wherever it
 * sits among the others: segment s is rows [start[s], start[s + 1]),
 * start[0] = 0, start[n] = M (a segment may be empty). A sequence of a
 * batch is one: its rows' results then depend on it alone, not on the
 * sequences beside it (linalg.c says how). */
typedef struct {
    const int32_t *start; /* [n + 1] */
    int n;
} rf_row_segments;

/* Y (M x N) = act(X (M x K) . W^T + b): a Linear layer, W (N x K), b [N]
 * or NULL, shared across the pool's threads; each thread adds bias and
 * activation on its own units while they are in cache, then runs post on
 * them (block_post.h; NULL: none). rows NULL: the M rows are one segment.
 * A row's result depends only on its segment's rows, never on the other
 * segments nor on the number of threads. */
void rf_linear(const rf_parallel *pool, const float *X, int M, int K, const float *W, const float *b,
               int N, rf_activation act, const rf_block_post *post, const rf_row_segments *rows,
               float *Y);
/* The busiest thread's multiply-adds when rf_linear shares an M x N x K
 * product of one segment among n_threads (at most RF_MAX_THREADS), each
 * task taken in order by the first thread free. */
int64_t rf_linear_max_macs(int M, int N, int K, int n_threads);
/* Block `block` of n items cut into n_blocks: [*start, *start + *len), each
 * block's size rounded up to a multiple of `align` (the last one shorter,
 * or empty). How row-wise passes share out rows. */
void rf_block_range(int n, int n_blocks, int block, int align, int *start, int *len);

/* Naive twin: rf_gemm_naive then the naive bias + activation. */
void rf_linear_naive(const float *X, int M, int K, const float *W, const float *b, int N,
                     rf_activation act, float *Y);

/* Sets OpenBLAS to one thread (process-wide): the engine owns its
 * threading and calls single-threaded sgemm from each of its threads. */
void rf_blas_single_thread(void);

#endif
