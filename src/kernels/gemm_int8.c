/*
 * gemm_int8.c — the int8 Linear layer's driver (see gemm_int8.h for the
 * scheme and the packed layout): quantizing and packing, the split over
 * threads, and the naive twins, on the build the kernels' table chooses
 * (backend.h), or for a product of fewer rows than the build's min_rows
 * its `small` one.
 */
#include "kernels/gemm_int8.h"
#include "kernels/activations.h"
#include "kernels/backend.h"
#include "kernels/gemm_int8_backend.h"
#include "kernels/linalg.h"
#include "kernels/simd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PANEL RF_INT8_PANEL
static int padded_n(int N)
{
    return (N + PANEL - 1) / PANEL * PANEL;
}

size_t rf_int8_colsum_count(int N)
{
    return (size_t)padded_n(N);
}

size_t rf_int8_packed_size(int N, int K)
{
    return (size_t)padded_n(N) * (size_t)rf_int8_row_bytes(K);
}

/* The scratch: M rows of quantized inputs, then M scales, then M centers. */
size_t rf_int8_scratch_size(int M, int K)
{
    return (size_t)M * (size_t)rf_int8_row_bytes(K) + 2 * (size_t)M * sizeof(float);
}


bool rf_int8_supported(void)
{
    return rf_backend_supported(RF_OP_INT8);
}

/* The backend that runs a product of M rows. */
static const rf_int8_ops *backend_for(int M)
{
    const rf_int8_ops *b = rf_backend_get(RF_OP_INT8)->int8;
    return M < b->min_rows ? b->small : b;
}

static int32_t row_sum(const int8_t *w, int K)
{
    if (rf_int8_supported())
        return rf_backend_get(RF_OP_INT8)->int8->operands->row_sum(w, K);
    int32_t sum = 0;
    for (int k = 0; k < K; k++)
        sum += w[k];
    return sum;
}

/* ==== Quantizing and packing ==== */

/* One row of K values: q[k] = round(x[k] / scale); returns the scale. */
static float quantize_row(const float *x, int K, int8_t *q)
{
    float max = 0.0f;
    for (int k = 0; k < K; k++)
        if (fabsf(x[k]) > max)
            max = fabsf(x[k]);
    float inv = max > 0.0f ? 127.0f / max : 0.0f;
    for (int k = 0; k < K; k++)
        q[k] = (int8_t)nearbyintf(x[k] * inv);
    return max / 127.0f;
}

float rf_int8_quantize_row_naive(const float *x, int K, int8_t *q, float *center)
{
    float min = x[0], max = x[0];
    for (int k = 1; k < K; k++) {
        min = x[k] < min ? x[k] : min;
        max = x[k] > max ? x[k] : max;
    }
    float c = 0.5f * (max + min), half = 0.5f * (max - min);
    float inv = half > 0.0f ? 127.0f / half : 0.0f;
    for (int k = 0; k < K; k++)
        q[k] = (int8_t)nearbyintf((x[k] - c) * inv);
    for (int k = K; k < rf_int8_row_bytes(K); k++)
        q[k] = 0;
    *center = c;
    return half / 127.0f;
}

void rf_int8_quantize_rows(const float *W, int N, int K, size_t ldw, int8_t *Wq, float *scale)
{
    for (int n = 0; n < N; n++)
        scale[n] = quantize_row(W + (size_t)n * ldw, K, Wq + (size_t)n * K);
}

void rf_int8_dequantize_rows(const int8_t *Wq, const float *scale, size_t N, size_t K, float *out)
{
    for (size_t n = 0; n < N; n++)
        for (size_t k = 0; k < K; k++)
            out[n * K + k] = (float)Wq[n * K + k] * scale[n];
}

void rf_int8_pack_rows(const int8_t *Wq, int n0, int n, int K, size_t ldw, int8_t *dst,
                       int32_t *colsum)
{
    size_t panel_bytes = (size_t)rf_int8_row_bytes(K) * PANEL;
    int whole = K / 4 * 4;
    /* one panel's rows at a time, in the panel's order: each 4 inputs of
       PANEL channels are one 64-byte line of the panel, written whole */
    for (int c0 = n0; c0 < n0 + n;) {
        int c1 = (c0 / PANEL + 1) * PANEL < n0 + n ? (c0 / PANEL + 1) * PANEL : n0 + n;
        int8_t *panel = dst + (size_t)(c0 / PANEL) * panel_bytes;
        const int8_t *rows[PANEL];
        int first = c0 % PANEL, count = c1 - c0;
        for (int j = 0; j < count; j++)
            rows[j] = Wq + (size_t)(c0 + j - n0) * ldw;
        for (int k = 0; k < whole; k += 4) {
            int8_t *line = panel + (size_t)k * PANEL + (size_t)first * 4;
            for (int j = 0; j < count; j++)
                memcpy(line + j * 4, rows[j] + k, 4);
        }
        for (int col = c0; col < c1; col++) {
            const int8_t *w = Wq + (size_t)(col - n0) * ldw;
            for (int k = whole; k < K; k++)
                panel[(size_t)whole * PANEL + (size_t)(col % PANEL) * 4 + k - whole] = w[k];
            colsum[col] = row_sum(w, K);
        }
        c0 = c1;
    }
}

/* ==== The threaded Linear ==== */

/* Several blocks per thread where they stay large: a thread the host
 * stops leaves its later blocks to the others (partition.h). */
rf_partition rf_linear_int8_partition(int M, int N, int K, int n_threads)
{
    return rf_partition_plan_shared(M, N, K, PANEL, 1, n_threads, RF_PARTITION_MAX_PER_THREAD);
}

/* The scratch's parts for M rows of K inputs: quantized rows, scales,
 * centers. */
static void scratch_parts(void *scratch, int M, int K, int8_t **Xq, float **sx, float **cx)
{
    *Xq = scratch;
    *sx = (float *)(void *)(*Xq + (size_t)M * rf_int8_row_bytes(K));
    *cx = *sx + M;
}

void rf_int8_prepare_rows(const float *X, int M, int K, int r0, int r1, void *scratch)
{
    int8_t *Xq;
    float *sx, *cx;
    scratch_parts(scratch, M, K, &Xq, &sx, &cx);
    backend_for(M)->operands->quantize_rows(X, K, r0, r1, Xq, sx, cx);
}

struct prepare_job {
    const float *X;
    int M, K, n_blocks;
    void *scratch;
};

static void prepare_task(void *arg, int block, int thread)
{
    (void)thread;
    const struct prepare_job *j = arg;
    int s, n;
    rf_block_range(j->M, j->n_blocks, block, 1, &s, &n);
    rf_int8_prepare_rows(j->X, j->M, j->K, s, s + n, j->scratch);
}

struct int8_job {
    rf_int8_product p;
    const rf_int8_ops *backend;
    rf_partition plan;
};

/* Each channel's sum is exact and its scaling the same whatever the
 * block, so any plan gives the same output. */
static void gemm_task(void *arg, int block, int thread)
{
    (void)thread;
    const struct int8_job *j = arg;
    rf_rect rects[3];
    int n = rf_partition_block(&j->plan, block, rects);
    for (int r = 0; r < n; r++)
        j->backend->block(&j->p, rects[r].m0, rects[r].m1, rects[r].n0, rects[r].n1);
}

void rf_linear_int8_prepared(const rf_parallel *pool, int M, int K, const rf_int8_matrix *W,
                             const float *b, int N, rf_activation act, const rf_block_post *post,
                             float *Y, void *scratch)
{
    int8_t *Xq;
    float *sx, *cx;
    scratch_parts(scratch, M, K, &Xq, &sx, &cx);
    struct int8_job job = {
        .p = {.Xq = Xq, .rows = M, .K = K, .sx = sx, .cx = cx, .W = W, .bias = b, .act = act,
              .post = post, .Y = Y, .ldy = N},
        .backend = backend_for(M),
        .plan = rf_linear_int8_partition(M, N, K, rf_parallel_threads(pool)),
    };
    rf_parallel_run(pool, job.plan.n_blocks, gemm_task, &job);
}

void rf_linear_int8(const rf_parallel *pool, const float *X, int M, int K, const rf_int8_matrix *W,
                    const float *b, int N, rf_activation act, const rf_block_post *post, float *Y,
                    void *scratch)
{
    int n_threads = rf_parallel_threads(pool);
    /* a block may read any row: quantize them all first, in blocks of rows
       that a held thread can leave to the others */
    int blocks = RF_PARTITION_MAX_PER_THREAD * n_threads < M ? RF_PARTITION_MAX_PER_THREAD * n_threads
                                                             : M;
    struct prepare_job prepare = {X, M, K, n_threads < M ? blocks : 1, scratch};
    rf_parallel_run(pool, prepare.n_blocks, prepare_task, &prepare);
    rf_linear_int8_prepared(pool, M, K, W, b, N, act, post, Y, scratch);
}

bool rf_gemm_int8_s32(const int8_t *Xq, int M, int K, const rf_int8_matrix *W, int N, int32_t *C)
{
    const rf_int8_ops *b = backend_for(M);
    size_t bytes = (size_t)M * (size_t)rf_int8_row_bytes(K);
    int8_t *flipped = NULL;
    if (b->operands->unsigned_inputs) {
        /* the build reads Xq + 128, as its quantize_rows stores them */
        if (!(flipped = malloc(bytes ? bytes : 1)))
            return false;
        for (size_t i = 0; i < bytes; i++)
            flipped[i] = (int8_t)((uint8_t)Xq[i] ^ 0x80u);
    }
    rf_int8_product p = {.Xq = flipped ? flipped : Xq, .rows = M, .K = K, .W = W,
                         .act = RF_ACT_LINEAR, .C = C, .ldy = N};
    b->block(&p, 0, M, 0, N);
    free(flipped);
    return true;
}

void rf_linear_int8_naive(const float *X, int M, int K, const float *W, const float *b, int N,
                          rf_activation act, float *Y)
{
    int kb = rf_int8_row_bytes(K);
    int8_t xq[kb], wq[kb];
    for (int i = 0; i < M; i++) {
        float cx, sx = rf_int8_quantize_row_naive(X + (size_t)i * K, K, xq, &cx);
        for (int n = 0; n < N; n++) {
            float sw = quantize_row(W + (size_t)n * K, K, wq);
            int64_t sum = 0, colsum = 0;
            for (int k = 0; k < K; k++) {
                sum += (int64_t)xq[k] * wq[k];
                colsum += wq[k];
            }
            Y[(size_t)i * N + n] = (float)sum * (sx * sw) +
                                   (cx * (sw * (float)colsum) + (b ? b[n] : 0.0f));
        }
    }
    rf_bias_act_naive(Y, M, N, N, NULL, act);
}
