/*
 * heads.h — the pooler and the task heads (heads.c), run by rf_forward on
 * the encoder's output.
 */
#ifndef RF_HEADS_H
#define RF_HEADS_H

#include "model/context.h"

/* The pooler and the model's head on ctx->x, into the buffers of `out`
 * that are not NULL (validated by rf_forward). */
void rf_run_heads(rf_context *ctx, const rf_batch *batch, const rf_outputs *out);

#endif
