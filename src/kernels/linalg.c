/*
 * linalg.c — sgemm wrapper, the threaded Linear layer, and their naive
 * twins (see linalg.h for the weight layout).
 *
 * Threading: OpenBLAS runs at one thread; rf_linear cuts the product into
 * units whose calls depend on each segment of rows alone (below) and
 * hands them to the pool's threads, so every output element is the same
 * whatever the batch around its segment, the number of threads, and the
 * kernel OpenBLAS picked.
 */
#include "kernels/linalg.h"
#include "kernels/activations.h"

#include <cblas.h>
#include <stddef.h>

/* The f32 product's calls: each segment of rows (linalg.h) is cut into
 * chunks of F32_ROW_GRAIN rows counted from its own first row (the last
 * one shorter), and the columns into panels whose width depends on the
 * chunk's rows (chunk_panel). A unit, one chunk by one panel,
 * is one sgemm call. OpenBLAS's kernels sum a row differently by where it
 * sits in a call (its Haswell kernel: by row index modulo 12, and again in
 * a call's last rows) and by the call's shape (small-matrix paths), so
 * the one way to give a row the same bits in every batch, on every core,
 * is to give it the same call: a unit's shape and its rows' places in it
 * depend on the segment's length and the row's index in the segment
 * alone, never on the rows around the segment or the number of threads. */
#define F32_ROW_GRAIN 128
#define F32_PANEL 128
#define F32_SHORT_ROWS 32
#define F32_PANEL_SHORT 64
#define F32_PANEL_MID 512

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

struct linear_job {
    const float *X, *W, *b;
    int M, K, N;
    rf_activation act;
    const rf_block_post *post;
    float *Y;
    const int32_t *seg; /* [n_seg + 1] segment starts, seg[n_seg] = M */
    int n_seg;
};

/* The tasks: row block r (F32_ROW_GRAIN rows) and panel q, task q x
 * row_blocks + r, q up to the narrow panels' count; a chunk of wide
 * panels has half as many, and leaves the tasks past them empty. Tasks
 * of one panel follow each other, so its weights stay in cache. */
static int row_blocks(int M)
{
    return (M + F32_ROW_GRAIN - 1) / F32_ROW_GRAIN;
}

/* A chunk's panel width. Every call packs its whole weight panel, so a
 * batch of short sequences packs the weights once per sequence: chunks of
 * F32_SHORT_ROWS to F32_ROW_GRAIN rows take wide panels, fewer calls
 * (performance.md, "Batch invariance: the cost"); the shortest keep
 * narrow ones, more calls for the threads to share one short text. */
static int chunk_panel(int rows)
{
    return rows < F32_SHORT_ROWS ? F32_PANEL_SHORT : rows < F32_ROW_GRAIN ? F32_PANEL_MID : F32_PANEL;
}

static int panel_count(int rows, int N)
{
    int panel = chunk_panel(rows);
    return (N + panel - 1) / panel;
}

static int task_count(int M, int N)
{
    return row_blocks(M) * panel_count(1, N);
}

/* Segment s's rows: [start, end). With no segments, all M rows are one. */
static void segment_rows(const struct linear_job *j, int s, int *start, int *end)
{
    *start = j->seg ? j->seg[s] : 0;
    *end = j->seg ? j->seg[s + 1] : j->M;
}

/* The segment holding row r (the last one starting at or before it). */
static int segment_of(const struct linear_job *j, int r)
{
    int lo = 0, hi = j->n_seg - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        int start, end;
        segment_rows(j, mid, &start, &end);
        if (start <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* One unit: rows [m0, m1) of one chunk by its panel q, its own sgemm call,
 * then bias, activation and post while it is in cache. */
static void linear_unit(const struct linear_job *j, int m0, int m1, int q)
{
    int panel = chunk_panel(m1 - m0);
    int n0 = q * panel, n1 = n0 + panel < j->N ? n0 + panel : j->N;
    rf_gemm(true, m1 - m0, n1 - n0, j->K, 1.0f, j->X + (size_t)m0 * j->K, j->K,
            j->W + (size_t)n0 * j->K, j->K, 0.0f, j->Y + (size_t)m0 * j->N + n0, j->N);
    rf_bias_act(j->Y + (size_t)m0 * j->N + n0, m1 - m0, n1 - n0, j->N, j->b ? j->b + n0 : NULL,
                j->act);
    rf_block_post_run(j->post, j->Y, j->N, m0, m1, n0, n1);
}

/* Task (row block, panel q): panel q of every chunk that starts in the
 * block's rows, at most one chunk a segment. Which thread runs a task
 * changes no call. */
static void linear_task(void *arg, int task, int thread)
{
    (void)thread;
    const struct linear_job *j = arg;
    int blocks = row_blocks(j->M), q = task / blocks;
    int r0 = task % blocks * F32_ROW_GRAIN;
    int r1 = r0 + F32_ROW_GRAIN < j->M ? r0 + F32_ROW_GRAIN : j->M;
    for (int s = segment_of(j, r0); s < j->n_seg; s++) {
        int start, end;
        segment_rows(j, s, &start, &end);
        if (start >= r1)
            break;
        int c = start >= r0 ? start
                            : start + (r0 - start + F32_ROW_GRAIN - 1) / F32_ROW_GRAIN * F32_ROW_GRAIN;
        if (c >= r1 || c >= end)
            continue;
        int c1 = c + F32_ROW_GRAIN < end ? c + F32_ROW_GRAIN : end;
        if (q < panel_count(c1 - c, j->N))
            linear_unit(j, c, c1, q);
    }
}

void rf_linear(const rf_parallel *pool, const float *X, int M, int K, const float *W, const float *b,
               int N, rf_activation act, const rf_block_post *post, const rf_row_segments *rows,
               float *Y)
{
    if (M <= 0)
        return;
    struct linear_job job = {X, W, b, M, K, N, act, post, Y, rows ? rows->start : NULL,
                             rows ? rows->n : 1};
    rf_parallel_run(pool, task_count(M, N), linear_task, &job);
}

int64_t rf_linear_max_macs(int M, int N, int K, int n_threads)
{
    if (M <= 0 || n_threads < 1)
        return 0;
    /* the threads' loads so far; each task goes to the least loaded */
    int64_t load[RF_MAX_THREADS] = {0}, max = 0;
    if (n_threads > RF_MAX_THREADS)
        n_threads = RF_MAX_THREADS;
    int blocks = row_blocks(M);
    for (int t = 0; t < task_count(M, N); t++) {
        int rows = M - t % blocks * F32_ROW_GRAIN;
        rows = rows < F32_ROW_GRAIN ? rows : F32_ROW_GRAIN;
        int q = t / blocks, panel = chunk_panel(rows);
        if (q >= panel_count(rows, N))
            continue;
        int cols = N - q * panel < panel ? N - q * panel : panel;
        int least = 0;
        for (int i = 1; i < n_threads; i++)
            least = load[i] < load[least] ? i : least;
        load[least] += (int64_t)rows * cols * K;
        max = load[least] > max ? load[least] : max;
    }
    return max;
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
