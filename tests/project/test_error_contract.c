/*
 * test_error_contract.c — two promises of reliability.md's error
 * behaviour: every `*_free(NULL)` of the public header is a no-op (each is
 * called with NULL, a crash fails the test; the list is read from
 * include/roformer.h, so a free added there and not here fails too), and
 * the caller's rf_error is written only on failure (a sentinel message
 * survives successful calls, and a failed one replaces it).
 */
#include "../check.h"
#include "roformer.h"

#include <unistd.h>

static const char *const called[] = {"rf_context_free",          "rf_encoding_free",
                                     "rf_fill_mask_result_free", "rf_model_free",
                                     "rf_ner_result_free",       "rf_pipeline_free"};

static bool is_called(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof called / sizeof called[0]; i++)
        if (strlen(called[i]) == len && !memcmp(called[i], name, len))
            return true;
    return false;
}

/* The calls of a job, each successful, on an rf_error holding a sentinel. */
static void error_untouched_on_success(const char *ref)
{
    static const char sentinel[] = "sentinel: not written";
    rf_error err;
    snprintf(err.message, sizeof err.message, "%s", sentinel);
    char path[1024];
    snprintf(path, sizeof path, "%s/models/tiny-word-mlm", ref);
    rf_model *model = NULL;
    rf_pipeline *pl = NULL;
    rf_encoding enc = {0};
    rf_status st = rf_model_load(path, &model, &err);
    CHECK(st == RF_OK && !strcmp(err.message, sentinel), "rf_model_load succeeds, err untouched (%s)",
          err.message);
    if (st != RF_OK)
        return;
    st = rf_tokenize(model, "今天天气很好", strlen("今天天气很好"), NULL, 0, 0, &enc, &err);
    CHECK(st == RF_OK && !strcmp(err.message, sentinel), "rf_tokenize succeeds, err untouched (%s)",
          err.message);
    rf_encoding_free(&enc);
    st = rf_pipeline_create(model, NULL, &pl, &err);
    CHECK(st == RF_OK && !strcmp(err.message, sentinel),
          "rf_pipeline_create succeeds, err untouched (%s)", err.message);
    if (st == RF_OK) {
        rf_text in = {.text = "今天天气很好", .text_len = strlen("今天天气很好")};
        int D = rf_model_hparams(model)->hidden_size;
        float *v = malloc(sizeof(float) * (size_t)D);
        st = rf_embed(pl, &in, 1, RF_POOLING_MEAN, true, v, NULL, &err);
        CHECK(st == RF_OK && !strcmp(err.message, sentinel), "rf_embed succeeds, err untouched (%s)",
              err.message);
        free(v);
    }
    /* the converter and the GGUF loader */
    char gguf[] = "/tmp/rf_error_contract_XXXXXX.gguf";
    int fd = mkstemps(gguf, 5);
    rf_convert_params cv = rf_convert_default_params();
    st = fd < 0 ? RF_ERR_IO : rf_convert(path, gguf, &cv, &err);
    CHECK(st == RF_OK && !strcmp(err.message, sentinel), "rf_convert succeeds, err untouched (%s)",
          err.message);
    rf_model *from_file = NULL;
    if (st == RF_OK) {
        st = rf_model_load(gguf, &from_file, &err);
        CHECK(st == RF_OK && !strcmp(err.message, sentinel),
              "rf_model_load of the GGUF file succeeds, err untouched (%s)", err.message);
    }
    rf_model_free(from_file);
    if (fd >= 0) {
        close(fd);
        unlink(gguf);
    }
    /* and a failure writes it */
    st = rf_tokenize(model, "\xff", 1, NULL, 0, 0, &enc, &err);
    CHECK(st == RF_ERR_INPUT && strcmp(err.message, sentinel) && strstr(err.message, "UTF-8"),
          "rf_tokenize of invalid UTF-8 fails and writes err (%s)", err.message);
    rf_encoding_free(&enc);
    rf_pipeline_free(pl);
    rf_model_free(model);
}

int main(void)
{
    rf_context_free(NULL);
    rf_encoding_free(NULL);
    rf_fill_mask_result_free(NULL);
    rf_model_free(NULL);
    rf_ner_result_free(NULL);
    rf_pipeline_free(NULL);
    CHECK(1, "every public *_free(NULL) returned");

    /* each "RF_API void rf_..._free(" declaration of the header is called above */
    size_t len;
    char *header = check_read_file("include/roformer.h", &len);
    CHECK(header != NULL, "read include/roformer.h");
    int declared = 0;
    for (char *p = header; p && (p = strstr(p, "RF_API void rf_")); p++) {
        char *name = p + strlen("RF_API void "), *paren = strchr(name, '(');
        if (!paren || paren - name < 5 || memcmp(paren - 5, "_free", 5))
            continue;
        declared++;
        CHECK(is_called(name, (size_t)(paren - name)), "%.*s(NULL) is called here",
              (int)(paren - name), name);
    }
    CHECK(declared == (int)(sizeof called / sizeof called[0]),
          "the header declares %d *_free functions, %zu are called", declared,
          sizeof called / sizeof called[0]);
    free(header);

    REFERENCE_OR_SKIP(ref, "rf_error on success");
    error_untouched_on_success(ref);
    return check_done();
}
