/*
 * kinds_plain.c — the kinds whose results are plain bytes (see
 * kinds_plain.h): each its row size and its library call, on the
 * encodings the request counted (the *_encodings calls: no text is
 * tokenized twice); they share the rest. Embeddings are not normalized
 * here: each request normalizes its own.
 */
#include "serve/kinds_plain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== Shared: rows copied as they are ==== */

static void move_plain(serve_results *dst, int32_t to, serve_results *src, int32_t from,
                       int32_t top_k)
{
    (void)top_k;
    memcpy((char *)dst->rows + (size_t)dst->first[to] * dst->row_bytes,
           (const char *)src->rows + (size_t)src->first[from] * src->row_bytes,
           (size_t)src->count[from] * src->row_bytes);
}

static void pack_plain(const serve_results *r, int32_t i, int32_t top_k, const rf_model *model,
                       serve_bytes *value)
{
    (void)top_k;
    (void)model;
    serve_bytes_put(value, (const char *)r->rows + (size_t)r->first[i] * r->row_bytes,
                    (size_t)r->count[i] * r->row_bytes);
}

static bool unpack_plain(serve_results *r, int32_t i, const rf_model *model, const void *value,
                         size_t len)
{
    (void)model;
    memcpy((char *)r->rows + (size_t)r->first[i] * r->row_bytes, value, len);
    return true;
}

/* Plain rows own nothing. */
static void release_plain(void *rows, int32_t n)
{
    (void)rows;
    (void)n;
}

static void no_options(const serve_job *job, serve_bytes *key)
{
    (void)job;
    (void)key;
}

/* ==== Row sizes ==== */

static size_t hidden_floats(int32_t D, int32_t N)
{
    (void)N;
    return sizeof(float) * (size_t)D;
}

static size_t label_floats(int32_t D, int32_t N)
{
    (void)D;
    return sizeof(float) * (size_t)N;
}

static size_t one_float(int32_t D, int32_t N)
{
    (void)D;
    (void)N;
    return sizeof(float);
}

static size_t qa_span(int32_t D, int32_t N)
{
    (void)D;
    (void)N;
    return sizeof(rf_qa_result);
}

static size_t scm_verdict(int32_t D, int32_t N)
{
    (void)D;
    (void)N;
    return sizeof(rf_scm_result);
}

/* ==== The calls ==== */

static rf_status run_embed(const serve_call *c, rf_error *err)
{
    return rf_embed_windowed_encodings(c->pl, c->encs, c->n, c->pooling, false, c->out->rows,
                                       c->out->items, err);
}

static rf_status run_embed_ids(const serve_call *c, rf_error *err)
{
    return rf_embed_encodings(c->pl, c->encs, c->n, c->pooling, false, c->out->rows,
                              c->out->items, err);
}

static rf_status run_embed_all(const serve_call *c, rf_error *err)
{
    return rf_token_embeddings(c->pl, c->encs, c->n, c->out->rows, c->out->items, err);
}

static rf_status run_classify(const serve_call *c, rf_error *err)
{
    return rf_classify_encodings(c->pl, c->encs, c->n, c->out->rows, c->out->items, err);
}

static rf_status run_logits(const serve_call *c, rf_error *err)
{
    return rf_classify_logits_encodings(c->pl, c->encs, c->n, c->out->rows, c->out->items, err);
}

static rf_status run_rerank(const serve_call *c, rf_error *err)
{
    rf_rerank_params rerank = rf_rerank_default_params();
    rerank.raw_scores = c->first->raw_scores;
    return rf_rerank_score_encodings(c->pl, c->encs, c->n, &rerank, c->out->rows, c->out->items,
                                     err);
}

static void rerank_options(const serve_job *job, serve_bytes *key)
{
    serve_bytes_put_i32(key, job->raw_scores);
}

/* Query and document embedded apart: two encodings per input. */
static rf_status run_rerank_cosine(const serve_call *c, rf_error *err)
{
    return rf_similarity_encodings(c->pl, c->encs, c->n, c->pooling, c->out->rows, c->out->items,
                                   err);
}

static rf_status run_qa(const serve_call *c, rf_error *err)
{
    return rf_qa_encodings(c->pl, c->texts, c->encs, c->n, c->first->max_answer_tokens,
                           c->first->doc_stride, c->out->rows, c->out->items, err);
}

static void qa_options(const serve_job *job, serve_bytes *key)
{
    serve_bytes_put_i32(key, job->max_answer_tokens);
    serve_bytes_put_i32(key, job->doc_stride);
}

/* The texts are A, B, C of each triplet: one rf_scm call over them all. */
static rf_status run_scm(const serve_call *c, rf_error *err)
{
    int32_t units = c->out->units;
    rf_triplet *triplets = calloc(units > 0 ? (size_t)units : 1, sizeof *triplets);
    if (!triplets) {
        snprintf(err->message, sizeof err->message, "out of memory for %d triplets", units);
        return RF_ERR_NOMEM;
    }
    for (int32_t k = 0; k < units; k++)
        for (int s = 0; s < 3; s++) {
            triplets[k].doc[s] = c->texts[3 * k + s].text;
            triplets[k].len[s] = c->texts[3 * k + s].text_len;
        }
    rf_scm_params params = rf_scm_default_params();
    params.pooling = c->pooling;
    rf_status st = rf_scm_encodings(c->pl, triplets, c->encs, units, &params, c->out->rows, NULL,
                                    c->out->items, err);
    free(triplets);
    return st;
}

/* ==== The rows ==== */

#define PLAIN(kind, name, inputs, encodings, per_token, keys_text, row_bytes, run, options) \
    SERVE_KIND_ROW(kind, name, inputs, encodings, per_token, keys_text, row_bytes, run,     \
                   options, move_plain, pack_plain, unpack_plain, release_plain)

const serve_kind_ops serve_kind_embed =
    PLAIN(SERVE_KIND_EMBED, "embed", 1, 1, false, false, hidden_floats, run_embed, no_options);
const serve_kind_ops serve_kind_embed_ids = PLAIN(SERVE_KIND_EMBED_IDS, "embed_ids", 1, 1, false,
                                                  false, hidden_floats, run_embed_ids, no_options);
const serve_kind_ops serve_kind_embed_all = PLAIN(SERVE_KIND_EMBED_ALL, "embed_all", 1, 1, true,
                                                  false, hidden_floats, run_embed_all, no_options);
const serve_kind_ops serve_kind_classify = PLAIN(SERVE_KIND_CLASSIFY, "classify", 1, 1, false,
                                                 false, label_floats, run_classify, no_options);
const serve_kind_ops serve_kind_logits =
    PLAIN(SERVE_KIND_LOGITS, "logits", 1, 1, false, false, label_floats, run_logits, no_options);
const serve_kind_ops serve_kind_rerank = PLAIN(SERVE_KIND_RERANK, "rerank", 1, 1, false, false,
                                               one_float, run_rerank, rerank_options);
const serve_kind_ops serve_kind_rerank_cosine =
    PLAIN(SERVE_KIND_RERANK_COSINE, "rerank_cosine", 1, 2, false, false, one_float,
          run_rerank_cosine, no_options);
const serve_kind_ops serve_kind_qa =
    PLAIN(SERVE_KIND_QA, "qa", 1, 1, false, true, qa_span, run_qa, qa_options);
const serve_kind_ops serve_kind_scm =
    PLAIN(SERVE_KIND_SCM, "scm", 3, 1, false, false, scm_verdict, run_scm, no_options);
