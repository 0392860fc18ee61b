/*
 * encoder.c — the RoFormer encoder forward pass on one packed batch
 * (HF RoFormerEmbeddings, RoFormerModel.embeddings_project, RoFormerLayer):
 *
 *   x = LayerNorm(word_emb[id] + type_emb[type])       (no position table)
 *   x = embeddings_project(x)                          when E != D
 *   per layer:
 *     q|k|v = x [Wq;Wk;Wv]^T + [bq;bk;bv]                one product, whose
 *     RoPE on q, k (and v when rotary_value),             epilogue rotates
 *       position = index in its sequence                  each block it finishes
 *     a = softmax(q k^T / sqrt(Dh) + mask) v           per sequence and head
 *     x = LayerNorm(x + a Wo^T + bo)
 *     x = LayerNorm(x + act(x W1^T + b1) W2^T + b2)
 *
 * T = B * L tokens, E embedding_size, D hidden, F intermediate, H heads,
 * Dh = D / H. Padded positions are computed like real ones (HF does too).
 *
 * RoFormer-v2 (hp.norm_type RF_NORM_RMS): every LayerNorm above is the
 * parameter-free x / sqrt(mean(x^2) + eps) instead, and without use_bias
 * the six Linears have no b (no add at all, not a zero one).
 *
 * With skip_padding, a right-padded batch runs packed: the real tokens of
 * every sequence back to back (T = their count), so the linear layers,
 * LayerNorms and RoPE touch no padding, and attention runs per sequence on
 * its own length. The layout is ctx->seq_off either way: sequence b is rows
 * [seq_off[b], seq_off[b+1]) (b * L and L rows each when not packed). The
 * result goes back to the padded layout, zero at padded positions.
 */
#include "model/encoder.h"
#include "model/context.h"
#include "model/attention.h"
#include "kernels/gemm_bf16.h"
#include "kernels/gemm_int8.h"
#include "kernels/layernorm.h"
#include "kernels/linalg.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"
#include "kernels/softmax.h"

#include <string.h>

/* ==== Row-split passes over the pool ==== */

/* Row-wise passes (the norms) cut the T rows into one block per thread,
 * but a pass of fewer than ROWS_SPLIT_MIN floats (a short text's norm, a
 * few microseconds) runs on the calling thread
 * alone: waking the pool and waiting for it would cost as much as the
 * pass, and on a crowded machine far more. Each row's result does not
 * depend on the blocks. */
#define ROWS_SPLIT_MIN (1L << 15)

struct rows_job {
    rf_context *ctx;
    int T, n_blocks;
    float *x;          /* norm: x = LN(x + y) or RMS(x + y) */
    const float *y;
    const float *gamma, *beta;
    int width;
    bool prepare; /* also round / quantize the rows for the next product */
};

static int rows_blocks(const rf_context *ctx, int T, int width)
{
    return (long)T * width < ROWS_SPLIT_MIN ? 1 : rf_pool_threads(ctx->pool);
}

/* RoPE as the Q|K|V product's epilogue (block_post.h): the K heads follow
 * the Q heads in each row (and V the K), so the first 2D columns are
 * rotated (3D with rotary_value), each row at its index in its sequence. */
struct qkv_rope {
    const rf_context *ctx;
    int B;           /* sequences: rows [seq_off[b], seq_off[b + 1]) */
    int rotated;     /* columns rotated */
    int Dh;
};

static void qkv_rope_block(const void *arg, float *Y, int ldy, int m0, int m1, int n0, int n1)
{
    const struct qkv_rope *r = arg;
    const int32_t *off = r->ctx->seq_off;
    if (n1 > r->rotated)
        n1 = r->rotated;
    if (n0 >= n1)
        return;
    int lo = 0, hi = r->B - 1; /* the sequence of row m0: the last b with off[b] <= m0 */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (off[mid] <= m0)
            lo = mid;
        else
            hi = mid - 1;
    }
    for (int b = lo, m = m0; m < m1; b++) {
        int end = off[b + 1] < m1 ? off[b + 1] : m1;
        if (end > m)
            rf_rope_block(Y, ldy, m, end - m, m - off[b], n0, n1, r->Dh, r->ctx->rope_sin,
                          r->ctx->rope_cos);
        m = end > m ? end : m;
    }
}

/* Rounds (bf16) or quantizes (int8) rows [r0, r1) of X (M x K), the
 * input of the context's next layer product, into its scratch. */
static void prepare_rows(rf_context *ctx, const float *X, int M, int K, int r0, int r1)
{
    if (ctx->bf16_layers)
        rf_bf16_prepare_rows(X, K, r0, r1, ctx->x_bf16);
    else if (ctx->int8_layers)
        rf_int8_prepare_rows(X, M, K, r0, r1, ctx->x_int8);
}

static void add_norm_task(void *arg, int block, int thread)
{
    (void)thread;
    const struct rows_job *j = arg;
    int start, len;
    rf_block_range(j->T, j->n_blocks, block, 1, &start, &len);
    size_t off = (size_t)start * j->width;
    const rf_hparams *hp = &j->ctx->model->hp;
    const float *y = j->y ? j->y + off : NULL;
    if (hp->norm_type == RF_NORM_RMS)
        rf_add_rmsnorm(j->x + off, y, len, j->width, hp->layer_norm_eps);
    else
        rf_add_layernorm(j->x + off, y, len, j->width, j->gamma, j->beta, hp->layer_norm_eps);
    if (j->prepare)
        prepare_rows(j->ctx, j->x, j->T, j->width, start, start + len);
}

/* x = Norm(x + y) (y NULL: Norm(x)) over T rows of `width`: the model's
 * LayerNorm (gamma, beta) or v2's RMS norm (gamma, beta NULL). With
 * `prepare` (bf16 and int8 compute), x is the input of the next layer
 * product, whose rows are rounded or quantized in the same pass: one
 * parallel region less. */
static void add_norm(rf_context *ctx, int T, float *x, const float *y, const float *gamma,
                     const float *beta, int width, bool prepare)
{
    struct rows_job job = {.ctx = ctx, .T = T, .n_blocks = rows_blocks(ctx, T, width),
                           .x = x, .y = y, .gamma = gamma, .beta = beta, .width = width,
                           .prepare = prepare && ctx->compute != RF_COMPUTE_F32};
    rf_step_begin(&ctx->steps, RF_STEP_NORMS);
    rf_parallel_run(rf_step_parallel(&ctx->steps), job.n_blocks, add_norm_task, &job);
    rf_step_end(&ctx->steps);
}

/* ==== Embeddings ==== */

static void embed(rf_context *ctx, const rf_batch *batch, int T)
{
    const rf_hparams *hp = &ctx->model->hp;
    const rf_weights *w = &ctx->model->w;
    int E = hp->embedding_size;
    float *e = w->embd_proj_w ? ctx->emb : ctx->x;
    rf_step_begin(&ctx->steps, RF_STEP_ELEMENTWISE);
    /* pass 1: word + token-type embedding rows, in the layout of seq_off */
    for (int b = 0; b < batch->batch; b++)
        for (int r = ctx->seq_off[b]; r < ctx->seq_off[b + 1]; r++) {
            size_t t = (size_t)b * batch->seq_len + (size_t)(r - ctx->seq_off[b]);
            size_t id = (size_t)batch->input_ids[t];
            int type = batch->token_type_ids ? batch->token_type_ids[t] : 0;
            const float *restrict tt = w->token_types + (size_t)type * E;
            float *restrict row = e + (size_t)r * E;
            if (w->token_embd) {
                const float *restrict word = w->token_embd + id * E;
                for (int i = 0; i < E; i++)
                    row[i] = word[i] + tt[i];
            } else { /* a q8, f16 or bf16 file's row, widened in place */
                rf_stored_matrix_widen(&w->token_embd_stored, id, 1, (size_t)E, row);
                for (int i = 0; i < E; i++)
                    row[i] += tt[i];
            }
        }
    rf_step_end(&ctx->steps);
    /* pass 2: LayerNorm (v2: RMS norm) over E */
    add_norm(ctx, T, e, NULL, w->embd_norm_w, w->embd_norm_b, E, !w->embd_proj_w);
    /* pass 3: embeddings_project E -> D */
    if (w->embd_proj_w) {
        rf_step_begin(&ctx->steps, RF_STEP_PRODUCTS);
        rf_linear(rf_step_parallel(&ctx->steps), e, T, E, w->embd_proj_w, w->embd_proj_b,
                  hp->hidden_size, RF_ACT_LINEAR, NULL,
                  &(rf_row_segments){ctx->seq_off, batch->batch}, ctx->x);
        rf_step_end(&ctx->steps);
    }
}

/* ==== Layers ==== */

/* One of a layer's matrices in each form the compute types read. */
struct layer_matrix {
    const float *f32;
    const uint16_t *bf16;       /* RF_COMPUTE_BF16, else NULL */
    const rf_int8_matrix *int8; /* RF_COMPUTE_INT8, else NULL */
};

/* The matrix `which` (attn_qkv, attn_out, ffn_up or ffn_down) of layer
 * lw / index i, in the forms the context's compute type has. */
#define LAYER_MATRIX(ctx, lw, i, which)                                               \
    ((struct layer_matrix){(lw)->which##_w,                                           \
                           (ctx)->bf16_layers ? (ctx)->bf16_layers[i].which : NULL,     \
                           (ctx)->int8_layers ? &(ctx)->int8_layers[i].which : NULL})

/* A layer's products, in the order layer_forward runs them. The layer and
 * the planner's balance (rf_encoder_partition_efficiency) both read this
 * one list. */
enum layer_product_id { PRODUCT_QKV, PRODUCT_ATTN_OUT, PRODUCT_FFN_UP, PRODUCT_FFN_DOWN,
                        N_LAYER_PRODUCTS };

/* Y = act(X W^T + b), Y (M, N), X (M, K), W (N, K). ffn_block: the product
 * runs on the FFN's blocks of ffn_rows rows (context.h), else on all T
 * rows at once. */
struct layer_product {
    struct layer_matrix W;
    const float *b;
    int N, K;
    rf_activation act;
    bool ffn_block;
};

static void layer_products(const rf_context *ctx, int layer,
                           struct layer_product p[N_LAYER_PRODUCTS])
{
    const rf_hparams *hp = &ctx->model->hp;
    const rf_layer_weights *lw = &ctx->model->w.layers[layer];
    int D = hp->hidden_size, F = hp->intermediate_size;
    p[PRODUCT_QKV] = (struct layer_product){LAYER_MATRIX(ctx, lw, layer, attn_qkv), lw->attn_qkv_b,
                                            3 * D, D, RF_ACT_LINEAR, false};
    p[PRODUCT_ATTN_OUT] = (struct layer_product){LAYER_MATRIX(ctx, lw, layer, attn_out),
                                                 lw->attn_out_b, D, D, RF_ACT_LINEAR, false};
    p[PRODUCT_FFN_UP] = (struct layer_product){LAYER_MATRIX(ctx, lw, layer, ffn_up), lw->ffn_up_b,
                                               F, D, hp->hidden_act, true};
    p[PRODUCT_FFN_DOWN] = (struct layer_product){LAYER_MATRIX(ctx, lw, layer, ffn_down),
                                                 lw->ffn_down_b, D, F, RF_ACT_LINEAR, true};
}

/* A layer's product p on M rows of X: Y = act(X W^T + b), then post on
 * each finished block, in the context's compute type; one products step.
 * `prepared`: X's rows are already rounded / quantized (add_norm).
 * `rows`: the sequences' rows, which the f32 product computes each on its
 * own (linalg.h); the bf16 and int8 kernels give a row the same result
 * whatever rows come with it. */
static void layer_linear(rf_context *ctx, const struct layer_product *p, const float *X, int M,
                         const rf_block_post *post, const rf_row_segments *rows, float *Y,
                         bool prepared)
{
    const rf_parallel *par = rf_step_parallel(&ctx->steps);
    const struct layer_matrix *W = &p->W;
    int N = p->N, K = p->K;
    rf_step_begin(&ctx->steps, RF_STEP_PRODUCTS);
    if (W->bf16 && prepared)
        rf_linear_bf16_prepared(par, M, K, W->bf16, p->b, N, p->act, post, Y, ctx->x_bf16);
    else if (W->bf16)
        rf_linear_bf16(par, X, M, K, W->bf16, p->b, N, p->act, post, Y, ctx->x_bf16);
    else if (W->int8 && prepared)
        rf_linear_int8_prepared(par, M, K, W->int8, p->b, N, p->act, post, Y, ctx->x_int8);
    else if (W->int8)
        rf_linear_int8(par, X, M, K, W->int8, p->b, N, p->act, post, Y, ctx->x_int8);
    else
        rf_linear(par, X, M, K, W->f32, p->b, N, p->act, post, rows, Y);
    rf_step_end(&ctx->steps);
}

static void layer_forward(rf_context *ctx, int layer, int B, int L, int T, bool packed)
{
    const rf_hparams *hp = &ctx->model->hp;
    const rf_layer_weights *lw = &ctx->model->w.layers[layer];
    int D = hp->hidden_size, H = hp->num_heads;
    rf_row_segments seqs = {ctx->seq_off, B};
    struct layer_product prod[N_LAYER_PRODUCTS];
    layer_products(ctx, layer, prod);

    /* pass 1: Q, K, V projections (one product on the stacked weights),
       rotary position embedding in its epilogue */
    struct qkv_rope rope = {.ctx = ctx, .B = B, .rotated = (hp->rotary_value ? 3 : 2) * D,
                            .Dh = D / H};
    rf_block_post rope_post = {qkv_rope_block, &rope};
    layer_linear(ctx, &prod[PRODUCT_QKV], ctx->x, T, &rope_post, &seqs, ctx->qkv,
                 layer > 0 || !ctx->model->w.embd_proj_w);

    /* pass 2: attention per (sequence, head, query block) */
    const float *q = ctx->qkv, *k = ctx->qkv + D, *v = ctx->qkv + 2 * D;
    rf_step_begin(&ctx->steps, RF_STEP_ATTENTION);
    const rf_parallel *par = rf_step_parallel(&ctx->steps);
    if (packed)
        rf_attention_packed(par, q, k, v, 3 * D, ctx->seq_off, B, H, D / H, ctx->scores,
                            ctx->attn_bf16, ctx->attn, D);
    else
        rf_attention(par, q, k, v, 3 * D, ctx->mask_bias, B, L, H, D / H, ctx->scores,
                     ctx->attn_bf16, ctx->attn, D);
    rf_step_end(&ctx->steps);

    /* pass 3: output projection, residual, LayerNorm (v2: RMS norm) */
    layer_linear(ctx, &prod[PRODUCT_ATTN_OUT], ctx->attn, T, NULL, &seqs, ctx->attn_proj, false);
    /* the FFN's first product reads these rows when it runs in one block */
    bool ffn_prepared = T <= ctx->ffn_rows;
    add_norm(ctx, T, ctx->x, ctx->attn_proj, lw->attn_norm_w, lw->attn_norm_b, D, ffn_prepared);

    /* pass 4: feed-forward on blocks of ffn_rows rows (context.h),
       residual, LayerNorm (v2: RMS norm); f32 runs one block of all rows,
       the only one whose product reads the sequences' rows */
    for (int r0 = 0; r0 < T; r0 += ctx->ffn_rows) {
        int rows = T - r0 < ctx->ffn_rows ? T - r0 : ctx->ffn_rows;
        const rf_row_segments *block_seqs = rows == T ? &seqs : NULL;
        layer_linear(ctx, &prod[PRODUCT_FFN_UP], ctx->x + (size_t)r0 * D, rows, NULL, block_seqs,
                     ctx->ffn, ffn_prepared);
        layer_linear(ctx, &prod[PRODUCT_FFN_DOWN], ctx->ffn, rows, NULL, block_seqs,
                     ctx->ffn_proj + (size_t)r0 * D, false);
    }
    /* the next layer's Q|K|V product reads these rows */
    add_norm(ctx, T, ctx->x, ctx->ffn_proj, lw->out_norm_w, lw->out_norm_b, D,
             layer + 1 < hp->num_layers);
}

/* ==== The planner's balance ==== */

/* The busiest thread's multiply-adds in one M x N x K product of the
 * bf16 and int8 drivers, from their plans. */
static int64_t bf16_max_macs(int M, int N, int K, int n_threads)
{
    rf_partition p = rf_linear_bf16_partition(M, N, K, n_threads);
    return rf_partition_max_macs(&p);
}

static int64_t int8_max_macs(int M, int N, int K, int n_threads)
{
    rf_partition p = rf_linear_int8_partition(M, N, K, n_threads);
    return rf_partition_max_macs(&p);
}

typedef int64_t (*max_macs_fn)(int M, int N, int K, int n_threads);

/* Adds `count` products of M x N x K as the driver shares them: their
 * mean and their busiest thread's multiply-adds. */
static void add_balance(max_macs_fn max_macs, int n_threads, int count, int M, int N, int K,
                        double *mean, double *max)
{
    if (count == 0 || M == 0)
        return;
    *mean += (double)count * M * N * K / n_threads;
    *max += (double)count * max_macs(M, N, K, n_threads);
}

/* Adds `count` runs on M rows of each of a layer's products that runs on
 * the FFN's blocks (ffn_block) or on all rows at once (!ffn_block). */
static void add_layer_balance(max_macs_fn max_macs, int n_threads, const struct layer_product *prod,
                              bool ffn_block, int count, int M, double *mean, double *max)
{
    for (int i = 0; i < N_LAYER_PRODUCTS; i++)
        if (prod[i].ffn_block == ffn_block)
            add_balance(max_macs, n_threads, count, M, prod[i].N, prod[i].K, mean, max);
}

double rf_encoder_partition_efficiency(const rf_context *ctx, int T)
{
    const rf_hparams *hp = &ctx->model->hp;
    int D = hp->hidden_size, E = hp->embedding_size;
    int n = rf_pool_threads(ctx->pool), R = ctx->ffn_rows;
    max_macs_fn plan = ctx->compute == RF_COMPUTE_BF16   ? bf16_max_macs
                       : ctx->compute == RF_COMPUTE_INT8 ? int8_max_macs
                                                         : rf_linear_max_macs;
    double mean = 0.0, max = 0.0;
    int L = hp->num_layers;
    struct layer_product prod[N_LAYER_PRODUCTS];
    layer_products(ctx, 0, prod);
    if (ctx->model->w.embd_proj_w)
        add_balance(rf_linear_max_macs, n, 1, T, D, E, &mean, &max);
    /* every layer: its products on all T rows, then the FFN's on their
       blocks of R rows, and on the last T % R */
    add_layer_balance(plan, n, prod, false, L, T, &mean, &max);
    add_layer_balance(plan, n, prod, true, L * (T / R), R, &mean, &max);
    add_layer_balance(plan, n, prod, true, L, T % R, &mean, &max);
    return max > 0.0 ? mean / max : 1.0;
}

/* Fills ctx->seq_off; true when the batch runs packed: skip_padding is on
 * and every sequence is 1...1 0...0 with at least one real token and some
 * padding in the batch. Otherwise the padded layout, seq_off[b] = b * L. */
static bool plan_layout(rf_context *ctx, const rf_batch *batch)
{
    int B = batch->batch, L = batch->seq_len;
    const int32_t *mask = batch->attention_mask;
    bool packed = ctx->skip_padding && mask;
    ctx->seq_off[0] = 0;
    for (int b = 0; packed && b < B; b++) {
        const int32_t *m = mask + (size_t)b * L;
        int n = 0;
        while (n < L && m[n])
            n++;
        for (int t = n; t < L; t++)
            packed = packed && !m[t];
        packed = packed && n > 0;
        ctx->seq_off[b + 1] = ctx->seq_off[b] + n;
    }
    packed = packed && ctx->seq_off[B] < B * L;
    if (!packed)
        for (int b = 0; b <= B; b++)
            ctx->seq_off[b] = b * L;
    return packed;
}

/* Copies the packed rows of x into the padded [B][L][D] layout of dst,
 * zero at padded positions; dst may be x itself. */
static void unpack_rows(const rf_context *ctx, int B, int L, const float *x, float *dst)
{
    size_t D = (size_t)ctx->model->hp.hidden_size;
    /* last sequence first: a destination never overlaps an earlier source */
    for (int b = B - 1; b >= 0; b--) {
        size_t n = (size_t)(ctx->seq_off[b + 1] - ctx->seq_off[b]);
        float *to = dst + (size_t)b * L * D;
        memmove(to, x + (size_t)ctx->seq_off[b] * D, n * D * sizeof(float));
        memset(to + n * D, 0, ((size_t)L - n) * D * sizeof(float));
    }
}

void rf_encode(rf_context *ctx, const rf_batch *batch, float *hidden_states)
{
    const rf_hparams *hp = &ctx->model->hp;
    int B = batch->batch, L = batch->seq_len;
    size_t layer_floats = (size_t)B * L * hp->hidden_size;
    rf_step_begin(&ctx->steps, RF_STEP_ELEMENTWISE);
    bool packed = plan_layout(ctx, batch);
    int T = ctx->seq_off[B];

    for (int b = 0; b < B; b++)
        for (int t = 0; t < L; t++) {
            int on = batch->attention_mask ? batch->attention_mask[(size_t)b * L + t] : 1;
            ctx->mask_bias[(size_t)b * L + t] = on ? 0.0f : RF_MASK_NEG;
        }
    rf_step_end(&ctx->steps);

    embed(ctx, batch, T);
    for (int i = 0; i <= hp->num_layers; i++) {
        if (i > 0)
            layer_forward(ctx, i - 1, B, L, T, packed);
        if (!hidden_states)
            continue;
        float *dst = hidden_states + (size_t)i * layer_floats;
        rf_step_begin(&ctx->steps, RF_STEP_ELEMENTWISE);
        if (packed)
            unpack_rows(ctx, B, L, ctx->x, dst);
        else
            memcpy(dst, ctx->x, layer_floats * sizeof(float));
        rf_step_end(&ctx->steps);
    }
    rf_step_begin(&ctx->steps, RF_STEP_ELEMENTWISE);
    if (packed)
        unpack_rows(ctx, B, L, ctx->x, ctx->x);
    rf_step_end(&ctx->steps);
}
