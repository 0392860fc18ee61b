/*
 * basic_tokenizer.h — HF BertTokenizer's BasicTokenizer (transformers
 * v4.40 tokenization_bert.py) on a sequence of characters that each carry
 * their byte span in the original text:
 *
 *   1. clean: drop U+0000, U+FFFD and control/format/unassigned/private
 *      characters (category C*, except \t \n \r); whitespace separates;
 *   2. every CJK ideograph is a word of its own;
 *   3. NFC;
 *   4. per word, when lower-casing: lower-case, then strip accents (NFD,
 *      drop category Mn);
 *   5. every punctuation character is a word of its own, except that a
 *      word spelling a special token is kept whole when not lower-casing
 *      (HF's never_split; with lower-casing it cannot occur, since the
 *      special tokens were split out of the text before).
 *
 * NFC and accent stripping work on "segments": a starter and the
 * characters that attach to it (non-starters, or starters that compose
 * with it). Every character produced from a segment carries the span of
 * the whole segment, so spans stay exact whatever normalisation does.
 */
#ifndef RF_BASIC_TOKENIZER_H
#define RF_BASIC_TOKENIZER_H

#include "roformer.h"

/* Characters with their source byte spans [start, end). */
typedef struct {
    int32_t *cp, *start, *end;
    size_t n, cap;
} rf_chars;

rf_status rf_chars_push(rf_chars *c, int32_t cp, int32_t start, int32_t end, rf_error *err);
void rf_chars_release(rf_chars *c);

/* Output of the basic tokenizer: words as ranges of `chars`. */
typedef struct {
    rf_chars chars;
    uint32_t *word_first, *word_count; /* [n_words] */
    size_t n_words, cap_words;
    /* scratch */
    rf_chars run;
    int32_t *buf_a, *buf_b;
    size_t buf_cap;
} rf_basic_words;

/* Strings never split at punctuation (the special tokens). */
typedef struct {
    const char *const *str;
    const uint32_t *len;
    int n;
} rf_never_split;

/* Resets `out` and fills it with the words of in[0..n). */
rf_status rf_basic_tokenize(const int32_t *cp, const int32_t *start, const int32_t *end, size_t n,
                            bool lower, const rf_never_split *never_split, rf_basic_words *out,
                            rf_error *err);
void rf_basic_words_release(rf_basic_words *w);

#endif
