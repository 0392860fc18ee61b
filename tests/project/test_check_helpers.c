/*
 * test_check_helpers.c — the comparisons the tests make of outputs let no
 * NaN or Inf through. Two pseudo-random arrays one ulp apart, and two equal
 * runs of a real forward pass (tiny-word-cls, from the reference fixtures),
 * pass every form; then one element gets a NaN or an Inf, in one array or
 * the same in both, and every form must fail on it:
 *
 *   check_max_abs_diff(a, b, n) <= tol, and == 0 for "exactly equal"
 *   check_max_nan merging that difference with a clean one, either order
 *   check_same_finite(a, b, n), where memcmp would call equal NaNs equal
 *
 * fmaxf, the merge these replace, returns the other operand for a NaN, so a
 * NaN output passed every merged check; tests/project/test_nan_checks.sh keeps it
 * out of the tests.
 */
#include "../check.h"
#include "roformer.h"

#include <math.h>
#include <stdbool.h>

#define TOL 1e-4f

typedef struct {
    const char *what;
    float in_a, in_b; /* what goes into a and b at one element; 0 leaves it */
} injection;

static const injection injections[] = {
    {"NaN in a", NAN, 0},         {"NaN in b", 0, NAN},
    {"NaN in both", NAN, NAN},    {"Inf in a", INFINITY, 0},
    {"-Inf in b", 0, -INFINITY},  {"Inf in both", INFINITY, INFINITY},
    {"-Inf in both", -INFINITY, -INFINITY}, {"Inf in a, -Inf in b", INFINITY, -INFINITY},
};

/* Every form on a0 and b0 (within TOL of each other, `same` when bit-
 * identical), then on copies with each injection at element n / 2. */
static void prove(const float *a0, const float *b0, size_t n, bool same, const char *source)
{
    float clean = check_max_abs_diff(a0, b0, n);
    CHECK(clean <= TOL && check_max_nan(0.0, clean) <= TOL && check_max_nan(clean, 0.0) <= TOL,
          "%s: clean arrays pass: max |diff| %g", source, clean);
    CHECK(check_same_finite(a0, b0, n) == same, "%s: clean arrays %s bit-identical", source,
          same ? "are" : "are not");
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    size_t at = n / 2;
    for (size_t k = 0; k < sizeof injections / sizeof injections[0]; k++) {
        const injection *in = &injections[k];
        memcpy(a, a0, n * sizeof *a);
        memcpy(b, b0, n * sizeof *b);
        if (in->in_a != 0)
            a[at] = in->in_a;
        if (in->in_b != 0)
            b[at] = in->in_b;
        float d = check_max_abs_diff(a, b, n);
        CHECK(!(d <= TOL) && d != 0.0f, "%s, %s: check_max_abs_diff %g passes a bound", source,
              in->what, d);
        /* the merge as the tests write it: d = check_max_nan(d, part) */
        double m1 = check_max_nan(clean, d), m2 = check_max_nan(d, clean);
        double m3 = check_max_nan(check_max_nan(0.0, d), clean);
        CHECK(!(m1 <= TOL) && !(m2 <= TOL) && !(m3 <= TOL), "%s, %s: merged %g %g %g passes",
              source, in->what, m1, m2, m3);
        /* element-wise, as the hand-written loops merge */
        double e = 0.0;
        for (size_t i = 0; i < n; i++)
            e = check_max_nan(e, fabsf(a[i] - b[i]));
        CHECK(!(e <= TOL), "%s, %s: element-wise merge %g passes", source, in->what, e);
        CHECK(!check_same_finite(a, b, n), "%s, %s: check_same_finite passes", source, in->what);
        if (same && !memcmp(&in->in_a, &in->in_b, sizeof in->in_a))
            CHECK(!memcmp(a, b, n * sizeof *a), "%s, %s: memcmp alone calls them equal (the case "
                  "check_same_finite is for)", source, in->what);
    }
    free(a);
    free(b);
}

/* last_hidden_state of one fixed sequence on `threads` threads, or NULL. */
static float *forward(const rf_model *model, int threads, size_t *n)
{
    enum { L = 12 };
    int32_t ids[L];
    for (int t = 0; t < L; t++)
        ids[t] = t == 0 ? 101 : 200 + 37 * t;
    rf_context_params cp = rf_context_default_params();
    cp.n_threads = threads;
    rf_context *ctx = NULL;
    rf_error err;
    *n = (size_t)L * rf_model_hparams(model)->hidden_size;
    float *out = malloc(*n * sizeof *out);
    rf_batch batch = {1, L, ids, NULL, NULL};
    rf_outputs o = {.last_hidden_state = out};
    if (rf_context_create(model, &cp, &ctx, &err) != RF_OK ||
        rf_forward(ctx, &batch, &o, &err) != RF_OK) {
        CHECK(0, "forward on %d threads: %s", threads, err.message);
        free(out);
        out = NULL;
    }
    rf_context_free(ctx);
    return out;
}

int main(void)
{
    CHECK(isnan(check_max_nan(NAN, 1.0)) && isnan(check_max_nan(1.0, NAN)) &&
              check_max_nan(INFINITY, 1.0) == INFINITY && check_max_nan(1.0, 2.0) == 2.0 &&
              check_max_nan(2.0, 1.0) == 2.0,
          "check_max_nan: NaN from either side, otherwise the larger");

    enum { N = 1000 };
    float x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = check_rnd(3.0f);
        y[i] = nextafterf(x[i], INFINITY);
    }
    prove(x, y, N, false, "arrays one ulp apart");

    const char *ref = check_reference();
    if (!ref) {
        SKIP("reference fixtures absent: the injections into a real forward pass not checked");
        return check_done();
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/models/tiny-word-cls", ref);
    rf_model *model = NULL;
    rf_error err;
    CHECK(rf_model_load(path, &model, &err) == RF_OK, "load %s: %s", path, err.message);
    if (model) {
        size_t n1 = 0, n2 = 0;
        float *a = forward(model, 1, &n1), *b = forward(model, 1, &n2);
        if (a && b && n1 == n2)
            prove(a, b, n1, true, "tiny-word-cls last_hidden_state, two runs");
        free(a);
        free(b);
    }
    rf_model_free(model);
    return check_done();
}
