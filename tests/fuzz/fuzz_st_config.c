/*
 * fuzz_st_config.c — a sentence-transformers folder's JSON files
 * (st_config.c): modules.json, the Pooling config.json,
 * sentence_bert_config.json and config_sentence_transformers.json, in that
 * order, separated by NUL bytes (a missing trailing part is an absent
 * file). What parses is then written as GGUF keys and read back, and must
 * come back the same.
 */
#include "formats/st_config.h"
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

static void check_round_trip(const rf_sentence_config *c)
{
    rf_gguf_writer *w = rf_gguf_writer_new();
    void *image = NULL;
    size_t size = 0;
    rf_gguf *g = NULL;
    rf_sentence_config back;
    rf_error err;
    FUZZ_ASSERT(w);
    rf_gguf_set_str(w, "general.architecture", "roformer");
    rf_st_config_write(w, c);
    FUZZ_ASSERT(rf_gguf_write_buffer(w, &image, &size, &err) == RF_OK);
    FUZZ_ASSERT(rf_gguf_parse(image, size, "image", &g, &err) == RF_OK);
    FUZZ_ASSERT(rf_st_config_read(g, "image", 512, &back, &err) == RF_OK);
    FUZZ_ASSERT(back.present && back.pooling == c->pooling && back.normalize == c->normalize &&
                back.max_seq_length == c->max_seq_length && back.n_prompts == c->n_prompts);
    for (int32_t i = 0; i < c->n_prompts; i++)
        FUZZ_ASSERT(!strcmp(back.prompt_names[i], c->prompt_names[i]) &&
                    !strcmp(back.prompts[i], c->prompts[i]));
    FUZZ_ASSERT(!c->default_prompt_name == !back.default_prompt_name);
    rf_st_config_free(&back);
    rf_gguf_free(g);
    free(image);
    rf_gguf_writer_free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rf_json_text part[4] = {{NULL, 0, "modules.json"}, {NULL, 0, "1_Pooling/config.json"},
                            {NULL, 0, "sentence_bert_config.json"},
                            {NULL, 0, "config_sentence_transformers.json"}};
    const char *p = (const char *)data, *end = p + size;
    for (int i = 0; i < 4 && p <= end; i++) {
        const char *nul = memchr(p, '\0', (size_t)(end - p));
        part[i].text = p;
        part[i].len = (size_t)((nul ? nul : end) - p);
        p = nul ? nul + 1 : end + 1;
    }
    char *pooling_dir = NULL;
    bool normalize = false;
    rf_error err;
    if (rf_st_modules_parse(&part[0], &pooling_dir, &normalize, &err) == RF_OK) {
        FUZZ_ASSERT(pooling_dir && pooling_dir[0] && !strstr(pooling_dir, ".."));
        free(pooling_dir);
    } else {
        FUZZ_ASSERT(err.message[0] && !pooling_dir);
    }
    rf_sentence_config c;
    if (rf_st_config_parse(&part[1], &part[2], &part[3], normalize, 32, 512, &c, &err) == RF_OK) {
        check_round_trip(&c);
        rf_st_config_free(&c);
    } else {
        FUZZ_ASSERT(err.message[0]);
    }
    return 0;
}
