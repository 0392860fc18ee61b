/*
 * test_info_kernels.c — `roformer info` lists every row of the kernels'
 * one table of builds (backend.c), read here from the table itself: each
 * name on a line of its own, whether this CPU runs it as the row's `needs`
 * say, the tests' own marked, exactly one build in use per op that runs,
 * and a build named by ROFORMER_KERNEL shown in use and chosen so. Runs the
 * CLI named by $ROFORMER (tests/run.sh sets it) on the default model.
 */
#include "roformer.h"
#include "kernels/backend.h"

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

/* Rows of the op in the table. */
static int op_rows(rf_op op)
{
    int n = 0;
    for (int i = 0; i < rf_backend_count; i++)
        n += rf_backends[i].op == op;
    return n;
}

/* Every row of the table against one run of info; counts how many of
 * each op's rows info marks in use. */
static void check_table(const char *out, int in_use[RF_OP_COUNT])
{
    for (int op = 0; op < RF_OP_COUNT; op++)
        in_use[op] = 0;
    for (int i = 0; i < rf_backend_count; i++) {
        const rf_backend *b = &rf_backends[i];
        check_row(out, rf_op_name(b->op), b->name, rf_backend_runs(b), b->tests_only,
                  &in_use[b->op], op_rows(b->op));
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
    CHECK(n == rf_backend_count, "rf_kernels_list gives %d rows, the table has %d", (int)n,
          rf_backend_count);
    CHECK(rf_kernels_list(NULL, 0) == n, "rf_kernels_list(NULL, 0) counts the rows");

    char *out = run_info(NULL);
    CHECK(out != NULL, "info -m " MODEL " exits 0");
    if (!out)
        return check_done();
    int in_use[RF_OP_COUNT];
    check_table(out, in_use);
    for (int op = 0; op < RF_OP_COUNT; op++)
        CHECK(in_use[op] == (rf_backend_supported((rf_op)op) ? 1 : 0), "%d %s builds in use",
              in_use[op], rf_op_name((rf_op)op));
    free(out);

    for (int i = 0; i < rf_backend_count; i++) {
        const rf_backend *b = &rf_backends[i];
        if (!b->tests_only && rf_backend_runs(b))
            check_chosen(rf_op_name(b->op), b->name);
    }
    return check_done();
}
