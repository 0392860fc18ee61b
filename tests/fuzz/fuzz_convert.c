/*
 * fuzz_convert.c — the converter (convert.c) on a whole HF directory made
 * of fuzzed files: config.json, tokenizer_config.json, vocab.txt, the
 * jieba dict.txt and model.safetensors, then loading the GGUF image it
 * builds. This reaches what the per-format targets do not: vocab and
 * dictionary parsing, head inference, the tensor name and shape mapping,
 * dtype conversion and the writer.
 *
 * Input: the five files in that order, separated by the line
 * "\n--8<--\n"; missing trailing parts are empty files (an empty
 * tokenizer_config.json is removed instead: the file is optional). The
 * files go to a private directory under $TMPDIR made once per process.
 */
#include "formats/convert.h"
#include "fuzz.h"
#include "model/model.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SEP "\n--8<--\n"

static char dir[256];
static const char *const names[] = {"config.json", "tokenizer_config.json", "vocab.txt",
                                    "dict.txt", "model.safetensors"};

static void remove_dir(void)
{
    char path[512];
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/rf_fuzz_convert_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    FUZZ_ASSERT(mkdtemp(dir));
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
    for (int i = 0; i < 5; i++) {
        const uint8_t *sep = i < 4 && p < end ? memmem(p, (size_t)(end - p), SEP, sizeof SEP - 1)
                                              : NULL;
        const uint8_t *part_end = sep ? sep : end;
        size_t n = p < end ? (size_t)(part_end - p) : 0;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (i == 1 && n == 0)
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
