/*
 * hf_config.h — HuggingFace config.json and tokenizer_config.json to
 * rf_hparams, with HF RoFormerConfig's defaults (transformers v4.40,
 * models/roformer/configuration_roformer.py), and the names shared by
 * config.json and the GGUF file (activations, head kinds, tokenizer modes).
 */
#ifndef RF_HF_CONFIG_H
#define RF_HF_CONFIG_H

#include "roformer.h"

/* Longest sequence a model may declare (max_position_embeddings, GGUF
 * roformer.context_length). A context sized from it eagerly fills a RoPE
 * table of max_position x head size and attention scratch per position, so
 * a file's claim must stay reasonable: RoFormer checkpoints use 512 to
 * 1536, and 65536 keeps the table at 32 MB for head size 64. */
#define RF_MAX_POSITION (1 << 16)

/* Largest rope_scaling factor a file or caller may give. */
#define RF_MAX_ROPE_FACTOR 1024

enum { RF_SPECIAL_PAD, RF_SPECIAL_UNK, RF_SPECIAL_CLS, RF_SPECIAL_SEP, RF_SPECIAL_MASK,
       RF_SPECIAL_COUNT };

typedef struct {
    /* Everything but the vocab-dependent fields (special-token ids), dtype
     * and has_pooler, which the converter fills from the other files. */
    rf_hparams hp;
    char **labels;                      /* [hp.num_labels], owned */
    char *special[RF_SPECIAL_COUNT];    /* special-token strings ("[PAD]" ...), owned */
    bool has_architecture;              /* "architectures" given: hp.head is from it */
} rf_hf_config;

/* Parses config.json (required) and tokenizer_config.json (NULL when the
 * file is absent). `tokenizer_choice` is RF_TOKENIZER_AUTO or a mode that
 * overrides tokenizer_config.json. The *_what strings name the files in
 * messages. On failure `out` holds nothing to free. */
rf_status rf_hf_config_parse(const char *config, size_t config_len, const char *config_what,
                             const char *tok_config, size_t tok_config_len,
                             const char *tok_config_what, int tokenizer_choice,
                             rf_hf_config *out, rf_error *err);
void rf_hf_config_free(rf_hf_config *c);

/* A key of a JSON object that must be true, false or absent (null counts
 * as absent; *v then keeps its value); another type is RF_ERR_FORMAT
 * naming `what` and the key. Shared by the readers of JSON config files. */
struct cJSON;
rf_status rf_json_bool(const struct cJSON *root, const char *key, bool *v, const char *what,
                       rf_error *err);

/* HF activation names: gelu, gelu_new, relu, silu, swish, tanh, linear
 * (the *_name functions are in roformer.h). */
bool rf_activation_from_name(const char *name, rf_activation *out);
/* Head kinds as the GGUF file and the CLI name them: none, mlm, cls, token, qa. */
bool rf_head_from_name(const char *name, rf_head_kind *out);
/* Norm types as the GGUF file names them: layer_norm, rms_norm. */
bool rf_norm_type_from_name(const char *name, rf_norm_type *out);
/* "none", "linear", "ntk" (not "default") */
bool rf_rope_scaling_from_name(const char *name, rf_rope_scaling *out);
/* Tokenizer modes: wobert, bert. */
bool rf_tokenizer_mode_from_name(const char *name, rf_tokenizer_mode *out);

#endif
