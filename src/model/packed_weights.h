/*
 * packed_weights.h — the encoder layers' four weight matrices (Q|K|V,
 * attention output, FFN up, FFN down) packed for the bf16 or int8 kernel,
 * once per model: the first context of that compute type packs them, and
 * every later context, on any thread, shares the same copy until
 * rf_model_free. Likewise the f32 form of the layer matrices of a model
 * stored as f16, bf16 or q8, which only f32 compute needs. A global lock
 * makes each happen once.
 */
#ifndef RF_PACKED_WEIGHTS_H
#define RF_PACKED_WEIGHTS_H

#include "kernels/gemm_int8.h"
#include "model/model.h"

#include <stdint.h>

/* One layer's matrices packed by rf_bf16_pack. */
struct rf_bf16_layer {
    const uint16_t *attn_qkv, *attn_out, *ffn_up, *ffn_down;
};

/* One layer's matrices quantized per output channel and packed for
 * rf_linear_int8. */
struct rf_int8_layer {
    rf_int8_matrix attn_qkv, attn_out, ffn_up, ffn_down;
};

/* Makes sure the model holds what `compute` needs (RF_COMPUTE_BF16:
 * model->bf16_layers; RF_COMPUTE_INT8: model->int8_layers; RF_COMPUTE_F32:
 * the f32 layer matrices, widened if the file stores them otherwise)
 * and returns RF_OK, or RF_ERR_NOMEM. Thread-safe. */
rf_status rf_model_pack(rf_model *model, rf_compute_type compute, rf_error *err);

/* Frees the packed copies (rf_model_free). */
void rf_model_free_packed(rf_model *model);

#endif
