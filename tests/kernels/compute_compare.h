/*
 * compute_compare.h — what the tests of a reduced-precision compute type
 * (test_bf16, test_int8) share when they set it beside the engine's f32
 * result: one forward pass of a reference case into freshly allocated
 * outputs of the model's head, the argmax and top-two margin of a strided
 * row of logits, compare_case, which checks one case's outputs against
 * f32 by a compare_rule and adds them up in compare_stats, and
 * compare_cases, which does so for every case of a model and prints the
 * summary line.
 */
#ifndef RF_TEST_COMPUTE_COMPARE_H
#define RF_TEST_COMPUTE_COMPARE_H

#include "../check.h"
#include "../reference_cases.h"
#include "roformer.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    float *last, *logits, *start, *end;
} outputs;

static void free_outputs(outputs *o)
{
    free(o->last);
    free(o->logits);
    free(o->start);
    free(o->end);
}

static rf_status run(rf_context *ctx, const rf_hparams *hp, const test_case *c, outputs *o,
                     rf_error *err)
{
    size_t BL = (size_t)c->B * c->L;
    memset(o, 0, sizeof *o);
    rf_batch batch = {c->B, c->L, c->ids, c->types, c->mask};
    rf_outputs out = {0};
    out.last_hidden_state = o->last = malloc(BL * hp->hidden_size * sizeof(float));
    if (hp->head == RF_HEAD_SEQ_CLS)
        out.logits = o->logits = malloc((size_t)c->B * hp->num_labels * sizeof(float));
    else if (hp->head == RF_HEAD_TOKEN_CLS)
        out.logits = o->logits = malloc(BL * hp->num_labels * sizeof(float));
    else if (hp->head == RF_HEAD_QA) {
        out.start_logits = o->start = malloc(BL * sizeof(float));
        out.end_logits = o->end = malloc(BL * sizeof(float));
    }
    return rf_forward(ctx, &batch, &out, err);
}

static int argmax(const float *v, int n, int stride)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (v[(size_t)i * stride] > v[(size_t)best * stride])
            best = i;
    return best;
}

/* The gap between the largest and the second largest of n values. */
static float top2_margin(const float *v, int n, int stride)
{
    float a = -INFINITY, b = -INFINITY;
    for (int i = 0; i < n; i++) {
        float x = v[(size_t)i * stride];
        if (x > a) {
            b = a;
            a = x;
        } else if (x > b) {
            b = x;
        }
    }
    return a - b;
}

/* What a compute type must keep of the f32 result. */
typedef struct {
    const char *name;   /* "bf16", "int8": in the messages */
    double min_cosine;  /* of every real token's last_hidden_state row */
    float argmax_tie;   /* f32 logits whose top two are closer may swap */
    bool ties_anywhere; /* sequence and QA argmax may swap at a tie too, not
                           only token classification's */
} compare_rule;

typedef struct {
    double min_cosine;
    float max_diff;
    int agree, total;
} compare_stats;

/* One argmax over n values (stride apart) of the f32 and the compute
 * type's results; a difference is allowed only when `tie_ok` and the f32
 * top two are within rule->argmax_tie. A NaN or Inf on either side fails
 * (argmax would pass over a NaN). */
static void compare_argmax(const compare_rule *rule, const char *label, const char *what,
                           const float *f32, const float *q, int n, int stride, bool tie_ok,
                           compare_stats *s)
{
    int a = argmax(f32, n, stride), b = argmax(q, n, stride);
    bool finite = true;
    for (int i = 0; i < n; i++)
        finite = finite && isfinite(f32[(size_t)i * stride]) && isfinite(q[(size_t)i * stride]);
    s->total++;
    s->agree += a == b;
    float margin = top2_margin(f32, n, stride);
    CHECK(finite && (a == b || (tie_ok && margin < rule->argmax_tie)),
          "%s %s: %s argmax %d, f32 argmax %d (f32 margin %g)%s", label, what, rule->name, b, a,
          margin, finite ? "" : ", a value not finite");
}

/* The cosine of two rows of D floats, in double. */
static double row_cosine(const float *x, const float *y, size_t D)
{
    double dot = 0, xx = 0, yy = 0;
    for (size_t i = 0; i < D; i++) {
        dot += (double)x[i] * y[i];
        xx += (double)x[i] * x[i];
        yy += (double)y[i] * y[i];
    }
    return dot / sqrt(xx * yy);
}

/* The bound of `rule` against rows at known cosines: a row at the lowest
 * cosine the documentation states passes it, a row moved as far as
 * `rejected` fails it, so the bound is tight enough to see a change of
 * that size. The moved row is x plus a vector orthogonal to x of |x|
 * times tan(acos(c)). */
static void compare_rule_bounds(const compare_rule *rule, double documented, double rejected)
{
    enum { D = 64 };
    float x[D], u[D], y[D];
    double xu = 0, xx = 0, uu = 0;
    for (int i = 0; i < D; i++) {
        x[i] = (float)sin(0.7 * i + 0.3);
        u[i] = (float)cos(1.3 * i);
        xu += (double)x[i] * u[i];
        xx += (double)x[i] * x[i];
    }
    for (int i = 0; i < D; i++) {
        u[i] -= (float)(xu / xx * x[i]);
        uu += (double)u[i] * u[i];
    }
    const double at[2] = {documented, rejected};
    double got[2];
    for (int k = 0; k < 2; k++) {
        double t = sqrt(1.0 / (at[k] * at[k]) - 1.0) * sqrt(xx / uu);
        for (int i = 0; i < D; i++)
            y[i] = (float)(x[i] + t * u[i]);
        got[k] = row_cosine(x, y, D);
    }
    CHECK(fabs(got[0] - documented) < 1e-6 && got[0] >= rule->min_cosine,
          "%s bound %.5f: a row at the documented lowest cosine %.6f (made %.6f) passes", rule->name,
          rule->min_cosine, documented, got[0]);
    CHECK(fabs(got[1] - rejected) < 1e-6 && !(got[1] >= rule->min_cosine),
          "%s bound %.5f: a row at cosine %.6f (made %.6f) fails", rule->name, rule->min_cosine,
          rejected, got[1]);
}

/* Case c's outputs h against its f32 outputs f: every real token's
 * cosine, and the argmax of the model's head. */
static void compare_case(const compare_rule *rule, const char *label, const rf_hparams *hp,
                         const test_case *c, const outputs *f, const outputs *h, compare_stats *s)
{
    size_t D = (size_t)hp->hidden_size;
    int NL = hp->num_labels;
    for (int b = 0; b < c->B; b++) {
        for (int t = 0; t < c->L; t++) {
            size_t row = (size_t)b * c->L + t;
            if (!c->mask[row])
                continue;
            const float *x = f->last + row * D, *y = h->last + row * D;
            for (size_t i = 0; i < D; i++) {
                float d = fabsf(x[i] - y[i]);
                if (!(d <= s->max_diff))
                    s->max_diff = d;
            }
            double cosine = row_cosine(x, y, D);
            if (!(cosine >= s->min_cosine))
                s->min_cosine = cosine;
            CHECK(cosine >= rule->min_cosine, "%s %s[%d] token %d: cosine %.6f to f32", label,
                  c->id, b, t, cosine);
            if (hp->head == RF_HEAD_TOKEN_CLS)
                compare_argmax(rule, label, c->id, f->logits + row * NL, h->logits + row * NL, NL,
                               1, true, s);
        }
        if (hp->head == RF_HEAD_SEQ_CLS)
            compare_argmax(rule, label, c->id, f->logits + (size_t)b * NL,
                           h->logits + (size_t)b * NL, NL, 1, rule->ties_anywhere, s);
        if (hp->head == RF_HEAD_QA) {
            int real = 0;
            while (real < c->L && c->mask[(size_t)b * c->L + real])
                real++;
            size_t off = (size_t)b * c->L;
            compare_argmax(rule, label, "start", f->start + off, h->start + off, real, 1,
                           rule->ties_anywhere, s);
            compare_argmax(rule, label, "end", f->end + off, h->end + off, real, 1,
                           rule->ties_anywhere, s);
        }
    }
}

/* Every case of case_dir/cases.jsonl run through ctx_f32 and ctx_other
 * (batches of at most max_batch), compared by rule; prints the model's
 * summary line and returns the totals. */
static compare_stats compare_cases(const compare_rule *rule, const char *label,
                                   const rf_hparams *hp, const char *case_dir,
                                   rf_context *ctx_f32, rf_context *ctx_other, int max_batch)
{
    compare_stats s = {.min_cosine = 1.0};
    char path[1600];
    snprintf(path, sizeof path, "%s/cases.jsonl", case_dir);
    char *cases = check_read_file(path, NULL);
    CHECK(cases != NULL, "%s: no %s", label, path);
    for (char *line = cases ? strtok(cases, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        test_case c;
        if (read_case(line, &c) != 0 || c.B > max_batch) {
            CHECK(0, "%s: a malformed case, or a batch over %d", label, max_batch);
            free_case(&c);
            continue;
        }
        outputs f, h;
        rf_error err;
        rf_status a = run(ctx_f32, hp, &c, &f, &err);
        rf_status b = a == RF_OK ? run(ctx_other, hp, &c, &h, &err) : a;
        CHECK(a == RF_OK && b == RF_OK, "%s %s: forward: %s", label, c.id, err.message);
        if (a == RF_OK && b == RF_OK)
            compare_case(rule, label, hp, &c, &f, &h, &s);
        free_outputs(&f);
        if (a == RF_OK)
            free_outputs(&h);
        free_case(&c);
    }
    printf("  %-26s %s vs f32: min cosine %.6f, max |diff| %.3g", label, rule->name,
           s.min_cosine, s.max_diff);
    if (s.total)
        printf(", argmax agrees %d/%d", s.agree, s.total);
    printf("\n");
    free(cases);
    return s;
}

/* A model with two contexts over it, f32 and another compute type, for
 * compare_cases: batches of up to COMPARE_BATCH, 2 threads. */
#define COMPARE_BATCH 8
typedef struct {
    rf_model *model;
    rf_context *f32, *other;
} compare_pair;

static void compare_pair_free(compare_pair *p)
{
    rf_context_free(p->f32);
    rf_context_free(p->other);
    rf_model_free(p->model);
    memset(p, 0, sizeof *p);
}

/* Loads load_path and creates the pair's contexts, CHECKing each step
 * under `label`; false, with nothing left allocated, when one fails. */
static bool compare_pair_open(compare_pair *p, const char *load_path, rf_compute_type compute,
                              const char *label)
{
    rf_error err;
    memset(p, 0, sizeof *p);
    rf_status st = rf_model_load(load_path, &p->model, &err);
    CHECK(st == RF_OK, "%s: load: %s", label, err.message);
    if (st != RF_OK)
        return false;
    rf_context_params cp = rf_context_default_params();
    cp.max_batch = COMPARE_BATCH;
    cp.n_threads = 2;
    st = rf_context_create(p->model, &cp, &p->f32, &err);
    cp.compute = compute;
    if (st == RF_OK)
        st = rf_context_create(p->model, &cp, &p->other, &err);
    CHECK(st == RF_OK, "%s: contexts: %s", label, err.message);
    if (st != RF_OK)
        compare_pair_free(p);
    return st == RF_OK;
}

/* On a CPU without the instructions of `compute`: a context of that type
 * is refused with RF_ERR_UNSUPPORTED (checked on tiny-word-cls when the
 * reference models are there), and a skip says which instructions are
 * missing; the test then ends. */
static void refused_without_instructions(const char *ref, rf_compute_type compute,
                                         const char *name, const char *instructions)
{
    rf_model *model = ref ? load_reference_model(ref, "tiny-word-cls") : NULL;
    if (model) {
        rf_context_params cp = rf_context_default_params();
        cp.compute = compute;
        rf_context *ctx = NULL;
        rf_error err;
        CHECK(rf_context_create(model, &cp, &ctx, &err) == RF_ERR_UNSUPPORTED && !ctx,
              "%s context refused on a CPU without %s", name, instructions);
        rf_model_free(model);
    }
    SKIP("%s compute: this CPU has no %s", name, instructions);
}

#endif
