/*
 * roformer.h — the public interface of roformer.c, a RoFormer encoder
 * inference engine (Su et al. 2021) that gives the same tokens and numbers
 * as HuggingFace transformers' RoFormer classes.
 *
 * Usage:
 *
 *     rf_error err;
 *     rf_model *model;
 *     if (rf_model_load("model.gguf", &model, &err) != RF_OK) {  // or an HF directory
 *         fprintf(stderr, "%s\n", err.message);
 *         return 1;
 *     }
 *     rf_encoding enc = {0};
 *     rf_tokenize(model, "今天天气不错", 18, NULL, 0, 512, &enc, &err);
 *
 *     rf_context_params cp = rf_context_default_params();
 *     rf_context *ctx;
 *     rf_context_create(model, &cp, &ctx, &err);
 *     const rf_hparams *hp = rf_model_hparams(model);
 *     float *hidden = malloc(sizeof(float) * enc.n * hp->hidden_size);
 *     rf_batch batch = { .batch = 1, .seq_len = enc.n, .input_ids = enc.ids,
 *                        .token_type_ids = enc.type_ids, .attention_mask = enc.mask };
 *     rf_outputs out = { .last_hidden_state = hidden };
 *     rf_forward(ctx, &batch, &out, &err);
 *
 *     free(hidden);
 *     rf_encoding_free(&enc);
 *     rf_context_free(ctx);
 *     rf_model_free(model);
 *
 * Threads: a model is read-only after loading and may be shared by any
 * number of threads; a context belongs to one thread at a time.
 *
 * Errors: every call that can fail returns an rf_status and, when `err` is
 * not NULL, writes a one-line message naming what and where. The library
 * never prints and never exits. Every *_free(NULL) is a no-op.
 */
#ifndef ROFORMER_H
#define ROFORMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RF_VERSION "0.1.0"

/* ==== Status and errors ==== */

typedef enum {
    RF_OK = 0,
    RF_ERR_IO,          /* a file could not be opened, read, mapped or written */
    RF_ERR_FORMAT,      /* malformed bytes: truncated file, bad magic, bad JSON, bad pickle */
    RF_ERR_UNSUPPORTED, /* well-formed but not handled: dtype, pickle opcode, architecture */
    RF_ERR_SHAPE,       /* a tensor or input has the wrong shape, or is missing */
    RF_ERR_INPUT,       /* bad caller input: invalid UTF-8, id out of range, too long */
    RF_ERR_LIMIT,       /* a resource limit on untrusted input was exceeded */
    RF_ERR_NOMEM,       /* out of memory */
} rf_status;

typedef struct {
    char message[512];
} rf_error;

const char *rf_status_string(rf_status status);

/* ==== Model ==== */

typedef enum {
    RF_ACT_GELU,     /* exact erf form, HF "gelu" */
    RF_ACT_GELU_NEW, /* tanh approximation, HF "gelu_new" */
    RF_ACT_RELU,
    RF_ACT_SILU,     /* HF "silu" and "swish" */
    RF_ACT_TANH,
    RF_ACT_LINEAR,   /* identity */
} rf_activation;

typedef enum {
    RF_HEAD_NONE,      /* RoFormerModel: encoder only */
    RF_HEAD_MLM,       /* RoFormerForMaskedLM */
    RF_HEAD_SEQ_CLS,   /* RoFormerForSequenceClassification */
    RF_HEAD_TOKEN_CLS, /* RoFormerForTokenClassification */
    RF_HEAD_QA,        /* RoFormerForQuestionAnswering */
} rf_head_kind;

typedef enum {
    RF_TOKENIZER_WOBERT, /* jieba words, then BERT basic + WordPiece (RoFormerTokenizer) */
    RF_TOKENIZER_BERT,   /* BERT basic + WordPiece only (BertTokenizer, char-level models) */
} rf_tokenizer_mode;

/* Values are ggml's type ids, as stored in GGUF. */
typedef enum {
    RF_DTYPE_F32 = 0,
    RF_DTYPE_F16 = 1,
    RF_DTYPE_BF16 = 30,
} rf_dtype;

typedef struct {
    int32_t vocab_size;
    int32_t embedding_size;      /* E: width of the word embeddings */
    int32_t hidden_size;         /* D */
    int32_t num_layers;
    int32_t num_heads;           /* H; head size Dh = D / H */
    int32_t intermediate_size;   /* F */
    int32_t max_position;        /* longest sequence the model accepts */
    int32_t type_vocab_size;
    float layer_norm_eps;
    rf_activation hidden_act;
    bool rotary_value;           /* rotate V as well as Q and K */
    rf_head_kind head;
    int32_t num_labels;          /* sequence / token classification */
    bool has_pooler;
    rf_activation pooler_act;
    rf_tokenizer_mode tokenizer;
    bool do_lower_case;
    int32_t pad_id, unk_id, cls_id, sep_id, mask_id;
    rf_dtype dtype;              /* how the weights are stored in the file */
} rf_hparams;

/* Names as config.json, the GGUF file and the CLI spell them:
 * "gelu", "gelu_new", ...; "none", "mlm", "cls", "token", "qa";
 * "wobert", "bert"; "f32", "f16", "bf16". */
const char *rf_activation_name(rf_activation act);
const char *rf_head_name(rf_head_kind head);
const char *rf_tokenizer_mode_name(rf_tokenizer_mode mode);
const char *rf_dtype_name(rf_dtype dtype);

typedef struct rf_model rf_model;

/* Loads a converted .gguf file (memory-mapped, read-only) or, when `path`
 * is a directory, a HuggingFace checkpoint converted in memory with the
 * default conversion parameters. */
rf_status rf_model_load(const char *path, rf_model **out, rf_error *err);
void rf_model_free(rf_model *model);

const rf_hparams *rf_model_hparams(const rf_model *model);
/* Label name of class `i` (id2label), or NULL when out of range. */
const char *rf_model_label(const rf_model *model, int32_t i);
/* Vocabulary entry of token `id`, or NULL when out of range. */
const char *rf_model_token(const rf_model *model, int32_t id);
/* Number of tensors in the model file. */
int32_t rf_model_tensor_count(const rf_model *model);

/* ==== Conversion from HuggingFace checkpoints ==== */

typedef enum {
    RF_TOKENIZER_AUTO = -1, /* from tokenizer_config.json's tokenizer_class */
} rf_tokenizer_choice;

typedef struct {
    rf_dtype dtype;          /* storage type of the weight matrices in the output
                                (biases and LayerNorm weights stay f32) */
    const char *jieba_dict;  /* jieba dict.txt; NULL = the python3-jieba one */
    int tokenizer;           /* RF_TOKENIZER_AUTO, RF_TOKENIZER_WOBERT or RF_TOKENIZER_BERT */
} rf_convert_params;

rf_convert_params rf_convert_default_params(void);
/* Reads an HF directory (config.json, vocab.txt, optional
 * tokenizer_config.json, model.safetensors or pytorch_model.bin) and
 * writes one GGUF file (through a temporary file: a failed conversion
 * leaves nothing at out_path). The format: models/README.md. */
rf_status rf_convert(const char *hf_dir, const char *out_path,
                     const rf_convert_params *params, rf_error *err);

/* ==== Tokenizer ==== */

/* One tokenized input, [CLS] a [SEP] (b [SEP]). Arrays are owned by the
 * encoding and grown as needed; reuse one encoding across calls. */
typedef struct {
    int32_t *ids;
    int32_t *type_ids;
    int32_t *mask;        /* all 1: padding is added by batching */
    int32_t *start, *end; /* byte span of each token in its text ([start, end));
                             -1 for [CLS]/[SEP]; type_ids tell which text */
    int32_t n;            /* number of tokens */
    int32_t cap;          /* allocated length of every array */
} rf_encoding;

/* Tokenizes `text` (and `pair` when not NULL) exactly as HF's
 * RoFormerTokenizer (or BertTokenizer in RF_TOKENIZER_BERT mode) called as
 * tok(text, pair, truncation=True, max_length=max_length).
 * max_length <= 0: no truncation. Invalid UTF-8 is RF_ERR_INPUT. */
rf_status rf_tokenize(const rf_model *model, const char *text, size_t text_len,
                      const char *pair, size_t pair_len, int32_t max_length,
                      rf_encoding *out, rf_error *err);
void rf_encoding_free(rf_encoding *enc);

/* ==== Encoder ==== */

typedef struct rf_context rf_context;

typedef struct {
    int32_t max_batch;   /* largest batch a forward call will get */
    int32_t max_seq_len; /* longest sequence; <= 0 means the model's max_position */
    int32_t n_threads;   /* compute threads; <= 0 means all cores */
} rf_context_params;

/* max_batch 1, max_seq_len the model's, n_threads all cores. */
rf_context_params rf_context_default_params(void);
/* Allocates every buffer the forward pass needs for max_batch x max_seq_len
 * tokens (rf_forward allocates nothing) and starts n_threads - 1 worker
 * threads. The engine splits its work over its own threads and sets
 * OpenBLAS, process-wide, to one thread. */
rf_status rf_context_create(const rf_model *model, const rf_context_params *params,
                            rf_context **out, rf_error *err);
void rf_context_free(rf_context *ctx);

/* A right-padded batch: every array is [batch][seq_len], row-major. */
typedef struct {
    int32_t batch;
    int32_t seq_len;
    const int32_t *input_ids;
    const int32_t *token_type_ids; /* NULL = all 0 */
    const int32_t *attention_mask; /* NULL = all 1 */
} rf_batch;

/* Caller-owned output buffers; leave a pointer NULL to skip that output.
 * B = batch, L = seq_len, D = hidden_size, V = vocab_size. */
typedef struct {
    float *last_hidden_state; /* [B][L][D] */
    float *hidden_states;     /* [num_layers + 1][B][L][D]: embeddings, then each layer */
    float *pooled;            /* [B][D], models with a pooler */
    float *logits;            /* MLM [B][L][V] (or [B][P][V] with mlm_positions);
                                 sequence classification [B][num_labels];
                                 token classification [B][L][num_labels] */
    float *start_logits;      /* QA [B][L] */
    float *end_logits;        /* QA [B][L] */
    const int32_t *mlm_positions; /* MLM only: run the decoder at these P positions */
    int32_t n_mlm_positions;
} rf_outputs;

/* Runs the encoder and the model's head on `batch`. Padded positions are
 * computed as HF computes them; each sequence of a padded batch gives what
 * it gives alone (up to float rounding). RF_ERR_INPUT, with the position,
 * for a batch larger than the context, a sequence longer than the model's
 * max_position or the context's max_seq_len, an id outside the vocabulary,
 * a type id outside type_vocab_size, a mask value other than 0/1, an MLM
 * position outside the sequence, or an output the model has no head for. */
rf_status rf_forward(rf_context *ctx, const rf_batch *batch, rf_outputs *out, rf_error *err);

#ifdef __cplusplus
}
#endif

#endif /* ROFORMER_H */
