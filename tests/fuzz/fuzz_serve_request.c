/*
 * fuzz_serve_request.c — the request-body parser of `roformer serve`
 * (tools/roformer/serve/request.c): untrusted bytes from the network into
 * job inputs.
 *
 * The first byte picks the route (its value modulo the number of APIs) and
 * the --max-client-batch-size (high nibble + 1, so the 413 path is
 * reached); the rest is the body. The rerank routes (TEI's and Jina's),
 * "truncation_direction", /similarity's "parameters", OpenAI's token-id
 * inputs and "dimensions", /decode's "ids" and the HuggingFace routes'
 * "parameters" are reached the same way. A refusal must carry 413, 422 or
 * 500 and a message, and leave the request empty; an accepted request must hold
 * 1..max items, the number of texts its route implies, and texts that are
 * valid UTF-8 and NUL-terminated at their length.
 */
#include "fuzz.h"
#include "roformer.h" /* rf_utf8_validate */
#include "serve/request.h"

#include <string.h>

static void check_text(const char *s, size_t len)
{
    FUZZ_ASSERT(s && s[len] == '\0' && strlen(s) == len);
    FUZZ_ASSERT(rf_utf8_validate(s, len, NULL));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    serve_api api = (serve_api)(data[0] % SERVE_API_COUNT);
    int32_t max_batch = (data[0] >> 4) + 1;
    serve_request r;
    serve_error err;
    if (serve_request_parse(api, (const char *)data + 1, size - 1, max_batch, &r, &err) != 0) {
        FUZZ_ASSERT(err.status == 413 || err.status == 422 || err.status == 500);
        FUZZ_ASSERT(err.message[0] && err.type && err.type[0]);
        FUZZ_ASSERT(r.texts == NULL && r.n_texts == 0 && r.model == NULL);
        return 0;
    }
    FUZZ_ASSERT(r.api == api && r.n_items >= 1 && r.n_items <= max_batch);
    int32_t texts = r.ids                       ? 0
                    : api == SERVE_API_SIMILARITY ? r.n_items + 1
                    : api == SERVE_API_SCM      ? 3 * r.n_items
                                                : r.n_items;
    FUZZ_ASSERT(r.n_texts == texts);
    /* token ids only where a route takes them, each list non-empty and >= 0 */
    FUZZ_ASSERT(!r.ids || api == SERVE_API_OPENAI || api == SERVE_API_DECODE);
    FUZZ_ASSERT(api != SERVE_API_DECODE || r.ids);
    for (int32_t i = 0; r.ids && i < r.n_items; i++) {
        FUZZ_ASSERT(r.ids[i] && r.n_ids[i] >= 1);
        for (int32_t k = 0; k < r.n_ids[i]; k++)
            FUZZ_ASSERT(r.ids[i][k] >= 0);
    }
    FUZZ_ASSERT(r.dimensions >= 0 && (r.dimensions == 0 || api == SERVE_API_OPENAI));
    for (int32_t i = 0; i < r.n_texts; i++) {
        check_text(r.texts[i].text, r.texts[i].text_len);
        if (r.texts[i].pair)
            check_text(r.texts[i].pair, r.texts[i].pair_len);
        bool rerank = api == SERVE_API_RERANK || api == SERVE_API_RERANK_JINA;
        FUZZ_ASSERT((api != SERVE_API_QA && !rerank) || r.texts[i].pair);
        FUZZ_ASSERT(r.texts[i].pair == NULL || api == SERVE_API_QA || api == SERVE_API_PREDICT ||
                    rerank);
    }
    FUZZ_ASSERT(r.truncation_side == RF_TRUNCATE_RIGHT || r.truncation_side == RF_TRUNCATE_LEFT);
    FUZZ_ASSERT(r.top_n >= 0 && (r.top_n == 0 || api == SERVE_API_RERANK_JINA));
    FUZZ_ASSERT(r.truncate_set || !r.truncate || api == SERVE_API_SCM);
    FUZZ_ASSERT(r.prompt_name == NULL || api == SERVE_API_SIMILARITY);
    FUZZ_ASSERT(r.top_k >= 1 && r.top_k <= 1000);
    FUZZ_ASSERT(r.max_answer_tokens >= 1 && r.doc_stride >= -1);
    serve_request_free(&r);
    return 0;
}
