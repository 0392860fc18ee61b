/*
 * hf_responses.h — results in HuggingFace's shapes: the transformers
 * pipelines' outputs that the Inference API (and its clients, such as
 * @huggingface/inference) expect on /pipeline/<task>, and TEI's
 * /embed_all and /decode. Each builder returns NULL when out of memory.
 */
#ifndef RF_SERVE_HF_RESPONSES_H
#define RF_SERVE_HF_RESPONSES_H

#include "roformer.h"
#include "serve/request.h"

#include <cJSON.h>

/* text-classification: [[{"label", "score"}, ...] per input], all labels
 * best first; a list of inputs per input even for one string. */
cJSON *serve_json_hf_classify(const serve_request *r, const rf_model *m, const float *probs,
                              int32_t N);
/* fill-mask: [{"score", "token", "token_str", "sequence"}] for a text with
 * one [MASK], a list of those per [MASK] for several, as the pipeline:
 * "sequence" is the input with that [MASK] replaced by the candidate,
 * decoded (special tokens left out when there is one [MASK]); encs are the
 * inputs' tokens, as the job ran them. A list per input for a list. */
cJSON *serve_json_hf_fill_mask(const serve_request *r, const rf_model *m, const rf_encoding *encs,
                               const rf_fill_mask_result *res);
/* token-classification with simple aggregation: [{"entity_group", "score",
 * "word", "start", "end"}], "word" the entity's tokens decoded; a list per
 * input for a list. */
cJSON *serve_json_hf_ner(const serve_request *r, const rf_model *m, const rf_ner_result *res);
/* /embed_all: [[[floats] per token, [CLS] and [SEP] included] per input]
 * from vecs[sum of lengths][D]. */
cJSON *serve_json_embed_all(const serve_request *r, const float *vecs, const int32_t *lengths,
                            int32_t D);
/* /decode: [text per list of ids]. */
cJSON *serve_json_decode(const serve_request *r, const rf_model *m);

#endif
