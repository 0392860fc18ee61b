/*
 * fuzz_model.c — loading a model from a GGUF image (rf_model_load_buffer):
 * the GGUF reader, then the hyper-parameter, vocab, dictionary and tensor
 * checks of model.c and the tokenizer build. A model that loads is then
 * used: its labels and tokens are read, a short text pair is tokenized and
 * run through the encoder and the model's head.
 */
#include "fuzz.h"
#include "model/model.h"

#include <string.h>

/* One forward pass with every output the head has, in buffers of exactly
 * the documented sizes. Weights from the file may be anything (NaN, Inf,
 * huge): the pass must stay in bounds and defined. */
static void run_forward(const rf_model *model, const rf_encoding *enc)
{
    const rf_hparams *hp = rf_model_hparams(model);
    rf_context_params cp = rf_context_default_params();
    cp.max_batch = 1;
    cp.max_seq_len = hp->max_position < 16 ? hp->max_position : 16;
    cp.n_threads = 1;
    rf_context *ctx;
    rf_error err;
    if (rf_context_create(model, &cp, &ctx, &err) != RF_OK)
        return;
    size_t L = (size_t)enc->n, D = (size_t)hp->hidden_size, V = (size_t)hp->vocab_size;
    size_t N = (size_t)hp->num_labels;
    int32_t position = 0;
    rf_outputs out = {.last_hidden_state = malloc(L * D * sizeof(float))};
    if (hp->has_pooler)
        out.pooled = malloc(D * sizeof(float));
    switch (hp->head) {
    case RF_HEAD_MLM:
        out.logits = malloc(V * sizeof(float));
        out.mlm_positions = &position;
        out.n_mlm_positions = 1;
        break;
    case RF_HEAD_SEQ_CLS: out.logits = malloc(N * sizeof(float)); break;
    case RF_HEAD_TOKEN_CLS: out.logits = malloc(L * N * sizeof(float)); break;
    case RF_HEAD_QA:
        out.start_logits = malloc(L * sizeof(float));
        out.end_logits = malloc(L * sizeof(float));
        break;
    case RF_HEAD_NONE: break;
    }
    rf_batch batch = {.batch = 1, .seq_len = enc->n, .input_ids = enc->ids,
                      .token_type_ids = enc->type_ids, .attention_mask = enc->mask};
    if (rf_forward(ctx, &batch, &out, &err) == RF_OK)
        fuzz_touch(out.last_hidden_state, L * D * sizeof(float));
    free(out.last_hidden_state);
    free(out.pooled);
    free(out.logits);
    free(out.start_logits);
    free(out.end_logits);
    rf_context_free(ctx);
}

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
            run_forward(model, &enc);
        }
        rf_encoding_free(&enc);
        rf_model_free(model);
    } else {
        FUZZ_ASSERT(err.message[0]);
    }
    free(image);
    return 0;
}
