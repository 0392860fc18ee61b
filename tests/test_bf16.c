/*
 * test_bf16.c — RF_COMPUTE_BF16 against the engine's f32 result on every
 * case of every reference model (the f32 result is itself checked against
 * HuggingFace by test_parity): the cosine of each real token's
 * last_hidden_state row, and the argmax of the classification, token
 * classification and QA logits. Also on tiny-word-cls converted with
 * --dtype bf16, whose weights are then exactly what bf16 compute uses.
 *
 * Asserted: every row's cosine >= 0.999 (the accuracy target), and
 * every argmax that differs is a near tie in f32 (top two within
 * rule.argmax_tie). Prints the minimum cosine, the max |diff| and the argmax
 * agreement per model. On a CPU without AVX512_BF16 the context must be
 * refused with RF_ERR_UNSUPPORTED, and the rest is skipped; an unknown
 * compute type is RF_ERR_INPUT.
 */
#include "kernels/gemm_bf16.h"
#include "model/model.h"

#include "check.h"
#include "compute_compare.h"
#include "convert_temp.h"
#include "reference_cases.h"

#include <dirent.h>
#include <math.h>
#include <unistd.h>

/* every real token within cosine 0.999 of f32; f32 logits whose top two
 * are within 0.02 may swap under bf16, in any head. These measure bf16's
 * rounding (2^-8 of each operand) through the model; the builds differ
 * only in the order of the float32 sums of the products (test_kernels
 * bounds them at (K + 1) 2^-24 of the sum of |products|), 2^-15 of bf16's
 * own error, so no build can move a cosine or a margin visibly. */
static const compare_rule rule = {"bf16", 0.999, 0.02f, true};

static void check_model(const char *load_path, const char *case_dir, const char *label)
{
    rf_error err;
    rf_model *model = NULL;
    rf_context *ctx_f32 = NULL, *ctx_bf16 = NULL;
    char path[1024];
    size_t len;
    snprintf(path, sizeof path, "%s/cases.jsonl", case_dir);
    char *cases = check_read_file(path, &len);
    rf_status st = rf_model_load(load_path, &model, &err);
    CHECK(st == RF_OK && cases, "%s: load: %s", label, st == RF_OK ? "no cases.jsonl" : err.message);
    if (st != RF_OK || !cases)
        goto done;
    const rf_hparams *hp = rf_model_hparams(model);
    rf_context_params cp = rf_context_default_params();
    cp.max_batch = 8;
    cp.n_threads = 2;
    st = rf_context_create(model, &cp, &ctx_f32, &err);
    cp.compute = RF_COMPUTE_BF16;
    if (st == RF_OK)
        st = rf_context_create(model, &cp, &ctx_bf16, &err);
    CHECK(st == RF_OK, "%s: contexts: %s", label, err.message);
    if (st != RF_OK)
        goto done;

    compare_stats s = {.min_cosine = 1.0};
    for (char *line = strtok(cases, "\n"); line; line = strtok(NULL, "\n")) {
        test_case c;
        if (read_case(line, &c) != 0 || c.B > cp.max_batch) {
            CHECK(0, "%s: a malformed case, or a batch over %d", label, cp.max_batch);
            free_case(&c);
            continue;
        }
        outputs f, h;
        rf_status a = run(ctx_f32, hp, &c, &f, &err);
        rf_status b = a == RF_OK ? run(ctx_bf16, hp, &c, &h, &err) : a;
        CHECK(a == RF_OK && b == RF_OK, "%s %s: forward: %s", label, c.id, err.message);
        if (a == RF_OK && b == RF_OK)
            compare_case(&rule, label, hp, &c, &f, &h, &s);
        free_outputs(&f);
        if (a == RF_OK)
            free_outputs(&h);
        free_case(&c);
    }
    printf("  %-26s bf16 vs f32: min cosine %.6f, max |diff| %.3g", label, s.min_cosine,
           s.max_diff);
    if (s.total)
        printf(", argmax agrees %d/%d", s.agree, s.total);
    printf("\n");

done:
    rf_context_free(ctx_f32);
    rf_context_free(ctx_bf16);
    rf_model_free(model);
    free(cases);
}

int main(void)
{
    if (!rf_bf16_supported()) {
        /* the context says why it cannot run in bf16 */
        const char *ref = check_reference();
        if (ref) {
            char dir[1024];
            snprintf(dir, sizeof dir, "%s/models/tiny-word-cls", ref);
            rf_model *model;
            rf_error err;
            if (rf_model_load(dir, &model, &err) == RF_OK) {
                rf_context_params cp = rf_context_default_params();
                cp.compute = RF_COMPUTE_BF16;
                rf_context *ctx;
                CHECK(rf_context_create(model, &cp, &ctx, &err) == RF_ERR_UNSUPPORTED,
                      "bf16 context refused on a CPU without AVX512_BF16");
                rf_model_free(model);
            }
        }
        SKIP("bf16 compute: this CPU has no AVX512_BF16");
        return check_done();
    }
    const char *ref = check_reference();
    if (!ref) {
        SKIP("no reference fixtures (../shared/reference or $ROFORMER_REFERENCE): bf16 not checked");
        return check_done();
    }
    char models[1024];
    snprintf(models, sizeof models, "%s/models", ref);
    {
        /* an unknown compute type is the caller's error */
        char dir[1100];
        snprintf(dir, sizeof dir, "%s/tiny-word-cls", models);
        rf_model *model;
        rf_error err;
        if (rf_model_load(dir, &model, &err) == RF_OK) {
            rf_context_params cp = rf_context_default_params();
            cp.compute = 7;
            rf_context *ctx = NULL;
            CHECK(rf_context_create(model, &cp, &ctx, &err) == RF_ERR_INPUT && !ctx &&
                      strstr(err.message, "compute type 7"),
                  "unknown compute type refused: %s", err.message);
            rf_model_free(model);
        }
    }
    struct dirent **names;
    int n = scandir(models, &names, NULL, by_name);
    CHECK(n > 2, "%s lists model directories", models);
    for (int i = 0; i < n; i++) {
        char dir[1400], cases[1500];
        snprintf(dir, sizeof dir, "%s/%s", models, names[i]->d_name);
        snprintf(cases, sizeof cases, "%s/cases.jsonl", dir);
        if (names[i]->d_name[0] != '.' && access(cases, F_OK) == 0) {
            check_model(dir, dir, names[i]->d_name);
            if (!strcmp(names[i]->d_name, "tiny-word-cls")) {
                char *gguf = convert_temp(dir, RF_DTYPE_BF16);
                if (gguf) {
                    check_model(gguf, dir, "tiny-word-cls (bf16 file)");
                    unlink(gguf);
                    free(gguf);
                }
            }
        }
        free(names[i]);
    }
    free(names);
    return check_done();
}
