/*
 * attention.c — scaled dot-product attention per (sequence, head, query
 * block), fused over blocks of keys with an online softmax (see
 * attention.h). HF: RoFormerSelfAttention.forward.
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
    int ld, out_ld, B, L, H, Dh; /* packed: L is the longest sequence */
    float scale;
    float *scores, *out;
    uint16_t *bf16;           /* bf16 scratch, or NULL for f32 */
};

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

/* Elements rounded up to 32 uint16 (64 bytes). */
static size_t line_up(size_t n)
{
    return (n + 31) / 32 * 32;
}

static int key_blocks(int L)
{
    return (L + RF_ATTN_KEY_BLOCK - 1) / RF_ATTN_KEY_BLOCK;
}

/* uint16 elements of one key block of one head packed, K then V, for
 * sequences up to L: every block gets the room of the largest. */
static size_t kv_block_size(int L, int Dh)
{
    int bk = min_int(L, RF_ATTN_KEY_BLOCK);
    return line_up(rf_bf16_packed_size(bk, Dh)) + line_up(rf_bf16_packed_size(Dh, bk));
}

size_t rf_attention_bf16_kv_size(int B, int L, int H, int Dh)
{
    return (size_t)B * (size_t)key_blocks(L) * (size_t)H * kv_block_size(L, Dh);
}

size_t rf_attention_bf16_scratch(int L, int Dh)
{
    int bq = min_int(L, RF_ATTN_QUERY_BLOCK), bk = min_int(L, RF_ATTN_KEY_BLOCK);
    return line_up(rf_bf16_scratch_size(bq, Dh)) + line_up(rf_bf16_scratch_size(bq, bk)) +
           line_up(2 * (size_t)bq * (size_t)Dh);
}

/* Key block `block` (numbered over the sequences of the batch) of head h,
 * packed: K, then V at + line_up(rf_bf16_packed_size(keys, Dh)). */
static uint16_t *kv_block(const struct attention_job *j, int block, int h)
{
    return j->bf16 + ((size_t)block * (size_t)j->H + (size_t)h) * kv_block_size(j->L, j->Dh);
}

/* One thread's bf16 scratch (rf_attention_bf16_scratch, after the packed
 * K and V): rounded Q block, rounded P, and P V of a key block in f32. */
struct bf16_scratch {
    uint16_t *q, *p;
    float *pv;
};

static struct bf16_scratch bf16_scratch_of(const struct attention_job *j, int thread)
{
    int bq = min_int(j->L, RF_ATTN_QUERY_BLOCK), bk = min_int(j->L, RF_ATTN_KEY_BLOCK);
    struct bf16_scratch s;
    s.q = j->bf16 + rf_attention_bf16_kv_size(j->B, j->L, j->H, j->Dh) +
          (size_t)thread * rf_attention_bf16_scratch(j->L, j->Dh);
    s.p = s.q + line_up(rf_bf16_scratch_size(bq, j->Dh));
    s.pv = (float *)(void *)(s.p + line_up(rf_bf16_scratch_size(bq, bk)));
    return s;
}

/* Packs key block `kb` of a sequence (L keys from row row0, its first key
 * block numbered first_block) and head h: once per layer, for all the
 * sequence's query blocks. */
static void pack_kv_block(const struct attention_job *j, size_t row0, int L, int first_block,
                          int h, int kb)
{
    int k0 = kb * RF_ATTN_KEY_BLOCK, keys = min_int(L - k0, RF_ATTN_KEY_BLOCK);
    size_t at = (row0 + (size_t)k0) * j->ld + (size_t)h * j->Dh;
    uint16_t *kp = kv_block(j, first_block + kb, h);
    rf_bf16_pack_rows(j->k + at, keys, j->Dh, (size_t)j->ld, kp);
    rf_bf16_pack_transposed(j->v + at, keys, j->Dh, (size_t)j->ld,
                            kp + line_up(rf_bf16_packed_size(keys, j->Dh)));
}

/* y[r][0..n) *= by[r]. */
static void scale_rows(float *y, int rows, int n, int ld, const float *by)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < n; c++)
            y[(size_t)r * ld + c] *= by[r];
}

/* y[r][0..n) = y[r][0..n) * by[r] + x[r][0..n) (x rows xld apart). */
static void scale_add_rows(float *y, int rows, int n, int ld, const float *by, const float *x,
                           int xld)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < n; c++)
            y[(size_t)r * ld + c] = y[(size_t)r * ld + c] * by[r] + x[(size_t)r * xld + c];
}

/* One (sequence, head, query block): the sequence starts at row `row0` and
 * has `L` keys (in bf16 packed from key block first_block on); `mask` is
 * its key mask or NULL when every key is real. The
 * output rows accumulate P V against the running maximum of each row. */
static void attend_block(const struct attention_job *j, size_t row0, int L, int first_block,
                         const float *mask, int h, int block, int thread)
{
    int Dh = j->Dh, q0 = block * RF_ATTN_QUERY_BLOCK;
    int rows = min_int(L - q0, RF_ATTN_QUERY_BLOCK);
    size_t head = row0 * j->ld + (size_t)h * Dh; /* row 0 of this sequence and head */
    const float *query = j->q + head + (size_t)q0 * j->ld;
    float *out = j->out + (row0 + (size_t)q0) * j->out_ld + (size_t)h * Dh;
    float *s = j->scores + (size_t)thread * rf_attention_scratch(j->L);
    struct bf16_scratch b = {0};
    if (j->bf16) {
        b = bf16_scratch_of(j, thread);
        rf_bf16_round(query, rows, Dh, (size_t)j->ld, j->scale, b.q);
    }
    float row_max[RF_ATTN_QUERY_BLOCK], row_sum[RF_ATTN_QUERY_BLOCK], rescale[RF_ATTN_QUERY_BLOCK];
    for (int r = 0; r < rows; r++) {
        row_max[r] = -INFINITY;
        row_sum[r] = 0.0f;
    }
    for (int k0 = 0; k0 < L; k0 += RF_ATTN_KEY_BLOCK) {
        int keys = min_int(L - k0, RF_ATTN_KEY_BLOCK);
        const float *key = j->k + head + (size_t)k0 * j->ld;
        const float *value = j->v + head + (size_t)k0 * j->ld;
        /* scores (rows x keys) = scale * Q_block . K_block^T */
        const uint16_t *kp = j->bf16 ? kv_block(j, first_block + k0 / RF_ATTN_KEY_BLOCK, h) : NULL;
        if (j->bf16) {
            rf_gemm_bf16(b.q, rows, Dh, kp, keys, s, keys);
        } else {
            rf_gemm(true, rows, keys, Dh, j->scale, query, j->ld, key, j->ld, 0.0f, s, keys);
        }
        /* P = exp(scores + mask - running maximum), the sums carried on
           (bf16: of P rounded, as the product reads it) */
        rf_softmax_rows_online(s, rows, keys, keys, mask ? mask + k0 : NULL, row_max, row_sum,
                               rescale, j->bf16 != NULL);
        /* out = out * rescale + P . V_block (the first block: out = P . V_block) */
        if (j->bf16) {
            const uint16_t *vp = kp + line_up(rf_bf16_packed_size(keys, Dh));
            rf_bf16_round(s, rows, keys, (size_t)keys, 1.0f, b.p);
            rf_gemm_bf16(b.p, rows, keys, vp, Dh, k0 ? b.pv : out, k0 ? Dh : j->out_ld);
            if (k0)
                scale_add_rows(out, rows, Dh, j->out_ld, rescale, b.pv, Dh);
        } else {
            if (k0)
                scale_rows(out, rows, Dh, j->out_ld, rescale);
            rf_gemm(false, rows, Dh, keys, 1.0f, s, keys, value, j->ld, k0 ? 1.0f : 0.0f, out,
                    j->out_ld);
        }
    }
    /* the softmax's division, on Dh values a row instead of L */
    for (int r = 0; r < rows; r++)
        row_sum[r] = 1.0f / row_sum[r];
    scale_rows(out, rows, Dh, j->out_ld, row_sum);
}

static int query_blocks(int L)
{
    return (L + RF_ATTN_QUERY_BLOCK - 1) / RF_ATTN_QUERY_BLOCK;
}

/* Padded batch: task numbers run over sequence, then head, then block
 * (query blocks to attend, or key blocks to pack). */
static void attention_task(void *arg, int task, int thread)
{
    const struct attention_job *j = arg;
    int L = j->L, n_blocks = query_blocks(L);
    int block = task % n_blocks, h = task / n_blocks % j->H, b = task / n_blocks / j->H;
    attend_block(j, (size_t)b * L, L, b * key_blocks(L), j->mask_bias + (size_t)b * L, h, block,
                 thread);
}

static void pack_task(void *arg, int task, int thread)
{
    (void)thread;
    const struct attention_job *j = arg;
    int L = j->L, n_blocks = key_blocks(L);
    int block = task % n_blocks, h = task / n_blocks % j->H, b = task / n_blocks / j->H;
    pack_kv_block(j, (size_t)b * L, L, b * n_blocks, h, block);
}

/* Packed sequences: the same order, each sequence with as many blocks as
 * its own length needs; finds the sequence of `*task` and makes *task the
 * number within it. */
static int packed_sequence(const struct attention_job *j, int (*blocks)(int), int *task,
                           int *first_key_block)
{
    int b = 0;
    *first_key_block = 0;
    for (;; b++) {
        int L = j->seq_off[b + 1] - j->seq_off[b];
        if (*task < j->H * blocks(L))
            return b;
        *task -= j->H * blocks(L);
        *first_key_block += key_blocks(L);
    }
}

static void attention_packed_task(void *arg, int task, int thread)
{
    const struct attention_job *j = arg;
    int first, b = packed_sequence(j, query_blocks, &task, &first);
    int L = j->seq_off[b + 1] - j->seq_off[b], n_blocks = query_blocks(L);
    attend_block(j, (size_t)j->seq_off[b], L, first, NULL, task / n_blocks, task % n_blocks,
                 thread);
}

static void pack_packed_task(void *arg, int task, int thread)
{
    (void)thread;
    const struct attention_job *j = arg;
    int first, b = packed_sequence(j, key_blocks, &task, &first);
    int L = j->seq_off[b + 1] - j->seq_off[b], n_blocks = key_blocks(L);
    pack_kv_block(j, (size_t)j->seq_off[b], L, first, task / n_blocks, task % n_blocks);
}

void rf_attention(const rf_parallel *par, const float *q, const float *k, const float *v, int ld,
                  const float *mask_bias, int B, int L, int H, int Dh, float *scores,
                  uint16_t *bf16_scratch, float *out, int out_ld)
{
    struct attention_job job = {q, k, v, mask_bias, NULL, ld, out_ld, B, L, H, Dh,
                                (float)(1.0 / sqrt((double)Dh)), scores, out, bf16_scratch};
    if (bf16_scratch)
        rf_parallel_run(par, B * H * key_blocks(L), pack_task, &job);
    rf_parallel_run(par, B * H * query_blocks(L), attention_task, &job);
}

void rf_attention_packed(const rf_parallel *par, const float *q, const float *k, const float *v, int ld,
                         const int32_t *seq_off, int B, int H, int Dh, float *scores,
                         uint16_t *bf16_scratch, float *out, int out_ld)
{
    struct attention_job job = {q, k, v, NULL, seq_off, ld, out_ld, B, 0, H, Dh,
                                (float)(1.0 / sqrt((double)Dh)), scores, out, bf16_scratch};
    int n_tasks = 0, n_packs = 0;
    for (int b = 0; b < B; b++) {
        int L = seq_off[b + 1] - seq_off[b];
        job.L = L > job.L ? L : job.L;
        n_tasks += H * query_blocks(L);
        n_packs += H * key_blocks(L);
    }
    if (bf16_scratch)
        rf_parallel_run(par, n_packs, pack_packed_task, &job);
    rf_parallel_run(par, n_tasks, attention_packed_task, &job);
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
