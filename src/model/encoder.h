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
/* Mean over max multiply-adds per thread of the matrix products of one
 * rf_encode on T tokens, as the product planner shares them among the
 * context's threads (summed over the products, each weighted by its
 * work). */
double rf_encoder_partition_efficiency(const rf_context *ctx, int T);

#endif
