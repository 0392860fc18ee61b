/*
 * responses.h — job results as the JSON that clients expect: TEI's shapes
 * for embed / predict / similarity / tokenize, OpenAI's for
 * /v1/embeddings, and the CLI's per-input objects for fill-mask, ner, qa
 * and scm (one object, or a list when the request sent a list). Floats are
 * written in their shortest round-trip form. Every builder returns NULL
 * when out of memory.
 */
#ifndef RF_SERVE_RESPONSES_H
#define RF_SERVE_RESPONSES_H

#include "roformer.h"
#include "serve/request.h"

#include <cJSON.h>

/* [[floats], ...]: one row of vecs[n_texts][D] per input. */
cJSON *serve_json_embed(const serve_request *r, const float *vecs, int32_t D);
/* {"object": "list", "data": [{"object": "embedding", "index", "embedding"}],
 *  "model", "usage": {"prompt_tokens", "total_tokens"}}; base64 embeddings
 * are the little-endian float32 bytes. One row per text, or per token-id
 * list when the input was ids. */
cJSON *serve_json_openai(const serve_request *r, const float *vecs, int32_t D,
                         const char *model, int32_t tokens);
/* [{"label", "score"}, ...] all labels, best first (a list of those for a batch). */
cJSON *serve_json_predict(const serve_request *r, const rf_model *m, const float *probs,
                          int32_t N);
/* [cosine of the source with each sentence]. */
cJSON *serve_json_similarity(const serve_request *r, const float *vecs, int32_t D);
/* [[{"id", "text", "special", "start", "stop"}, ...], ...]: start/stop are
 * character offsets into the input (null for [CLS]/[SEP]); encs[n_texts]. */
cJSON *serve_json_tokens(const serve_request *r, const rf_model *m, const rf_encoding *encs);
cJSON *serve_json_fill_mask(const serve_request *r, const rf_model *m,
                            const rf_fill_mask_result *res);
cJSON *serve_json_ner(const serve_request *r, const rf_model *m, const rf_ner_result *res);
cJSON *serve_json_qa(const serve_request *r, const rf_qa_result *res);
/* {"prediction": "B"|"C", "sim_ab", "sim_ac"} per triplet, from rf_scm. */
cJSON *serve_json_scm(const serve_request *r, const rf_scm_result *res);

/* The request's documents sorted best first from scores[n_texts]:
 * /rerank (TEI) [{"index", "score", "text"?}], every document;
 * /v1/rerank (Jina / Cohere) {"model", "object": "list", "results":
 * [{"index", "relevance_score", "document"?: {"text"}}] (top_n of them),
 * "usage": {"prompt_tokens", "total_tokens"}, "scoring"}. */
cJSON *serve_json_rerank(const serve_request *r, const float *scores, rf_rerank_scoring scoring,
                         const char *model, int32_t tokens);

#endif
