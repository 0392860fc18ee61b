/*
 * fuzz_hf_config.c — config.json and tokenizer_config.json handling
 * (hf_config.c). The input is config.json, optionally followed by a NUL
 * byte and tokenizer_config.json; the last byte's low bits pick the
 * tokenizer choice (auto, wobert, bert). Parsed labels and special tokens
 * are read back in full.
 */
#include "fuzz.h"
#include "formats/hf_config.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    size_t config_len = nul ? (size_t)(nul - text) : size;
    const char *tok = nul ? nul + 1 : NULL;
    size_t tok_len = nul ? size - config_len - 1 : 0;
    static const int choices[] = {RF_TOKENIZER_AUTO, RF_TOKENIZER_WOBERT, RF_TOKENIZER_BERT,
                                  RF_TOKENIZER_AUTO};
    int choice = size ? choices[data[size - 1] & 3] : RF_TOKENIZER_AUTO;
    rf_hf_config c;
    rf_error err;
    if (rf_hf_config_parse(text, config_len, "config.json", tok, tok_len,
                           "tokenizer_config.json", choice, &c, &err) == RF_OK) {
        FUZZ_ASSERT(c.hp.num_labels >= 0);
        for (int32_t i = 0; i < c.hp.num_labels && c.labels; i++)
            fuzz_touch(c.labels[i], strlen(c.labels[i]));
        for (int i = 0; i < RF_SPECIAL_COUNT; i++)
            if (c.special[i])
                fuzz_touch(c.special[i], strlen(c.special[i]));
        rf_hf_config_free(&c);
    } else {
        FUZZ_ASSERT(err.message[0]);
    }
    return 0;
}
