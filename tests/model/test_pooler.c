/*
 * test_pooler.c — the pooler activation chosen at conversion
 * (rf_convert_params.pooler_activation, `convert --pooler-activation`):
 * RoFormer-Sim's publisher pools with no tanh.
 *
 * On tiny-word-mlm (which carries roformer.pooler.dense.*): with linear,
 * the pooled output of the forward pass and of rf_embed(RF_POOLING_POOLER)
 * is W h[CLS] + b, computed here in double from the checkpoint's W and b
 * and the reference last_hidden_state; tanh of that is the reference
 * `pooled` (so the linear result differs); the choice is in the GGUF
 * metadata; tanh, the config's own value, gives the default file; a choice
 * for a model without a pooler and an unknown activation are refused.
 */
#include "../check.h"
#include "formats/checkpoint_open.h"
#include "formats/gguf.h"
#include "model/model.h"
#include "../reference_cases.h"

#include <math.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/rf_test_pooler_XXXXXX";

/* Tensor `name` of ck as floats (F32), or NULL with a failed check. */
static const float *f32_tensor(const rf_checkpoint *ck, const char *name, int64_t count)
{
    const rf_ck_tensor *t = rf_checkpoint_find(ck, name);
    CHECK(t && t->dtype == RF_CK_F32 && t->count == count, "tensor %s of %lld floats", name,
          (long long)count);
    return t && t->dtype == RF_CK_F32 && t->count == count ? (const float *)t->data : NULL;
}

/* W h + b in double, rounded once. */
static void linear_pool(const float *W, const float *b, const float *h, int D, double *out)
{
    for (int i = 0; i < D; i++) {
        double s = b[i];
        for (int k = 0; k < D; k++)
            s += (double)W[(size_t)i * D + k] * h[k];
        out[i] = s;
    }
}

static rf_status convert_with(const char *dir, const char *gguf, int act, rf_error *err)
{
    rf_convert_params p = rf_convert_default_params();
    p.pooler_activation = act;
    return rf_convert(dir, gguf, &p, err);
}

/* The first line of cases.jsonl with id `id`. */
static int find_case(const char *dir, const char *id, test_case *c)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/cases.jsonl", dir);
    char *text = check_read_file(path, NULL);
    int found = -1;
    for (char *line = text ? strtok(text, "\n") : NULL; line && found; line = strtok(NULL, "\n")) {
        if (read_case(line, c) == 0 && !strcmp(c->id, id))
            found = 0;
        else
            free_case(c);
    }
    free(text);
    return found;
}

/* The "text" of case `id`, malloc'ed, or NULL. */
static char *case_text(const char *dir, const char *id)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/cases.jsonl", dir);
    char *all = check_read_file(path, NULL), *found = NULL;
    for (char *line = all ? strtok(all, "\n") : NULL; line && !found; line = strtok(NULL, "\n")) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *i = cJSON_GetObjectItem(o, "id"), *tx = cJSON_GetObjectItem(o, "text");
        if (cJSON_IsString(i) && !strcmp(i->valuestring, id) && cJSON_IsString(tx))
            found = strdup(tx->valuestring);
        cJSON_Delete(o);
    }
    free(all);
    return found;
}

static void check_linear(const char *ref)
{
    char dir[1024], path[1200], gguf[1200];
    snprintf(dir, sizeof dir, "%s/models/tiny-word-mlm", ref);
    snprintf(gguf, sizeof gguf, "%s/linear.gguf", tmpdir);
    rf_error err = {{0}};
    rf_model *m = NULL;
    rf_checkpoint *weights = NULL, *expected = NULL;
    rf_context *ctx = NULL;
    rf_pipeline *pl = NULL;
    test_case c = {0};
    rf_status st = convert_with(dir, gguf, RF_ACT_LINEAR, &err);
    CHECK(st == RF_OK, "convert with a linear pooler: %s", err.message);
    if (!st)
        st = rf_model_load(gguf, &m, &err);
    CHECK(st == RF_OK, "load: %s", err.message);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if (!st)
        st = rf_checkpoint_open(path, &weights, &err);
    snprintf(path, sizeof path, "%s/expected.safetensors", dir);
    if (!st)
        st = rf_checkpoint_open(path, &expected, &err);
    CHECK(st == RF_OK, "reference files: %s", err.message);
    CHECK(find_case(dir, "m01", &c) == 0, "case m01 in cases.jsonl");
    if (st || !c.ids)
        goto done;
    const rf_hparams *hp = rf_model_hparams(m);
    CHECK(hp->has_pooler && hp->pooler_act == RF_ACT_LINEAR, "pooler activation linear (%s)",
          rf_activation_name(hp->pooler_act));

    /* the choice, as the file stores it */
    size_t size = 0;
    char *bytes = check_read_file(gguf, &size);
    rf_gguf *g = NULL;
    if (bytes && rf_gguf_parse(bytes, size, gguf, &g, &err) == RF_OK) {
        const rf_gguf_kv *kv = rf_gguf_find_kv(g, "roformer.pooler.activation");
        CHECK(kv && kv->type == RF_GGUF_STRING && kv->v.str.len == 6 && !memcmp(kv->v.str.ptr, "linear", 6),
              "roformer.pooler.activation is \"linear\"");
    } else {
        CHECK(0, "parse %s", gguf);
    }
    rf_gguf_free(g);
    free(bytes);

    /* forward: pooled = W h[CLS] + b, from the checkpoint and the reference h */
    int D = hp->hidden_size;
    const float *W = f32_tensor(weights, "roformer.pooler.dense.weight", (int64_t)D * D);
    const float *b = f32_tensor(weights, "roformer.pooler.dense.bias", D);
    const float *h = f32_tensor(expected, "m01.last_hidden_state", (int64_t)c.B * c.L * D);
    const float *tanh_ref = f32_tensor(expected, "m01.pooled", (int64_t)c.B * D);
    rf_context_params cp = rf_context_default_params();
    cp.max_batch = c.B;
    cp.n_threads = 2;
    float *pooled = malloc((size_t)c.B * D * sizeof(float));
    double *want = malloc((size_t)D * sizeof(double));
    if (!W || !b || !h || !tanh_ref || rf_context_create(m, &cp, &ctx, &err) != RF_OK) {
        CHECK(0, "context: %s", err.message);
        free(pooled);
        free(want);
        goto done;
    }
    rf_batch batch = {c.B, c.L, c.ids, c.types, c.mask};
    rf_outputs out = {.pooled = pooled};
    st = rf_forward(ctx, &batch, &out, &err);
    CHECK(st == RF_OK, "forward: %s", err.message);
    double d_lin = 0, d_tanh = 0, apart = 0;
    for (int s = 0; s < c.B && !st; s++) {
        linear_pool(W, b, h + (size_t)s * c.L * D, D, want);
        for (int i = 0; i < D; i++) {
            d_lin = check_max_nan(d_lin, fabs(pooled[(size_t)s * D + i] - want[i]));
            d_tanh = check_max_nan(d_tanh, fabs(tanh(want[i]) - tanh_ref[(size_t)s * D + i]));
            apart = check_max_nan(apart, fabs(pooled[(size_t)s * D + i] - tanh_ref[(size_t)s * D + i]));
        }
    }
    printf("  tiny-word-mlm m01, linear pooler: max |diff| against W h[CLS] + b %.3g; "
           "tanh of it against the reference pooled %.3g\n", d_lin, d_tanh);
    CHECK(d_lin <= 1e-4, "linear pooled vs W h[CLS] + b: max |diff| %g", d_lin);
    CHECK(d_tanh <= 1e-4, "tanh(W h[CLS] + b) vs the reference pooled: max |diff| %g", d_tanh);
    CHECK(apart > 0.05, "the linear pooler is not the tanh one (max |diff| %g)", apart);

    /* rf_embed with the pooler: the same vector for the text of m00 */
    const rf_ck_tensor *t = rf_checkpoint_find(expected, "m00.last_hidden_state");
    char *text = case_text(dir, "m00");
    rf_pipeline_params pp = rf_pipeline_default_params();
    pp.context.n_threads = 2;
    if (t && t->dtype == RF_CK_F32 && text && rf_pipeline_create(m, &pp, &pl, &err) == RF_OK) {
        rf_text in = {text, strlen(text), NULL, 0};
        float *vec = malloc((size_t)D * sizeof(float));
        st = rf_embed(pl, &in, 1, RF_POOLING_POOLER, false, vec, NULL, &err);
        CHECK(st == RF_OK, "embed with the pooler: %s", err.message);
        linear_pool(W, b, (const float *)t->data, D, want);
        double d = 0;
        for (int i = 0; i < D && !st; i++)
            d = check_max_nan(d, fabs(vec[i] - want[i]));
        CHECK(!st && d <= 1e-4, "rf_embed pooler (linear) vs W h[CLS] + b: max |diff| %g", d);
        free(vec);
    } else {
        CHECK(0, "m00 text and pipeline: %s", err.message);
    }
    free(text);
    free(pooled);
    free(want);
done:
    free_case(&c);
    rf_pipeline_free(pl);
    rf_context_free(ctx);
    rf_checkpoint_free(weights);
    rf_checkpoint_free(expected);
    rf_model_free(m);
}

/* tanh is what tiny-word-mlm's config says: the same file as no choice. */
static void check_tanh_default(const char *ref)
{
    char dir[1024], a[1200], b[1200];
    snprintf(dir, sizeof dir, "%s/models/tiny-word-mlm", ref);
    snprintf(a, sizeof a, "%s/tanh.gguf", tmpdir);
    snprintf(b, sizeof b, "%s/auto.gguf", tmpdir);
    rf_error err = {{0}};
    CHECK(convert_with(dir, a, RF_ACT_TANH, &err) == RF_OK, "convert, tanh: %s", err.message);
    CHECK(convert_with(dir, b, RF_POOLER_ACT_AUTO, &err) == RF_OK, "convert, auto: %s", err.message);
    size_t na = 0, nb = 0;
    char *fa = check_read_file(a, &na), *fb = check_read_file(b, &nb);
    CHECK(fa && fb && na == nb && !memcmp(fa, fb, na), "tanh chosen = config.json's tanh: same bytes");
    free(fa);
    free(fb);
}

static void check_refused(const char *ref)
{
    char dir[1024], gguf[1200];
    rf_error err = {{0}};
    snprintf(dir, sizeof dir, "%s/models/tiny-word-cls", ref);
    snprintf(gguf, sizeof gguf, "%s/cls.gguf", tmpdir);
    rf_status st = convert_with(dir, gguf, RF_ACT_LINEAR, &err);
    CHECK(st == RF_ERR_INPUT && strstr(err.message, "model.safetensors: a pooler activation was chosen, but the checkpoint has no pooler (roformer.pooler.dense.*)"),
          "no pooler: %d %s", st, err.message);
    CHECK(access(gguf, F_OK) != 0, "no pooler: nothing written");
    snprintf(dir, sizeof dir, "%s/models/tiny-word-mlm", ref);
    st = convert_with(dir, gguf, RF_ACT_GELU, &err);
    CHECK(st == RF_ERR_INPUT && strstr(err.message, "pooler activation 0"),
          "gelu pooler refused: %d %s", st, err.message);
}

int main(void)
{
    REFERENCE_OR_SKIP(ref, "pooler activation");
    if (!mkdtemp(tmpdir)) {
        CHECK(0, "mkdtemp");
        return check_done();
    }
    check_linear(ref);
    check_tanh_default(ref);
    check_refused(ref);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    CHECK(system(cmd) == 0, "clean up %s", tmpdir);
    return check_done();
}
