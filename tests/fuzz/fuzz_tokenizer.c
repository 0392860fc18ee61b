/*
 * fuzz_tokenizer.c — the whole tokenizer (UTF-8 check, special tokens,
 * jieba cut, BERT basic tokenizer, WordPiece, pairs and truncation) on
 * arbitrary bytes, with the real WoBERT vocab and the jieba dictionary.
 *
 * Input: one flags byte, then the text; a 0xFF byte (never part of UTF-8)
 * splits off the text pair. Flags bit 0: BERT (char-level) mode instead of
 * WoBERT; bits 1..7: max_length (0 = no truncation).
 *
 * The tokenizers are built once, from $ROFORMER_REFERENCE (default
 * ../shared/reference)/vocab/wobert_vocab.txt and python3-jieba's dict.txt
 * ($ROFORMER_JIEBA_DICT); without them, from a small built-in vocab.
 * Checked: valid UTF-8 is accepted and anything else refused as
 * RF_ERR_INPUT; ids are in the vocab; spans lie inside their text;
 * truncation keeps the length asked for (from 3 tokens up).
 */
#include "../tokenizer_fixture.h"
#include "fuzz.h"
#include "text/utf8.h"

static fixture fx[2];
static rf_tokenizer *tok[2];
static int32_t vocab_size[2];

static const char *builtin_vocab[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "##a",
                                      "中", "中国", "é", "##b", "ab"};
static const uint32_t builtin_vocab_len[] = {5, 5, 5, 5, 6, 1, 3, 3, 6, 2, 3, 2};
static const char *builtin_words[] = {"中国", "中", "国", "ab"};
static const uint32_t builtin_word_len[] = {6, 3, 3, 2}, builtin_freq[] = {10, 3, 3, 5};

static void build_builtin(int mode)
{
    rf_tokenizer_spec spec = {
        .mode = mode ? RF_TOKENIZER_BERT : RF_TOKENIZER_WOBERT, .do_lower_case = true,
        .vocab_size = 12, .vocab = builtin_vocab, .vocab_len = builtin_vocab_len,
        .dict_size = mode ? 0 : 4, .dict_words = builtin_words,
        .dict_word_len = builtin_word_len, .dict_freq = builtin_freq,
        .unk_id = 1, .cls_id = 2, .sep_id = 3, .mask_id = 4};
    rf_error err;
    FUZZ_ASSERT(rf_tokenizer_create(&spec, &tok[mode], &err) == RF_OK);
    vocab_size[mode] = 12;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *ref = getenv("ROFORMER_REFERENCE");
    const char *dict = fixture_jieba_dict();
    char vocab[4096];
    snprintf(vocab, sizeof vocab, "%s/vocab/wobert_vocab.txt",
             ref && *ref ? ref : "../shared/reference");
    for (int mode = 0; mode < 2; mode++) {
        if (dict && fixture_load(&fx[mode], vocab, mode ? NULL : dict,
                                 mode ? RF_TOKENIZER_BERT : RF_TOKENIZER_WOBERT) == 0) {
            tok[mode] = fx[mode].tok;
            vocab_size[mode] = fx[mode].vocab_size;
        } else {
            if (mode == 0)
                fprintf(stderr, "fuzz_tokenizer: %s or the jieba dictionary is absent; "
                                "using a built-in vocab\n", vocab);
            build_builtin(mode);
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    int mode = data[0] & 1;
    int32_t max_length = data[0] >> 1;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    const char *sep = memchr(text, 0xFF, len);
    const char *pair = sep ? sep + 1 : NULL;
    size_t text_len = sep ? (size_t)(sep - text) : len;
    size_t pair_len = sep ? len - text_len - 1 : 0;

    rf_encoding enc = {0};
    rf_error err;
    rf_status st = rf_tokenizer_encode(tok[mode], text, text_len, pair, pair_len, max_length,
                                       &enc, &err);
    bool valid = rf_utf8_validate(text, text_len, NULL) &&
                 (!pair || rf_utf8_validate(pair, pair_len, NULL));
    FUZZ_ASSERT(valid ? st == RF_OK : st == RF_ERR_INPUT);
    if (st == RF_OK) {
        FUZZ_ASSERT(enc.n >= (pair ? 3 : 2));
        /* HF keeps a single text whole when truncating would empty it
         * (max_length 1 or 2): only longer limits must hold. */
        if (max_length >= 3)
            FUZZ_ASSERT(enc.n <= max_length);
        for (int32_t i = 0; i < enc.n; i++) {
            size_t limit = enc.type_ids[i] ? pair_len : text_len;
            FUZZ_ASSERT(enc.ids[i] >= 0 && enc.ids[i] < vocab_size[mode]);
            FUZZ_ASSERT(enc.mask[i] == 1);
            FUZZ_ASSERT(enc.start[i] < 0 ? enc.end[i] < 0
                                         : enc.start[i] < enc.end[i] && (size_t)enc.end[i] <= limit);
        }
    }
    rf_encoding_free(&enc);
    return 0;
}
