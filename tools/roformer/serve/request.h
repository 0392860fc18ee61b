/*
 * request.h — the JSON body of a `roformer serve` request turned into job
 * inputs: which API it is, the texts (copied, valid UTF-8), and its
 * options. Parsing is a pure function of the bytes: no model, no
 * tokenizer, no HTTP; what it refuses comes back as an HTTP status (413 for
 * more inputs than allowed, 422 for everything else) and a message naming
 * the field. Token counts and lengths are checked later, with the model.
 *
 * Shapes, as HuggingFace text-embeddings-inference (TEI) and OpenAI take them:
 *   embed, tokenize, fill-mask, ner   "inputs": str | [str, ...]
 *   predict       "inputs": str | [str, str] (one pair) | [[str] | [str, str], ...]
 *   similarity    "inputs": {"source_sentence": str, "sentences": [str, ...]}
 *   openai        "input": str | [str, ...] | [id, ...] | [[id, ...], ...], "model",
 *                 "encoding_format", "dimensions", "user" (accepted, ignored)
 *   embed_all     "inputs": str | [str, ...]
 *   decode        "ids": [id, ...] | [[id, ...], ...], "skip_special_tokens"
 *   hf_*          HuggingFace's task shapes: "inputs": str | [str, ...],
 *                 "parameters": {"top_k"} (fill-mask)
 *   qa            "inputs": {"question", "context"} | [{...}, ...],
 *                 "max_answer_tokens", "doc_stride"
 *   scm           "inputs": {"A", "B", "C"} | [{...}, ...]
 *   embed, openai, predict, similarity, scm also take "window" and "stride":
 *   a text longer than `window` tokens is cut into windows and pooled
 *   (rf_pipeline_params.window; stride default window / 4)
 *   rerank        "query": str, "texts": [str, ...], "raw_scores", "return_text" (TEI)
 *   rerank_jina   "query": str, "documents": [str | {"text": str}, ...], "top_n",
 *                 "return_documents", "model" (Jina / Cohere / llama.cpp)
 * Every route takes "truncate" and "truncation_direction" ("right" | "left",
 * TEI's "Right" | "Left" too); similarity also inside "parameters".
 */
#ifndef RF_SERVE_REQUEST_H
#define RF_SERVE_REQUEST_H

#include "roformer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    SERVE_API_EMBED,      /* POST /embed */
    SERVE_API_OPENAI,     /* POST /v1/embeddings */
    SERVE_API_PREDICT,    /* POST /predict */
    SERVE_API_SIMILARITY, /* POST /similarity */
    SERVE_API_TOKENIZE,   /* POST /tokenize */
    SERVE_API_FILL_MASK,  /* POST /fill-mask */
    SERVE_API_NER,        /* POST /ner */
    SERVE_API_QA,         /* POST /qa */
    SERVE_API_SCM,        /* POST /scm */
    SERVE_API_RERANK,     /* POST /rerank */
    SERVE_API_RERANK_JINA, /* POST /v1/rerank */
    SERVE_API_EMBED_ALL,  /* POST /embed_all */
    SERVE_API_DECODE,     /* POST /decode */
    SERVE_API_HF_CLASSIFY,  /* POST /pipeline/text-classification */
    SERVE_API_HF_FILL_MASK, /* POST /pipeline/fill-mask */
    SERVE_API_HF_NER,       /* POST /pipeline/token-classification */
    SERVE_API_COUNT
} serve_api;

/* A refusal: HTTP status, TEI's error_type and a one-line message. */
typedef struct {
    int status;
    const char *type; /* "Validation", "Overloaded", ... */
    char message[256];
} serve_error;

typedef struct {
    serve_api api;
    /* What the client counts as inputs (texts, pairs, sentences to compare,
     * triplets), limited by --max-client-batch-size. */
    int32_t n_items;
    /* The texts the engine runs: one per item, except similarity (texts[0]
     * is the source sentence, then one per sentence) and scm (A, B, C of
     * each triplet). A pair (predict) or question + context (qa) is one
     * rf_text. Owned by the request. */
    int32_t n_texts;
    rf_text *texts;
    bool batch;              /* a list was sent: the answer is a list too */
    bool truncate;           /* default false (scm: true, as its CLI) */
    bool truncate_set;       /* "truncate" was sent (else --auto-truncate decides) */
    int32_t truncation_side; /* rf_truncation_side; default RF_TRUNCATE_RIGHT */
    bool normalize;          /* embed; default true */
    bool raw_scores;         /* predict; default false */
    bool add_special_tokens; /* tokenize; default true */
    bool base64;             /* openai encoding_format "base64" */
    int32_t top_k;           /* fill-mask; default 5 */
    int32_t max_answer_tokens; /* qa; default 15, as HF and `roformer qa` */
    int32_t doc_stride;      /* qa; default -1: no windows (`roformer qa --doc-stride`) */
    int32_t window, stride;  /* embed, openai, predict, similarity, scm; window 0: none
                                (`roformer embed --window N --stride S`) */
    char *model;             /* openai / rerank_jina "model", echoed back; NULL when absent */
    int32_t dimensions;      /* openai; 0: the whole vector */
    /* Token-id inputs (openai "input" of ids, decode "ids"): n_items lists,
     * ids[i] of n_ids[i] ids, run or decoded as given (checked against the
     * vocabulary later, with the model). NULL for text inputs, and then
     * n_texts > 0; with ids, n_texts is 0. */
    int32_t **ids;
    int32_t *n_ids;
    bool skip_special_tokens; /* decode; default true */
    /* rerank: texts[i] is (query, document i); one item per document */
    bool return_text;        /* hits carry their document ("return_text", "return_documents") */
    int32_t top_n;           /* hits kept, best first; 0: all */
    char *prompt_name;       /* similarity "parameters.prompt_name"; NULL when absent */
} serve_request;

struct cJSON;

/* Parses body[0..len) as JSON (whitespace may follow it, nothing else):
 * the value, to free with cJSON_Delete, or NULL with *err set (422). A
 * server parses a body once, reads what it needs before the request (the
 * model it names), then hands it to serve_request_from_json. */
struct cJSON *serve_request_read(const char *body, size_t len, serve_error *err);
/* Fills *out for `api` from a parsed body. On success returns 0 (free *out
 * with serve_request_free); otherwise returns -1 with *err set and *out
 * empty. */
int serve_request_from_json(serve_api api, const struct cJSON *root, int32_t max_client_batch,
                            serve_request *out, serve_error *err);
/* Both: body[0..len) for `api`, as serve_request_from_json answers. */
int serve_request_parse(serve_api api, const char *body, size_t len, int32_t max_client_batch,
                        serve_request *out, serve_error *err);
void serve_request_free(serve_request *r);

/* Fills *err; returns -1. */
int serve_fail(serve_error *err, int status, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
