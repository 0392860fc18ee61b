/*
 * model.h — what a loaded model is inside the library: hyper-parameters,
 * float32 weight pointers, labels and the tokenizer.
 *
 * Weights stored as f32 in the file point straight into the read-only
 * mapping; f16/bf16/q8 weights are widened to f32 once at load time into
 * `owned_f32`, except the layers' six matrices (Q, K, V, attention output,
 * FFN up and down) and the word embeddings (unless an MLM head may share
 * them): those stay as stored (the rf_stored_matrix
 * fields). The embeddings are read a row at a time; the layer matrices'
 * f32 pointers stay NULL until a context that computes in f32 needs them
 * (rf_model_pack); bf16 and int8 compute pack them from the stored form.
 * The file's pages of whatever is widened or packed into memory the model
 * owns are then released from the process (rf_model_release_file_pages).
 * Every matrix is PyTorch's nn.Linear layout: (out x in),
 * row-major. Dimensions: V vocab, E embedding_size, D hidden, F intermediate,
 * T type_vocab_size, N num_labels. RoFormer-v2 leaves pointers NULL: every
 * norm's (RF_NORM_RMS has no parameters), the encoder Linears' biases
 * (use_bias false), and the MLM transform and bias (its head is
 * mlm_decoder_w alone).
 */
#ifndef RF_MODEL_H
#define RF_MODEL_H

#include "formats/mapped_file.h"
#include "model/stored_matrix.h"
#include "roformer.h"
#include "text/tokenizer.h"

#include <stdint.h>

typedef struct rf_bf16_layer rf_bf16_layer; /* packed_weights.h */
typedef struct rf_int8_layer rf_int8_layer;

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

struct rf_model {
    rf_hparams hp;
    rf_weights w;
    char **labels;          /* [hp.num_labels] NUL-terminated, owned */
    rf_sentence_config sentence; /* roformer.sentence.* keys; strings owned */
    char **tokens;          /* [n_tokens] NUL-terminated, owned */
    int32_t n_tokens;       /* vocab.txt entries: <= hp.vocab_size */
    rf_tokenizer *tokenizer;
    rf_tokenizer_spec tokenizer_spec; /* what the tokenizer was built from; arrays owned */
    int32_t n_tensors;
    /* storage */
    void *map;              /* mmap of the file, or NULL */
    size_t map_size;
    void *owned_bytes;      /* GGUF image held in memory (HF directory loads), or NULL */
    float *owned_f32;       /* widened f16/bf16 weights, or NULL */
    float *owned_qkv;       /* stacked Q, K, V copied where not adjacent in memory, or NULL */
    float *widened_layers;  /* the stored layer matrices widened to f32 for f32
                               compute (rf_model_pack), Q, K, V stacked; or NULL */
    /* the layers' matrices packed for bf16 / int8 compute, made by the
       first context that needs them (rf_model_pack), else NULL */
    rf_bf16_layer *bf16_layers;  /* [num_layers], pointing into bf16_weights */
    uint16_t *bf16_weights;
    rf_int8_layer *int8_layers;  /* [num_layers], pointing into int8_weights */
    int8_t *int8_weights;        /* every layer's panels, then every scale, then
                                    every channel sum (rf_zeroed_pages) */
    size_t int8_weights_bytes;
};

/* Loads a model from a GGUF image in memory (what rf_model_load does after
 * mapping the file). `data` is not copied and must outlive the model;
 * `what` names it in messages. For tests and fuzzing. */
rf_status rf_model_load_buffer(const void *data, size_t size, const char *what, rf_model **out,
                               rf_error *err);

/* Points every layer's attn_qkv_w / attn_qkv_b at Q, K and V stacked:
 * in place where the three already lie back to back (files written by this
 * converter, widened f16/bf16), else copied once into owned_qkv (files
 * with another tensor order). Without biases (hp.use_bias false) only the
 * weights are stacked and attn_qkv_b stays NULL. `what` names the model in
 * messages. */
rf_status rf_model_stack_qkv(rf_model *model, const char *what, rf_error *err);

/* Releases the pages of a tensor of the model's file (data, bytes) whose
 * contents the model now holds in memory it owns (widened, dequantized or
 * packed), so that they leave the process's resident memory; reads of data
 * still work, from the file (rf_mapped_file_release). Nothing happens for a
 * model not read from a file mapping, or data outside it. Inline here so
 * that the files that pack weights need nothing of model.c. */
static inline void rf_model_release_file_pages(const rf_model *model, const void *data,
                                               size_t bytes)
{
    rf_mapped_file f = {model->map, model->map_size};
    rf_mapped_file_release(&f, data, bytes);
}

#endif
