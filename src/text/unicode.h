/*
 * unicode.h — the character properties and mappings the tokenizer needs,
 * with the meaning Python gives them in HF's tokenization code, all taken
 * from utf8proc's tables.
 *
 *   rf_uni_lower        str.lower() of one character (full mapping: U+0130
 *                       becomes "i" + U+0307)
 *   rf_uni_is_control   BERT _is_control: category C* except \t \n \r
 *   rf_uni_is_space     BERT _is_whitespace: \t \n \r ' ' and category Zs
 *   rf_uni_is_punct     BERT _is_punctuation: ASCII non-alphanumeric
 *                       printables and category P*
 *   rf_uni_is_cjk       BERT _is_chinese_char: the CJK ideograph blocks
 *   rf_uni_is_mark_mn   category Mn (dropped by accent stripping)
 *   rf_uni_nfc / nfd    normalisation of a short code point sequence
 *
 * Python's str.split() also splits on U+2028 / U+2029; rf_uni_splits_words
 * says which characters end a word after BERT's cleaning step.
 *
 * The Unicode version is utf8proc's (15.0 for utf8proc 2.8), while HF's
 * output depends on the Python that ran it (3.11: Unicode 14.0). A
 * character assigned in between is "unassigned" (category Cn, so dropped as
 * a control character) for HF on Python 3.11 but kept here, where it
 * usually becomes [UNK]. Everything assigned by 14.0 behaves the same.
 */
#ifndef RF_UNICODE_H
#define RF_UNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes the lower-case mapping of `cp` to out (at most 3 code points);
 * returns how many. */
int rf_uni_lower(int32_t cp, int32_t out[3]);
bool rf_uni_is_control(int32_t cp);
bool rf_uni_is_space(int32_t cp);
bool rf_uni_is_punct(int32_t cp);
bool rf_uni_is_mark_mn(int32_t cp);
bool rf_uni_splits_words(int32_t cp);
int rf_uni_combining_class(int32_t cp);

static inline bool rf_uni_is_cjk(int32_t cp)
{
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
           (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

/* CJK ideographs and the CJK symbols, punctuation and kana blocks
 * (U+3000..U+30FF, U+3400..U+9FFF) have no case: lower-casing can skip the
 * lookup for the bulk of Chinese text. (A unit test checks this against
 * utf8proc.) */
static inline bool rf_uni_is_caseless_cjk(int32_t cp)
{
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3000 && cp <= 0x30FF) ||
           (cp >= 0x3400 && cp <= 0x4DBF);
}

/* Canonical composition (NFC) / decomposition (NFD) of in[0..n) into out
 * (room for `cap`). Return the output length, or -1 when `cap` is too small. */
ptrdiff_t rf_uni_nfc(const int32_t *in, size_t n, int32_t *out, size_t cap);
ptrdiff_t rf_uni_nfd(const int32_t *in, size_t n, int32_t *out, size_t cap);

#endif
