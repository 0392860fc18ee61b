/*
 * encoder.h — the embeddings and the encoder layers (encoder.c), run by
 * rf_forward in a context's scratch.
 */
#ifndef RF_ENCODER_H
#define RF_ENCODER_H

#include "model/context.h"

/* Embeddings and every encoder layer on a validated batch: the result is
 * left in ctx->x ([B*L][D]). hidden_states, when not NULL, receives
 * [num_layers + 1][B][L][D]. */
void rf_encode(rf_context *ctx, const rf_batch *batch, float *hidden_states);

#endif
