/*
 * forward.c — rf_forward: checks the batch and the requested outputs
 * against the model and the context, then runs the encoder (encoder.c) and
 * the heads (heads.c) in the context's scratch, without allocating; and the
 * planner's balance of the encoder's products for a forward pass.
 */
#include "model/context.h"
#include "base/error.h"
#include "model/encoder.h"
#include "model/heads.h"

#include <string.h>

/* The head a model has, as an error message names it. */
static const char *head_name(rf_head_kind head)
{
    switch (head) {
    case RF_HEAD_NONE: return "no head";
    case RF_HEAD_MLM: return "a masked-LM head";
    case RF_HEAD_SEQ_CLS: return "a sequence-classification head";
    case RF_HEAD_TOKEN_CLS: return "a token-classification head";
    case RF_HEAD_QA: return "a question-answering head";
    }
    return "an unknown head";
}

static rf_status check_batch(const rf_context *ctx, const rf_batch *batch, rf_error *err)
{
    const rf_hparams *hp = &ctx->model->hp;
    int B = batch->batch, L = batch->seq_len;
    if (B < 1 || B > ctx->max_batch)
        return rf_fail(err, RF_ERR_INPUT, "forward: batch of %d sequences, the context takes 1 to %d",
                       B, ctx->max_batch);
    if (L < 1)
        return rf_fail(err, RF_ERR_INPUT, "forward: sequence length %d, must be >= 1", L);
    if (L > ctx->length_limit && ctx->length_limit > hp->max_position)
        return rf_fail(err, RF_ERR_INPUT,
                       "forward: sequence of %d tokens is longer than the %d this context "
                       "accepts past max_position_embeddings (%d), extended or scaled",
                       L, ctx->length_limit, hp->max_position);
    if (L > ctx->length_limit)
        return rf_fail(err, RF_ERR_INPUT,
                       "forward: sequence of %d tokens is longer than the model's "
                       "max_position_embeddings (%d); truncate it, or set extend_positions",
                       L, hp->max_position);
    if (L > ctx->max_seq_len)
        return rf_fail(err, RF_ERR_INPUT,
                       "forward: sequence of %d tokens is longer than the context's max_seq_len (%d)",
                       L, ctx->max_seq_len);
    if (!batch->input_ids)
        return rf_fail(err, RF_ERR_INPUT, "forward: no input_ids");
    for (int b = 0; b < B; b++)
        for (int t = 0; t < L; t++) {
            size_t i = (size_t)b * L + t;
            if (batch->input_ids[i] < 0 || batch->input_ids[i] >= hp->vocab_size)
                return rf_fail(err, RF_ERR_INPUT,
                               "forward: input_ids[%d][%d] = %d is outside the vocabulary (0..%d)",
                               b, t, batch->input_ids[i], hp->vocab_size - 1);
            if (batch->token_type_ids &&
                (batch->token_type_ids[i] < 0 || batch->token_type_ids[i] >= hp->type_vocab_size))
                return rf_fail(err, RF_ERR_INPUT,
                               "forward: token_type_ids[%d][%d] = %d is outside 0..%d", b, t,
                               batch->token_type_ids[i], hp->type_vocab_size - 1);
            if (batch->attention_mask && batch->attention_mask[i] != 0 &&
                batch->attention_mask[i] != 1)
                return rf_fail(err, RF_ERR_INPUT,
                               "forward: attention_mask[%d][%d] = %d, must be 0 or 1", b, t,
                               batch->attention_mask[i]);
        }
    return RF_OK;
}

static rf_status check_outputs(const rf_context *ctx, const rf_batch *batch,
                               const rf_outputs *out, rf_error *err)
{
    const rf_hparams *hp = &ctx->model->hp;
    if (out->pooled && !(hp->has_pooler && ctx->model->w.pooler_w))
        return rf_fail(err, RF_ERR_INPUT, "forward: pooled output asked, but the model has no pooler");
    if (out->logits && hp->head != RF_HEAD_MLM && hp->head != RF_HEAD_SEQ_CLS &&
        hp->head != RF_HEAD_TOKEN_CLS)
        return rf_fail(err, RF_ERR_INPUT, "forward: logits asked, but the model has %s",
                       head_name(hp->head));
    if ((out->start_logits || out->end_logits) && hp->head != RF_HEAD_QA)
        return rf_fail(err, RF_ERR_INPUT, "forward: start/end logits asked, but the model has %s",
                       head_name(hp->head));
    if (out->mlm_positions) {
        if (hp->head != RF_HEAD_MLM)
            return rf_fail(err, RF_ERR_INPUT, "forward: MLM positions given, but the model has %s",
                           head_name(hp->head));
        if (out->n_mlm_positions < 1 || out->n_mlm_positions > ctx->max_seq_len)
            return rf_fail(err, RF_ERR_INPUT, "forward: %d MLM positions, the context takes 1 to %d",
                           out->n_mlm_positions, ctx->max_seq_len);
        for (int p = 0; p < out->n_mlm_positions; p++)
            if (out->mlm_positions[p] < 0 || out->mlm_positions[p] >= batch->seq_len)
                return rf_fail(err, RF_ERR_INPUT,
                               "forward: MLM position %d is outside the sequence (0..%d)",
                               out->mlm_positions[p], batch->seq_len - 1);
    }
    return RF_OK;
}

rf_status rf_forward(rf_context *ctx, const rf_batch *batch, rf_outputs *out, rf_error *err)
{
    if (!ctx || !batch || !out)
        return rf_fail(err, RF_ERR_INPUT, "forward: NULL context, batch or outputs");
    rf_forward_begin(&ctx->steps);
    rf_status st = check_batch(ctx, batch, err);
    if (st == RF_OK)
        st = check_outputs(ctx, batch, out, err);
    if (st != RF_OK)
        return st;

    rf_pool_reserve_stack();
    rf_encode(ctx, batch, out->hidden_states);
    rf_step_begin(&ctx->steps, RF_STEP_ELEMENTWISE);
    if (out->last_hidden_state)
        memcpy(out->last_hidden_state, ctx->x,
               (size_t)batch->batch * batch->seq_len * ctx->model->hp.hidden_size * sizeof(float));
    rf_step_end(&ctx->steps);
    rf_run_heads(ctx, batch, out);
    rf_forward_end(&ctx->steps);
    return RF_OK;
}

double rf_context_partition_efficiency(const rf_context *ctx, int32_t tokens)
{
    return rf_encoder_partition_efficiency(ctx, tokens);
}
