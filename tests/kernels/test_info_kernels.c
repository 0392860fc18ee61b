/*
 * test_info_kernels.c — `roformer info` lists every row of the library's
 * tables of int8 and bf16 builds (gemm_int8_backend.h,
 * gemm_bf16_backend.h), read here from the tables themselves: each name on
 * a line of its own, whether this CPU runs it as the table's `needs` say,
 * the tests' own marked, exactly one build in use per product that runs,
 * and a build named by ROFORMER_KERNEL shown in use and chosen so. Runs the
 * CLI named by $ROFORMER (tests/run.sh sets it) on the default model.
 */
#include "kernels/gemm_bf16.h"
#include "kernels/gemm_bf16_backend.h"
#include "kernels/gemm_int8.h"
#include "kernels/gemm_int8_backend.h"

#include "../check.h"

#include <stdbool.h>

#define MODEL "models/sentiment-zh-small.gguf"

/* `info`'s stdout with ROFORMER_KERNEL set to `kernel` (NULL: unset), or
 * NULL when it did not exit 0. */
static char *run_info(const char *kernel)
{
    const char *cli = getenv("ROFORMER");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s info -m " MODEL " 2>/dev/null", cli ? cli : "build/roformer");
    if (kernel)
        setenv("ROFORMER_KERNEL", kernel, 1);
    else
        unsetenv("ROFORMER_KERNEL");
    FILE *f = popen(cmd, "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *out = calloc(cap, 1);
    if (out)
        len = fread(out, 1, cap - 1, f);
    int rc = pclose(f);
    if (!out || rc != 0 || len == cap - 1) {
        free(out);
        return NULL;
    }
    return out;
}

/* The rest of info's line "PRODUCT build:   NAME  ..." after the name
 * (a static copy), or NULL when there is none; *lines counts the
 * product's build lines. */
static const char *build_line(const char *out, const char *product, const char *name, int *lines)
{
    static char rest[256];
    const char *found = NULL;
    char head[32];
    snprintf(head, sizeof head, "%s build:", product);
    *lines = 0;
    for (const char *p = out; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
        if (strncmp(p, head, strlen(head)))
            continue;
        (*lines)++;
        const char *w = p + strlen(head);
        while (*w == ' ')
            w++;
        size_t n = strlen(name);
        if (!strncmp(w, name, n) && w[n] == ' ') {
            const char *end = strchr(w, '\n');
            size_t len = end ? (size_t)(end - w - n) : strlen(w + n);
            if (len >= sizeof rest)
                len = sizeof rest - 1;
            memcpy(rest, w + n, len);
            rest[len] = '\0';
            found = rest;
        }
    }
    return found;
}

/* One table row against info's line: runs or not, tests only, in use. */
static void check_row(const char *out, const char *product, const char *name, bool runs,
                      bool tests_only, int *in_use, int rows)
{
    int lines;
    const char *rest = build_line(out, product, name, &lines);
    CHECK(lines == rows, "info lists %d %s builds, the table %d", lines, product, rows);
    CHECK(rest != NULL, "info has no line for %s build '%s'", product, name);
    if (!rest)
        return;
    CHECK(runs == !strstr(rest, "not on this CPU") && runs == (strstr(rest, " runs") != NULL),
          "%s build %s: the CPU %s it, info says '%s'", product, name, runs ? "runs" : "lacks", rest);
    CHECK(tests_only == (strstr(rest, "tests only") != NULL), "%s build %s: tests only %d, info '%s'",
          product, name, tests_only, rest);
    *in_use += strstr(rest, "in use") != NULL;
}

/* Every row of both tables against one run of info; returns how many of
 * each product's rows info marks in use. */
static void check_tables(const char *out, int *int8_in_use, int *bf16_in_use)
{
    *int8_in_use = *bf16_in_use = 0;
    for (int i = 0; i < rf_int8_backend_count; i++) {
        const rf_int8_backend *b = rf_int8_backends[i];
        check_row(out, "int8", b->name, rf_int8_backend_runs(b), b->tests_only, int8_in_use,
                  rf_int8_backend_count);
    }
    for (int i = 0; i < rf_bf16_backend_count; i++) {
        const rf_bf16_backend *b = rf_bf16_backends[i];
        check_row(out, "bf16", b->name, rf_bf16_backend_runs(b), b->tests_only, bf16_in_use,
                  rf_bf16_backend_count);
    }
}

/* With ROFORMER_KERNEL=PRODUCT=NAME, info marks that row in use, chosen
 * by ROFORMER_KERNEL. */
static void check_chosen(const char *product, const char *name)
{
    char spec[64];
    snprintf(spec, sizeof spec, "%s=%s", product, name);
    char *out = run_info(spec);
    CHECK(out != NULL, "info with ROFORMER_KERNEL=%s exits 0", spec);
    if (!out)
        return;
    int lines;
    const char *rest = build_line(out, product, name, &lines);
    CHECK(rest && strstr(rest, "in use (") && strstr(rest, "ROFORMER_KERNEL)"),
          "ROFORMER_KERNEL=%s: info's line is '%s'", spec, rest ? rest : "(none)");
    free(out);
}

int main(void)
{
    rf_kernel_build rows[64];
    int32_t n = rf_kernels_list(rows, 64);
    CHECK(n == rf_int8_backend_count + rf_bf16_backend_count,
          "rf_kernels_list gives %d rows, the tables have %d", (int)n,
          rf_int8_backend_count + rf_bf16_backend_count);
    CHECK(rf_kernels_list(NULL, 0) == n, "rf_kernels_list(NULL, 0) counts the rows");

    char *out = run_info(NULL);
    CHECK(out != NULL, "info -m " MODEL " exits 0");
    if (!out)
        return check_done();
    int int8_in_use, bf16_in_use;
    check_tables(out, &int8_in_use, &bf16_in_use);
    CHECK(int8_in_use == (rf_int8_supported() ? 1 : 0), "%d int8 builds in use", int8_in_use);
    CHECK(bf16_in_use == (rf_bf16_supported() ? 1 : 0), "%d bf16 builds in use", bf16_in_use);
    free(out);

    for (int i = 0; i < rf_int8_backend_count; i++) {
        const rf_int8_backend *b = rf_int8_backends[i];
        if (!b->tests_only && rf_int8_backend_runs(b))
            check_chosen("int8", b->name);
    }
    for (int i = 0; i < rf_bf16_backend_count; i++) {
        const rf_bf16_backend *b = rf_bf16_backends[i];
        if (!b->tests_only && rf_bf16_backend_runs(b))
            check_chosen("bf16", b->name);
    }
    return check_done();
}
