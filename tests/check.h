/*
 * check.h — the test helper every C test (tests/FOLDER/test_NAME.c) includes.
 *
 *   CHECK(cond, "what %d", x)   counts a pass, or prints the failure and counts it
 *   SKIP("why")                 counts a skip, with the reason printed
 *   check_reference()           ../shared/reference (or $ROFORMER_REFERENCE), NULL if absent
 *   check_max_abs_diff(a, b, n) largest |a[i] - b[i]| (NaN if any is NaN)
 *   check_max_nan(a, b)         the larger of two differences, NaN if either is NaN
 *   check_same_finite(a, b, n)  a and b bit-identical and all finite
 *   check_rnd(scale)            a fixed pseudo-random sequence, uniform in [-scale, scale)
 *   check_put_le(p, v, n)       v's n low bytes at p, little-endian (hand-made file bytes)
 *   return check_done();        prints "<name>: P ok, F failed, S skipped", exit 1 on failure
 *
 * tests/run.sh adds up those lines into the one summary line of `make test`.
 */
#ifndef RF_CHECK_H
#define RF_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int check_passed, check_failed, check_skipped;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (cond) {                                                        \
            check_passed++;                                                \
        } else {                                                           \
            check_failed++;                                                \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

#define SKIP(...)                                                          \
    do {                                                                   \
        check_skipped++;                                                   \
        fprintf(stderr, "SKIP %s: ", __FILE__);                            \
        fprintf(stderr, __VA_ARGS__);                                      \
        fputc('\n', stderr);                                               \
    } while (0)

/* The reference fixtures directory, or NULL when it is not there. */
static inline const char *check_reference(void)
{
    const char *dir = getenv("ROFORMER_REFERENCE");
    struct stat st;
    if (!dir || !*dir)
        dir = "../shared/reference";
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? dir : NULL;
}

/* In main: `ref` names the reference fixtures directory; without one the
 * test skips visibly, saying what goes unchecked, and ends. */
#define REFERENCE_OR_SKIP(ref, what)                                         \
    const char *ref = check_reference();                                     \
    if (!ref) {                                                              \
        SKIP("reference fixtures absent (../shared/reference or "           \
             "$ROFORMER_REFERENCE): %s not checked", what);                  \
        return check_done();                                                 \
    }

/* Reads a whole file into a NUL-terminated buffer (caller frees), or NULL. */
static inline char *check_read_file(const char *path, size_t *len_out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown) {
                free(buf);
                buf = NULL;
            }
            buf = grown;
        }
    }
    fclose(f);
    if (buf) {
        buf[len] = '\0';
        if (len_out)
            *len_out = len;
    }
    return buf;
}

/* The largest |a[i] - b[i]|; a NaN anywhere gives NaN, which fails every
 * bound it is checked against. An Inf gives Inf, or NaN when both hold it
 * (Inf - Inf), so no Inf passes as a difference of 0. */
static inline float check_max_abs_diff(const float *a, const float *b, size_t n)
{
    float m = 0.0f;
    for (size_t i = 0; i < n && m == m; i++) {
        float d = fabsf(a[i] - b[i]);
        if (!(d <= m))
            m = d;
    }
    return m;
}

/* The larger of two differences, for merging check_max_abs_diff results: a
 * NaN in either gives NaN (fmaxf returns the other one, so a NaN output
 * would pass). An Inf is the larger and fails every finite bound. */
static inline double check_max_nan(double a, double b)
{
    return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
}

/* Whether a and b hold the same n floats bit for bit, all of them finite:
 * for "to the last bit" claims, where memcmp alone would call the same NaN
 * or Inf in both equal. */
static inline int check_same_finite(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(a[i]) || !isfinite(b[i]))
            return 0;
    return !memcmp(a, b, n * sizeof *a);
}

/* xorshift64: the same sequence on every run; a test may seed it first. */
static uint64_t check_rng_state = 0x2545F4914F6CDD1Dull;

/* Uniform in [-scale, scale). */
static inline float check_rnd(float scale)
{
    check_rng_state ^= check_rng_state << 13;
    check_rng_state ^= check_rng_state >> 7;
    check_rng_state ^= check_rng_state << 17;
    return scale * ((float)(check_rng_state >> 40) / (float)(1 << 24) * 2.0f - 1.0f);
}

/* v's n low bytes at p, least significant first (the byte order of GGUF,
 * safetensors and zip). */
static inline void check_put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline int check_done_named(const char *file)
{
    const char *name = strrchr(file, '/');
    name = name ? name + 1 : file;
    int n = (int)(strchr(name, '.') ? strchr(name, '.') - name : (long)strlen(name));
    printf("%.*s: %d ok, %d failed, %d skipped\n", n, name, check_passed, check_failed,
           check_skipped);
    return check_failed ? 1 : 0;
}
#define check_done() check_done_named(__FILE__)

#endif
