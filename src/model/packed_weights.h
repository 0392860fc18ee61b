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

#include "formats/mapped_file.h"
#include "formats/weights.h"
#include "kernels/gemm_int8.h"
#include "roformer.h"

#include <stdint.h>

/* One layer's matrices packed by rf_bf16_pack. */
typedef struct rf_bf16_layer {
    const uint16_t *attn_qkv, *attn_out, *ffn_up, *ffn_down;
} rf_bf16_layer;

/* One layer's matrices quantized per output channel and packed for
 * rf_linear_int8. */
typedef struct rf_int8_layer {
    rf_int8_matrix attn_qkv, attn_out, ffn_up, ffn_down;
} rf_int8_layer;

/* What a model holds besides its file's weights, each made once (NULL until
 * then). Start from {0}. */
typedef struct {
    float *widened_layers;      /* the stored layer matrices widened to f32 for f32
                                   compute, Q, K, V stacked */
    rf_bf16_layer *bf16_layers; /* [num_layers], pointing into bf16_weights */
    uint16_t *bf16_weights;
    rf_int8_layer *int8_layers; /* [num_layers], pointing into int8_weights */
    int8_t *int8_weights;       /* every layer's panels, then every scale, then
                                   every channel sum (rf_zeroed_pages) */
    size_t int8_weights_bytes;
} rf_packed_weights;

/* Makes sure `packed` holds what `compute` needs (RF_COMPUTE_BF16:
 * bf16_layers; RF_COMPUTE_INT8: int8_layers; RF_COMPUTE_F32: the f32 layer
 * matrices of w, widened into widened_layers if the file stores them
 * otherwise, their pointers in w->layers set) and returns RF_OK, or
 * RF_ERR_NOMEM. The pages of `file` (the model's mapping; {0}: none) that
 * were read are released once copied. Thread-safe. */
rf_status rf_pack_weights(rf_packed_weights *packed, const rf_hparams *hp, rf_weights *w,
                          const rf_mapped_file *file, rf_compute_type compute, rf_error *err);

/* Frees the copies (rf_model_free); `packed` is left {0}. */
void rf_packed_weights_free(rf_packed_weights *packed);

#endif
