/*
 * attention.c — scaled dot-product attention per (sequence, head, query
 * block) through sgemm (see attention.h). HF: RoFormerSelfAttention.forward.
 *
 * Padded query rows are computed like real ones (they attend to the real
 * keys), so outputs at padded positions equal HF's. The packed variant has
 * no padding: each sequence attends over its own rows only.
 */
#include "model/attention.h"
#include "kernels/gemm_bf16.h"
#include "kernels/linalg.h"
#include "kernels/softmax.h"

#include <math.h>
#include <stddef.h>

struct attention_job {
    const float *q, *k, *v, *mask_bias;
    const int32_t *seq_off; /* packed: sequence b is rows [seq_off[b], seq_off[b+1]) */
    int ld, out_ld, L, H, Dh; /* packed: L is the longest sequence */
    float scale;
    float *scores, *out;
    uint16_t *bf16;           /* bf16 scratch, or NULL for f32 */
};

/* y[r][0..n) *= by[r]: the softmax's division, applied to P V's rows. */
static void scale_rows(float *y, int rows, int n, int ld, const float *by)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < n; c++)
            y[(size_t)r * ld + c] *= by[r];
}

/* One (sequence, head, query block): the sequence starts at row `row0` and
 * has `L` keys; `mask` is its key mask or NULL when every key is real. */
static void attend_block(const struct attention_job *j, size_t row0, int L, const float *mask,
                         int h, int block, int scratch_stride, int thread)
{
    int q0 = block * RF_ATTN_QUERY_BLOCK;
    int rows = L - q0 < RF_ATTN_QUERY_BLOCK ? L - q0 : RF_ATTN_QUERY_BLOCK;
    size_t head = row0 * j->ld + (size_t)h * j->Dh; /* row 0 of this sequence and head */
    size_t query = head + (size_t)q0 * j->ld;
    size_t out = (row0 + (size_t)q0) * j->out_ld + (size_t)h * j->Dh;
    float *s = j->scores + (size_t)thread * scratch_stride;
    /* pass 1: scores (rows x L) = scale * Q_block . K_bh^T */
    rf_gemm(true, rows, L, j->Dh, j->scale, j->q + query, j->ld, j->k + head, j->ld, 0.0f, s, L);
    /* pass 2: (masked) softmax over keys, but for the division by the sum */
    float inv_sum[RF_ATTN_QUERY_BLOCK];
    rf_softmax_rows_exp(s, rows, L, L, mask, inv_sum);
    /* pass 3: context (rows x Dh) = P . V_bh, each row then divided by its sum */
    rf_gemm(false, rows, j->Dh, L, 1.0f, s, L, j->v + head, j->ld, 0.0f, j->out + out,
            j->out_ld);
    scale_rows(j->out + out, rows, j->Dh, j->out_ld, inv_sum);
}

size_t rf_attention_bf16_scratch(int L, int Dh)
{
    return rf_bf16_packed_size(L, Dh) + rf_bf16_packed_size(Dh, L) +
           rf_bf16_scratch_size(RF_ATTN_QUERY_BLOCK, Dh) + rf_bf16_scratch_size(RF_ATTN_QUERY_BLOCK, L);
}

/* bf16: one (sequence, head), K and V packed once for every query block;
 * L keys from row row0, Lmax the longest sequence (sizes the scratch). */
static void attend_head_bf16(const struct attention_job *j, size_t row0, int L, int Lmax,
                             const float *mask, int h, int thread)
{
    int Dh = j->Dh;
    size_t head = row0 * j->ld + (size_t)h * Dh;
    uint16_t *kp = j->bf16 + (size_t)thread * rf_attention_bf16_scratch(Lmax, Dh);
    uint16_t *vp = kp + rf_bf16_packed_size(Lmax, Dh);
    uint16_t *qb = vp + rf_bf16_packed_size(Dh, Lmax);
    uint16_t *pb = qb + rf_bf16_scratch_size(RF_ATTN_QUERY_BLOCK, Dh);
    float *s = j->scores + (size_t)thread * rf_attention_scratch(Lmax);
    rf_bf16_pack_rows(j->k + head, L, Dh, (size_t)j->ld, kp);
    rf_bf16_pack_transposed(j->v + head, L, Dh, (size_t)j->ld, vp);
    for (int q0 = 0; q0 < L; q0 += RF_ATTN_QUERY_BLOCK) {
        int rows = L - q0 < RF_ATTN_QUERY_BLOCK ? L - q0 : RF_ATTN_QUERY_BLOCK;
        rf_bf16_round(j->q + head + (size_t)q0 * j->ld, rows, Dh, (size_t)j->ld, j->scale, qb);
        float inv_sum[RF_ATTN_QUERY_BLOCK];
        float *out = j->out + (row0 + (size_t)q0) * j->out_ld + (size_t)h * Dh;
        rf_gemm_bf16(qb, rows, Dh, kp, L, s, L);
        rf_softmax_rows_exp(s, rows, L, L, mask, inv_sum);
        rf_bf16_round(s, rows, L, (size_t)L, 1.0f, pb);
        rf_gemm_bf16(pb, rows, L, vp, Dh, out, j->out_ld);
        scale_rows(out, rows, Dh, j->out_ld, inv_sum);
    }
}

static int query_blocks(int L)
{
    return (L + RF_ATTN_QUERY_BLOCK - 1) / RF_ATTN_QUERY_BLOCK;
}

static void attention_task(void *arg, int task, int thread)
{
    const struct attention_job *j = arg;
    if (j->bf16) { /* task = (sequence, head) */
        int b = task / j->H;
        attend_head_bf16(j, (size_t)b * j->L, j->L, j->L, j->mask_bias + (size_t)b * j->L,
                         task % j->H, thread);
        return;
    }
    int L = j->L, n_blocks = query_blocks(L);
    int block = task % n_blocks, h = task / n_blocks % j->H, b = task / n_blocks / j->H;
    attend_block(j, (size_t)b * L, L, j->mask_bias + (size_t)b * L, h, block,
                 (int)rf_attention_scratch(L), thread);
}

/* Packed sequences: task numbers run over sequence, then head, then query
 * block, each sequence with as many blocks as its own length needs. */
static void attention_packed_task(void *arg, int task, int thread)
{
    const struct attention_job *j = arg;
    if (j->bf16) { /* task = (sequence, head) */
        int b = task / j->H;
        attend_head_bf16(j, (size_t)j->seq_off[b], j->seq_off[b + 1] - j->seq_off[b], j->L, NULL,
                         task % j->H, thread);
        return;
    }
    int b = 0, L = 0, n_blocks = 0;
    for (;; b++) {
        L = j->seq_off[b + 1] - j->seq_off[b];
        n_blocks = query_blocks(L);
        if (task < j->H * n_blocks)
            break;
        task -= j->H * n_blocks;
    }
    attend_block(j, (size_t)j->seq_off[b], L, NULL, task / n_blocks, task % n_blocks,
                 (int)rf_attention_scratch(j->L), thread);
}

void rf_attention(rf_pool *pool, const float *q, const float *k, const float *v, int ld,
                  const float *mask_bias, int B, int L, int H, int Dh, float *scores,
                  uint16_t *bf16_scratch, float *out, int out_ld)
{
    struct attention_job job = {q, k, v, mask_bias, NULL, ld, out_ld, L, H, Dh,
                                (float)(1.0 / sqrt((double)Dh)), scores, out, bf16_scratch};
    rf_pool_run(pool, B * H * (bf16_scratch ? 1 : query_blocks(L)), attention_task, &job);
}

void rf_attention_packed(rf_pool *pool, const float *q, const float *k, const float *v, int ld,
                         const int32_t *seq_off, int B, int H, int Dh, float *scores,
                         uint16_t *bf16_scratch, float *out, int out_ld)
{
    struct attention_job job = {q, k, v, NULL, seq_off, ld, out_ld, 0, H, Dh,
                                (float)(1.0 / sqrt((double)Dh)), scores, out, bf16_scratch};
    int n_tasks = 0;
    for (int b = 0; b < B; b++) {
        int L = seq_off[b + 1] - seq_off[b];
        job.L = L > job.L ? L : job.L;
        n_tasks += H * (bf16_scratch ? 1 : query_blocks(L));
    }
    rf_pool_run(pool, n_tasks, attention_packed_task, &job);
}

void rf_attention_naive(const float *q, const float *k, const float *v, int ld,
                        const float *mask_bias, int B, int L, int H, int Dh, float *scratch,
                        float *out, int out_ld)
{
    double scale = 1.0 / sqrt((double)Dh);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < L; i++) {
                const float *qi = q + ((size_t)b * L + i) * ld + (size_t)h * Dh;
                for (int j = 0; j < L; j++) {
                    const float *kj = k + ((size_t)b * L + j) * ld + (size_t)h * Dh;
                    double dot = 0.0;
                    for (int d = 0; d < Dh; d++)
                        dot += (double)qi[d] * kj[d];
                    scratch[j] = (float)(dot * scale);
                }
                rf_softmax_rows_naive(scratch, 1, L, L, mask_bias + (size_t)b * L);
                float *oi = out + ((size_t)b * L + i) * out_ld + (size_t)h * Dh;
                for (int d = 0; d < Dh; d++) {
                    double sum = 0.0;
                    for (int j = 0; j < L; j++)
                        sum += (double)scratch[j] * v[((size_t)b * L + j) * ld + (size_t)h * Dh + d];
                    oi[d] = (float)sum;
                }
            }
}
