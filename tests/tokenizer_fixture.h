/*
 * tokenizer_fixture.h — builds a tokenizer straight from a vocab.txt and a
 * jieba dict.txt (no model file), for the tokenizer tests and benchmark.
 *
 *   fixture_load(&fx, vocab_path, dict_path_or_NULL, mode)  0 on success
 *   fixture_free(&fx)
 *   fixture_jieba_dict()   $ROFORMER_JIEBA_DICT or python3-jieba's dict.txt,
 *                          NULL when neither exists
 */
#ifndef RF_TOKENIZER_FIXTURE_H
#define RF_TOKENIZER_FIXTURE_H

#include "text/tokenizer.h"

#include <cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    char *vocab_buf, *dict_buf;
    const char **vocab;
    uint32_t *vocab_len;
    int32_t vocab_size;
    const char **words;
    uint32_t *word_len, *freq;
    int32_t n_words;
    int32_t unk_id;
    rf_tokenizer *tok;
} fixture;

static inline const char *fixture_jieba_dict(void)
{
    const char *p = getenv("ROFORMER_JIEBA_DICT");
    struct stat st;
    if (!p || !*p)
        p = "/usr/lib/python3/dist-packages/jieba/dict.txt";
    return stat(p, &st) == 0 ? p : NULL;
}

static inline char *fixture_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = (size_t)n;
    }
    return buf;
}

static inline void fixture_free(fixture *fx)
{
    rf_tokenizer_free(fx->tok);
    free(fx->vocab_buf);
    free(fx->dict_buf);
    free(fx->vocab);
    free(fx->vocab_len);
    free(fx->words);
    free(fx->word_len);
    free(fx->freq);
    memset(fx, 0, sizeof *fx);
}

/* Vocab lines as HF's load_vocab reads them (only "\n" is stripped). */
static inline int fixture_split_vocab(fixture *fx, size_t len)
{
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += fx->vocab_buf[i] == '\n';
    fx->vocab = malloc(lines * sizeof *fx->vocab);
    fx->vocab_len = malloc(lines * sizeof *fx->vocab_len);
    if (!fx->vocab || !fx->vocab_len)
        return -1;
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(fx->vocab_buf + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - fx->vocab_buf) : len;
        fx->vocab[fx->vocab_size] = fx->vocab_buf + i;
        fx->vocab_len[fx->vocab_size++] = (uint32_t)(end - i);
        i = end + 1;
    }
    return 0;
}

/* dict.txt lines "word freq [tag]". */
static inline int fixture_split_dict(fixture *fx, size_t len)
{
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += fx->dict_buf[i] == '\n';
    fx->words = malloc(lines * sizeof *fx->words);
    fx->word_len = malloc(lines * sizeof *fx->word_len);
    fx->freq = malloc(lines * sizeof *fx->freq);
    if (!fx->words || !fx->word_len || !fx->freq)
        return -1;
    char *p = fx->dict_buf, *end = fx->dict_buf + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *line_end = nl ? nl : end;
        char *sp = memchr(p, ' ', (size_t)(line_end - p));
        if (sp && sp > p) {
            fx->words[fx->n_words] = p;
            fx->word_len[fx->n_words] = (uint32_t)(sp - p);
            fx->freq[fx->n_words++] = (uint32_t)strtoul(sp + 1, NULL, 10);
        }
        p = line_end + 1;
    }
    return 0;
}

static inline int32_t fixture_id(const fixture *fx, const char *tok)
{
    size_t n = strlen(tok);
    for (int32_t i = 0; i < fx->vocab_size; i++)
        if (fx->vocab_len[i] == n && !memcmp(fx->vocab[i], tok, n))
            return i;
    return -1;
}

static inline int fixture_load(fixture *fx, const char *vocab_path, const char *dict_path,
                               rf_tokenizer_mode mode)
{
    memset(fx, 0, sizeof *fx);
    size_t vlen, dlen = 0;
    if (!(fx->vocab_buf = fixture_read(vocab_path, &vlen)) || fixture_split_vocab(fx, vlen))
        goto fail;
    if (dict_path &&
        (!(fx->dict_buf = fixture_read(dict_path, &dlen)) || fixture_split_dict(fx, dlen)))
        goto fail;
    rf_tokenizer_spec spec = {
        .mode = mode,
        .do_lower_case = true,
        .vocab_size = fx->vocab_size,
        .vocab = fx->vocab,
        .vocab_len = fx->vocab_len,
        .dict_size = fx->n_words,
        .dict_words = fx->words,
        .dict_word_len = fx->word_len,
        .dict_freq = fx->freq,
        .pad_id = fixture_id(fx, "[PAD]"),
        .unk_id = fixture_id(fx, "[UNK]"),
        .cls_id = fixture_id(fx, "[CLS]"),
        .sep_id = fixture_id(fx, "[SEP]"),
        .mask_id = fixture_id(fx, "[MASK]"),
    };
    fx->unk_id = spec.unk_id;
    rf_error err;
    if (rf_tokenizer_create(&spec, &fx->tok, &err) != RF_OK) {
        fprintf(stderr, "fixture: %s\n", err.message);
        goto fail;
    }
    return 0;
fail:
    fixture_free(fx);
    return -1;
}

/* cJSON ends strings at U+0000. Lines are parsed with every escaped
 * \u0000 swapped for U+10FFFF (absent from the fixtures), and
 * fixture_text() swaps it back, giving the text and its true length. */
static inline cJSON *fixture_parse(const char *line)
{
    size_t n = strlen(line), extra = 0;
    for (const char *p = strstr(line, "\\u0000"); p; p = strstr(p + 1, "\\u0000"))
        extra++;
    char *copy = malloc(n + extra * 6 + 1), *o = copy;
    if (!copy)
        return NULL;
    for (size_t i = 0; i < n;) {
        if (line[i] == '\\' && !strncmp(line + i, "\\u0000", 6)) {
            memcpy(o, "\\udbff\\udfff", 12);
            o += 12;
            i += 6;
        } else if (line[i] == '\\' && i + 1 < n) {
            *o++ = line[i++];
            *o++ = line[i++];
        } else {
            *o++ = line[i++];
        }
    }
    *o = '\0';
    cJSON *j = cJSON_Parse(copy);
    free(copy);
    return j;
}

/* The string value of `item` with U+10FFFF turned back into NUL (in place);
 * NULL when it is not a string. */
static inline const char *fixture_text(cJSON *item, size_t *len)
{
    if (!cJSON_IsString(item))
        return NULL;
    char *s = item->valuestring, *o = s;
    for (const char *p = s; *p;) {
        if (!strncmp(p, "\xF4\x8F\xBF\xBF", 4)) {
            *o++ = '\0';
            p += 4;
        } else {
            *o++ = *p++;
        }
    }
    *len = (size_t)(o - s);
    return s;
}

#endif
