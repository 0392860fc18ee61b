/*
 * test_windows.c — rf_pipeline_params.window / stride: a text longer than
 * the window is cut into overlapping windows, each encoded, and pooled
 * (mean of the window embeddings, then normalized; mean of the window
 * logits, then softmax). The expected values are built here from the
 * lower-level calls: rf_tokenize, windows cut by a loop written from the
 * definition ([CLS] + text tokens [first, first + W - 2) + [SEP], the next
 * starting S tokens before the previous one ends), rf_forward on each
 * window alone, the pooling and the mean computed here in double.
 *
 * Tolerance 1e-5: hidden states and logits are of unit scale; each window
 * through the pipeline gives what it gives alone up to float32 rounding of
 * the encoder (the same products, batched with other rows: about 1e-6,
 * the bound test_jobs_library.c uses for batched = alone), and the mean of
 * a few float32 vectors adds rounding of 1e-7 relative.
 */
#include "../check.h"
#include "../reference_cases.h"
#include "roformer.h"

#include <math.h>

static rf_text txt(const char *s) { return (rf_text){s, strlen(s), NULL, 0}; }

/* A text of about `chars` characters, varied enough that windows differ. */
static char *long_text(int chars)
{
    const char *pieces[] = {"今天天气很好，", "我们去公园散步。", "法院判决被告偿还借款本金", "和利息，",
                            "原告不服提起上诉。"};
    size_t cap = (size_t)chars * 4 + 64, len = 0;
    char *s = malloc(cap);
    for (int i = 0; len + 40 < cap && (int)(len / 3) < chars; i++) {
        const char *p = pieces[(i * 7 + i / 5) % 5];
        memcpy(s + len, p, strlen(p));
        len += strlen(p);
    }
    s[len] = '\0';
    return s;
}

/* Expected pooled vector of `text`: windows of W tokens, stride S, each run
 * alone through rf_forward; `logits` picks the classification logits (N
 * of them), else the mean-pooled hidden state (D). Returns the window
 * count. */
static int expected(const rf_model *m, const char *text, int W, int S, bool logits, float *out)
{
    const rf_hparams *hp = rf_model_hparams(m);
    int D = hp->hidden_size, N = logits ? hp->num_labels : D;
    rf_error err;
    rf_encoding enc = {0};
    CHECK(rf_tokenize(m, text, strlen(text), NULL, 0, 0, &enc, &err) == RF_OK, "tokenize: %s",
          err.message);
    rf_context_params cp = rf_context_default_params();
    cp.max_seq_len = W;
    cp.n_threads = 1;
    rf_context *ctx = NULL;
    CHECK(rf_context_create(m, &cp, &ctx, &err) == RF_OK, "context: %s", err.message);
    int body = enc.n - 2, room = W - 2, n_windows = 0;
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)W);
    float *hidden = malloc(sizeof(float) * (size_t)W * D), *lg = malloc(sizeof(float) * (size_t)N);
    double *sum = calloc((size_t)N, sizeof *sum); /* of the windows' vectors */
    for (int first = 0;; first += room - S) {
        int count = body - first < room ? body - first : room, n = count + 2;
        ids[0] = enc.ids[0];
        memcpy(ids + 1, enc.ids + 1 + first, sizeof(int32_t) * (size_t)count);
        ids[n - 1] = enc.ids[enc.n - 1];
        rf_batch b = {.batch = 1, .seq_len = n, .input_ids = ids};
        rf_outputs o = {.last_hidden_state = logits ? NULL : hidden, .logits = logits ? lg : NULL};
        CHECK(rf_forward(ctx, &b, &o, &err) == RF_OK, "forward: %s", err.message);
        for (int d = 0; d < N; d++) {
            double v = 0.0;
            if (logits)
                v = lg[d];
            else {
                for (int t = 0; t < n; t++)
                    v += hidden[(size_t)t * D + d];
                v /= n;
            }
            sum[d] += v;
        }
        n_windows++;
        if (first + count >= body)
            break;
    }
    for (int d = 0; d < N; d++)
        out[d] = (float)(sum[d] / n_windows);
    free(sum);
    free(ids);
    free(hidden);
    free(lg);
    rf_context_free(ctx);
    rf_encoding_free(&enc);
    return n_windows;
}

static void test_embed_windows(const rf_model *m)
{
    int D = rf_model_hparams(m)->hidden_size, W = 64, S = 16;
    char *text = long_text(300);
    rf_error err;
    rf_pipeline_params pp = rf_pipeline_default_params();
    pp.window = W;
    pp.stride = S;
    pp.batch_size = 3;
    rf_pipeline *pl = NULL;
    CHECK(rf_pipeline_create(m, &pp, &pl, &err) == RF_OK, "pipeline: %s", err.message);
    float *want = malloc(sizeof(float) * (size_t)D);
    int n_windows = expected(m, text, W, S, false, want);
    CHECK(n_windows >= 4, "the text makes several windows (%d)", n_windows);

    rf_text in[3] = {txt(text), txt("短句子"), txt("\xff")};
    float *got = malloc(sizeof(float) * 3 * (size_t)D);
    rf_item_status items[3];
    CHECK(rf_embed(pl, in, 3, RF_POOLING_MEAN, false, got, items, &err) == RF_OK, "embed: %s",
          err.message);
    CHECK(items[0].status == RF_OK && items[1].status == RF_OK && items[2].status == RF_ERR_INPUT,
          "the long text and the short one run, the bad one fails alone");
    float d = check_max_abs_diff(got, want, D);
    CHECK(d < 1e-5f, "embed: mean of %d window vectors (max |diff| %g)", n_windows, d);
    rf_pipeline_stats st;
    rf_pipeline_get_stats(pl, &st);
    CHECK(st.windowed_inputs == 1 && st.windows == n_windows, "stats: 1 input cut into %d windows (%lld, %lld)",
          n_windows, (long long)st.windowed_inputs, (long long)st.windows);

    /* normalized after the mean */
    double norm = 0.0;
    for (int i = 0; i < D; i++)
        norm += want[i] * want[i];
    for (int i = 0; i < D; i++)
        want[i] = (float)(want[i] / sqrt(norm));
    CHECK(rf_embed(pl, in, 1, RF_POOLING_MEAN, true, got, NULL, &err) == RF_OK, "embed: %s",
          err.message);
    d = check_max_abs_diff(got, want, D);
    CHECK(d < 1e-5f, "embed --normalize: the mean normalized (max |diff| %g)", d);

    /* a text no longer than the window: the same bytes as without windows */
    rf_pipeline *plain = NULL;
    pp.window = pp.stride = 0;
    CHECK(rf_pipeline_create(m, &pp, &plain, &err) == RF_OK, "pipeline: %s", err.message);
    float *one = malloc(sizeof(float) * (size_t)D);
    CHECK(rf_embed(plain, &in[1], 1, RF_POOLING_MEAN, false, one, NULL, &err) == RF_OK &&
              rf_embed(pl, &in[1], 1, RF_POOLING_MEAN, false, got, NULL, &err) == RF_OK &&
              check_same_finite(one, got, (size_t)D),
          "a short text: byte-identical with and without a window");
    /* similarity embeds each side with windows too */
    float cos;
    rf_text pair = {text, strlen(text), text, strlen(text)};
    CHECK(rf_similarity(pl, &pair, 1, RF_POOLING_MEAN, &cos, NULL, &err) == RF_OK &&
              fabsf(cos - 1.0f) < 1e-5f,
          "similarity of a long text with itself through windows: %g", cos);

    rf_pipeline_free(plain);
    rf_pipeline_free(pl);
    free(one);
    free(got);
    free(want);
    free(text);
}

static void test_classify_windows(const rf_model *m)
{
    const rf_hparams *hp = rf_model_hparams(m);
    int N = hp->num_labels, W = 48, S = 0;
    char *text = long_text(200);
    rf_error err;
    rf_pipeline_params pp = rf_pipeline_default_params();
    pp.window = W;
    pp.stride = S;
    rf_pipeline *pl = NULL;
    CHECK(rf_pipeline_create(m, &pp, &pl, &err) == RF_OK, "pipeline: %s", err.message);
    float *want = malloc(sizeof(float) * (size_t)N);
    int n_windows = expected(m, text, W, S, true, want);
    rf_text in = txt(text);
    float *got = malloc(sizeof(float) * (size_t)N);
    CHECK(rf_classify_logits(pl, &in, 1, got, NULL, &err) == RF_OK, "classify logits: %s",
          err.message);
    float d = check_max_abs_diff(got, want, N);
    CHECK(d < 1e-5f, "classify: mean of %d windows' logits (max |diff| %g)", n_windows, d);
    double mx = want[0], sum = 0.0;
    for (int i = 1; i < N; i++)
        mx = check_max_nan(mx, want[i]);
    for (int i = 0; i < N; i++)
        sum += exp(want[i] - mx);
    for (int i = 0; i < N; i++)
        want[i] = (float)(exp(want[i] - mx) / sum);
    CHECK(rf_classify(pl, &in, 1, got, NULL, &err) == RF_OK, "classify: %s", err.message);
    d = check_max_abs_diff(got, want, N);
    CHECK(d < 1e-5f, "classify: softmax of the mean logits (max |diff| %g)", d);
    rf_pipeline_free(pl);
    free(got);
    free(want);
    free(text);
}

static void test_bad_params(const rf_model *m)
{
    int32_t limit = rf_context_length_limit(m, NULL);
    struct { int32_t window, stride; const char *what; } bad[] = {
        {2, 0, "window 2"}, {-1, 0, "window -1"}, {64, 62, "stride = window - 2"},
        {64, 64, "stride = window"}, {limit + 1, 0, "window over the limit"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rf_pipeline_params pp = rf_pipeline_default_params();
        pp.window = bad[i].window;
        pp.stride = bad[i].stride;
        rf_pipeline *pl = NULL;
        rf_error err;
        CHECK(rf_pipeline_create(m, &pp, &pl, &err) == RF_ERR_INPUT && !pl,
              "%s: RF_ERR_INPUT", bad[i].what);
    }
    /* a negative stride is the default one, window / 4 */
    rf_pipeline_params pp = rf_pipeline_default_params();
    pp.window = 64;
    pp.stride = RF_STRIDE_DEFAULT;
    rf_pipeline *pl = NULL;
    rf_error err;
    CHECK(rf_pipeline_create(m, &pp, &pl, &err) == RF_OK, "window 64, RF_STRIDE_DEFAULT: %s",
          pl ? "made" : err.message);
    rf_pipeline_free(pl);
}

int main(void)
{
    REFERENCE_OR_SKIP(ref, "windows");
    rf_model *mlm = load_reference_model(ref, "tiny-word-mlm");
    rf_model *cls = load_reference_model(ref, "tiny-word-cls");
    if (mlm && cls) {
        test_embed_windows(mlm);
        test_classify_windows(cls);
        test_bad_params(mlm);
    }
    rf_model_free(mlm);
    rf_model_free(cls);
    return check_done();
}
