/*
 * jieba_cut.h — jieba word segmentation with the HMM off, as jieba-rs
 * 0.10.3 `cut(text, false)` does it (the call HF RoFormerTokenizer makes).
 *
 * 1. The text is split into blocks by the regex
 *      [\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF\u20000-\u2A6DF\u2A700-\u2EBEF
 *       \u2F800-\u2FA1F a-zA-Z0-9+#&._%-]+
 *    Between blocks every character is a word of its own, except that
 *    "\r\n" stays one word.
 * 2. In a block, the DAG has an edge i -> j for every dictionary word
 *    text[i..j). For 北京大学 with the words 北京 北京大学 大学 学 (and
 *    the single characters):
 *        0:{1,2,4}  1:{2}  2:{3,4}  3:{4}         (ends, in characters)
 * 3. route(i) = max over edges of weight(word) + route(j), computed right
 *    to left from route(end) = 0; ties go to the larger j (jieba compares
 *    (value, j) tuples). A position with no edge steps one character with
 *    weight ln(1) - ln(total).  Here route(0) takes 北京大学 whole.
 * 4. Following the route from the left, consecutive one-character words
 *    that are ASCII letters or digits are merged into one word.
 *
 * Words are (offset, length) spans into the text, in order; they cover it.
 */
#ifndef RF_JIEBA_CUT_H
#define RF_JIEBA_CUT_H

#include "text/jieba_dict.h"

typedef struct {
    uint32_t off, len;
} rf_span;

/* Output words and the scratch the route needs; zero-initialise, reuse
 * across calls, release with rf_jieba_words_release. */
typedef struct {
    rf_span *words;
    size_t n, cap;
    double *route_w;     /* [route_cap] best route weight from each byte */
    uint32_t *route_end; /* [route_cap] end of the first word of that route */
    uint32_t *char_start; /* [route_cap] byte offset of each character of a block */
    int32_t *char_cp;     /* [route_cap] its code point */
    size_t route_cap;
} rf_jieba_words;

/* Appends the words of text[0..len) (validated UTF-8) to out->words. */
rf_status rf_jieba_cut(const rf_jieba_dict *d, const char *text, size_t len, rf_jieba_words *out,
                       rf_error *err);
void rf_jieba_words_release(rf_jieba_words *w);

#endif
