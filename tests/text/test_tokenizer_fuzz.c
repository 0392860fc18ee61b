/*
 * test_tokenizer_fuzz.c — random input through the whole tokenizer, both
 * modes: random bytes (mostly invalid UTF-8: must be refused as
 * RF_ERR_INPUT exactly when the bytes are not UTF-8) and random valid
 * UTF-8 drawn from every plane, with extra weight on the characters that
 * exercise normalisation, case mapping and segmentation. Nothing may
 * crash or leak (the ASan build runs this too), every valid text must
 * tokenize, and every span must lie inside its text.
 *
 * Uses the WoBERT vocab and the jieba dictionary when they are available,
 * a small built-in vocab otherwise. Fixed seed: failures reproduce.
 */
#include "../check.h"
#include "../tokenizer_fixture.h"
#include "text/utf8.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* A code point from a mix of ranges: ASCII, Latin with accents, combining
 * marks, Greek, Hangul (syllables and jamo), kana, CJK and its extensions
 * and compatibility ideographs, spaces and controls, private use,
 * specials, emoji, and anything at all up to U+10FFFF. */
static int32_t random_cp(void)
{
    static const int32_t ranges[][2] = {
        {0x20, 0x7E},       {0x00, 0x1F},       {0xC0, 0x24F},      {0x300, 0x36F},
        {0x370, 0x3FF},     {0x1100, 0x11FF},   {0xAC00, 0xD7A3},   {0x3040, 0x30FF},
        {0x4E00, 0x9FFF},   {0x3400, 0x4DBF},   {0xF900, 0xFAFF},   {0x20000, 0x2FA1F},
        {0x2000, 0x206F},   {0x3000, 0x303F},   {0xFF00, 0xFFEF},   {0xE000, 0xF8FF},
        {0xFFF0, 0xFFFF},   {0x1F300, 0x1FAFF}, {0x0, 0x10FFFF},    {0x130, 0x130},
        {0x0F00, 0x0FFF},   {0x0B00, 0x0DFF},   {0x1D100, 0x1D1FF}, {0xE0000, 0xE01EF},
    };
    int n = (int)(sizeof ranges / sizeof ranges[0]);
    int r = (int)(next() % (uint32_t)n);
    int32_t cp = ranges[r][0] + (int32_t)(next() % (uint32_t)(ranges[r][1] - ranges[r][0] + 1));
    if (cp >= 0xD800 && cp <= 0xDFFF)
        cp = 0x4E2D;
    return cp;
}

static bool encoding_ok(const rf_encoding *e, size_t la, size_t lb, bool pair)
{
    bool ok = e->n >= (pair ? 3 : 2);
    for (int32_t i = 0; ok && i < e->n; i++) {
        size_t len = e->type_ids[i] ? lb : la;
        ok = e->mask[i] == 1 && (e->start[i] < 0 ? e->end[i] < 0
                                                  : e->start[i] < e->end[i] && (size_t)e->end[i] <= len);
    }
    return ok;
}

/* One CHECK per batch of rounds; the first few failures are printed. */
static int fuzz_failures;
#define FUZZ_EXPECT(cond, ...)                                                 \
    do {                                                                       \
        if (!(cond) && fuzz_failures++ < 10) {                                 \
            fprintf(stderr, "fuzz: ");                                         \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
        }                                                                      \
    } while (0)

static void fuzz(rf_tokenizer *tok, int rounds)
{
    fuzz_failures = 0;
    char buf[1024], pair[256];
    rf_encoding e = {0};
    rf_error err;
    for (int r = 0; r < rounds; r++) {
        size_t n = 0, m = 0;
        if (r % 3 == 0) { /* random bytes */
            n = next() % 64;
            for (size_t i = 0; i < n; i++)
                buf[i] = (char)next();
        } else { /* random valid UTF-8 */
            size_t chars = next() % 200;
            for (size_t i = 0; i < chars && n + 4 < sizeof buf; i++)
                n += (size_t)rf_utf8_encode(random_cp(), buf + n);
            size_t pchars = r % 2 ? next() % 50 : 0;
            for (size_t i = 0; i < pchars && m + 4 < sizeof pair; i++)
                m += (size_t)rf_utf8_encode(random_cp(), pair + m);
        }
        bool has_pair = m > 0;
        int32_t max_length = r % 5 ? 0 : (int32_t)(next() % 40);
        bool valid = rf_utf8_validate(buf, n, NULL);
        rf_status st = rf_tokenizer_encode(tok, buf, n, has_pair ? pair : NULL, m, max_length, &e, &err);
        if (valid) {
            FUZZ_EXPECT(st == RF_OK, "round %d: valid text refused: %s", r, err.message);
            FUZZ_EXPECT(st != RF_OK || encoding_ok(&e, n, m, has_pair), "round %d: bad encoding", r);
        } else {
            FUZZ_EXPECT(st == RF_ERR_INPUT && strstr(err.message, "invalid UTF-8 at byte"),
                        "round %d: invalid text gave status %d", r, st);
        }
    }
    rf_encoding_free(&e);
    CHECK(fuzz_failures == 0, "%d of %d fuzz rounds failed", fuzz_failures, rounds);
}

int main(void)
{
    const char *ref = check_reference();
    const char *dict = fixture_jieba_dict();
    int rounds = getenv("ROFORMER_FUZZ_ROUNDS") ? atoi(getenv("ROFORMER_FUZZ_ROUNDS")) : 20000;
    char vocab[4096];
    if (ref && dict) {
        fixture fx;
        snprintf(vocab, sizeof vocab, "%s/vocab/wobert_vocab.txt", ref);
        CHECK(fixture_load(&fx, vocab, dict, RF_TOKENIZER_WOBERT) == 0, "load %s", vocab);
        if (fx.tok)
            fuzz(fx.tok, rounds);
        fixture_free(&fx);
        snprintf(vocab, sizeof vocab, "%s/models/tiny-char-proj/vocab.txt", ref);
        CHECK(fixture_load(&fx, vocab, NULL, RF_TOKENIZER_BERT) == 0, "load %s", vocab);
        if (fx.tok)
            fuzz(fx.tok, rounds);
        fixture_free(&fx);
    } else {
        SKIP("reference vocab or jieba dict absent: fuzzing with a built-in vocab only");
    }
    /* Always: a small built-in vocab and dictionary, both modes. */
    static const char *v[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "##a", "中", "中国", "é"};
    static const uint32_t vl[] = {5, 5, 5, 5, 6, 1, 3, 3, 6, 2};
    static const char *w[] = {"中国", "中", "国"};
    static const uint32_t wl[] = {6, 3, 3}, wf[] = {10, 3, 3};
    for (int mode = 0; mode < 2; mode++) {
        rf_tokenizer_spec spec = {.mode = mode ? RF_TOKENIZER_BERT : RF_TOKENIZER_WOBERT,
                                  .do_lower_case = true, .vocab_size = 10, .vocab = v,
                                  .vocab_len = vl, .dict_size = 3, .dict_words = w,
                                  .dict_word_len = wl, .dict_freq = wf, .unk_id = 1, .cls_id = 2,
                                  .sep_id = 3, .mask_id = 4};
        rf_tokenizer *tok;
        rf_error err;
        CHECK(rf_tokenizer_create(&spec, &tok, &err) == RF_OK, "create: %s", err.message);
        fuzz(tok, rounds);
        rf_tokenizer_free(tok);
    }
    return check_done();
}
