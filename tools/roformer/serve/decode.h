/*
 * decode.h — token ids back to text, as HuggingFace tokenizers' WordPiece
 * decoder does it (what TEI's /decode and the fill-mask pipeline's
 * "sequence" use): tokens joined by spaces, a "##" continuation glued to
 * the token before it (its "##" dropped), then each piece cleaned up
 * (" ." -> ".", " ," -> ",", " 's" -> "'s", ...). Chinese characters are
 * tokens of their own, so "今天" comes back as "今 天", as in HF.
 */
#ifndef RF_SERVE_DECODE_H
#define RF_SERVE_DECODE_H

#include "roformer.h"

#include <stdbool.h>

/* The text of ids[n] (each in the vocabulary), malloc'd and NUL-terminated,
 * or NULL when out of memory. skip_special leaves out [PAD], [UNK], [CLS],
 * [SEP] and [MASK]. */
char *serve_decode(const rf_model *m, const int32_t *ids, int32_t n, bool skip_special);

#endif
