/*
 * test_job_blocks.c — the building blocks of the jobs on hand-made inputs:
 * pooling, softmax and top-k, BIO/BIOES entity grouping, QA span choice.
 */
#include "../check.h"
#include "roformer.h"

#include <math.h>
#include <string.h>

static bool near(float a, float b, float tol) { return fabsf(a - b) <= tol; }

static void test_pooling(void)
{
    /* 3 tokens x 2 dims; the last token is padding. */
    const float hidden[] = {1, 2, 3, 6, 100, -100};
    const int32_t mask[] = {1, 1, 0};
    float out[2];
    rf_pool_hidden(hidden, mask, 3, 2, RF_POOLING_CLS, out);
    CHECK(out[0] == 1 && out[1] == 2, "cls pooling takes token 0: %g %g", out[0], out[1]);
    rf_pool_hidden(hidden, mask, 3, 2, RF_POOLING_MEAN, out);
    CHECK(out[0] == 2 && out[1] == 4, "mean pooling skips padding: %g %g", out[0], out[1]);
    rf_pool_hidden(hidden, NULL, 3, 2, RF_POOLING_MEAN, out);
    CHECK(near(out[0], 104.0f / 3, 1e-5f) && near(out[1], -92.0f / 3, 1e-5f),
          "mean pooling without mask: %g %g", out[0], out[1]);
    const int32_t none[] = {0, 0, 0};
    rf_pool_hidden(hidden, none, 3, 2, RF_POOLING_MEAN, out);
    CHECK(out[0] == 0 && out[1] == 0, "mean of no tokens is zero, not NaN");
    rf_pool_hidden(hidden, mask, 3, 2, RF_POOLING_MAX, out);
    CHECK(out[0] == 3 && out[1] == 6, "max pooling skips padding: %g %g", out[0], out[1]);
    rf_pool_hidden(hidden, NULL, 3, 2, RF_POOLING_MAX, out);
    CHECK(out[0] == 100 && out[1] == 6, "max pooling without mask: %g %g", out[0], out[1]);
    const float negative[] = {-5, -7, -3, -9};
    rf_pool_hidden(negative, NULL, 2, 2, RF_POOLING_MAX, out);
    CHECK(out[0] == -3 && out[1] == -7, "max of negative values: %g %g", out[0], out[1]);
    rf_pool_hidden(hidden, mask, 3, 2, RF_POOLING_LAST, out);
    CHECK(out[0] == 3 && out[1] == 6, "last-token pooling takes the last real token: %g %g",
          out[0], out[1]);
    rf_pool_hidden(hidden, NULL, 3, 2, RF_POOLING_LAST, out);
    CHECK(out[0] == 100 && out[1] == -100, "last-token pooling without mask: %g %g", out[0], out[1]);
    rf_pool_hidden(hidden, none, 3, 2, RF_POOLING_MAX, out);
    CHECK(out[0] == 0 && out[1] == 0, "max of no tokens is zero");
    rf_pool_hidden(hidden, none, 3, 2, RF_POOLING_LAST, out);
    CHECK(out[0] == 0 && out[1] == 0, "last of no tokens is zero");
    CHECK(!strcmp(rf_pooling_name(RF_POOLING_LAST), "last") &&
          !strcmp(rf_pooling_name(RF_POOLING_MAX), "max") &&
          !strcmp(rf_pooling_name((rf_pooling)99), "unknown"), "pooling names");

    float v[] = {3, 4};
    rf_l2_normalize(v, 2);
    CHECK(near(v[0], 0.6f, 1e-7f) && near(v[1], 0.8f, 1e-7f), "l2: %g %g", v[0], v[1]);
    float z[] = {0, 0};
    rf_l2_normalize(z, 2);
    CHECK(z[0] == 0 && z[1] == 0, "l2 of zero stays zero");
    const float a[] = {1, 0}, b[] = {1, 1}, c[] = {-2, 0};
    CHECK(near(rf_cosine(a, b, 2), sqrtf(0.5f), 1e-6f), "cosine 45 degrees");
    CHECK(near(rf_cosine(a, c, 2), -1.0f, 1e-7f), "cosine opposite");
    CHECK(rf_cosine(a, z, 2) == 0.0f, "cosine with zero vector is 0");
}

static void test_softmax_top_k(void)
{
    const float x[] = {1.0f, 3.0f, 2.0f, 3.0f, -1000.0f};
    float p[5];
    rf_softmax(x, 5, p);
    double e1 = exp(1), e2 = exp(2), e3 = exp(3), z = e1 + e2 + 2 * e3;
    CHECK(near(p[0], (float)(e1 / z), 1e-7f) && near(p[1], (float)(e3 / z), 1e-7f) &&
              near(p[2], (float)(e2 / z), 1e-7f) && p[4] == 0.0f,
          "softmax values %g %g %g %g", p[0], p[1], p[2], p[4]);
    const float big[] = {1000.0f, 1000.0f};
    rf_softmax(big, 2, p);
    CHECK(p[0] == 0.5f && p[1] == 0.5f, "softmax is stable for large logits");

    int32_t idx[5] = {-1, -1, -1, -1, -1};
    CHECK(rf_top_k(x, 5, 3, idx) == 3, "top-3 count");
    CHECK(idx[0] == 1 && idx[1] == 3 && idx[2] == 2, "top-3 order, ties to lower index: %d %d %d",
          idx[0], idx[1], idx[2]);
    CHECK(rf_top_k(x, 5, 9, idx) == 5 && idx[3] == 0 && idx[4] == 4, "top-k with k > n");
    CHECK(rf_top_k(x, 5, 0, idx) == 0, "top-0");
}

/* Groups `tags` (indices into labels) and compares with "TYPE:first-last ..." */
static void check_groups(const char *const *labels, int32_t nl, const int32_t *tags, int32_t n,
                         const char *want)
{
    rf_entity ents[16];
    float scores[16];
    for (int32_t i = 0; i < n; i++)
        scores[i] = 0.5f + 0.1f * (float)i;
    int32_t k = rf_group_entities(labels, nl, tags, scores, n, ents);
    char got[256] = "";
    size_t len = 0;
    for (int32_t e = 0; e < k; e++)
        len += (size_t)snprintf(got + len, sizeof got - len, "%s%.*s:%d-%d", e ? " " : "",
                                ents[e].type_len, ents[e].type, ents[e].first, ents[e].last);
    CHECK(!strcmp(got, want), "entities: got '%s', want '%s'", got, want);
}

static void test_entities(void)
{
    const char *bio[] = {"O", "B-PER", "I-PER", "B-LOC", "I-LOC"};
    check_groups(bio, 5, (int32_t[]){1, 2, 0, 3, 4, 4}, 6, "PER:0-1 LOC:3-5");
    check_groups(bio, 5, (int32_t[]){1, 1, 2}, 3, "PER:0-0 PER:1-2");       /* B after B */
    check_groups(bio, 5, (int32_t[]){2, 2, 0, 4}, 4, "PER:0-1 LOC:3-3");    /* stray I- opens */
    check_groups(bio, 5, (int32_t[]){1, 4, 2}, 3, "PER:0-0 LOC:1-1 PER:2-2"); /* type change */
    check_groups(bio, 5, (int32_t[]){0, 0}, 2, "");
    check_groups(bio, 5, (int32_t[]){1, 2, 2}, 3, "PER:0-2");               /* open at the end */
    check_groups(bio, 5, (int32_t[]){1, 7, 2}, 3, "PER:0-0 PER:2-2");       /* unknown id = O */

    const char *bioes[] = {"O", "B-ORG", "I-ORG", "E-ORG", "S-LOC", "S-ORG"};
    check_groups(bioes, 6, (int32_t[]){1, 2, 3, 4, 5, 3}, 6, "ORG:0-2 LOC:3-3 ORG:4-4 ORG:5-5");
    check_groups(bioes, 6, (int32_t[]){1, 3, 2}, 3, "ORG:0-1 ORG:2-2");     /* E closes */
    check_groups(bioes, 6, (int32_t[]){5, 5}, 2, "ORG:0-0 ORG:1-1");        /* S is single */

    const char *io[] = {"O", "PER", "LOC"};
    check_groups(io, 3, (int32_t[]){1, 1, 2, 0, 2}, 5, "PER:0-1 LOC:2-2 LOC:4-4");

    rf_entity e[4];
    const float s[] = {0.2f, 0.4f, 0.9f};
    CHECK(rf_group_entities(bio, 5, (int32_t[]){1, 2, 0}, s, 3, e) == 1 && near(e[0].score, 0.3f, 1e-6f),
          "entity score is the mean of its tokens");
}

static void test_best_span(void)
{
    /* tokens: [CLS] q [SEP] c c c c [SEP]; [CLS] counts in the softmax only */
    const float st[] = {3, 9, 9, 1, 5, 0, 2, 9};
    const float en[] = {4, 9, 9, 0, 1, 6, 3, 9};
    const uint8_t allowed[] = {RF_SPAN_SOFTMAX_ONLY, 0, 0, 1, 1, 1, 1, 0};
    int32_t s = -1, e = -1;
    float score = 0;
    CHECK(rf_best_span(st, en, allowed, 8, 30, &s, &e, &score) && s == 4 && e == 5,
          "best span 4-5, got %d-%d", s, e);
    double zs = exp(3) + exp(1) + exp(5) + exp(0) + exp(2),
           ze = exp(4) + exp(0) + exp(1) + exp(6) + exp(3);
    CHECK(near(score, (float)(exp(5) / zs * exp(6) / ze), 1e-6f), "span score %g", score);
    const float st9[] = {99, 9, 9, 1, 5, 0, 2, 9};
    CHECK(rf_best_span(st9, en, allowed, 8, 30, &s, &e, &score) && s == 4 && score < 1e-6f,
          "[CLS] is never the answer, only lowers the score");
    CHECK(rf_best_span(st, en, allowed, 8, 1, &s, &e, &score) && s == e,
          "max answer length 1 gives a single token, got %d-%d", s, e);
    const float st2[] = {0, 0, 0, 0, 0, 0, 8, 0};
    const float en2[] = {0, 0, 0, 0, 7, 0, 0, 0};
    CHECK(rf_best_span(st2, en2, allowed, 8, 30, &s, &e, &score) && s <= e,
          "start never after end: %d-%d", s, e);
    const uint8_t none[8] = {0}, cls_only[8] = {RF_SPAN_SOFTMAX_ONLY};
    CHECK(!rf_best_span(st, en, none, 8, 30, &s, &e, &score), "no allowed token: no span");
    CHECK(!rf_best_span(st, en, cls_only, 8, 30, &s, &e, &score), "[CLS] alone: no span");
}

int main(void)
{
    test_pooling();
    test_softmax_top_k();
    test_entities();
    test_best_span();
    return check_done();
}
