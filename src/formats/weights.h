/*
 * weights.h — a RoFormer model's tensors as pointers: into the mapping of
 * its GGUF file, or into memory the model owns (widened, stacked). The
 * tensor table (tensor_map.h) says where each GGUF tensor goes; the loader
 * (model/model.c) fills one of these per model, the converter only reads
 * the table. Here, below the model, so that the table and the packing of
 * the layer matrices (model/packed_weights.h) need no more of the model.
 *
 * Every matrix is PyTorch's nn.Linear layout: (out x in), row-major.
 * Dimensions: V vocab, E embedding_size, D hidden, F intermediate,
 * T type_vocab_size, N num_labels. RoFormer-v2 leaves pointers NULL: every
 * norm's (RF_NORM_RMS has no parameters), the encoder Linears' biases
 * (use_bias false), and the MLM transform and bias (its head is
 * mlm_decoder_w alone).
 */
#ifndef RF_WEIGHTS_H
#define RF_WEIGHTS_H

#include "formats/stored_matrix.h"

typedef struct {
    const float *attn_q_w, *attn_q_b;       /* (D, D), (D) */
    const float *attn_k_w, *attn_k_b;       /* (D, D), (D) */
    const float *attn_v_w, *attn_v_b;       /* (D, D), (D) */
    const float *attn_qkv_w, *attn_qkv_b;   /* (3D, D), (3D): Q, K, V stacked (rf_model_stack_qkv);
                                               attn_qkv_b NULL without biases */
    const float *attn_out_w, *attn_out_b;   /* (D, D), (D) */
    const float *attn_norm_w, *attn_norm_b; /* (D), (D): LayerNorm after attention + residual */
    const float *ffn_up_w, *ffn_up_b;       /* (F, D), (F) */
    const float *ffn_down_w, *ffn_down_b;   /* (D, F), (D) */
    const float *out_norm_w, *out_norm_b;   /* (D), (D): LayerNorm after FFN + residual */
    /* the same matrices as a q8, f16 or bf16 file stores them (else data
       NULL); their f32 pointers above are NULL until widened */
    rf_stored_matrix attn_q_stored, attn_k_stored, attn_v_stored;
    rf_stored_matrix attn_out_stored, ffn_up_stored, ffn_down_stored;
} rf_layer_weights;

typedef struct {
    const float *token_embd;                /* (V, E); NULL when read from token_embd_stored */
    rf_stored_matrix token_embd_stored;     /* (V, E) rows of a q8, f16 or bf16 file as stored
                                               (no MLM head) */
    const float *token_types;               /* (T, E) */
    const float *embd_norm_w, *embd_norm_b; /* (E), (E) */
    const float *embd_proj_w, *embd_proj_b; /* (D, E), (D); NULL when E == D */
    rf_layer_weights *layers;               /* [num_layers] */
    const float *pooler_w, *pooler_b;       /* (D, D), (D); NULL without pooler */
    /* RF_HEAD_MLM */
    const float *mlm_dense_w, *mlm_dense_b; /* (E, D), (E) */
    const float *mlm_norm_w, *mlm_norm_b;   /* (E), (E) */
    const float *mlm_decoder_w;             /* (V, E): == token_embd when tied */
    const float *mlm_decoder_b;             /* (V) */
    /* RF_HEAD_SEQ_CLS: RoFormerClassificationHead */
    const float *cls_dense_w, *cls_dense_b; /* (D, D), (D) */
    const float *cls_out_w, *cls_out_b;     /* (N, D), (N) */
    /* RF_HEAD_TOKEN_CLS */
    const float *token_cls_w, *token_cls_b; /* (N, D), (N) */
    /* RF_HEAD_QA: channel 0 = start, 1 = end */
    const float *qa_w, *qa_b;               /* (2, D), (2) */
} rf_weights;

#endif
