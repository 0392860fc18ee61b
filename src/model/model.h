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
 * owns are then released from the process (rf_mapped_file_release).
 * The weights' layout and shapes: formats/weights.h.
 */
#ifndef RF_MODEL_H
#define RF_MODEL_H

#include "formats/weights.h"
#include "model/packed_weights.h"
#include "roformer.h"
#include "text/tokenizer.h"

#include <stdint.h>

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
    rf_packed_weights packed; /* the layer matrices widened for f32 compute, or
                                 packed for bf16 / int8 compute, made by the
                                 first context that needs them (rf_model_pack) */
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

/* Makes sure the model holds what `compute` needs (rf_pack_weights on
 * its packed copies) and returns RF_OK, or RF_ERR_NOMEM. Thread-safe. */
rf_status rf_model_pack(rf_model *model, rf_compute_type compute, rf_error *err);

#endif
