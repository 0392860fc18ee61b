/*
 * encoder.c — the RoFormer encoder forward pass on one packed batch
 * (HF RoFormerEmbeddings, RoFormerModel.embeddings_project, RoFormerLayer):
 *
 *   x = LayerNorm(word_emb[id] + type_emb[type])       (no position table)
 *   x = embeddings_project(x)                          when E != D
 *   per layer:
 *     q, k, v = x Wq^T + bq, x Wk^T + bk, x Wv^T + bv
 *     RoPE on q, k (and v when rotary_value), position = index in its sequence
 *     a = softmax(q k^T / sqrt(Dh) + mask) v           per sequence and head
 *     x = LayerNorm(x + a Wo^T + bo)
 *     x = LayerNorm(x + act(x W1^T + b1) W2^T + b2)
 *
 * T = B * L tokens, E embedding_size, D hidden, F intermediate, H heads,
 * Dh = D / H. Padded positions are computed like real ones (HF does too).
 */
#include "context.h"
#include "attention.h"
#include "layernorm.h"
#include "linalg.h"
#include "rope.h"
#include "softmax.h"

#include <string.h>

/* ==== Row-split passes over the pool ==== */

/* Row-wise passes (Q/K/V + RoPE, LayerNorm) cut the T rows into one block
 * per thread. */
struct rows_job {
    rf_context *ctx;
    int T, L, n_blocks;
    float *x;          /* LayerNorm: x = LN(x + y) */
    const float *y;
    const float *gamma, *beta;
    int width;
    const rf_layer_weights *lw; /* Q, K, V + RoPE */
    bool project;               /* also compute Q, K, V (else RoPE only) */
};

static void rows_of_block(const struct rows_job *j, int block, int *start, int *len)
{
    int per = (j->T + j->n_blocks - 1) / j->n_blocks;
    int s = block * per < j->T ? block * per : j->T;
    *start = s;
    *len = s + per > j->T ? j->T - s : per;
}

/* Q, K, V projections of a block of rows, then RoPE on the same rows while
 * they are in cache. */
static void qkv_rope_task(void *arg, int block, int thread)
{
    (void)thread;
    const struct rows_job *j = arg;
    const rf_layer_weights *lw = j->lw;
    const rf_hparams *hp = &j->ctx->model->hp;
    int D = hp->hidden_size, H = hp->num_heads, Dh = D / H, start, len;
    rows_of_block(j, block, &start, &len);
    if (len == 0)
        return;
    size_t off = (size_t)start * D;
    rf_context *c = j->ctx;
    if (j->project) {
        rf_linear_1(c->x + off, len, D, lw->attn_q_w, lw->attn_q_b, D, RF_ACT_LINEAR, c->q + off);
        rf_linear_1(c->x + off, len, D, lw->attn_k_w, lw->attn_k_b, D, RF_ACT_LINEAR, c->k + off);
        rf_linear_1(c->x + off, len, D, lw->attn_v_w, lw->attn_v_b, D, RF_ACT_LINEAR, c->v + off);
    }
    rf_rope_apply(c->q, start, len, D, j->L, H, Dh, c->rope_sin, c->rope_cos);
    rf_rope_apply(c->k, start, len, D, j->L, H, Dh, c->rope_sin, c->rope_cos);
    if (hp->rotary_value)
        rf_rope_apply(c->v, start, len, D, j->L, H, Dh, c->rope_sin, c->rope_cos);
}

static void add_norm_task(void *arg, int block, int thread)
{
    (void)thread;
    const struct rows_job *j = arg;
    int start, len;
    rows_of_block(j, block, &start, &len);
    size_t off = (size_t)start * j->width;
    if (j->y)
        rf_add_layernorm(j->x + off, j->y + off, len, j->width, j->gamma, j->beta,
                         j->ctx->model->hp.layer_norm_eps);
    else
        rf_layernorm(j->x + off, len, j->width, j->gamma, j->beta, j->ctx->model->hp.layer_norm_eps);
}

/* x = LayerNorm(x + y) (y NULL: LayerNorm(x)) over T rows of `width`. */
static void add_norm(rf_context *ctx, int T, float *x, const float *y, const float *gamma,
                     const float *beta, int width)
{
    struct rows_job job = {.ctx = ctx, .T = T, .n_blocks = rf_pool_threads(ctx->pool),
                           .x = x, .y = y, .gamma = gamma, .beta = beta, .width = width};
    rf_pool_run(ctx->pool, job.n_blocks, add_norm_task, &job);
}

/* ==== Embeddings ==== */

static void embed(rf_context *ctx, const rf_batch *batch)
{
    const rf_hparams *hp = &ctx->model->hp;
    const rf_weights *w = &ctx->model->w;
    int T = batch->batch * batch->seq_len, E = hp->embedding_size;
    float *e = w->embd_proj_w ? ctx->emb : ctx->x;
    /* pass 1: word + token-type embedding rows */
    for (int t = 0; t < T; t++) {
        const float *restrict word = w->token_embd + (size_t)batch->input_ids[t] * E;
        int type = batch->token_type_ids ? batch->token_type_ids[t] : 0;
        const float *restrict tt = w->token_types + (size_t)type * E;
        float *restrict row = e + (size_t)t * E;
        for (int i = 0; i < E; i++)
            row[i] = word[i] + tt[i];
    }
    /* pass 2: LayerNorm over E */
    add_norm(ctx, T, e, NULL, w->embd_norm_w, w->embd_norm_b, E);
    /* pass 3: embeddings_project E -> D */
    if (w->embd_proj_w)
        rf_linear(ctx->pool, e, T, E, w->embd_proj_w, w->embd_proj_b, hp->hidden_size,
                  RF_ACT_LINEAR, ctx->x);
}

/* ==== Layers ==== */

static void layer_forward(rf_context *ctx, const rf_layer_weights *lw, int B, int L)
{
    const rf_hparams *hp = &ctx->model->hp;
    rf_pool *pool = ctx->pool;
    int T = B * L, D = hp->hidden_size, F = hp->intermediate_size, H = hp->num_heads;

    /* pass 1: Q, K, V projections and rotary position embedding: fused per
       block of rows when there are enough rows for every thread, else each
       projection split along its outputs, then RoPE */
    struct rows_job qkv = {.ctx = ctx, .T = T, .L = L, .n_blocks = rf_pool_threads(pool),
                           .lw = lw, .project = rf_linear_splits_rows(pool, T)};
    if (!qkv.project) {
        rf_linear(pool, ctx->x, T, D, lw->attn_q_w, lw->attn_q_b, D, RF_ACT_LINEAR, ctx->q);
        rf_linear(pool, ctx->x, T, D, lw->attn_k_w, lw->attn_k_b, D, RF_ACT_LINEAR, ctx->k);
        rf_linear(pool, ctx->x, T, D, lw->attn_v_w, lw->attn_v_b, D, RF_ACT_LINEAR, ctx->v);
    }
    rf_pool_run(pool, qkv.n_blocks, qkv_rope_task, &qkv);

    /* pass 2: attention per (sequence, head, query block) */
    rf_attention(pool, ctx->q, ctx->k, ctx->v, D, ctx->mask_bias, B, L, H, D / H, ctx->scores,
                 ctx->attn);

    /* pass 3: output projection, residual, LayerNorm */
    rf_linear(pool, ctx->attn, T, D, lw->attn_out_w, lw->attn_out_b, D, RF_ACT_LINEAR, ctx->proj);
    add_norm(ctx, T, ctx->x, ctx->proj, lw->attn_norm_w, lw->attn_norm_b, D);

    /* pass 4: feed-forward, residual, LayerNorm */
    rf_linear(pool, ctx->x, T, D, lw->ffn_up_w, lw->ffn_up_b, F, hp->hidden_act, ctx->ffn);
    rf_linear(pool, ctx->ffn, T, F, lw->ffn_down_w, lw->ffn_down_b, D, RF_ACT_LINEAR, ctx->proj);
    add_norm(ctx, T, ctx->x, ctx->proj, lw->out_norm_w, lw->out_norm_b, D);
}

void rf_encode(rf_context *ctx, const rf_batch *batch, float *hidden_states)
{
    const rf_hparams *hp = &ctx->model->hp;
    int B = batch->batch, L = batch->seq_len;
    size_t layer_floats = (size_t)B * L * hp->hidden_size;

    for (int b = 0; b < B; b++)
        for (int t = 0; t < L; t++) {
            int on = batch->attention_mask ? batch->attention_mask[(size_t)b * L + t] : 1;
            ctx->mask_bias[(size_t)b * L + t] = on ? 0.0f : RF_MASK_NEG;
        }

    embed(ctx, batch);
    if (hidden_states)
        memcpy(hidden_states, ctx->x, layer_floats * sizeof(float));
    for (int i = 0; i < hp->num_layers; i++) {
        layer_forward(ctx, &ctx->model->w.layers[i], B, L);
        if (hidden_states)
            memcpy(hidden_states + (size_t)(i + 1) * layer_floats, ctx->x,
                   layer_floats * sizeof(float));
    }
}
