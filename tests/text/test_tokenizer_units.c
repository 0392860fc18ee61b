/*
 * test_tokenizer_units.c — each tokenizer stage on small hand-made
 * dictionaries and vocabularies: the jieba DAG and route (ties, unknown
 * characters, ASCII merging, blocks), BasicTokenizer (control characters,
 * accents, punctuation, CJK), WordPiece (100/101-character words,
 * unmatched words), special tokens, truncation, byte spans and errors.
 * Expected values are written out by hand from the HF / jieba rules.
 */
#include "../check.h"
#include "text/jieba_cut.h"
#include "text/tokenizer.h"
#include "text/unicode.h"

#include <pthread.h>
#include <stdarg.h>

/* ==== jieba ==== */

typedef struct {
    const char *word;
    uint32_t freq;
} entry;

static void dict_from(rf_jieba_dict *d, const entry *e, int n)
{
    const char *w[64];
    uint32_t len[64], freq[64];
    for (int i = 0; i < n; i++) {
        w[i] = e[i].word;
        len[i] = (uint32_t)strlen(e[i].word);
        freq[i] = e[i].freq;
    }
    rf_error err;
    rf_status st = rf_jieba_dict_init(d, w, len, freq, n, &err);
    CHECK(st == RF_OK, "dict init: %s", err.message);
}

/* Cuts `text` and compares with the words given as "a|b|c". */
static void expect_cut(const rf_jieba_dict *d, const char *text, const char *want)
{
    rf_jieba_words w = {0};
    rf_error err;
    char got[1024] = "";
    size_t at = 0;
    if (rf_jieba_cut(d, text, strlen(text), &w, &err) == RF_OK) {
        for (size_t i = 0; i < w.n && at + w.words[i].len + 2 < sizeof got; i++) {
            if (i)
                got[at++] = '|';
            memcpy(got + at, text + w.words[i].off, w.words[i].len);
            at += w.words[i].len;
        }
        got[at] = '\0';
    }
    CHECK(!strcmp(got, want), "cut(\"%s\") = \"%s\", want \"%s\"", text, got, want);
    rf_jieba_words_release(&w);
}

static void test_jieba(void)
{
    rf_jieba_dict d;
    /* The DAG of 北京大学 is 0:{1,2,4} 1:{2} 2:{3,4} 3:{4}; the whole word wins. */
    const entry beijing[] = {{"北", 10}, {"京", 10}, {"北京", 100}, {"大", 10},
                             {"学", 10}, {"大学", 100}, {"北京大学", 50}};
    dict_from(&d, beijing, 7);
    CHECK(d.n_words == 7 && d.total == 290, "distinct %d total %llu", d.n_words,
          (unsigned long long)d.total);
    expect_cut(&d, "北京大学", "北京大学");
    expect_cut(&d, "北京大学生", "北京大学|生"); /* 生: unknown character, one word */
    expect_cut(&d, "大学北京", "大学|北京");
    rf_jieba_dict_release(&d);

    /* Tie: 甲乙|丙 and 甲|乙丙 both score ln2 + ln3 - 2 ln(total);
     * jieba keeps the larger end, so 甲乙 first. */
    const entry tie[] = {{"甲乙", 2}, {"丙", 3}, {"甲", 3}, {"乙丙", 2}};
    dict_from(&d, tie, 4);
    expect_cut(&d, "甲乙丙", "甲乙|丙");
    rf_jieba_dict_release(&d);

    /* A duplicate keeps its last frequency and counts once in the total. */
    const entry dup[] = {{"甲", 5}, {"乙", 7}, {"甲", 1}};
    dict_from(&d, dup, 3);
    CHECK(d.n_words == 2 && d.total == 8, "duplicates: %d words, total %llu", d.n_words,
          (unsigned long long)d.total);
    rf_jieba_dict_release(&d);

    /* A prefix that is not itself a word gives no edge: 乙 alone is a
     * character no word starts with a match for, so it steps by itself. */
    const entry prefix[] = {{"甲乙丙", 5}, {"甲", 1}};
    dict_from(&d, prefix, 2);
    expect_cut(&d, "甲乙", "甲|乙");
    expect_cut(&d, "甲乙丙", "甲乙丙");
    rf_jieba_dict_release(&d);

    /* Blocks, ASCII runs and case-sensitive dictionary words. */
    const entry ascii[] = {{"c++", 10}, {"编程", 10}, {"T恤", 5}, {"at&t", 3}, {"中", 1}};
    dict_from(&d, ascii, 5);
    expect_cut(&d, "abc123中", "abc123|中");
    expect_cut(&d, "c++编程", "c++|编程");
    expect_cut(&d, "a.b-c", "a|.|b|-|c");
    expect_cut(&d, "T恤", "T恤");
    expect_cut(&d, "t恤", "t|恤");
    expect_cut(&d, "at&t", "at&t");
    expect_cut(&d, "a\r\nb  c", "a|\r\n|b| | |c");
    expect_cut(&d, "é中", "é|中");                  /* é is outside the blocks */
    expect_cut(&d, "ｱ😀x", "ｱ|😀|x");
    expect_cut(&d, "", "");
    rf_jieba_dict_release(&d);
}

/* ==== the whole tokenizer on a tiny vocab ==== */

static const char *const tiny_vocab[] = {
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "a", "##a",
    "cafe", "ia", "北京", "大", "学", "中", "##b", ",", "!", "hello", "ab", "x", "##x", "σ",
    "c", "##f", "##e",
};
#define TINY_N ((int32_t)(sizeof tiny_vocab / sizeof *tiny_vocab))

static rf_tokenizer *tiny_cased(rf_tokenizer_mode mode, bool lower)
{
    static uint32_t len[TINY_N];
    for (int32_t i = 0; i < TINY_N; i++)
        len[i] = (uint32_t)strlen(tiny_vocab[i]);
    static const char *words[] = {"北京", "大学", "北", "京", "大", "学"};
    static const uint32_t wlen[] = {6, 6, 3, 3, 3, 3}, freq[] = {100, 100, 5, 5, 5, 5};
    rf_tokenizer_spec spec = {
        .mode = mode, .do_lower_case = lower, .vocab_size = TINY_N, .vocab = tiny_vocab,
        .vocab_len = len, .dict_size = 6, .dict_words = words, .dict_word_len = wlen,
        .dict_freq = freq, .pad_id = 0, .unk_id = 1, .cls_id = 2, .sep_id = 3, .mask_id = 4,
    };
    rf_tokenizer *tok = NULL;
    rf_error err;
    CHECK(rf_tokenizer_create(&spec, &tok, &err) == RF_OK, "create: %s", err.message);
    return tok;
}

static rf_tokenizer *tiny(rf_tokenizer_mode mode)
{
    return tiny_cased(mode, true);
}

/* Tokenizes (no specials) and compares the token strings "a|b" and, when
 * `spans` is not NULL, the byte spans "s-e s-e". */
static void expect_tokens(rf_tokenizer *tok, const char *text, size_t len, const char *want,
                          const char *spans)
{
    rf_encoding e = {0};
    rf_error err;
    char got[4096] = "", sp[4096] = "";
    size_t at = 0, sat = 0;
    if (rf_tokenizer_encode(tok, text, len, NULL, 0, 0, &e, &err) == RF_OK) {
        for (int32_t i = 1; i + 1 < e.n && at < sizeof got - 64; i++) {
            uint32_t n;
            const char *s = rf_tokenizer_token(tok, e.ids[i], &n);
            at += (size_t)snprintf(got + at, sizeof got - at, "%s%.*s", i > 1 ? "|" : "", (int)n, s);
            if (sat < sizeof sp - 32)
                sat += (size_t)snprintf(sp + sat, sizeof sp - sat, "%s%d-%d", i > 1 ? " " : "",
                                        e.start[i], e.end[i]);
        }
    } else {
        snprintf(got, sizeof got, "error: %s", err.message);
    }
    CHECK(!strcmp(got, want), "tokens of \"%.40s\" = \"%.200s\", want \"%.200s\"", text, got, want);
    if (spans)
        CHECK(!strcmp(sp, spans), "spans of \"%s\" = \"%s\", want \"%s\"", text, sp, spans);
    rf_encoding_free(&e);
}
#define EXPECT(tok, text, want, spans) expect_tokens(tok, text, sizeof(text) - 1, want, spans)

static void test_pipeline(void)
{
    rf_tokenizer *w = tiny(RF_TOKENIZER_WOBERT), *b = tiny(RF_TOKENIZER_BERT);
    if (!w || !b)
        return;
    /* jieba words in the vocab are one token; others fall back to characters. */
    EXPECT(w, "北京大学", "北京|大|学", "0-6 6-9 9-12");
    EXPECT(b, "北京大学", "[UNK]|[UNK]|大|学", NULL);
    /* WordPiece */
    EXPECT(b, "unaffable", "un|##aff|##able", "0-2 2-5 5-9");
    EXPECT(b, "unaffablez", "[UNK]", "0-10");
    EXPECT(b, "UNAFFABLE!", "un|##aff|##able|!", NULL);
    char word[128];
    memset(word, 'a', sizeof word);
    expect_tokens(b, word, 100, "a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|"
                                "##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|"
                                "##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|"
                                "##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|"
                                "##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|"
                                "##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a|##a",
                  NULL);
    expect_tokens(b, word, 101, "[UNK]", "0-101");
    /* Cleaning: control and format characters vanish, tabs and U+3000 separate. */
    EXPECT(b, "a\x01" "b", "ab", "0-3");
    EXPECT(b, "a\xe2\x80\x8b" "b", "ab", "0-5");        /* U+200B zero-width space */
    EXPECT(b, "a\tb\xe3\x80\x80" "x", "a|[UNK]|x", NULL); /* "b" alone is not in the vocab */
    EXPECT(b, "a\xe2\x80\xa8x", "a|x", NULL);             /* U+2028 splits like str.split() */
    /* Accents: lower-case, NFD, drop Mn; precomposed and combining forms. */
    EXPECT(b, "Caf\xc3\xa9", "cafe", "0-5");
    EXPECT(b, "cafe\xcc\x81", "cafe", "0-6");
    /* U+0130 lower-cases to i + U+0307; the mark is stripped; spans stay in
     * the original bytes although the lower-cased text is longer. */
    EXPECT(b, "\xc4\xb0" "a", "ia", "0-3");
    /* With jieba, "i" and U+0307 are separate words ("i" is no vocab entry). */
    EXPECT(w, "\xc4\xb0" "a", "[UNK]|a", "0-2 2-3");
    /* A long run of combining marks is one segment; all of it is stripped. */
    char marks[1 + 2 * 300];
    marks[0] = 'a';
    for (int i = 0; i < 300; i++)
        memcpy(marks + 1 + 2 * i, "\xcc\x81", 2);
    expect_tokens(b, marks, sizeof marks, "a", "0-601");
    /* Σ lower-cases to σ one character at a time (no final sigma). */
    EXPECT(b, "\xce\xa3", "σ", "0-2");
    /* Punctuation split, CJK characters split. */
    EXPECT(b, "hello,x!", "hello|,|x|!", "0-5 5-6 6-7 7-8");
    EXPECT(b, "x中x", "x|中|x", "0-1 1-4 4-5");
    /* Literal special tokens, case-sensitive, with their spans. */
    EXPECT(w, "[MASK]x[cls]", "[MASK]|x|[UNK]|[UNK]|[UNK]", NULL);
    EXPECT(w, "a[SEP]", "a|[SEP]", "0-1 1-6");
    EXPECT(b, "[PAD]", "[PAD]", "0-5");
    /* Empty and blank texts. */
    EXPECT(w, "", "", "");
    EXPECT(w, " \t\n", "", "");
    rf_tokenizer_free(w);
    rf_tokenizer_free(b);

    /* do_lower_case = false: no lower-casing, no accent stripping, and a
     * word that spells a special token once a control character is
     * cleaned away stays whole (HF's never_split), then is that token. */
    rf_tokenizer *c = tiny_cased(RF_TOKENIZER_BERT, false);
    if (c) {
        EXPECT(c, "Hello hello", "[UNK]|hello", NULL);
        EXPECT(c, "cafe\xcc\x81", "[UNK]", NULL);
        EXPECT(c, "[C\x01LS]x", "[UNK]|[UNK]|[UNK]|x", "0-1 1-5 5-6 6-7"); /* "[CLS]x" is split */
        EXPECT(c, "[C\x01LS] x", "[CLS]|x", "0-6 7-8");
        EXPECT(c, "[c\x01ls] x", "[UNK]|[UNK]|[UNK]|x", NULL);
        rf_tokenizer_free(c);
    }

    /* Special tokens that are prefixes of one another: the longest wins. */
    static const char *const v[] = {"<p>", "<u>", "<c>", "<s>", "<s>x", "a"};
    static const uint32_t vl[] = {3, 3, 3, 3, 4, 1};
    rf_tokenizer_spec spec = {.mode = RF_TOKENIZER_BERT, .do_lower_case = true, .vocab_size = 6,
                              .vocab = v, .vocab_len = vl, .pad_id = 0, .unk_id = 1,
                              .cls_id = 2, .sep_id = 3, .mask_id = 4};
    rf_tokenizer *t = NULL;
    rf_error err;
    CHECK(rf_tokenizer_create(&spec, &t, &err) == RF_OK, "create: %s", err.message);
    if (t) {
        EXPECT(t, "a<s>xa<s>", "a|<s>x|a|<s>", "0-1 1-5 5-6 6-9");
        rf_tokenizer_free(t);
    }
}

/* ==== truncation and assembly ==== */

static void expect_lengths(rf_tokenizer *tok, const char *a, const char *b, int32_t max_length,
                           int32_t want_a, int32_t want_b)
{
    rf_encoding e = {0};
    rf_error err;
    rf_status st = rf_tokenizer_encode(tok, a, strlen(a), b, b ? strlen(b) : 0, max_length, &e, &err);
    int32_t got_a = 0, got_b = 0;
    for (int32_t i = 0; st == RF_OK && i < e.n; i++)
        if (e.start[i] >= 0)
            *(e.type_ids[i] ? &got_b : &got_a) += 1;
    int32_t specials = b ? 3 : 2;
    CHECK(st == RF_OK && got_a == want_a && got_b == want_b && e.n == got_a + got_b + specials &&
              e.ids[0] == 2 && e.ids[e.n - 1] == 3 && e.type_ids[e.n - 1] == (b ? 1 : 0),
          "max_length %d: kept %d + %d tokens, want %d + %d", max_length, got_a, got_b, want_a,
          want_b);
    rf_encoding_free(&e);
}

static void test_truncation(void)
{
    rf_tokenizer *b = tiny(RF_TOKENIZER_BERT);
    if (!b)
        return;
    const char *five = "x x x x x", *two = "x x";
    expect_lengths(b, five, NULL, 0, 5, 0);
    expect_lengths(b, five, NULL, 7, 5, 0);
    expect_lengths(b, five, NULL, 6, 4, 0);
    expect_lengths(b, five, NULL, 3, 1, 0);
    expect_lengths(b, five, NULL, 2, 5, 0); /* nothing would be left: HF keeps it all */
    /* Pair: 5 + 2 + 3 = 10. */
    expect_lengths(b, five, two, 10, 5, 2);
    expect_lengths(b, five, two, 8, 3, 2);  /* the longer loses the difference first */
    expect_lengths(b, five, two, 6, 2, 1);  /* n=4: 3 from A, then the last 1 from B */
    expect_lengths(b, two, five, 6, 2, 1);  /* n=4: B loses 3, then 1 more */
    expect_lengths(b, five, five, 9, 3, 3); /* n=4: no difference, 2 each */
    expect_lengths(b, five, five, 10, 4, 3); /* n=3: A 1, B 2 */
    expect_lengths(b, two, two, 2, 0, 0);   /* more to remove than there is */
    expect_lengths(b, "", "", 0, 0, 0);
    rf_tokenizer_free(b);
}

/* ==== character classes ==== */

static void test_unicode(void)
{
    /* The lower-casing fast path assumes these blocks have no case. */
    int cased = 0;
    for (int32_t cp = 0; cp < 0x110000; cp++) {
        int32_t low[3];
        if (rf_uni_is_caseless_cjk(cp) && (rf_uni_lower(cp, low) != 1 || low[0] != cp))
            cased++;
    }
    CHECK(cased == 0, "%d characters of the caseless CJK blocks have a lower-case mapping", cased);
    int32_t low[3];
    CHECK(rf_uni_lower(0x130, low) == 2 && low[0] == 'i' && low[1] == 0x307, "U+0130");
    CHECK(rf_uni_lower(0x1E9E, low) == 1 && low[0] == 0xDF, "U+1E9E");
    CHECK(rf_uni_lower(0x3A3, low) == 1 && low[0] == 0x3C3, "capital sigma");
    CHECK(rf_uni_is_control(0x200B) && rf_uni_is_control(0xAD) && rf_uni_is_control(0xE000) &&
              !rf_uni_is_control('\t') && !rf_uni_is_control(0x3000),
          "control characters");
    CHECK(rf_uni_is_space(0x3000) && rf_uni_is_space(0xA0) && !rf_uni_is_space(0x2028) &&
              rf_uni_splits_words(0x2028),
          "spaces");
    CHECK(rf_uni_is_punct('$') && rf_uni_is_punct('`') && rf_uni_is_punct(0x3002) &&
              !rf_uni_is_punct(0x2103) && !rf_uni_is_punct(0xA5),
          "punctuation: ASCII symbols yes, other symbols no");
    int32_t in[2] = {'e', 0x301}, out[8];
    CHECK(rf_uni_nfc(in, 2, out, 8) == 1 && out[0] == 0xE9, "NFC composes e + U+0301");
    int32_t hangul[3] = {0x1100, 0x1161, 0x11A8};
    CHECK(rf_uni_nfc(hangul, 3, out, 8) == 1 && out[0] == 0xAC01, "NFC composes Hangul jamo");
    int32_t marks[3] = {'a', 0x301, 0x316}; /* ccc 230 then 220: reordered */
    CHECK(rf_uni_nfd(marks, 3, out, 8) == 3 && out[1] == 0x316 && out[2] == 0x301,
          "NFD orders combining marks");
    int32_t compat = 0xF900;
    CHECK(rf_uni_nfc(&compat, 1, out, 8) == 1 && out[0] == 0x8C48, "NFC maps U+F900 to U+8C48");
}

/* ==== errors ==== */

static void test_errors(void)
{
    rf_tokenizer *w = tiny(RF_TOKENIZER_WOBERT);
    if (!w)
        return;
    rf_encoding e = {0};
    rf_error err;
    CHECK(rf_tokenizer_encode(w, "ab\xff", 3, NULL, 0, 0, &e, &err) == RF_ERR_INPUT &&
              strstr(err.message, "byte 2"),
          "invalid UTF-8: %s", err.message);
    CHECK(rf_tokenizer_encode(w, "ok", 2, "x\xe4\xb8", 3, 0, &e, &err) == RF_ERR_INPUT &&
              strstr(err.message, "byte 1") && strstr(err.message, "pair"),
          "truncated sequence in the pair: %s", err.message);
    CHECK(rf_tokenizer_encode(w, "\xed\xa0\x80", 3, NULL, 0, 0, &e, &err) == RF_ERR_INPUT,
          "encoded surrogate accepted");
    CHECK(rf_tokenizer_encode(w, "\xc0\xaf", 2, NULL, 0, 0, &e, &err) == RF_ERR_INPUT,
          "overlong form accepted");
    CHECK(rf_tokenizer_encode(w, "\xf4\x90\x80\x80", 4, NULL, 0, 0, &e, &err) == RF_ERR_INPUT,
          "code point past U+10FFFF accepted");
    rf_encoding_free(&e);
    rf_tokenizer_free(w);

    /* A special token id outside the vocab is refused at creation. */
    const char *v[] = {"[PAD]"};
    uint32_t l[] = {5};
    rf_tokenizer_spec spec = {.mode = RF_TOKENIZER_BERT, .vocab_size = 1, .vocab = v,
                              .vocab_len = l, .unk_id = 7};
    rf_tokenizer *tok = (rf_tokenizer *)1;
    CHECK(rf_tokenizer_create(&spec, &tok, &err) == RF_ERR_FORMAT && tok == NULL,
          "bad special id accepted");
    /* A dictionary entry that is not UTF-8 is refused. */
    rf_jieba_dict d;
    const char *bad[] = {"\xff"};
    uint32_t bl[] = {1}, bf[] = {1};
    CHECK(rf_jieba_dict_init(&d, bad, bl, bf, 1, &err) == RF_ERR_FORMAT, "bad dict entry accepted");
    /* and by the tokenizer at creation, though it builds the dictionary later */
    spec = (rf_tokenizer_spec){.mode = RF_TOKENIZER_WOBERT, .vocab_size = 1, .vocab = v,
                               .vocab_len = l, .dict_size = 1, .dict_words = bad,
                               .dict_word_len = bl, .dict_freq = bf};
    CHECK(rf_tokenizer_create(&spec, &tok, &err) == RF_ERR_FORMAT && tok == NULL &&
              strstr(err.message, "entry 0 is not valid UTF-8"),
          "bad dict entry accepted at creation: %s", err.message);
    rf_tokenizer_free(NULL);
    rf_encoding_free(NULL);
}

/* ==== The jieba dictionary on first use ==== */

#define FIRST_USE_THREADS 4

struct first_use {
    const rf_tokenizer *tok;
    rf_status st;
    int32_t ids[16];
    int32_t n;
};

static void *encode_first(void *arg)
{
    struct first_use *u = arg;
    rf_encoding e = {0};
    rf_error err;
    const char *text = "北京大学中a";
    u->st = rf_tokenizer_encode(u->tok, text, strlen(text), NULL, 0, 0, &e, &err);
    u->n = u->st == RF_OK && e.n <= 16 ? e.n : 0;
    memcpy(u->ids, e.ids, (size_t)u->n * sizeof *u->ids);
    rf_encoding_free(&e);
    return NULL;
}

/* Not built by creation (nor in BERT mode at all); built once by the first
 * texts, which threads may tokenize at the same time: each gets the tokens
 * one thread gets afterwards. */
static void test_dict_on_first_use(void)
{
    rf_tokenizer *bert = tiny_cased(RF_TOKENIZER_BERT, true);
    rf_tokenizer *tok = tiny_cased(RF_TOKENIZER_WOBERT, true);
    CHECK(tok && bert && !rf_tokenizer_dict_built(tok), "no jieba dictionary after creation");
    if (!tok || !bert)
        return;
    struct first_use u[FIRST_USE_THREADS + 1];
    pthread_t th[FIRST_USE_THREADS];
    for (int i = 0; i <= FIRST_USE_THREADS; i++)
        u[i] = (struct first_use){.tok = tok};
    for (int i = 0; i < FIRST_USE_THREADS; i++)
        pthread_create(&th[i], NULL, encode_first, &u[i]);
    for (int i = 0; i < FIRST_USE_THREADS; i++)
        pthread_join(th[i], NULL);
    CHECK(rf_tokenizer_dict_built(tok), "jieba dictionary built by the first texts");
    encode_first(&u[FIRST_USE_THREADS]);
    /* [CLS] 北京 大 学 中 a [SEP]: 大学 is a dictionary word, not a vocab entry */
    const int32_t want[] = {2, 12, 13, 14, 15, 8, 3};
    int same = u[FIRST_USE_THREADS].st == RF_OK && u[FIRST_USE_THREADS].n == 7 &&
               !memcmp(u[FIRST_USE_THREADS].ids, want, sizeof want);
    for (int i = 0; i < FIRST_USE_THREADS; i++)
        same &= u[i].st == RF_OK && u[i].n == 7 && !memcmp(u[i].ids, want, sizeof want);
    CHECK(same, "%d threads tokenizing first, and one after: the same tokens", FIRST_USE_THREADS);
    struct first_use b = {.tok = bert};
    encode_first(&b);
    CHECK(b.st == RF_OK && !rf_tokenizer_dict_built(bert), "BERT mode builds no dictionary");
    rf_tokenizer_free(tok);
    rf_tokenizer_free(bert);
}

int main(void)
{
    test_jieba();
    test_pipeline();
    test_truncation();
    test_unicode();
    test_errors();
    test_dict_on_first_use();
    return check_done();
}
