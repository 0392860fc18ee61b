/*
 * heads.c — the pooler and the task heads on the encoder output
 * (HF RoFormerOnlyMLMHead, RoFormerClassificationHead, the token
 * classification `classifier`, `qa_outputs`; the pooler is the RoFormer-Sim
 * `roformer.pooler.dense`, which HF's RoFormerModel itself does not run).
 *
 *   pooler      pooled = act_p(x[CLS] Wp^T + bp)                   act_p tanh or linear
 *   MLM         logits = LN(act(x Wd^T + bd)) Wdec^T + bias        (decoder tied to word_emb)
 *   MLM, v2     logits = x Wdec^T                                  (RoFormerV2LMPredictionHead)
 *               either optionally only at P positions of each sequence
 *   seq cls     logits = act(x[CLS] Wd^T + bd) Wo^T + bo           act = hidden_act, not tanh
 *   token cls   logits = x Wc^T + bc                               every position
 *   QA          start, end = x Wqa^T + bqa                         channels 0, 1
 *
 * B sequences, L tokens each, D hidden, E embedding_size, V vocab, N labels.
 */
#include "model/heads.h"
#include "model/context.h"
#include "kernels/layernorm.h"
#include "kernels/linalg.h"

#include <string.h>

/* ==== Row segments ====
 * A head's f32 products give each row the same bits whatever the batch
 * (linalg.h) when each sequence's real rows are a segment of their own:
 * in the padded layout, its real rows and its padding are two segments;
 * rows gathered one a sequence or at positions the batch shares are a
 * segment each. The segments live in ctx->head_rows. */

/* Sequence b's real rows: seq_off's count when the batch ran packed, else
 * all L (rf_encode). */
static int real_rows(const rf_context *ctx, int b, int L)
{
    int n = ctx->seq_off[b + 1] - ctx->seq_off[b];
    return n < L ? n : L;
}

/* The padded layout's [B][L] rows: two segments a sequence. */
static rf_row_segments padded_segments(rf_context *ctx, int B, int L)
{
    int32_t *start = ctx->head_rows;
    for (int b = 0; b < B; b++) {
        start[2 * b] = b * L;
        start[2 * b + 1] = b * L + real_rows(ctx, b, L);
    }
    start[2 * B] = B * L;
    return (rf_row_segments){start, 2 * B};
}

/* M gathered rows: one segment each. */
static rf_row_segments single_rows(rf_context *ctx, int M)
{
    for (int r = 0; r <= M; r++)
        ctx->head_rows[r] = r;
    return (rf_row_segments){ctx->head_rows, M};
}

/* Copies row `pos` of every sequence (or the listed positions of each) of
 * ctx->x into ctx->head_in: [B][P][D]. */
static void gather_rows(rf_context *ctx, int B, int L, const int32_t *positions, int P)
{
    int D = ctx->model->hp.hidden_size;
    for (int b = 0; b < B; b++)
        for (int p = 0; p < P; p++) {
            int pos = positions ? positions[p] : 0;
            memcpy(ctx->head_in + ((size_t)b * P + p) * D, ctx->x + ((size_t)b * L + pos) * D,
                   (size_t)D * sizeof(float));
        }
}

static void mlm_head(rf_context *ctx, int B, int L, const rf_outputs *out)
{
    const rf_hparams *hp = &ctx->model->hp;
    const rf_weights *w = &ctx->model->w;
    int D = hp->hidden_size, E = hp->embedding_size;
    const float *rows = ctx->x;
    int M = B * L;
    rf_row_segments segs;
    if (out->mlm_positions) {
        gather_rows(ctx, B, L, out->mlm_positions, out->n_mlm_positions);
        rows = ctx->head_in;
        M = B * out->n_mlm_positions;
        segs = single_rows(ctx, M);
    } else {
        segs = padded_segments(ctx, B, L);
    }
    if (hp->norm_type == RF_NORM_RMS) {
        /* v2: no transform, no bias; E == D (checked at load) */
        rf_linear(&ctx->par, rows, M, D, w->mlm_decoder_w, NULL, hp->vocab_size, RF_ACT_LINEAR,
                  NULL, &segs, out->logits);
        return;
    }
    rf_linear(&ctx->par, rows, M, D, w->mlm_dense_w, w->mlm_dense_b, E, hp->hidden_act,
              NULL, &segs, ctx->head_mid);
    rf_layernorm(ctx->head_mid, M, E, w->mlm_norm_w, w->mlm_norm_b, hp->layer_norm_eps);
    rf_linear(&ctx->par, ctx->head_mid, M, E, w->mlm_decoder_w, w->mlm_decoder_b, hp->vocab_size,
              RF_ACT_LINEAR, NULL, &segs, out->logits);
}

static void qa_head(rf_context *ctx, int B, int L, const rf_outputs *out)
{
    const rf_weights *w = &ctx->model->w;
    int T = B * L;
    rf_row_segments segs = padded_segments(ctx, B, L);
    rf_linear(&ctx->par, ctx->x, T, ctx->model->hp.hidden_size, w->qa_w, w->qa_b, 2,
              RF_ACT_LINEAR, NULL, &segs, ctx->qa);
    for (int t = 0; t < T; t++) {
        if (out->start_logits)
            out->start_logits[t] = ctx->qa[2 * t];
        if (out->end_logits)
            out->end_logits[t] = ctx->qa[2 * t + 1];
    }
}

void rf_run_heads(rf_context *ctx, const rf_batch *batch, const rf_outputs *out)
{
    const rf_hparams *hp = &ctx->model->hp;
    const rf_weights *w = &ctx->model->w;
    int B = batch->batch, L = batch->seq_len, D = hp->hidden_size, N = hp->num_labels;

    if (out->pooled) {
        gather_rows(ctx, B, L, NULL, 1);
        rf_row_segments segs = single_rows(ctx, B);
        rf_linear(&ctx->par, ctx->head_in, B, D, w->pooler_w, w->pooler_b, D, hp->pooler_act,
                  NULL, &segs, out->pooled);
    }
    switch (hp->head) {
    case RF_HEAD_NONE:
        break;
    case RF_HEAD_MLM:
        if (out->logits)
            mlm_head(ctx, B, L, out);
        break;
    case RF_HEAD_SEQ_CLS:
        if (out->logits) {
            gather_rows(ctx, B, L, NULL, 1);
            rf_row_segments segs = single_rows(ctx, B);
            rf_linear(&ctx->par, ctx->head_in, B, D, w->cls_dense_w, w->cls_dense_b, D,
                      hp->hidden_act, NULL, &segs, ctx->head_mid);
            rf_linear(&ctx->par, ctx->head_mid, B, D, w->cls_out_w, w->cls_out_b, N,
                      RF_ACT_LINEAR, NULL, &segs, out->logits);
        }
        break;
    case RF_HEAD_TOKEN_CLS:
        if (out->logits) {
            rf_row_segments segs = padded_segments(ctx, B, L);
            rf_linear(&ctx->par, ctx->x, B * L, D, w->token_cls_w, w->token_cls_b, N,
                      RF_ACT_LINEAR, NULL, &segs, out->logits);
        }
        break;
    case RF_HEAD_QA:
        if (out->start_logits || out->end_logits)
            qa_head(ctx, B, L, out);
        break;
    }
}
