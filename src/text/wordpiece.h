/*
 * wordpiece.h — HF WordpieceTokenizer (transformers v4.40
 * tokenization_bert.py): greedy longest-match-first over the characters
 * of one word, continuation pieces prefixed with "##". A word of more than
 * 100 characters, or one with a remainder that matches nothing, becomes a
 * single unknown token.
 *
 * Also home of rf_token_list, the (id, byte span) list every stage of the
 * tokenizer appends to.
 */
#ifndef RF_WORDPIECE_H
#define RF_WORDPIECE_H

#include "text/vocab.h"

#define RF_WORDPIECE_MAX_CHARS 100

typedef struct {
    int32_t *id, *start, *end;
    size_t n, cap;
} rf_token_list;

rf_status rf_token_list_push(rf_token_list *t, int32_t id, int32_t start, int32_t end,
                             rf_error *err);
void rf_token_list_release(rf_token_list *t);

/* Scratch for rf_wordpiece; zero-initialise, release when done. */
typedef struct {
    char *buf;        /* "##" + the word in UTF-8 */
    uint32_t *offset; /* [n + 1] byte offset of each character in the word */
    size_t cap;       /* characters the arrays hold */
} rf_wordpiece_scratch;

/* Appends the pieces of the word cp[0..n) (each character with its source
 * span) to `out`. `max_token_bytes` is the longest vocab entry. */
rf_status rf_wordpiece(const rf_vocab *v, int32_t unk_id, size_t max_token_bytes, const int32_t *cp,
                       const int32_t *start, const int32_t *end, size_t n,
                       rf_wordpiece_scratch *scratch, rf_token_list *out, rf_error *err);
void rf_wordpiece_scratch_release(rf_wordpiece_scratch *s);

#endif
