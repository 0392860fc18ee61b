/*
 * tokenizer.h — the tokenizer as the library builds it from a model's vocab
 * and jieba dictionary (internal; the public entry point is rf_tokenize).
 *
 * Pipeline (HF RoFormerTokenizer, transformers v4.40):
 *   special tokens split out -> per-character lower-case -> jieba cut (HMM off)
 *   -> word in vocab ? one token : BERT basic tokenizer + WordPiece
 *   -> [CLS] a [SEP] (b [SEP]) with longest_first truncation.
 * In RF_TOKENIZER_BERT mode the jieba step is skipped (HF BertTokenizer).
 */
#ifndef RF_TOKENIZER_H
#define RF_TOKENIZER_H

#include "roformer.h"

#include <stdbool.h>

typedef struct rf_tokenizer rf_tokenizer;

/* Everything a tokenizer is built from. Strings are not NUL-terminated
 * (they point into the model file): each has a length. */
typedef struct {
    rf_tokenizer_mode mode;
    bool do_lower_case;
    int32_t vocab_size;
    const char *const *vocab;        /* [vocab_size] token strings */
    const uint32_t *vocab_len;       /* [vocab_size] their byte lengths */
    int32_t dict_size;               /* jieba dictionary entries (0 in BERT mode) */
    const char *const *dict_words;   /* [dict_size] */
    const uint32_t *dict_word_len;   /* [dict_size] */
    const uint32_t *dict_freq;       /* [dict_size] */
    int32_t pad_id, unk_id, cls_id, sep_id, mask_id;
} rf_tokenizer_spec;

/* The spec's dictionary arrays must outlive the tokenizer: the dictionary
 * is built from them on first use. */
rf_status rf_tokenizer_create(const rf_tokenizer_spec *spec, rf_tokenizer **out, rf_error *err);
void rf_tokenizer_free(rf_tokenizer *tok);

/* Same contract as rf_tokenize. */
rf_status rf_tokenizer_encode(const rf_tokenizer *tok, const char *text, size_t text_len,
                              const char *pair, size_t pair_len, int32_t max_length,
                              rf_encoding *out, rf_error *err);
/* Same contract as rf_tokenize_truncated. */
rf_status rf_tokenizer_encode_side(const rf_tokenizer *tok, const char *text, size_t text_len,
                                   const char *pair, size_t pair_len, int32_t max_length,
                                   rf_truncation_side side, rf_encoding *out, rf_error *err);

/* Whether the jieba dictionary has been built (it is, by the first text
 * tokenized in WoBERT mode; never in BERT mode). */
bool rf_tokenizer_dict_built(const rf_tokenizer *tok);

/* The vocab entry of `id` (not NUL-terminated, *len bytes), or NULL. */
const char *rf_tokenizer_token(const rf_tokenizer *tok, int32_t id, uint32_t *len);

#endif
