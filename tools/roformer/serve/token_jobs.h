/*
 * token_jobs.h — the two engine calls of `roformer serve` that the
 * library's job API has no function for, built on its pipeline (the same
 * length-sorted, padding-free batches as rf_embed):
 *   - every token's last hidden state (TEI's /embed_all);
 *   - sentence embeddings of token ids the client sends (OpenAI's "input"
 *     as token ids), run exactly as given: no [CLS]/[SEP] added.
 */
#ifndef RF_SERVE_TOKEN_JOBS_H
#define RF_SERVE_TOKEN_JOBS_H

#include "roformer.h"

/* For each text i, its tokens' last hidden states (not normalized) go to
 * out[offsets[i] .. offsets[i] + lengths[i])[hidden_size]; lengths[i] is
 * the token count the caller counted with the pipeline's truncation, and a
 * text that tokenizes to another count fails (its item). */
rf_status serve_embed_tokens(rf_pipeline *pl, const rf_text *texts, int32_t n,
                             const int32_t *offsets, const int32_t *lengths, float *out,
                             rf_item_status *items, rf_error *err);

/* Pooled (not normalized) embeddings of encs[n] into out[n][hidden_size].
 * The ids must be in the vocabulary and each encoding 1 to the pipeline's
 * window long: a bad one fails the call. */
rf_status serve_embed_ids(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                          rf_pooling pooling, float *out, rf_error *err);

#endif
