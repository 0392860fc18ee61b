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
 * ARGMAX_TIE). Prints the minimum cosine, the max |diff| and the argmax
 * agreement per model. On a CPU without AVX512_BF16 the context must be
 * refused with RF_ERR_UNSUPPORTED, and the rest is skipped; an unknown
 * compute type is RF_ERR_INPUT.
 */
#include "kernels/gemm_bf16.h"
#include "model/model.h"

#include "check.h"
#include "compute_compare.h"
#include "reference_cases.h"

#include <dirent.h>
#include <math.h>
#include <unistd.h>

#define MIN_COSINE 0.999
/* f32 logits whose top two are closer than this may swap under bf16 */
#define ARGMAX_TIE 0.02f

typedef struct {
    double min_cosine;
    float max_diff;
    int agree, total;
} bf16_stats;

/* One argmax over n values (stride apart) of f32 and bf16 results. */
static void compare_argmax(const char *label, const char *what, const float *f32, const float *bf16,
                           int n, int stride, bf16_stats *s)
{
    int a = argmax(f32, n, stride), b = argmax(bf16, n, stride);
    s->total++;
    s->agree += a == b;
    float margin = top2_margin(f32, n, stride);
    CHECK(a == b || margin < ARGMAX_TIE, "%s %s: bf16 argmax %d, f32 argmax %d (f32 margin %g)",
          label, what, b, a, margin);
}

static void compare_case(const char *label, const rf_hparams *hp, const test_case *c,
                         const outputs *f, const outputs *h, bf16_stats *s)
{
    size_t D = (size_t)hp->hidden_size;
    int NL = hp->num_labels;
    for (int b = 0; b < c->B; b++) {
        for (int t = 0; t < c->L; t++) {
            size_t row = (size_t)b * c->L + t;
            if (!c->mask[row])
                continue;
            const float *x = f->last + row * D, *y = h->last + row * D;
            double dot = 0, xx = 0, yy = 0;
            for (size_t i = 0; i < D; i++) {
                dot += (double)x[i] * y[i];
                xx += (double)x[i] * x[i];
                yy += (double)y[i] * y[i];
                float d = fabsf(x[i] - y[i]);
                if (!(d <= s->max_diff))
                    s->max_diff = d;
            }
            double cosine = dot / sqrt(xx * yy);
            if (!(cosine >= s->min_cosine))
                s->min_cosine = cosine;
            CHECK(cosine >= MIN_COSINE, "%s %s[%d] token %d: cosine %.6f to f32", label, c->id, b,
                  t, cosine);
            if (hp->head == RF_HEAD_TOKEN_CLS)
                compare_argmax(label, c->id, f->logits + row * NL, h->logits + row * NL, NL, 1, s);
        }
        if (hp->head == RF_HEAD_SEQ_CLS)
            compare_argmax(label, c->id, f->logits + (size_t)b * NL, h->logits + (size_t)b * NL, NL,
                           1, s);
        if (hp->head == RF_HEAD_QA) {
            int real = 0;
            while (real < c->L && c->mask[(size_t)b * c->L + real])
                real++;
            size_t off = (size_t)b * c->L;
            compare_argmax(label, "start", f->start + off, h->start + off, real, 1, s);
            compare_argmax(label, "end", f->end + off, h->end + off, real, 1, s);
        }
    }
}

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

    bf16_stats s = {.min_cosine = 1.0};
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
            compare_case(label, hp, &c, &f, &h, &s);
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

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
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
                char gguf[] = "/tmp/rf_bf16_XXXXXX.gguf";
                int fd = mkstemps(gguf, 5);
                rf_convert_params cv = rf_convert_default_params();
                cv.dtype = RF_DTYPE_BF16;
                rf_error err;
                rf_status st = fd < 0 ? RF_ERR_IO : rf_convert(dir, gguf, &cv, &err);
                CHECK(st == RF_OK, "convert %s --dtype bf16: %s", dir,
                      fd < 0 ? "no temporary file" : err.message);
                if (st == RF_OK)
                    check_model(gguf, dir, "tiny-word-cls (bf16 file)");
                if (fd >= 0) {
                    close(fd);
                    unlink(gguf);
                }
            }
        }
        free(names[i]);
    }
    free(names);
    return check_done();
}
