/*
 * linalg.c — sgemm wrapper, the threaded Linear layer, and their naive
 * twins (see linalg.h for the weight layout).
 *
 * Threading: OpenBLAS runs at one thread; rf_linear shares the product out
 * with the planner of partition.h and computes each of its units as one
 * sgemm call. OpenBLAS picks its kernel by the call's shape (a small-matrix
 * kernel below about a million multiply-adds, with its own order of
 * summation), so a call cut to fit a thread's share would give a different
 * last bit for a different number of threads; a unit's call is the same
 * whatever the number of threads, and so is every output. Above that size
 * OpenBLAS sums each element over K in the same blocks whatever M and N,
 * so a thread's whole-grain units of one rectangle run as one call (which
 * packs each weight panel once instead of once per grain of rows) where
 * one unit alone is already well above it; the rest stay a call per unit.
 */
#include "kernels/linalg.h"
#include "kernels/activations.h"
#include "kernels/partition.h"

#include <cblas.h>
#include <stddef.h>

/* The f32 product's units (partition.h): F32_ROW_GRAIN rows by F32_PANEL
 * columns, or F32_PANEL_SHORT columns for a product of fewer rows than a
 * grain (a short input: narrower units keep more threads busy). OpenBLAS
 * packs both operands of every call, so smaller units cost more packing
 * and larger ones leave fewer units to share; the shape of each call
 * depends on (M, N, K) alone, never on the number of threads. */
#define F32_ROW_GRAIN 128
#define F32_PANEL 128
#define F32_PANEL_SHORT 64
/* Units of at least this many multiply-adds merge into one call: eight
 * times where OpenBLAS leaves its small-matrix kernel. */
#define F32_MERGE_MIN_MACS (1L << 23)

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

/* ==== The threaded Linear ==== */

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

static int f32_panel(int M)
{
    return M < F32_ROW_GRAIN ? F32_PANEL_SHORT : F32_PANEL;
}

rf_partition rf_linear_partition(int M, int N, int K, int n_threads)
{
    return rf_partition_plan(M, N, K, f32_panel(M), F32_ROW_GRAIN, n_threads);
}

struct linear_job {
    const float *X, *W, *b;
    int K, N;
    rf_activation act;
    const rf_block_post *post;
    float *Y;
    rf_partition plan;
};

/* One unit of the plan (or a run of them): its own sgemm call, then bias,
 * activation and post while it is in cache. */
static void linear_unit(const struct linear_job *j, int m0, int m1, int n0, int n1)
{
    rf_gemm(true, m1 - m0, n1 - n0, j->K, 1.0f, j->X + (size_t)m0 * j->K, j->K,
            j->W + (size_t)n0 * j->K, j->K, 0.0f, j->Y + (size_t)m0 * j->N + n0, j->N);
    rf_bias_act(j->Y + (size_t)m0 * j->N + n0, m1 - m0, n1 - n0, j->N, j->b ? j->b + n0 : NULL,
                j->act);
    rf_block_post_run(j->post, j->Y, j->N, m0, m1, n0, n1);
}

static void linear_task(void *arg, int block, int thread)
{
    (void)thread;
    const struct linear_job *j = arg;
    const rf_partition *p = &j->plan;
    rf_rect rects[3];
    int n = rf_partition_block(p, block, rects);
    /* the rows of whole grains, when their units may merge */
    bool merge = (long)p->row_grain * p->panel * p->K >= F32_MERGE_MIN_MACS;
    int whole = merge ? p->M / p->row_grain * p->row_grain : 0;
    for (int r = 0; r < n; r++) {
        int rows_end = rects[r].m1 < whole ? rects[r].m1 : whole;
        if (rows_end > rects[r].m0)
            linear_unit(j, rects[r].m0, rows_end, rects[r].n0, rects[r].n1);
        int m_start = rects[r].m0 > rows_end ? rects[r].m0 : rows_end;
        for (int n0 = rects[r].n0; n0 < rects[r].n1; n0 += p->panel)
            for (int m0 = m_start; m0 < rects[r].m1; m0 += p->row_grain) {
                int n1 = n0 + p->panel < rects[r].n1 ? n0 + p->panel : rects[r].n1;
                int m1 = m0 + p->row_grain < rects[r].m1 ? m0 + p->row_grain : rects[r].m1;
                linear_unit(j, m0, m1, n0, n1);
            }
    }
}

void rf_linear(const rf_parallel *pool, const float *X, int M, int K, const float *W, const float *b,
               int N, rf_activation act, const rf_block_post *post, float *Y)
{
    struct linear_job job = {X, W, b, K, N, act, post, Y,
                             rf_linear_partition(M, N, K, rf_parallel_threads(pool))};
    rf_parallel_run(pool, job.plan.n_blocks, linear_task, &job);
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
