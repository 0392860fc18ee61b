/*
 * fuzz_model.c — loading a model from a GGUF image (rf_model_load_buffer):
 * the GGUF reader, then the hyper-parameter, vocab, dictionary and tensor
 * checks of model.c and the tokenizer build. A model that loads is then
 * used: its labels and tokens are read and a short text is tokenized.
 */
#include "fuzz.h"
#include "model.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The loader gets a mapping in real use: page-aligned, exactly sized. */
    size_t cap = (size + 63) & ~(size_t)63;
    uint8_t *image = aligned_alloc(64, cap ? cap : 64);
    FUZZ_ASSERT(image);
    memcpy(image, data, size);
    rf_model *model;
    rf_error err;
    if (rf_model_load_buffer(image, size, "fuzz.gguf", &model, &err) == RF_OK) {
        const rf_hparams *hp = rf_model_hparams(model);
        for (int32_t i = 0; i < hp->num_labels; i++)
            FUZZ_ASSERT(rf_model_label(model, i) != NULL);
        for (int32_t i = 0; i < hp->vocab_size; i++) {
            const char *t = rf_model_token(model, i);
            if (t)
                fuzz_touch(t, strlen(t));
        }
        static const char text[] = "今天天气不错 Hello, [MASK] world! 123";
        rf_encoding enc = {0};
        if (rf_tokenize(model, text, sizeof text - 1, "好", 3, 8, &enc, &err) == RF_OK) {
            FUZZ_ASSERT(enc.n <= 8);
            for (int32_t i = 0; i < enc.n; i++)
                FUZZ_ASSERT(enc.ids[i] >= 0 && enc.ids[i] < hp->vocab_size);
        }
        rf_encoding_free(&enc);
        rf_model_free(model);
    } else {
        FUZZ_ASSERT(err.message[0]);
    }
    free(image);
    return 0;
}
