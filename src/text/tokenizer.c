/*
 * tokenizer.c — the tokenizer pipeline of HF RoFormerTokenizer (and
 * BertTokenizer in RF_TOKENIZER_BERT mode), transformers v4.40:
 *
 *   PreTrainedTokenizer.tokenize: literal special tokens ([PAD] [UNK] [CLS]
 *     [SEP] [MASK], exact and case-sensitive) are split out first; the
 *     rest is lower-cased one character at a time (str.lower() per
 *     character, so no final-sigma rule and U+0130 -> "i" + U+0307);
 *   RoFormerTokenizer._tokenize: jieba cut (HMM off); a word that is a
 *     vocab entry is one token, any other word goes through BasicTokenizer
 *     + WordPiece;
 *   prepare_for_model: [CLS] a [SEP] (b [SEP]), longest_first truncation.
 *
 * Every token keeps the byte span it came from in the caller's text: the
 * lower-cased copy carries a map from its character boundaries back to
 * the original ones, since lower-casing can change byte lengths.
 *
 * The jieba dictionary is built on the first text tokenized, not at
 * creation: a model that only runs ids (forward, bench) never pays for it.
 * Its words are checked at creation (rf_jieba_dict_check), so a bad
 * dictionary still fails the load; the build, under a lock taken until it
 * is done, can then only run out of memory, which every tokenization
 * afterwards reports.
 */
#include "text/tokenizer.h"

#include "text/basic_tokenizer.h"
#include "base/error.h"
#include "text/jieba_cut.h"
#include "text/unicode.h"
#include "text/utf8.h"
#include "text/vocab.h"
#include "text/wordpiece.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define N_SPECIAL 5

enum { DICT_UNBUILT, DICT_BUILT, DICT_FAILED };

struct rf_tokenizer {
    rf_tokenizer_mode mode;
    bool lower;
    rf_vocab vocab;
    /* the jieba dictionary, built from the spec's words on first use */
    const char *const *dict_words;
    const uint32_t *dict_word_len, *dict_freq;
    int32_t dict_size;
    pthread_mutex_t dict_lock;
    int dict_state;      /* DICT_*; read without the lock once not DICT_UNBUILT */
    rf_status dict_status;
    rf_error dict_error; /* why the build failed */
    rf_jieba_dict dict;
    int32_t unk_id, cls_id, sep_id;
    int32_t special_id[N_SPECIAL]; /* literal special tokens, matched in the text */
    const char *special_str[N_SPECIAL]; /* their strings, for BasicTokenizer's never_split */
    uint32_t special_len[N_SPECIAL];
    rf_never_split never_split;
    bool special_first[256];       /* bytes a special token starts with */
    int special_lead;              /* that byte when they all share one ('['), else -1
                                      (-2: no special token has a spelling) */
};

/* Everything an encode call needs, grown as needed and kept in the
 * caller's rf_encoding for the next call. */
typedef struct rf_tokenize_scratch {
    char *low;           /* the lower-cased piece */
    int32_t *map_start;  /* [low_len + 1] at a character start of `low`: its source start */
    int32_t *map_end;    /* [low_len + 1] at a character end of `low`: its source end */
    size_t low_cap;
    rf_jieba_words words;
    uint64_t *hash;      /* [hash_cap] vocab hash of each jieba word */
    size_t hash_cap;
    rf_chars chars;
    rf_basic_words basic;
    rf_wordpiece_scratch wp;
    rf_token_list a, b;
} rf_scratch;

/* The scratch of `out`, created on first use. */
static rf_scratch *scratch_of(rf_encoding *out)
{
    if (!out->scratch)
        out->scratch = calloc(1, sizeof *out->scratch);
    return out->scratch;
}

static void scratch_release(rf_scratch *s)
{
    free(s->low);
    free(s->map_start);
    free(s->map_end);
    free(s->hash);
    rf_jieba_words_release(&s->words);
    rf_chars_release(&s->chars);
    rf_basic_words_release(&s->basic);
    rf_wordpiece_scratch_release(&s->wp);
    rf_token_list_release(&s->a);
    rf_token_list_release(&s->b);
}

/* ==== Creation ==== */

rf_status rf_tokenizer_create(const rf_tokenizer_spec *spec, rf_tokenizer **out, rf_error *err)
{
    *out = NULL;
    rf_tokenizer *tok = calloc(1, sizeof *tok);
    if (!tok)
        return rf_fail(err, RF_ERR_NOMEM, "tokenizer: out of memory");
    rf_status st = RF_OK;
    tok->mode = spec->mode;
    tok->lower = spec->do_lower_case;
    const int32_t ids[N_SPECIAL] = {spec->pad_id, spec->unk_id, spec->cls_id, spec->sep_id,
                                    spec->mask_id};
    static const char *const names[N_SPECIAL] = {"pad", "unk", "cls", "sep", "mask"};
    for (int i = 0; i < N_SPECIAL; i++) {
        if (ids[i] < 0 || ids[i] >= spec->vocab_size) {
            st = rf_fail(err, RF_ERR_FORMAT, "tokenizer: %s token id %d is not in the vocab (size %d)",
                         names[i], ids[i], spec->vocab_size);
            goto fail;
        }
        tok->special_id[i] = ids[i];
        tok->special_str[i] = spec->vocab[ids[i]];
        tok->special_len[i] = spec->vocab_len[ids[i]];
    }
    tok->never_split = (rf_never_split){tok->special_str, tok->special_len, N_SPECIAL};
    tok->special_lead = -2;
    for (int i = 0; i < N_SPECIAL; i++) {
        if (spec->vocab_len[ids[i]] == 0)
            continue;
        unsigned char lead = (unsigned char)spec->vocab[ids[i]][0];
        tok->special_first[lead] = true;
        tok->special_lead = tok->special_lead == -2 || tok->special_lead == lead ? lead : -1;
    }
    tok->unk_id = spec->unk_id;
    tok->cls_id = spec->cls_id;
    tok->sep_id = spec->sep_id;
    if ((st = rf_vocab_init(&tok->vocab, spec->vocab, spec->vocab_len, spec->vocab_size, err)) != RF_OK)
        goto fail;
    pthread_mutex_init(&tok->dict_lock, NULL);
    if (spec->mode == RF_TOKENIZER_WOBERT) {
        if ((st = rf_jieba_dict_check(spec->dict_words, spec->dict_word_len, spec->dict_size,
                                      err)) != RF_OK)
            goto fail;
        tok->dict_words = spec->dict_words;
        tok->dict_word_len = spec->dict_word_len;
        tok->dict_freq = spec->dict_freq;
        tok->dict_size = spec->dict_size;
    }
    *out = tok;
    return RF_OK;
fail:
    rf_tokenizer_free(tok);
    return st;
}

void rf_tokenizer_free(rf_tokenizer *tok)
{
    if (!tok)
        return;
    rf_vocab_release(&tok->vocab);
    rf_jieba_dict_release(&tok->dict);
    pthread_mutex_destroy(&tok->dict_lock);
    free(tok);
}

const char *rf_tokenizer_token(const rf_tokenizer *tok, int32_t id, uint32_t *len)
{
    if (id < 0 || id >= tok->vocab.n)
        return NULL;
    *len = tok->vocab.len[id];
    return tok->vocab.str[id];
}

/* The jieba dictionary, built by the first caller; the others wait for
 * it. A tokenizer is shared by threads as const: the dictionary is the
 * one part written after creation, once, under dict_lock. */
static rf_status dict_ready(const rf_tokenizer *ctok, rf_error *err)
{
    rf_tokenizer *tok = (rf_tokenizer *)ctok; /* allocated non-const by rf_tokenizer_create */
    int state = __atomic_load_n(&tok->dict_state, __ATOMIC_ACQUIRE);
    if (state == DICT_UNBUILT) {
        pthread_mutex_lock(&tok->dict_lock);
        state = tok->dict_state;
        if (state == DICT_UNBUILT) {
            tok->dict_status = rf_jieba_dict_build(&tok->dict, tok->dict_words, tok->dict_word_len,
                                                   tok->dict_freq, tok->dict_size, &tok->dict_error);
            state = tok->dict_status == RF_OK ? DICT_BUILT : DICT_FAILED;
            __atomic_store_n(&tok->dict_state, state, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&tok->dict_lock);
    }
    if (state == DICT_BUILT)
        return RF_OK;
    return rf_fail(err, tok->dict_status, "%s", tok->dict_error.message);
}

bool rf_tokenizer_dict_built(const rf_tokenizer *tok)
{
    return __atomic_load_n(&tok->dict_state, __ATOMIC_ACQUIRE) == DICT_BUILT;
}

/* ==== One piece of text between special tokens ==== */

/* Copies text[from..to) into s->low, lower-cased per character when asked,
 * recording the source span of every character boundary. */
static rf_status lower_piece(const rf_tokenizer *tok, const char *text, size_t from, size_t to,
                             rf_scratch *s, size_t *low_len, rf_error *err)
{
    size_t need = (to - from) * 2 + 8; /* lower-casing grows a character by at most 3/2 */
    if (need > s->low_cap) {
        char *low = realloc(s->low, need);
        if (low)
            s->low = low;
        int32_t *ms = realloc(s->map_start, need * sizeof *ms);
        if (ms)
            s->map_start = ms;
        int32_t *me = realloc(s->map_end, need * sizeof *me);
        if (me)
            s->map_end = me;
        if (!low || !ms || !me)
            return rf_fail(err, RF_ERR_NOMEM, "tokenizer: out of memory for %zu bytes", to - from);
        s->low_cap = need;
    }
    size_t n = 0;
    for (size_t i = from; i < to;) {
        int32_t cp;
        int clen = rf_utf8_decode(text + i, &cp);
        s->map_start[n] = (int32_t)i;
        if (cp < 0x80) {
            s->low[n++] = (char)(tok->lower && cp >= 'A' && cp <= 'Z' ? cp + 32 : cp);
        } else if (!tok->lower || rf_uni_is_caseless_cjk(cp)) {
            memcpy(s->low + n, text + i, (size_t)clen);
            n += (size_t)clen;
        } else {
            int32_t low[3];
            int k = rf_uni_lower(cp, low);
            for (int j = 0; j < k; j++) {
                if (j > 0)
                    s->map_start[n] = (int32_t)i;
                n += (size_t)rf_utf8_encode(low[j], s->low + n);
                s->map_end[n] = (int32_t)(i + (size_t)clen);
            }
        }
        i += (size_t)clen;
        s->map_end[n] = (int32_t)i;
    }
    *low_len = n;
    return RF_OK;
}

/* BasicTokenizer + WordPiece over low[from..to), appending to `out`. */
static rf_status basic_and_wordpiece(const rf_tokenizer *tok, rf_scratch *s, size_t from,
                                     size_t to, rf_token_list *out, rf_error *err)
{
    rf_status st;
    s->chars.n = 0;
    for (size_t i = from; i < to;) {
        int32_t cp;
        int clen = rf_utf8_decode(s->low + i, &cp);
        if ((st = rf_chars_push(&s->chars, cp, s->map_start[i], s->map_end[i + (size_t)clen], err)) !=
            RF_OK)
            return st;
        i += (size_t)clen;
    }
    if ((st = rf_basic_tokenize(s->chars.cp, s->chars.start, s->chars.end, s->chars.n, tok->lower,
                                &tok->never_split, &s->basic, err)) != RF_OK)
        return st;
    const rf_chars *c = &s->basic.chars;
    for (size_t w = 0; w < s->basic.n_words; w++) {
        size_t f = s->basic.word_first[w];
        if ((st = rf_wordpiece(&tok->vocab, tok->unk_id, tok->vocab.max_len, c->cp + f, c->start + f,
                               c->end + f, s->basic.word_count[w], &s->wp, out, err)) != RF_OK)
            return st;
    }
    return RF_OK;
}

static rf_status tokenize_piece(const rf_tokenizer *tok, const char *text, size_t from, size_t to,
                                rf_scratch *s, rf_token_list *out, rf_error *err)
{
    size_t n = 0;
    rf_status st = lower_piece(tok, text, from, to, s, &n, err);
    if (st != RF_OK)
        return st;
    if (tok->mode != RF_TOKENIZER_WOBERT)
        return basic_and_wordpiece(tok, s, 0, n, out, err);
    s->words.n = 0;
    if ((st = dict_ready(tok, err)) != RF_OK ||
        (st = rf_jieba_cut(&tok->dict, s->low, n, &s->words, err)) != RF_OK)
        return st;
    /* Vocab lookups of every word, hashed first and prefetched ahead. */
    const rf_span *words = s->words.words;
    size_t n_words = s->words.n;
    if (n_words > s->hash_cap) {
        uint64_t *h = realloc(s->hash, n_words * sizeof *h);
        if (!h)
            return rf_fail(err, RF_ERR_NOMEM, "tokenizer: out of memory for %zu words", n_words);
        s->hash = h;
        s->hash_cap = n_words;
    }
    for (size_t w = 0; w < n_words; w++)
        s->hash[w] = rf_hash_bytes(s->low + words[w].off, words[w].len);
    for (size_t w = 0; w < n_words; w++) {
        if (w + 8 < n_words)
            rf_vocab_prefetch_slot(&tok->vocab, s->hash[w + 8]);
        if (w + 4 < n_words)
            rf_vocab_prefetch_string(&tok->vocab, s->hash[w + 4]);
        size_t off = words[w].off, len = words[w].len;
        int32_t id = rf_vocab_find_hashed(&tok->vocab, s->low + off, len, s->hash[w]);
        if (id >= 0)
            st = rf_token_list_push(out, id, s->map_start[off], s->map_end[off + len], err);
        else
            st = basic_and_wordpiece(tok, s, off, off + len, out, err);
        if (st != RF_OK)
            return st;
    }
    return RF_OK;
}

/* ==== One text ==== */

/* The literal special token starting at text[i] (the longest, as HF's
 * trie matches), or -1. */
static int special_at(const rf_tokenizer *tok, const char *text, size_t i, size_t len)
{
    int best = -1;
    size_t best_len = 0;
    for (int k = 0; k < N_SPECIAL; k++) {
        int32_t id = tok->special_id[k];
        size_t n = tok->vocab.len[id];
        if (n > best_len && n <= len - i && !memcmp(text + i, tok->vocab.str[id], n)) {
            best = k;
            best_len = n;
        }
    }
    return best;
}

static rf_status tokenize_text(const rf_tokenizer *tok, const char *text, size_t len,
                               rf_scratch *s, rf_token_list *out, rf_error *err)
{
    rf_status st;
    size_t piece = 0;
    for (size_t i = 0; i < len;) {
        /* Skip to a byte that can start a special token (usually '['). */
        if (tok->special_lead >= 0) {
            const char *lead = memchr(text + i, tok->special_lead, len - i);
            if (!lead)
                break;
            i = (size_t)(lead - text);
        } else {
            while (i < len && !tok->special_first[(unsigned char)text[i]])
                i++;
            if (i == len)
                break;
        }
        int k = special_at(tok, text, i, len);
        if (k < 0) {
            i++;
            continue;
        }
        size_t n = tok->vocab.len[tok->special_id[k]];
        if (i > piece && (st = tokenize_piece(tok, text, piece, i, s, out, err)) != RF_OK)
            return st;
        if ((st = rf_token_list_push(out, tok->special_id[k], (int32_t)i, (int32_t)(i + n), err)) !=
            RF_OK)
            return st;
        i += n;
        piece = i;
    }
    if (piece < len)
        return tokenize_piece(tok, text, piece, len, s, out, err);
    return RF_OK;
}

/* ==== Encoding: specials and truncation ==== */

static rf_status encoding_reserve(rf_encoding *e, int32_t n, rf_error *err)
{
    if (n <= e->cap)
        return RF_OK;
    int32_t cap = e->cap > 0 ? e->cap : 64;
    while (cap < n)
        cap = cap > INT32_MAX / 2 ? n : cap * 2;
    int32_t **arrays[5] = {&e->ids, &e->type_ids, &e->mask, &e->start, &e->end};
    for (int i = 0; i < 5; i++) {
        int32_t *grown = realloc(*arrays[i], (size_t)cap * sizeof **arrays[i]);
        if (!grown)
            return rf_fail(err, RF_ERR_NOMEM, "tokenizer: out of memory for %d tokens", n);
        *arrays[i] = grown;
    }
    e->cap = cap;
    return RF_OK;
}

static void put(rf_encoding *e, int32_t id, int32_t type, int32_t start, int32_t end)
{
    int32_t i = e->n++;
    e->ids[i] = id;
    e->type_ids[i] = type;
    e->mask[i] = 1;
    e->start[i] = start;
    e->end[i] = end;
}

/* HF truncate_sequences with the longest_first strategy: how many tokens
 * each side keeps. */
static void truncate_longest_first(size_t *la, size_t *lb, bool pair, int32_t max_length)
{
    if (max_length <= 0)
        return;
    if (!pair) {
        size_t total = *la + 2;
        if (total <= (size_t)max_length)
            return;
        size_t remove = total - (size_t)max_length;
        if (*la > remove) /* otherwise HF logs an error and keeps everything */
            *la -= remove;
        return;
    }
    size_t total = *la + *lb + 3;
    if (total <= (size_t)max_length)
        return;
    size_t remove = total - (size_t)max_length;
    size_t diff = *la > *lb ? *la - *lb : *lb - *la;
    size_t first = diff < remove ? diff : remove;
    size_t second = remove - first;
    size_t cut_a, cut_b;
    if (*la > *lb) {
        cut_a = first + second / 2;
        cut_b = second - second / 2;
    } else {
        cut_a = second / 2;
        cut_b = first + second - second / 2;
    }
    *la = cut_a < *la ? *la - cut_a : 0;
    *lb = cut_b < *lb ? *lb - cut_b : 0;
}

rf_status rf_tokenizer_encode(const rf_tokenizer *tok, const char *text, size_t text_len,
                              const char *pair, size_t pair_len, int32_t max_length,
                              rf_encoding *out, rf_error *err)
{
    return rf_tokenizer_encode_side(tok, text, text_len, pair, pair_len, max_length,
                                    RF_TRUNCATE_RIGHT, out, err);
}

/* Each side keeps la (lb) tokens: its first ones, or with RF_TRUNCATE_LEFT
 * its last ones (HF truncation_side="left" removes the same counts from
 * the start of each sequence). */
rf_status rf_tokenizer_encode_side(const rf_tokenizer *tok, const char *text, size_t text_len,
                                   const char *pair, size_t pair_len, int32_t max_length,
                                   rf_truncation_side side, rf_encoding *out, rf_error *err)
{
    if (side != RF_TRUNCATE_RIGHT && side != RF_TRUNCATE_LEFT)
        return rf_fail(err, RF_ERR_INPUT, "tokenize: unknown truncation side %d", (int)side);
    if (!tok || !out || (!text && text_len))
        return rf_fail(err, RF_ERR_INPUT, "tokenize: missing tokenizer, text or output");
    if (!pair)
        pair_len = 0;
    if (text_len > INT32_MAX / 2 || pair_len > INT32_MAX / 2)
        return rf_fail(err, RF_ERR_LIMIT, "tokenize: text of %zu bytes is too long",
                       text_len > pair_len ? text_len : pair_len);
    size_t bad;
    if (!rf_utf8_validate(text, text_len, &bad))
        return rf_fail(err, RF_ERR_INPUT, "invalid UTF-8 at byte %zu of the text", bad);
    if (pair && !rf_utf8_validate(pair, pair_len, &bad))
        return rf_fail(err, RF_ERR_INPUT, "invalid UTF-8 at byte %zu of the text pair", bad);

    rf_scratch *s = scratch_of(out);
    if (!s)
        return rf_fail(err, RF_ERR_NOMEM, "tokenizer: out of memory");
    s->a.n = 0;
    s->b.n = 0;
    rf_status st = tokenize_text(tok, text, text_len, s, &s->a, err);
    if (st == RF_OK && pair)
        st = tokenize_text(tok, pair, pair_len, s, &s->b, err);
    if (st == RF_OK) {
        size_t la = s->a.n, lb = s->b.n;
        truncate_longest_first(&la, &lb, pair != NULL, max_length);
        out->n = 0;
        if (la + lb + 3 > (size_t)INT32_MAX)
            return rf_fail(err, RF_ERR_LIMIT, "tokenize: %zu tokens is too many", la + lb);
        st = encoding_reserve(out, (int32_t)(la + lb + 3), err);
        if (st == RF_OK) {
            size_t skip_a = side == RF_TRUNCATE_LEFT ? s->a.n - la : 0;
            size_t skip_b = side == RF_TRUNCATE_LEFT ? s->b.n - lb : 0;
            put(out, tok->cls_id, 0, -1, -1);
            for (size_t i = skip_a; i < skip_a + la; i++)
                put(out, s->a.id[i], 0, s->a.start[i], s->a.end[i]);
            put(out, tok->sep_id, 0, -1, -1);
            if (pair) {
                for (size_t i = skip_b; i < skip_b + lb; i++)
                    put(out, s->b.id[i], 1, s->b.start[i], s->b.end[i]);
                put(out, tok->sep_id, 1, -1, -1);
            }
        }
    }
    return st;
}

void rf_encoding_free(rf_encoding *enc)
{
    if (!enc)
        return;
    free(enc->ids);
    free(enc->type_ids);
    free(enc->mask);
    free(enc->start);
    free(enc->end);
    if (enc->scratch) {
        scratch_release(enc->scratch);
        free(enc->scratch);
    }
    memset(enc, 0, sizeof *enc);
}
