/*
 * gemm_bf16.c — the bf16 product's driver (see gemm_bf16.h for the packed
 * weight layout and the rule that picks a build): the split over
 * threads, the single-thread pieces attention uses, and the naive twin,
 * on the build the kernels' table chooses (backend.h). Rounding inputs
 * and packing weights are the chosen build's members
 * (gemm_bf16_round.c).
 */
#include "kernels/gemm_bf16.h"
#include "kernels/activations.h"
#include "kernels/backend.h"
#include "kernels/fp16.h"
#include "kernels/cpu.h"
#include "kernels/gemm_bf16_backend.h"
#include "kernels/linalg.h"
#include "kernels/simd.h"

#include <string.h>

#define NR 32    /* the kernels' column blocks: N is padded to a multiple */

size_t rf_bf16_packed_size(int N, int K)
{
    return (size_t)rf_bf16_padded_n(N) * (size_t)rf_bf16_k_pairs(K) * 2;
}

size_t rf_bf16_scratch_size(int M, int K)
{
    return (size_t)M * (size_t)rf_bf16_k_pairs(K) * 2;
}

bool rf_bf16_supported(void)
{
    return rf_backend_supported(RF_OP_BF16);
}

/* The build in use (backend.h). */
static const rf_bf16_ops *ops(void)
{
    return rf_backend_get(RF_OP_BF16)->bf16;
}

bool rf_bf16_attention_fast(void)
{
    return rf_bf16_supported() && ops()->attention_fast;
}

static rf_bf16_gemm_fn *gemm_kernel(void)
{
    return ops()->gemm;
}

/* Several blocks per thread where they stay large: a thread the host
 * stops leaves its later blocks to the others (partition.h). */
rf_partition rf_linear_bf16_partition(int M, int N, int K, int n_threads)
{
    return rf_partition_plan_shared(M, N, K, NR, 1, n_threads, RF_PARTITION_MAX_PER_THREAD);
}

void rf_bf16_prepare_rows(const float *X, int K, int r0, int r1, uint16_t *scratch)
{
    ops()->packing->round_rows(X, (size_t)K, K, 1.0f, r0, r1, scratch);
}

/* Rows of X rounded into Xb, in n_blocks blocks of rows. */
struct round_job {
    const float *X;
    int M, K, n_blocks;
    uint16_t *Xb;
};

/* The product of rounded rows Xb and packed W, shared by plan. */
struct bf16_job {
    const uint16_t *Xb, *W;
    const float *b;
    int K, N;
    rf_activation act;
    const rf_block_post *post;
    float *Y;
    rf_bf16_gemm_fn *gemm;
    rf_partition plan;
};

/* ==== Threads ==== */

static void round_task(void *arg, int block, int thread)
{
    (void)thread;
    const struct round_job *j = arg;
    int s, n;
    rf_block_range(j->M, j->n_blocks, block, 1, &s, &n);
    rf_bf16_prepare_rows(j->X, j->K, s, s + n, j->Xb);
}

/* The kernels sum each output over K in one order whatever the block
 * (gemm_bf16.h), so any plan gives the same output. */
static void gemm_task(void *arg, int block, int thread)
{
    (void)thread;
    const struct bf16_job *j = arg;
    rf_rect rects[3];
    int n = rf_partition_block(&j->plan, block, rects);
    for (int r = 0; r < n; r++)
        j->gemm(j->Xb, j->K, rects[r].m0, rects[r].m1, j->W, rects[r].n0, rects[r].n1, j->b,
                j->act, j->post, j->Y, j->N);
}

void rf_linear_bf16_prepared(const rf_parallel *pool, int M, int K, const uint16_t *W_packed,
                             const float *b, int N, rf_activation act, const rf_block_post *post,
                             float *Y, const uint16_t *scratch)
{
    struct bf16_job job = {.Xb = scratch, .W = W_packed, .b = b, .K = K, .N = N, .act = act,
                           .post = post, .Y = Y, .gemm = gemm_kernel(),
                           .plan = rf_linear_bf16_partition(M, N, K, rf_parallel_threads(pool))};
    rf_parallel_run(pool, job.plan.n_blocks, gemm_task, &job);
}

void rf_linear_bf16(const rf_parallel *pool, const float *X, int M, int K, const uint16_t *W_packed,
                    const float *b, int N, rf_activation act, const rf_block_post *post, float *Y,
                    uint16_t *scratch)
{
    int n_threads = rf_parallel_threads(pool);
    /* a block may read any row: round them all first, in blocks of rows
       that a held thread can leave to the others */
    int blocks = RF_PARTITION_MAX_PER_THREAD * n_threads < M ? RF_PARTITION_MAX_PER_THREAD * n_threads
                                                             : M;
    struct round_job round = {.X = X, .M = M, .K = K, .n_blocks = n_threads < M ? blocks : 1,
                              .Xb = scratch};
    rf_parallel_run(pool, round.n_blocks, round_task, &round);
    rf_linear_bf16_prepared(pool, M, K, W_packed, b, N, act, post, Y, scratch);
}

void rf_bf16_round(const float *X, int M, int K, size_t ldx, float scale, uint16_t *out)
{
    ops()->packing->round_rows(X, ldx, K, scale, 0, M, out);
}

void rf_bf16_pack(const float *W, int N, int K, uint16_t *dst)
{
    rf_bf16_pack_rows(W, N, K, (size_t)K, dst);
}

void rf_bf16_pack_rows(const float *W, int N, int K, size_t ldw, uint16_t *dst)
{
    ops()->packing->pack_rows(W, N, K, ldw, dst);
}

void rf_bf16_pack_transposed(const float *V, int K, int N, size_t ldv, uint16_t *dst)
{
    ops()->packing->pack_transposed(V, K, N, ldv, dst);
}

void rf_gemm_bf16(const uint16_t *Xb, int M, int K, const uint16_t *W_packed, int N, float *Y,
                  int ldy)
{
    gemm_kernel()(Xb, K, 0, M, W_packed, 0, N, NULL, RF_ACT_LINEAR, NULL, Y, ldy);
}

void rf_linear_bf16_naive(const float *X, int M, int K, const float *W, const float *b, int N,
                          rf_activation act, float *Y)
{
    for (int i = 0; i < M; i++)
        for (int n = 0; n < N; n++) {
            double sum = 0.0;
            for (int k = 0; k < K; k++)
                sum += (double)rf_bf16_to_f32(rf_f32_to_bf16(X[(size_t)i * K + k])) *
                       (double)rf_bf16_to_f32(rf_f32_to_bf16(W[(size_t)n * K + k]));
            Y[(size_t)i * N + n] = (float)sum;
        }
    rf_bias_act_naive(Y, M, N, N, b, act);
}
