/*
 * fuzz_convert.c — the converter (convert.c) on a whole HF directory made
 * of fuzzed files: config.json, tokenizer_config.json, vocab.txt, the
 * jieba dict.txt and model.safetensors, then loading the GGUF image it
 * builds. This reaches what the per-format targets do not: vocab and
 * dictionary parsing, head inference, the tensor name and shape mapping,
 * dtype conversion and the writer.
 *
 * Input: the five files in that order, then a sentence-transformers
 * folder's modules.json, 1_Pooling/config.json, sentence_bert_config.json
 * and config_sentence_transformers.json, separated by the line
 * "\n--8<--\n"; missing trailing parts are empty files (an empty
 * tokenizer_config.json or sentence-transformers file is removed instead:
 * those are optional). The files go to a private directory under $TMPDIR
 * made once per process.
 */
#include "formats/convert.h"
#include "fuzz.h"
#include "model/model.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEP "\n--8<--\n"

static char dir[256];
#define N_PARTS 9
static const char *const names[N_PARTS] = {
    "config.json", "tokenizer_config.json", "vocab.txt", "dict.txt", "model.safetensors",
    "modules.json", "1_Pooling/config.json", "sentence_bert_config.json",
    "config_sentence_transformers.json"};

/* Parts that are optional files: removed when empty. */
static bool optional_part(int i)
{
    return i == 1 || i >= 5;
}

static void remove_dir(void)
{
    char path[512];
    for (int i = 0; i < N_PARTS; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/1_Pooling", dir);
    rmdir(path);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/rf_fuzz_convert_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    FUZZ_ASSERT(mkdtemp(dir));
    char pooling[512];
    snprintf(pooling, sizeof pooling, "%s/1_Pooling", dir);
    FUZZ_ASSERT(mkdir(pooling, 0700) == 0);
    atexit(remove_dir);
    return 0;
}

static void write_part(const char *name, const uint8_t *p, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    FUZZ_ASSERT(f);
    FUZZ_ASSERT(fwrite(p, 1, n, f) == n);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    for (int i = 0; i < N_PARTS; i++) {
        const uint8_t *sep = i < N_PARTS - 1 && p < end
                                 ? memmem(p, (size_t)(end - p), SEP, sizeof SEP - 1)
                                 : NULL;
        const uint8_t *part_end = sep ? sep : end;
        size_t n = p < end ? (size_t)(part_end - p) : 0;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (optional_part(i) && n == 0)
            unlink(path);
        else
            write_part(names[i], p < end ? p : data, n);
        p = sep ? sep + sizeof SEP - 1 : end;
    }
    char dict[512];
    snprintf(dict, sizeof dict, "%s/dict.txt", dir);
    rf_convert_params params = rf_convert_default_params();
    params.jieba_dict = dict;
    void *image = NULL;
    size_t image_size = 0;
    rf_error err;
    if (rf_convert_to_buffer(dir, &params, &image, &image_size, &err) == RF_OK) {
        rf_model *model;
        rf_status st = rf_model_load_buffer(image, image_size, "converted", &model, &err);
        /* what the converter writes, the loader must accept */
        FUZZ_ASSERT(st == RF_OK);
        rf_model_free(model);
        free(image);
    } else {
        FUZZ_ASSERT(err.message[0]);
    }
    return 0;
}
