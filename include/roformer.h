/*
 * roformer.h — the public interface of roformer.c, a RoFormer encoder
 * inference engine (Su et al. 2021) that gives the same tokens and numbers
 * as HuggingFace transformers' RoFormer classes.
 *
 * Usage:
 *
 *     rf_error err;
 *     rf_model *model;
 *     if (rf_model_load("model.gguf", &model, &err) != RF_OK) {  // or an HF directory, or hf:OWNER/NAME
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
 * The jobs (embeddings, classification, similarity, rerank, fill-mask, NER,
 * QA, CAIL2019-SCM case matching) take many inputs at once and batch them:
 *
 *     rf_pipeline *pl;
 *     rf_pipeline_create(model, NULL, &pl, &err);     // batch 8, the model's truncation
 *     rf_text in[2] = {{"今天天气很好", 18}, {"今天天气不错", 18}};
 *     float *vecs = malloc(sizeof(float) * 2 * hp->hidden_size);
 *     rf_embed(pl, in, 2, RF_POOLING_MEAN, true, vecs, NULL, &err);
 *     float cos = rf_cosine(vecs, vecs + hp->hidden_size, hp->hidden_size);
 *     free(vecs);
 *     rf_pipeline_free(pl);                               // before rf_model_free
 *
 * (tools/examples/similarity.c is a whole program.)
 *
 * Threads: a model is read-only after loading and may be shared by any
 * number of threads; a context or pipeline belongs to one thread at a time.
 *
 * Errors: every call that can fail returns an rf_status and, when `err` is
 * not NULL, writes a one-line message naming what and where. `err` is
 * written only on failure: after RF_OK its contents are as they were. (A
 * batch call's rf_item_status array is the exception, written for every
 * input: RF_OK with an empty message, or that input's failure.) The
 * library never prints and never exits. Every *_free(NULL) is a no-op.
 *
 * Strings and arrays the library returns: the *_name and
 * rf_status_string strings are static; a model's strings (labels, tokens,
 * its sentence configuration and prompts, rf_entity.type) belong to the
 * model and live until rf_model_free; results with a *_free function
 * (rf_encoding, rf_fill_mask_result, rf_ner_result) own their arrays until
 * it is called. The caller never frees a pointer the library returns.
 */
#ifndef ROFORMER_H
#define ROFORMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header. rf_version() gives the library's: a program
 * built against one header and run with another library can compare them
 * (rf_version_matches). The library's file is libroformer.so.MAJOR: a new
 * MAJOR breaks the ABI, a new MINOR only adds.
 *
 * 1.0.0: rf_pipeline_params holds its context's parameters (`.context`, an
 * rf_context_params) where 0.x repeated five of them (n_threads, compute,
 * extend_positions, rope_scaling, rope_factor): pp.n_threads is now
 * pp.context.n_threads. The struct's layout changed, hence the MAJOR.
 *
 * 2.0.0: every job's _encodings twin takes what its text form takes:
 * rf_embed_encodings gained `normalize` and `items`, rf_token_embeddings
 * `items`.
 *
 * 2.1.0: the element-wise kernels' builds are chosen like the products'
 * (ROFORMER_KERNEL's elementwise=NAME, rows of rf_kernels_list), and
 * rf_kernels_chosen_by says who chose each. */
#define RF_VERSION_MAJOR 2
#define RF_VERSION_MINOR 1
#define RF_VERSION_PATCH 0
#define RF_VERSION "2.1.0"

/* What libroformer.so exports: the functions marked RF_API below, and
 * nothing else (the library is built with -fvisibility=hidden). */
#if defined(__GNUC__) || defined(__clang__)
#define RF_API __attribute__((visibility("default")))
#else
#define RF_API
#endif

/* The library's version, "MAJOR.MINOR.PATCH" (RF_VERSION of the header it
 * was built with). A static string. */
RF_API const char *rf_version(void);
/* True when the library loaded is compatible with the header a program was
 * built with: the same MAJOR and a MINOR at least the header's. Call it as
 * rf_version_matches(RF_VERSION_MAJOR, RF_VERSION_MINOR). */
RF_API bool rf_version_matches(int32_t major, int32_t minor);

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
    RF_ERR_NETWORK,     /* a download failed: no connection, refused (401/403/404), interrupted */
} rf_status;

typedef struct {
    char message[512];
} rf_error;

RF_API const char *rf_status_string(rf_status status);

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
    RF_TOKENIZER_AUTO = -1, /* conversion only: from tokenizer_config.json's tokenizer_class */
    RF_TOKENIZER_WOBERT,    /* jieba words, then BERT basic + WordPiece (RoFormerTokenizer) */
    RF_TOKENIZER_BERT,      /* BERT basic + WordPiece only (BertTokenizer, char-level models) */
} rf_tokenizer_mode;

/* What normalises the sum at the embeddings and after each sublayer. */
typedef enum {
    RF_NORM_LAYER, /* LayerNorm with gain and bias (RoFormer, config norm_type "layer_norm") */
    RF_NORM_RMS,   /* x / sqrt(mean(x^2) + eps), no parameters (RoFormer-v2: any other norm_type) */
} rf_norm_type;

/* How the rotary angles are computed (docs/long-inputs.md). Pair i of a
 * head of Dh turns by pos * theta_i, theta_i = base^(-2i/Dh), base 10000:
 *   none:   as trained;
 *   linear: position interpolation, pos / factor (a trained range of P
 *           positions stretched over P * factor);
 *   ntk:    NTK-aware scaling, base * factor^(Dh / (Dh - 2)).
 * RF_ROPE_SCALING_DEFAULT in rf_context_params (a pipeline's too) means
 * the model's own (rf_hparams.rope_scaling: none unless its file records
 * one). Quality past the trained length, scaled or not, belongs to the
 * checkpoint, not to the engine. */
typedef enum {
    RF_ROPE_SCALING_DEFAULT = 0,
    RF_ROPE_SCALING_NONE = 1,
    RF_ROPE_SCALING_LINEAR = 2,
    RF_ROPE_SCALING_NTK = 3,
} rf_rope_scaling;

/* Values are ggml's type ids, as stored in GGUF. RF_DTYPE_Q8 is ggml's
 * I8: int8 values, each matrix with one f32 scale per row (output
 * channel) in a companion tensor (models/README.md). */
typedef enum {
    RF_DTYPE_F32 = 0,
    RF_DTYPE_F16 = 1,
    RF_DTYPE_Q8 = 24,
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
    rf_norm_type norm_type;      /* RF_NORM_RMS: RoFormer-v2 (and an MLM head of
                                    the tied decoder alone, no transform, no bias) */
    bool use_bias;               /* the encoder's Linears (Q, K, V, attention
                                    output, FFN up and down) have biases */
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
    rf_rope_scaling rope_scaling; /* the checkpoint's default: RF_ROPE_SCALING_NONE,
                                     _LINEAR or _NTK (GGUF roformer.rope.scaling.type) */
    float rope_factor;           /* its factor (> 0; 1 with none) */
} rf_hparams;

/* Names as config.json, the GGUF file and the CLI spell them:
 * "gelu", "gelu_new", ...; "none", "mlm", "cls", "token", "qa";
 * "wobert", "bert"; "f32", "f16", "bf16", "q8"; "layer_norm", "rms_norm". */
RF_API const char *rf_activation_name(rf_activation act);
RF_API const char *rf_norm_type_name(rf_norm_type norm);
RF_API const char *rf_head_name(rf_head_kind head);
RF_API const char *rf_tokenizer_mode_name(rf_tokenizer_mode mode);
RF_API const char *rf_dtype_name(rf_dtype dtype);
/* "default", "none", "linear", "ntk" */
RF_API const char *rf_rope_scaling_name(rf_rope_scaling scaling);

typedef struct rf_model rf_model;

/* Loads a converted .gguf file (memory-mapped, read-only) or, when `path`
 * is a directory, a HuggingFace checkpoint converted in memory with the
 * default conversion parameters. "hf:OWNER/NAME[@REVISION]" names a
 * checkpoint on the HuggingFace hub: rf_hub_pull with the default
 * parameters gives the GGUF to load (downloaded and converted on first
 * use, read from the cache with no network after that); a local path that
 * starts with "hf:" is written "./hf:...". */
RF_API rf_status rf_model_load(const char *path, rf_model **out, rf_error *err);
RF_API void rf_model_free(rf_model *model);

/* The model's own hyper-parameters, valid until rf_model_free. */
RF_API const rf_hparams *rf_model_hparams(const rf_model *model);
/* Label name of class `i` (id2label), or NULL when out of range; the
 * model's string, valid until rf_model_free. */
RF_API const char *rf_model_label(const rf_model *model, int32_t i);
/* Vocabulary entry of token `id`, or NULL when out of range; the model's
 * string, valid until rf_model_free. */
RF_API const char *rf_model_token(const rf_model *model, int32_t id);
/* Number of tensors in the model file. */
RF_API int32_t rf_model_tensor_count(const rf_model *model);

/* How a sequence's hidden states become one vector (rf_embed and the
 * sentence-transformers configuration below). */
typedef enum {
    RF_POOLING_DEFAULT = -1, /* only where a call says so (rf_rerank_params): the
                                model's own choice, as that call states it */
    RF_POOLING_CLS,    /* hidden state of [CLS] */
    RF_POOLING_MEAN,   /* mean of the hidden states of the real (mask 1) tokens */
    RF_POOLING_POOLER, /* the model's pooler (RoFormer-Sim): act(W·h[CLS] + b), act its
                          pooler activation (tanh, or none: linear) */
    RF_POOLING_MAX,    /* per dimension, the largest value over the real tokens */
    RF_POOLING_LAST,   /* hidden state of the last real token ([SEP] for one text) */
} rf_pooling;

/* "default", "cls", "mean", "pooler", "max", "last" ("unknown" otherwise). */
RF_API const char *rf_pooling_name(rf_pooling pooling);

/* How sentence-transformers runs the model, when it was converted from a
 * sentence-transformers folder (modules.json, 1_Pooling/config.json,
 * sentence_bert_config.json, config_sentence_transformers.json): the
 * defaults that embedding front ends (CLI embed, serve, Python encode) use
 * unless told otherwise. The struct and its strings belong to the model and
 * live until rf_model_free. */
typedef struct {
    bool present;                     /* false: a plain checkpoint; nothing below is set */
    rf_pooling pooling;               /* CLS, MEAN, MAX or LAST */
    bool normalize;                   /* a Normalize module follows the pooling */
    int32_t max_seq_length;           /* truncate inputs to this many tokens; 0: not given */
    bool do_lower_case;               /* the texts are lower-cased (the tokenizer does it) */
    int32_t n_prompts;
    const char *const *prompt_names;  /* [n_prompts], e.g. "query" */
    const char *const *prompts;       /* [n_prompts], the text put before an input */
    const char *default_prompt_name;  /* one of prompt_names, or NULL */
} rf_sentence_config;

RF_API const rf_sentence_config *rf_model_sentence_config(const rf_model *model);
/* The text of the model's prompt `name`; name NULL: its default prompt.
 * NULL when there is no such prompt (or no default). The model's string. */
RF_API const char *rf_model_prompt(const rf_model *model, const char *name);

/* ==== Conversion from HuggingFace checkpoints ==== */

/* The tokenizer of a conversion: an rf_tokenizer_mode or RF_TOKENIZER_AUTO. */
typedef rf_tokenizer_mode rf_tokenizer_choice;

/* The pooler activation of a conversion (the values of rf_activation). */
typedef enum {
    RF_POOLER_ACT_AUTO = -1,             /* config.json's pooler_activation, default tanh */
    RF_POOLER_ACT_TANH = RF_ACT_TANH,     /* BERT's pooler */
    RF_POOLER_ACT_LINEAR = RF_ACT_LINEAR, /* no activation (RoFormer-Sim) */
} rf_pooler_choice;

typedef struct {
    rf_dtype dtype;          /* storage type of the weight matrices in the output
                                (biases and LayerNorm weights stay f32); Q8:
                                quantized per row, int8 + f32 scales */
    const char *jieba_dict;  /* jieba dict.txt; NULL = the python3-jieba one */
    rf_tokenizer_choice tokenizer;      /* RF_TOKENIZER_AUTO, RF_TOKENIZER_WOBERT or
                                           RF_TOKENIZER_BERT */
    rf_pooler_choice pooler_activation; /* RF_POOLER_ACT_AUTO, _TANH or _LINEAR: the
                                pooler's activation, overriding config.json. RoFormer-Sim's
                                publisher pools with no tanh (RF_ACT_LINEAR), which its
                                config.json does not always say. A choice other than
                                AUTO for a checkpoint without a pooler is RF_ERR_INPUT. */
} rf_convert_params;

RF_API rf_convert_params rf_convert_default_params(void);
/* Reads an HF directory (config.json, vocab.txt, optional
 * tokenizer_config.json, model.safetensors or pytorch_model.bin) and
 * writes one GGUF file (through a temporary file: a failed conversion
 * leaves nothing at out_path). The format: models/README.md. */
RF_API rf_status rf_convert(const char *hf_dir, const char *out_path,
                            const rf_convert_params *params, rf_error *err);

/* ==== Checkpoints from the HuggingFace hub ==== */

/*
 * rf_hub_pull("OWNER/NAME[@REVISION]", ...) downloads config.json,
 * vocab.txt, tokenizer_config.json and special_tokens_map.json (when the
 * repository has them) and model.safetensors, else pytorch_model.bin, into
 * the cache, converts them once, and gives the path of the cached GGUF.
 *
 *   cache:    $ROFORMER_CACHE, else $XDG_CACHE_HOME/roformer, else
 *             ~/.cache/roformer; one folder per repository and revision,
 *             {cache}/{owner}/{name}/{revision} ('/' in a revision as %2F),
 *             holding the downloaded files and the GGUF files converted
 *             from them, one per set of options (model-f32.gguf,
 *             model-f16-bert.gguf, model-f32-pooler-linear.gguf, ...).
 *   network:  libcurl; {endpoint}/{owner}/{name}/resolve/{revision}/{file},
 *             endpoint $HF_ENDPOINT or https://huggingface.co; $HF_TOKEN is
 *             sent as a Bearer token (to the hub only, not to the hosts it
 *             redirects to); redirects are followed.
 *   files:    each is downloaded to {file}.part and renamed once complete
 *             and, for LFS files, once its sha256 equals the hub's
 *             X-Linked-Etag / ETag (a mismatch deletes it); an interrupted
 *             download leaves its .part, which the next call resumes with
 *             a Range request. A GGUF already in the cache, or a complete
 *             set of downloaded files, is used with no network at all.
 *
 * Processes pulling the same folder at once take turns (a lock file).
 * Errors are one line: no network (RF_ERR_NETWORK, saying that a local
 * directory or .gguf works offline), 401/403 (naming HF_TOKEN), 404 of the
 * repository or revision, no weights file (RF_ERR_NETWORK), a checksum
 * mismatch (RF_ERR_FORMAT), a full disk (RF_ERR_IO), an interruption
 * (RF_ERR_NETWORK, "run it again to resume").
 */

/* Bytes of `file` done so far out of total (-1: unknown), resumed bytes
 * included; called often during a download, and once with done == total
 * at its end. */
typedef void (*rf_hub_progress_fn)(void *user, const char *file, int64_t done, int64_t total);

typedef struct {
    rf_convert_params convert;  /* dtype, tokenizer and pooler activation of the GGUF
                                   (jieba_dict must be NULL) */
    rf_hub_progress_fn progress; /* NULL: none */
    void *progress_user;
} rf_hub_params;

RF_API rf_hub_params rf_hub_default_params(void);
/* spec: "OWNER/NAME[@REVISION]", an "hf:" prefix allowed; revision
 * default "main". Writes the GGUF's path into path[size]. */
RF_API rf_status rf_hub_pull(const char *spec, const rf_hub_params *params, char *path, size_t size,
                             rf_error *err);

/* The cache folder in use (it may not exist yet). */
RF_API rf_status rf_hub_cache_dir(char *path, size_t size, rf_error *err);

/* One cached file, as rf_hub_list hands it to its callback: the strings
 * are valid during that call only. */
typedef struct {
    const char *repo;     /* "OWNER/NAME" */
    const char *revision; /* as the user wrote it ("refs/pr/1") */
    const char *dir;      /* the folder */
    const char *file;     /* a file in it ("model-f32.gguf", "model.safetensors.part") */
    int64_t bytes;
} rf_hub_cached_file;

/* Calls fn for each file of each cached repository and revision, sorted by
 * repository, revision and file name; fn returning non-zero stops the walk.
 * A cache that does not exist yet lists nothing. */
RF_API rf_status rf_hub_list(int (*fn)(void *user, const rf_hub_cached_file *f), void *user,
                             rf_error *err);

/* The sha256 of a whole file as 64 lower-case hex digits and a NUL: the
 * digest downloads are checked against, and the checksum `roformer serve`
 * shows of each model file. RF_ERR_IO when the file cannot be read. */
RF_API rf_status rf_sha256_file(const char *path, char hex[65], rf_error *err);

/* ==== Tokenizer ==== */

/* One tokenized input, [CLS] a [SEP] (b [SEP]). Arrays are owned by the
 * encoding and grown as needed; reuse one encoding across calls (it also
 * keeps the tokenizer's working memory, so a reused encoding makes a call
 * allocation-free). Start from {0}; release with rf_encoding_free. Like a
 * context, an encoding belongs to one thread at a time. */
typedef struct {
    int32_t *ids;
    int32_t *type_ids;
    int32_t *mask;        /* all 1: padding is added by batching */
    int32_t *start, *end; /* byte span of each token in its text ([start, end));
                             -1 for [CLS]/[SEP]; type_ids tell which text */
    int32_t n;            /* number of tokens */
    int32_t cap;          /* allocated length of every array */
    struct rf_tokenize_scratch *scratch; /* internal working memory */
} rf_encoding;

/* Tokenizes `text` (and `pair` when not NULL) exactly as HF's
 * RoFormerTokenizer (or BertTokenizer in RF_TOKENIZER_BERT mode) called as
 * tok(text, pair, truncation=True, max_length=max_length).
 * max_length <= 0: no truncation. Invalid UTF-8 is RF_ERR_INPUT. */
RF_API rf_status rf_tokenize(const rf_model *model, const char *text, size_t text_len,
                             const char *pair, size_t pair_len, int32_t max_length,
                             rf_encoding *out, rf_error *err);
RF_API void rf_encoding_free(rf_encoding *enc);

/* Which end of a too-long input truncation cuts (HF's truncation_side). */
typedef enum {
    RF_TRUNCATE_RIGHT = 0, /* keep the first tokens (the default) */
    RF_TRUNCATE_LEFT = 1,  /* keep the last tokens */
} rf_truncation_side;

/* rf_tokenize with the tokenizer's truncation_side set: with
 * RF_TRUNCATE_LEFT each text keeps its last tokens (the same count as
 * RF_TRUNCATE_RIGHT keeps of its first, longest_first for a pair). */
RF_API rf_status rf_tokenize_truncated(const rf_model *model, const char *text, size_t text_len,
                                       const char *pair, size_t pair_len, int32_t max_length,
                                       rf_truncation_side side, rf_encoding *out, rf_error *err);

/* ==== Encoder ==== */

typedef struct rf_context rf_context;

/* The arithmetic of the encoder layers' matrix products. F32 runs on every
 * CPU. The other two are opt-in, and rf_context_create fails with
 * RF_ERR_UNSUPPORTED on a CPU that lacks what they need:
 *
 *   RF_COMPUTE_BF16  x86-64: AVX512_BF16; ARM64: BF16 (BFDOT / BFMMLA).
 *     The products' inputs and weights are rounded to bfloat16 and summed
 *     in f32: results within bf16 rounding of f32 (the weights of a model
 *     converted with --dtype bf16 already are bf16).
 *   RF_COMPUTE_INT8  x86-64: AVX2; ARM64: any CPU. The four Linear
 *     products of every layer run in 8-bit integers: weights quantized per
 *     output channel (as stored by --dtype q8, or from the f32 weights),
 *     each input row quantized when it is used, exact int32 sums.
 *
 * Attention's own products (scores and weighted values) run in bf16 with
 * either type where the CPU has the bf16 kernel, else in f32. Embeddings,
 * LayerNorm, softmax and the heads stay f32. The packed bf16 / int8
 * weights are made once per model, by the first context that needs them,
 * and shared by every later one. Which kernel runs on which CPU, and what
 * each costs in accuracy: docs/compute.md. */
typedef enum {
    RF_COMPUTE_F32 = 0,
    RF_COMPUTE_BF16 = 1,
    RF_COMPUTE_INT8 = 2,
} rf_compute_type;

typedef struct {
    int32_t max_batch;   /* largest batch a forward call will get */
    int32_t max_seq_len; /* longest sequence; <= 0 means the model's max_position */
    int32_t n_threads;   /* compute threads; <= 0 means all cores */
    bool skip_padding;    /* spend no work on padding. The real tokens
                             of a right-padded batch (mask 1...1 0...0 per
                             sequence) are packed back to back for the linear
                             layers and each sequence attends over its own
                             length. Outputs at real positions equal the
                             default's up to float rounding; outputs at padded
                             positions are unspecified (hidden states there are
                             zero), where the default computes them as HF
                             does. A batch whose mask is not of that form runs
                             the default way. */
    rf_compute_type compute; /* RF_COMPUTE_F32 (0, the default), RF_COMPUTE_BF16 or
                                RF_COMPUTE_INT8 */
    bool extend_positions; /* accept sequences longer than the model's
                              max_position (up to RF_MAX_SEQ_LEN), the rotary
                              angles computed past it by the same formula.
                              What the model makes of positions it was not
                              trained on is the checkpoint's affair. */
    rf_rope_scaling rope_scaling; /* RF_ROPE_SCALING_DEFAULT (0): the model's */
    float rope_factor;    /* > 1 stretches the trained range for linear and ntk;
                             <= 0: the model's (rf_hparams.rope_factor). With
                             linear or ntk, sequences up to max_position *
                             factor are accepted without extend_positions. */
} rf_context_params;

/* Longest sequence any context accepts, with extend_positions. */
#define RF_MAX_SEQ_LEN (1 << 16)

/* max_batch 1, max_seq_len the model's, n_threads all cores, skip_padding false,
 * compute f32, no extension, the model's rope scaling. */
RF_API rf_context_params rf_context_default_params(void);
/* The longest sequence a context made with `params` (NULL: defaults)
 * accepts: the model's max_position; max_position * factor (rounded down)
 * with linear or ntk scaling; RF_MAX_SEQ_LEN with extend_positions. */
RF_API int32_t rf_context_length_limit(const rf_model *model, const rf_context_params *params);
/* Allocates every buffer the forward pass needs for max_batch x max_seq_len
 * tokens (rf_forward allocates nothing) and starts n_threads - 1 worker
 * threads. The engine splits its work over its own threads and sets
 * OpenBLAS, process-wide, to one thread. */
RF_API rf_status rf_context_create(const rf_model *model, const rf_context_params *params,
                                   rf_context **out, rf_error *err);
/* Re-sizes the context's scratch for max_batch x max_seq_len tokens
 * (max_seq_len <= 0: the model's max_position), keeping its threads. On failure the context is
 * unchanged and still usable. */
RF_API rf_status rf_context_resize(rf_context *ctx, int32_t max_batch, int32_t max_seq_len,
                                   rf_error *err);
RF_API void rf_context_free(rf_context *ctx);
/* Parallel regions the context has run since it was made: each a wake of
 * its worker threads and a wait for the last of them (none with one
 * thread). A forward pass's count is the difference across it. */
RF_API int64_t rf_context_parallel_regions(const rf_context *ctx);
/* How evenly the encoder's matrix products of one forward pass over
 * `tokens` tokens are shared among the context's threads: mean over
 * busiest thread's multiply-adds, summed over the products (1: perfect).
 * The planner's figure, not a measurement (docs/scaling.md). */
RF_API double rf_context_partition_efficiency(const rf_context *ctx, int32_t tokens);

/* Where a context's forward passes spend their wall time, by kind of step,
 * added up over the passes since timing was turned on (`roformer bench`
 * prints it per pass). Measured with the monotonic clock on the calling
 * thread around each step; the parallel regions' time that the calling
 * thread spent waiting for the other threads is counted apart, as waits
 * (but for a product's quantizing region, which counts whole as quantize_ms).
 * The kinds never overlap: they add up to at most forward_ms; the rest is
 * rf_forward's untimed work (checking the batch, the heads). */
typedef struct {
    double products_ms;    /* the Linear products, with bias, activation and RoPE */
    double attention_ms;   /* attention: scores, softmax, weighted values */
    double norms_ms;       /* LayerNorm / RMS norm and the residual add they fold in */
    double quantize_ms;    /* bf16 / int8: products' inputs rounded or quantized */
    double elementwise_ms; /* embedding gather, mask, hidden-state copies */
    double waits_ms;       /* calling thread idle inside the steps' regions */
    double forward_ms;     /* wall time of the passes, all of rf_forward */
    int64_t forwards;      /* passes counted */
} rf_step_times;

/* Turns step timing on or off, and starts its totals again at
 * zero. Off (the default) it costs nothing measurable; on, a few clock
 * reads per step. */
RF_API void rf_context_time_steps(rf_context *ctx, bool on);
/* The totals since the last rf_context_time_steps (all zero if never). */
RF_API void rf_context_step_times(const rf_context *ctx, rf_step_times *out);

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
RF_API rf_status rf_forward(rf_context *ctx, const rf_batch *batch, rf_outputs *out, rf_error *err);


/* ==== Jobs: embed, classify, similarity, rerank, fill-mask, token classification, QA, SCM ====
 *
 * A pipeline owns a context and the batch buffers. Every job takes several
 * inputs at once: they are tokenized, grouped by similar length into batches
 * of `batch_size` (padded with the attention mask), run, and the results are
 * written back in input order.
 *
 * One bad input does not spoil the others: with `items` non-NULL each input
 * gets its own rf_item_status (invalid UTF-8, too long without truncation,
 * no [MASK], ...) and the call returns RF_OK unless something beyond a single
 * input failed (memory, the forward pass). With `items` NULL the first bad
 * input fails the whole call. A pipeline is used by one thread at a time.
 *
 * Each job has a twin ending in _encodings, declared right after it, for
 * callers that tokenized first (to count tokens, to refuse a long input,
 * to run token ids as given). A twin gives the bits of its text form when
 * encs[i] is what the pipeline would make of input i, that is
 * rf_tokenize_truncated at the pipeline's max_length (0 on a pipeline with
 * a window, or for rf_qa's windows: doc_stride >= 0) and truncation side.
 * The encodings run as given, with no [CLS]/[SEP] added and no truncation,
 * batched by length like the text jobs; ids must be in the vocabulary. An
 * empty encoding, or one longer than rf_pipeline_length_limit that is not
 * cut into windows, fails its input (per-input statuses as in the text
 * jobs; without `items`, the call). Where the job reads the text
 * (fill-mask's sequence, offsets in characters, scm's distinct documents)
 * the texts come too. The encodings stay the caller's.
 */

/* One input: a text, or a pair of texts ([CLS] text [SEP] pair [SEP]).
 * UTF-8, not NUL-terminated. */
typedef struct {
    const char *text;
    size_t text_len;
    const char *pair; /* NULL: single text */
    size_t pair_len;
} rf_text;

/* The outcome of one input of a batch call. */
typedef struct {
    rf_status status;
    rf_error error;
} rf_item_status;

typedef struct {
    /* Its context's parameters: n_threads, compute and the positions
     * (extend_positions, rope_scaling, rope_factor) as rf_context_params
     * says. The pipeline sizes the context itself: max_batch, max_seq_len
     * and skip_padding are ignored (it runs batch_size sequences, as long
     * as the inputs need, skipping padding). */
    rf_context_params context;
    int32_t max_length; /* truncate each input to this many tokens (HF longest_first);
                           0: no truncation, and an input longer than the
                           model's max_position fails; RF_MAX_LENGTH_MODEL (< 0,
                           the default): rf_model_default_max_length, none
                           with windows */
    int32_t batch_size; /* sequences per forward pass */
    /* Documents longer than a window (rf_embed, rf_similarity, rf_classify,
     * rf_classify_logits; 0: off). A single text of more than `window`
     * tokens is cut into overlapping windows of at most `window` tokens,
     * each [CLS] part [SEP], the next starting `stride` text tokens
     * before the previous one ends; each window is encoded, and the
     * windows pooled into one result: the mean of the window vectors for
     * embeddings (normalized after, when asked), the mean of the window
     * logits for classification. window > 2, 0 <= stride < window - 2
     * (RF_STRIDE_DEFAULT, < 0, the default: rf_window_default_stride), and
     * window at most what the model accepts (rf_context_length_limit);
     * a pair longer than the window fails (only single texts are cut).
     * Other jobs ignore windows. Texts no longer than the window run as
     * they do without it. */
    int32_t window;
    int32_t stride;
    rf_truncation_side truncation_side; /* which end max_length cuts (default
                                           RF_TRUNCATE_RIGHT) */
} rf_pipeline_params;

typedef struct rf_pipeline rf_pipeline;

/* The model's own truncation (RF_MAX_LENGTH_MODEL), batch 8, all cores, no
 * windows (stride RF_STRIDE_DEFAULT when a window is set). */
RF_API rf_pipeline_params rf_pipeline_default_params(void);
/* The model must outlive the pipeline. max_length above what the model
 * accepts (rf_context_length_limit) is RF_ERR_INPUT, and so are a
 * rope_factor that is not finite, a bad window or stride. */
RF_API rf_status rf_pipeline_create(const rf_model *model, const rf_pipeline_params *params,
                                    rf_pipeline **out, rf_error *err);
RF_API void rf_pipeline_free(rf_pipeline *pl);
/* Changes which end later calls truncate (RF_ERR_INPUT for a value that is
 * not an rf_truncation_side). */
RF_API rf_status rf_pipeline_set_truncation_side(rf_pipeline *pl, rf_truncation_side side,
                                                 rf_error *err);
/* The longest sequence a pipeline runs (rf_context_length_limit of its
 * parameters). */
RF_API int32_t rf_pipeline_length_limit(const rf_pipeline *pl);

/* Where a pipeline's time went, summed over every job call since it was
 * created: tokenizing the inputs, and the forward passes (encoder and
 * head). What a caller spends around the calls (reading, writing) is the
 * rest of its own wall time. */
typedef struct {
    int64_t inputs;          /* inputs tokenized (failed ones included) */
    int64_t tokens;          /* tokens of the inputs that ran, padding excluded */
    int64_t batches;         /* forward passes */
    double tokenize_seconds; /* wall time */
    double forward_seconds;  /* wall time */
    int64_t windows;         /* windows run for inputs longer than the pipeline's
                                window (0 without windows) */
    int64_t windowed_inputs; /* inputs that were cut into windows */
} rf_pipeline_stats;

RF_API void rf_pipeline_get_stats(const rf_pipeline *pl, rf_pipeline_stats *stats);

/* Sentence embeddings, out[n][hidden_size]; rows of failed inputs are NaN.
 * `normalize` scales each row to unit L2 norm. RF_POOLING_POOLER on a model
 * without a pooler is RF_ERR_UNSUPPORTED. */
RF_API rf_status rf_embed(rf_pipeline *pl, const rf_text *inputs, int32_t n, rf_pooling pooling,
                          bool normalize, float *out, rf_item_status *items, rf_error *err);
/* rf_embed's twin: with the pipeline's windows (an encoding of one text,
 * its last type id 0, longer than the window is the mean of its windows);
 * rf_embed_encodings runs each encoding whole. */
RF_API rf_status rf_embed_windowed_encodings(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                                             rf_pooling pooling, bool normalize, float *out,
                                             rf_item_status *items, rf_error *err);
/* rf_embed of encodings each run whole, never cut into windows (token ids
 * given as they are, up to rf_pipeline_length_limit): out[n][hidden_size],
 * NaN rows for failed inputs. */
RF_API rf_status rf_embed_encodings(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                                    rf_pooling pooling, bool normalize, float *out,
                                    rf_item_status *items, rf_error *err);
/* Every token's last hidden state, not normalized: encoding i's rows go to
 * out[offset_i .. offset_i + encs[i].n)[hidden_size], offset_i the sum of
 * the lengths before it (a failed input's rows are NaN). */
RF_API rf_status rf_token_embeddings(rf_pipeline *pl, const rf_encoding *encs, int32_t n, float *out,
                                     rf_item_status *items, rf_error *err);

/* Cosine similarity of inputs[i].text and inputs[i].pair, each embedded on
 * its own: cosine[n]. */
RF_API rf_status rf_similarity(rf_pipeline *pl, const rf_text *inputs, int32_t n, rf_pooling pooling,
                               float *cosine, rf_item_status *items, rf_error *err);
/* rf_similarity of n pairs from the encodings of their sides, each
 * tokenized on its own: encs[2 * i] is pair i's text, encs[2 * i + 1] its
 * pair. A cosine reranker's scores (rf_rerank_score on a model without a
 * classifier) are these, with the query as every pair's text. */
RF_API rf_status rf_similarity_encodings(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                                         rf_pooling pooling, float *cosine, rf_item_status *items,
                                         rf_error *err);

/* Sequence classification: probs[n][num_labels], the softmax of the logits
 * (the sigmoid when num_labels == 1, as HF's pipeline); rows of failed
 * inputs are NaN. Needs a sequence-classification model. */
RF_API rf_status rf_classify(rf_pipeline *pl, const rf_text *inputs, int32_t n, float *probs,
                             rf_item_status *items, rf_error *err);
RF_API rf_status rf_classify_encodings(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                                       float *probs, rf_item_status *items, rf_error *err);
/* The same inputs' raw scores: logits[n][num_labels], the classification
 * head's output before softmax / sigmoid (what HF's model returns, TEI's
 * "raw_scores"). Rows of failed inputs are NaN. */
RF_API rf_status rf_classify_logits(rf_pipeline *pl, const rf_text *inputs, int32_t n, float *logits,
                                    rf_item_status *items, rf_error *err);
RF_API rf_status rf_classify_logits_encodings(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                                              float *logits, rf_item_status *items, rf_error *err);

/* Fill-mask: for every [MASK] of the text, the top_k tokens by probability. */
typedef struct {
    int32_t n_masks;
    int32_t top_k;      /* min(top_k asked, vocab_size) */
    int32_t *positions; /* [n_masks] token positions of the [MASK]s */
    int32_t *ids;       /* [n_masks][top_k] token ids, most probable first */
    float *scores;      /* [n_masks][top_k] their softmax probabilities */
    char *sequence;     /* the text with each [MASK] replaced by its most probable
                           token ("##" dropped), NUL-terminated */
} rf_fill_mask_result;

/* Needs an MLM model; single texts only. An input without [MASK] fails. */
RF_API rf_status rf_fill_mask(rf_pipeline *pl, const rf_text *inputs, int32_t n, int32_t top_k,
                              rf_fill_mask_result *out, rf_item_status *items, rf_error *err);
RF_API rf_status rf_fill_mask_encodings(rf_pipeline *pl, const rf_text *inputs,
                                        const rf_encoding *encs, int32_t n, int32_t top_k,
                                        rf_fill_mask_result *out, rf_item_status *items,
                                        rf_error *err);
RF_API void rf_fill_mask_result_free(rf_fill_mask_result *r);

/* Token classification (NER). Offsets are in characters (Unicode code
 * points) of the input text, [start, end). */
typedef struct {
    int32_t id;         /* token id */
    int32_t label;      /* index into the model's labels (rf_model_label) */
    float score;        /* its softmax probability */
    int32_t start, end; /* characters of the text this token covers */
} rf_token_tag;

typedef struct {
    const char *type;   /* entity type: the label without its B-/I-/E-/S- prefix;
                           points into the model's label, not NUL-terminated */
    int32_t type_len;
    int32_t first, last; /* token range, inclusive (indices into the tags) */
    float score;         /* mean score of its tokens */
    int32_t start, end;  /* characters of the text, [start, end) */
} rf_entity;

typedef struct {
    int32_t n_tokens;     /* the text's tokens, [CLS]/[SEP] left out */
    rf_token_tag *tokens;
    int32_t n_entities;
    rf_entity *entities;
} rf_ner_result;

/* Needs a token-classification model; single texts only. */
RF_API rf_status rf_token_classify(rf_pipeline *pl, const rf_text *inputs, int32_t n,
                                   rf_ner_result *out, rf_item_status *items, rf_error *err);
RF_API rf_status rf_token_classify_encodings(rf_pipeline *pl, const rf_text *inputs,
                                             const rf_encoding *encs, int32_t n,
                                             rf_ner_result *out, rf_item_status *items,
                                             rf_error *err);
RF_API void rf_ner_result_free(rf_ner_result *r);

/* Extractive question answering: inputs[i].text is the question, .pair the
 * context. The answer is the span s <= e of context tokens, at most
 * max_answer_tokens long (<= 0: RF_QA_MAX_ANSWER_TOKENS), with the
 * largest start_logit[s] + end_logit[e]; score = p_start(s) * p_end(e),
 * softmax over the context tokens and [CLS], as HF's pipeline computes it.
 * doc_stride >= 0 reads a long context in windows, as HF's pipeline does:
 * each [CLS] question [SEP] context part [SEP], at most the pipeline's
 * max_length (else the model's maximum) long, starting doc_stride context
 * tokens before the previous one ends (HF's default 128); the answer is the
 * best span of any window. doc_stride < 0: one window, the input truncated
 * at max_length (or failing when too long without it), as in the other
 * jobs. start_token/end_token index the window the answer came from. */
typedef struct {
    float score;
    int32_t start, end;           /* characters of the context, [start, end) */
    int32_t byte_start, byte_end; /* the same span in bytes of the context */
    int32_t start_token, end_token;
} rf_qa_result;

RF_API rf_status rf_qa(rf_pipeline *pl, const rf_text *inputs, int32_t n, int32_t max_answer_tokens,
                       int32_t doc_stride, rf_qa_result *out, rf_item_status *items, rf_error *err);
/* encs[i]: the whole question and context (with doc_stride >= 0 not
 * truncated: rf_qa's windows are cut from it). */
RF_API rf_status rf_qa_encodings(rf_pipeline *pl, const rf_text *inputs, const rf_encoding *encs,
                                 int32_t n, int32_t max_answer_tokens, int32_t doc_stride,
                                 rf_qa_result *out, rf_item_status *items, rf_error *err);

/* CAIL2019-SCM similar case matching: for each triplet of documents
 * (A, B, C), which of B and C is closer to A.
 *
 *   RF_SCM_EMBED: the cosine of the documents' embeddings (rf_embed, not
 *     normalised, with params->pooling); each distinct document (equal
 *     bytes) is embedded once, in the order it first appears.
 *   RF_SCM_PAIR: a sequence-classification model scores (A, B) and (A, C);
 *     the score is the probability of its last label (for a binary matcher,
 *     label 1 = similar).
 *
 * The pipeline's options apply as in every job (truncation at max_length,
 * batch size, compute type); documents are long, so a pipeline with
 * max_length set is the usual choice. Work goes to the pipeline in chunks
 * of RF_SCM_CHUNK distinct documents (embed) or triplets (pair), so the
 * same triplets give the same bits from every caller. */
typedef enum {
    RF_SCM_EMBED = 0,
    RF_SCM_PAIR = 1,
} rf_scm_mode;

#define RF_SCM_CHUNK 64

/* Documents A, B, C: UTF-8, not NUL-terminated. A triplet with a NULL
 * document fails (RF_ERR_INPUT) and still takes its place in its chunk. */
typedef struct {
    const char *doc[3];
    size_t len[3];
} rf_triplet;

/* Which of B and C is closer to A; the values are the letters. */
typedef enum {
    RF_SCM_FAILED = 0,  /* the triplet failed (its rf_item_status says why) */
    RF_SCM_B = 'B',     /* sim_ab >= sim_ac */
    RF_SCM_C = 'C',     /* sim_ab < sim_ac */
} rf_scm_prediction;

typedef struct {
    rf_scm_prediction prediction;
    float sim_ab, sim_ac; /* cosines (embed) or probabilities (pair); NaN: failed */
} rf_scm_result;

/* Called after each chunk: `done` of `total` distinct documents (embed) or
 * triplets (pair). */
typedef void (*rf_progress_fn)(void *user, int64_t done, int64_t total);

typedef struct {
    rf_scm_mode mode;
    rf_pooling pooling;        /* embed mode: how a document becomes a vector */
    rf_progress_fn progress;   /* NULL: none */
    void *progress_user;
} rf_scm_params;

/* RF_SCM_EMBED, RF_POOLING_CLS, no progress. */
RF_API rf_scm_params rf_scm_default_params(void);
/* out[n]; *n_documents (may be NULL) receives the distinct documents
 * embedded (0 in pair mode). A failed document fails each triplet it is
 * in, its message prefixed with the side ("B: ..."). Pair mode needs a
 * sequence-classification model (else RF_ERR_UNSUPPORTED). */
RF_API rf_status rf_scm(rf_pipeline *pl, const rf_triplet *triplets, int32_t n,
                        const rf_scm_params *params, rf_scm_result *out, int32_t *n_documents,
                        rf_item_status *items, rf_error *err);
/* Embed mode only (RF_ERR_INPUT for RF_SCM_PAIR): encs[3 * k + s] is the
 * encoding of triplets[k].doc[s]; equal documents are embedded once, from
 * the encoding of their first appearance. */
RF_API rf_status rf_scm_encodings(rf_pipeline *pl, const rf_triplet *triplets,
                                  const rf_encoding *encs, int32_t n, const rf_scm_params *params,
                                  rf_scm_result *out, int32_t *n_documents, rf_item_status *items,
                                  rf_error *err);
/* Embeds docs[n] as rf_scm's embed mode does (chunks of RF_SCM_CHUNK, not
 * normalised): vecs[n][hidden_size], NaN rows for failed documents. For
 * spreading a corpus's distinct documents over several processes, chunk by
 * chunk, with the same bits as rf_scm. */
RF_API rf_status rf_scm_embed_documents(rf_pipeline *pl, const rf_text *docs, int32_t n,
                                        rf_pooling pooling, float *vecs, rf_item_status *items,
                                        rf_error *err);

/* Rerank: documents scored against a query and sorted best first, as
 * sentence-transformers' CrossEncoder.rank and TEI's /rerank do.
 *
 * A sequence-classification model (RF_RERANK_CLASSIFIER) scores each
 * [CLS] query [SEP] document [SEP] pair: with one label the sigmoid of its
 * logit, with two or more the softmax probability of the positive label
 * (rf_rerank_pick_label). raw_scores gives that label's logit instead. A
 * model without a classification head (RF_RERANK_COSINE, RoFormer-Sim's
 * use) scores the cosine of the pooled embeddings of query and document,
 * each embedded on its own. */
typedef enum {
    RF_RERANK_CLASSIFIER, /* a cross-encoder: the classifier's score of the pair */
    RF_RERANK_COSINE,     /* a bi-encoder: cosine of the two pooled embeddings */
} rf_rerank_scoring;

typedef struct {
    bool raw_scores;        /* classifier: the positive label's logit, no sigmoid / softmax */
    int32_t positive_label; /* classifier with 2+ labels: the label whose probability is the
                               score; -1: rf_rerank_pick_label's choice */
    rf_pooling pooling;     /* cosine: how the embeddings are pooled; RF_POOLING_DEFAULT:
                               rf_model_default_pooling (the sentence-transformers
                               folder's pooling, else the pooler when the model has
                               one, else RF_POOLING_CLS) */
} rf_rerank_params;

/* One ranked document: its index in the documents given, and its score. */
typedef struct {
    int32_t index;
    float score;
} rf_rerank_hit;

RF_API rf_rerank_params rf_rerank_default_params(void); /* probabilities, default label and pooling */
/* RF_RERANK_CLASSIFIER for a sequence-classification model, else RF_RERANK_COSINE. */
RF_API rf_rerank_scoring rf_rerank_scoring_of(const rf_model *model);
RF_API const char *rf_rerank_scoring_name(rf_rerank_scoring scoring); /* "classifier", "cosine" */

/* Scores pairs[i] = (query, document) in input order: scores[n]. Pairs may
 * have different queries (sentence-transformers' CrossEncoder.predict).
 * Failed pairs score NaN. RF_ERR_INPUT for a positive_label outside the
 * labels or a pooling the model cannot do. */
RF_API rf_status rf_rerank_score(rf_pipeline *pl, const rf_text *pairs, int32_t n,
                                 const rf_rerank_params *params, float *scores, rf_item_status *items,
                                 rf_error *err);
/* A classifier's scores of the (query, document) pairs' encodings;
 * RF_ERR_UNSUPPORTED for a model that scores by cosine, which embeds query
 * and document apart (rf_similarity_encodings). */
RF_API rf_status rf_rerank_score_encodings(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                                           const rf_rerank_params *params, float *scores,
                                           rf_item_status *items, rf_error *err);
/* Sorts scores[n] best first into out (at most top_n hits; top_n <= 0: all
 * n): ties keep the lower index first, NaN scores (failed documents) are
 * left out. *n_out receives the number of hits written. RF_ERR_NOMEM when
 * out of memory, RF_ERR_INPUT for n < 0. */
RF_API rf_status rf_rerank_sort(const float *scores, int32_t n, int32_t top_n, rf_rerank_hit *out,
                                int32_t *n_out, rf_error *err);
/* Scores documents[i].text (their .pair is ignored) against the query and
 * sorts them: out[min(top_n, n)] (top_n <= 0: n), *n_out hits written. */
RF_API rf_status rf_rerank(rf_pipeline *pl, const char *query, size_t query_len,
                           const rf_text *documents, int32_t n, int32_t top_n,
                           const rf_rerank_params *params, rf_rerank_hit *out, int32_t *n_out,
                           rf_item_status *items, rf_error *err);

/* ---- The building blocks of the jobs, usable on their own ---- */

/* out = softmax(x) over n values (out may be x). */
RF_API void rf_softmax(const float *x, int32_t n, float *out);
/* Indices of the k largest of x[n], largest first, ties to the lower index;
 * returns min(k, n). */
RF_API int32_t rf_top_k(const float *x, int32_t n, int32_t k, int32_t *idx);
/* Pools hidden[L][D] (mask[L]: 1 = real token, NULL = all real) into out[D]
 * with RF_POOLING_CLS, RF_POOLING_MEAN, RF_POOLING_MAX or RF_POOLING_LAST
 * (no real token: zeros). */
RF_API void rf_pool_hidden(const float *hidden, const int32_t *mask, int32_t L, int32_t D, rf_pooling pooling,
                    float *out);
RF_API void rf_l2_normalize(float *x, int32_t n);
RF_API float rf_cosine(const float *a, const float *b, int32_t n);
/* Groups per-token labels into entities (BIO, BIOES, BMES and IO tags;
 * "O" is outside): B-X opens, I-X/M-X continue an X (or open one), E-X
 * closes, S-X is a single token; a bare label X (not "O") behaves as I-X.
 * labels[num_labels] are the label names, tags[n] / scores[n] each token's.
 * Writes first/last/type/score of at most n entities (start/end left 0);
 * returns the count. */
RF_API int32_t rf_group_entities(const char *const *labels, int32_t num_labels, const int32_t *tags,
                                 const float *scores, int32_t n, rf_entity *out);
/* What a token may be in rf_best_span. */
typedef enum {
    RF_SPAN_LEFT_OUT = 0,     /* neither in the answer nor in the softmax */
    RF_SPAN_ANSWER = 1,       /* may be in the answer */
    RF_SPAN_SOFTMAX_ONLY = 2, /* counts in the softmax only ([CLS]) */
} rf_span_role;
/* The best answer span (see rf_qa). allowed[i] is token i's rf_span_role,
 * one byte each. Returns false when no token may be in the answer. */
RF_API bool rf_best_span(const float *start_logits, const float *end_logits, const uint8_t *allowed,
                         int32_t n, int32_t max_answer_tokens, int32_t *start, int32_t *end,
                         float *score);
/* The label a rerank score reads from labels[n] (names as id2label):
 * 0 when n == 1; else the first label named, ignoring case, "positive",
 * "pos", "entailment", "relevant", "yes", "true" or "1"; else the last
 * label (n - 1: LABEL_1 of a two-label checkpoint). */
RF_API int32_t rf_rerank_pick_label(const char *const *labels, int32_t n);
/* ==== Advanced: the OpenBLAS build ====
 *
 * Most programs need nothing here: contexts set OpenBLAS up themselves.
 * These calls are for tools that report the BLAS build (`roformer info`)
 * or choose its kernels before it loads (the CLI's re-execution with
 * OPENBLAS_CORETYPE). */

/* The OpenBLAS build every matrix product runs on. */
/* The strings are OpenBLAS's own, valid for the life of the process. */
typedef struct {
    const char *core;   /* kernel family in use, e.g. "SkylakeX", "Haswell", "Zen" */
    const char *config; /* build options, e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." */
    int32_t threads;    /* OpenBLAS's own thread count */
    int32_t cpu_count;  /* processors OpenBLAS sees */
} rf_blas_info;

RF_API rf_blas_info rf_blas_get_info(void);

/* The OpenBLAS core this CPU runs sgemm fastest with when it is not the one
 * OpenBLAS picked ("SkylakeX" on AVX-512 CPUs that OpenBLAS 0.3.21 takes for
 * Haswell, e.g. AMD Zen 4/5), else NULL. OpenBLAS reads its choice from the
 * environment variable OPENBLAS_CORETYPE once, when it is loaded: a program
 * that wants the faster kernels sets it before starting (the `roformer` CLI
 * does this by itself, re-executing once). */
RF_API const char *rf_blas_preferred_core(void);

/* ==== Kernels ====
 *
 * Each compute type's matrix products have several builds, one per
 * instruction set; a process runs one of each, chosen once from the CPU by
 * the rules of docs/compute.md (the int8 builds all give the same sums,
 * so there the fastest wins; where builds round differently the rule is
 * fixed per CPU model). The environment variable ROFORMER_KERNEL, read
 * when the first context is made, or rf_kernels_select (what the CLI's
 * `--kernel` calls) overrides it with a comma-separated list of TYPE=NAME:
 *   int8=NAME           the int8 product's build, e.g. int8=vnni
 *   bf16=NAME           the bf16 product's build, e.g. bf16=f32fma
 *   elementwise=NAME    the element-wise kernels' build (activations,
 *                       softmax, norms), e.g. elementwise=avx2
 *   attention=bf16|f32  bf16 and int8 compute's attention products
 * The NAMEs are those of the library's table of builds (docs/compute.md
 * lists them; the error below names those this CPU runs). A build this
 * CPU lacks is RF_ERR_UNSUPPORTED with a message naming the builds it has;
 * the choice holds for the whole process. */
RF_API rf_status rf_kernels_select(const char *spec, rf_error *err);

/* What runs, for reports (`roformer info`, `bench`). Static strings. */
typedef struct {
    const char *int8;           /* the int8 build: "amx", "vnni", ...; "none" without one */
    const char *int8_chosen_by; /* "the CPU", "ROFORMER_KERNEL" or "--kernel" */
    const char *attention;      /* bf16 and int8 compute's attention products: "bf16" or "f32" */
    const char *bf16;           /* the bf16 kernel: "amx", "avx512bf16", ...; "none" without one */
    const char *bf16_chosen_by; /* "ROFORMER_KERNEL", "--kernel", or the CPU rule's reason */
    const char *amx;            /* AMX in this process, or why not */
} rf_kernel_info;

RF_API rf_kernel_info rf_kernels_get_info(void);

/* One row of the library's table of builds, for reports (`roformer
 * info`): every int8 build, then every bf16 build, then every build of the
 * element-wise kernels, each in its order of choice. Static strings. */
typedef struct {
    const char *product; /* "int8", "bf16" or "elementwise" */
    const char *name;    /* the NAME of ROFORMER_KERNEL=PRODUCT=NAME */
    bool runs;           /* this CPU runs it */
    bool tests_only;     /* the tests' own: never chosen, and no NAME a user may give */
    bool in_use;         /* the build rf_kernels_get_info reports for its product */
} rf_kernel_build;

/* Writes the first min(n, cap) rows to out (NULL with cap 0: none) and
 * returns n, the number of rows. */
RF_API int32_t rf_kernels_list(rf_kernel_build *out, int32_t cap);

/* Who chose the build in use of a product ("int8", "bf16",
 * "elementwise"): "ROFORMER_KERNEL", "--kernel", or the CPU's ("the CPU"
 * for int8, whose builds all give the same sums; for the others the CPU
 * rule's reason). NULL for another word. Static strings. */
RF_API const char *rf_kernels_chosen_by(const char *product);

/* ==== Defaults: what every front end uses when not told otherwise ====
 *
 * The CLI, `roformer serve`, the Python package and its Dask jobs ask these
 * calls instead of deciding for themselves, so that the same inputs with no
 * options give the same output from every one of them. A pipeline made from
 * rf_pipeline_default_params() applies the max_length and stride rules by
 * itself (RF_MAX_LENGTH_MODEL, RF_STRIDE_DEFAULT).
 */

/* rf_pipeline_params.max_length: the model's own truncation,
 * rf_model_default_max_length (none with windows). The default. */
#define RF_MAX_LENGTH_MODEL (-1)
/* rf_pipeline_params.stride: rf_window_default_stride(window). The default. */
#define RF_STRIDE_DEFAULT (-1)
/* Most compute threads a context runs; rf_context_params.n_threads and
 * rf_pipeline_params.n_threads above it are RF_ERR_INPUT. */
#define RF_MAX_THREADS 256

/* The pooling of a sentence embedding when none is asked for: the
 * sentence-transformers folder's pooling when the model was converted from
 * one, else RF_POOLING_POOLER when the model has a pooler, else
 * RF_POOLING_CLS. */
RF_API rf_pooling rf_model_default_pooling(const rf_model *model);
/* RF_OK when the model can pool this way; RF_ERR_UNSUPPORTED for
 * RF_POOLING_POOLER on a model without a pooler ("the model has no pooler;
 * use cls or mean pooling"), RF_ERR_INPUT for a value that is no
 * rf_pooling. Every job that pools checks this first. */
RF_API rf_status rf_model_check_pooling(const rf_model *model, rf_pooling pooling, rf_error *err);
/* The truncation the model's own configuration asks for: the
 * sentence-transformers max_seq_length when the folder gives one, else 0
 * (no truncation: an input longer than the model's maximum fails). */
RF_API int32_t rf_model_default_max_length(const rf_model *model);
/* The longest input a front end takes by default: rf_model_default_max_length,
 * else the model's max_position. `roformer serve` refuses (or, asked to,
 * truncates) longer inputs; CAIL2019-SCM documents, longer than any
 * model's maximum, are truncated at it. */
RF_API int32_t rf_model_max_input_length(const rf_model *model);
/* The stride of windows of `window` tokens when none is asked for:
 * window / 4 text tokens shared with the previous window. */
RF_API int32_t rf_window_default_stride(int32_t window);
/* The label a classifier's rerank score reads when none is asked for:
 * rf_rerank_pick_label over the model's labels (0 for a model with one
 * label or none). */
RF_API int32_t rf_model_rerank_label(const rf_model *model);

/* rf_qa's max_answer_tokens <= 0: answers of at most this many tokens
 * (HF's max_answer_len). */
#define RF_QA_MAX_ANSWER_TOKENS 15

/* The tokens rf_qa runs for one input: `enc` is the whole question and
 * context ([CLS] question [SEP] context [SEP], not truncated), read in
 * windows of `window` tokens each starting doc_stride context tokens before
 * the previous one ends, as rf_qa plans them (every window repeats
 * [CLS] question [SEP]). An input that fits one window, or that rf_qa will
 * refuse (no room for context, a stride that makes no progress), counts
 * its own length. */
RF_API int32_t rf_qa_window_tokens(const rf_encoding *enc, int32_t window, int32_t doc_stride);

/* Scores n triplets from their documents' vectors, as rf_scm's embed mode
 * does: doc_of[n][3] indexes rows of vecs[][D] (A, B, C; -1: the document
 * is missing, "A: missing"); sim_ab and sim_ac are cosines, prediction 'B'
 * when sim_ab >= sim_ac. doc_items (NULL: all succeeded) are the documents'
 * outcomes, indexed like the rows: a failed one fails each triplet it is
 * in, its message prefixed with the side ("B: ..."). items and the return
 * as in the jobs. For scoring across processes the vectors that
 * rf_scm_embed_documents made. */
RF_API rf_status rf_scm_score(const float *vecs, int32_t D, const rf_item_status *doc_items,
                       const int32_t *doc_of, int32_t n, rf_scm_result *out,
                       rf_item_status *items, rf_error *err);

/* ==== Text ==== */

/* True when s[0..len) is valid UTF-8 (no surrogates, nothing past
 * U+10FFFF, no overlong forms). Otherwise *bad_offset (may not be NULL) is
 * the byte offset of the first invalid sequence. */
RF_API bool rf_utf8_validate(const char *s, size_t len, size_t *bad_offset);

#ifdef __cplusplus
}
#endif

#endif /* ROFORMER_H */
