/*
 * openai.h — what the routes under /v1/ and /embeddings do in OpenAI's way rather than
 * TEI's: the error body {"error": {"message", "type", "param", "code"}}
 * and the Matryoshka "dimensions" of an embedding.
 */
#ifndef RF_SERVE_OPENAI_H
#define RF_SERVE_OPENAI_H

#include "serve/response.h"

#include <stdint.h>

/* An error in OpenAI's shape. TEI's 422 (a request that does not
 * validate) becomes OpenAI's 400; "type" is "invalid_request_error" for a
 * 4xx and "server_error" for a 5xx; "param" is the field the message
 * starts with ("input[1]: ..." gives "input[1]"), else null; "code" is
 * "invalid_api_key" (401), "unknown_url" (404), "rate_limit_exceeded"
 * (429), else null. */
void serve_openai_error(serve_response *resp, int status, const char *msg);

/* Keeps the first `dims` of each of the n rows of vecs[n][D], packed to
 * vecs[n][dims], each scaled to unit L2 norm again (sentence-transformers'
 * truncate_dim followed by normalization). */
void serve_openai_truncate(float *vecs, int32_t n, int32_t D, int32_t dims);

#endif
