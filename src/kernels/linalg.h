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
#include "kernels/parallel.h"

#include <stdbool.h>

/* C (M x N) = alpha * A (M x K) . op(B) + beta * C, all row-major;
 * op(B) = B^T when b_trans (B is N x K), else B (K x N). One thread. */
void rf_gemm(bool b_trans, int M, int N, int K, float alpha, const float *A, int lda,
             const float *B, int ldb, float beta, float *C, int ldc);
/* Naive twin: triple loop, sums in double. */
void rf_gemm_naive(bool b_trans, int M, int N, int K, float alpha, const float *A, int lda,
                   const float *B, int ldb, float beta, float *C, int ldc);

/* Y (M x N) = act(X (M x K) . W^T + b): a Linear layer, W (N x K), b [N]
 * or NULL. Split across the pool's threads along M (rows of X) when M is
 * large, else along N (e.g. the MLM decoder at a few positions); each
 * thread adds bias and activation on its own block while it is in cache. */
void rf_linear(const rf_parallel *pool, const float *X, int M, int K, const float *W, const float *b,
               int N, rf_activation act, float *Y);
/* The same on the calling thread only (a block of rows of a larger job). */
void rf_linear_1(const float *X, int M, int K, const float *W, const float *b, int N,
                 rf_activation act, float *Y);
/* True when rf_linear would cut M rows into one block per pool thread:
 * callers that fuse more work per row block use the same rule. */
bool rf_linear_splits_rows(const rf_parallel *pool, int M);
/* Block `block` of n items cut into n_blocks: [*start, *start + *len), each
 * block's size rounded up to a multiple of `align` (the last one shorter,
 * or empty). How the threaded products share out rows and columns. */
void rf_block_range(int n, int n_blocks, int block, int align, int *start, int *len);

/* How rf_linear shares an M x N x K product out: the number of blocks
 * (1: too small to be worth a thread), and whether they cut rows or
 * columns. The bf16 product follows the same rule. */
int rf_linear_blocks(const rf_parallel *pool, int M, int N, int K, bool *split_rows);
/* Block `block` of the n_blocks of such a product (split_rows: rows, else
 * columns in multiples of col_align): rows [*m0, *m1) and columns [*n0,
 * *n1). False when the block is empty. */
bool rf_linear_block(int M, int N, int n_blocks, bool split_rows, int block, int col_align,
                     int *m0, int *m1, int *n0, int *n1);

/* Naive twin: rf_gemm_naive then the naive bias + activation. */
void rf_linear_naive(const float *X, int M, int K, const float *W, const float *b, int N,
                     rf_activation act, float *Y);

/* Sets OpenBLAS to one thread (process-wide): the engine owns its
 * threading and calls single-threaded sgemm from each of its threads. */
void rf_blas_single_thread(void);

#endif
