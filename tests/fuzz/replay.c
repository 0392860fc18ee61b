/*
 * replay.c — a plain main() for a fuzz target, so the committed inputs run
 * in `make test` with any C compiler (and under ASan/UBSan in `make asan`).
 *
 *   test_fuzz_<target> [FILE_OR_DIR ...]
 *
 * Without arguments it runs every file in tests/fuzz/corpus/<target>/ and
 * tests/fuzz/regressions/<target>/ (FUZZ_TARGET is the target's name, set
 * by the Makefile). One CHECK per input: the target must return 0; a crash
 * ends the binary, which tests/run.sh counts as a failure.
 */
#include "../check.h"
#include "fuzz.h"

#include <dirent.h>

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static int compare(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_file(const char *path)
{
    size_t len = 0;
    char *data = check_read_file(path, &len);
    CHECK(data != NULL, "cannot read %s", path);
    if (!data)
        return;
    /* An exactly sized copy, so a read past the end is caught. */
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, data, len);
    free(data);
    CHECK(LLVMFuzzerTestOneInput(copy, len) == 0, "%s", path);
    free(copy);
}

/* Runs the files of `dir` in name order; returns how many. */
static int run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char **names = NULL;
    int n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, (size_t)cap * sizeof *names);
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, (size_t)n, sizeof *names, compare);
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            run_file(path);
        free(names[i]);
    }
    free(names);
    return n;
}

int main(int argc, char **argv)
{
    LLVMFuzzerInitialize(&argc, &argv);
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            struct stat st;
            if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
                run_dir(argv[i]);
            else
                run_file(argv[i]);
        }
    } else {
        int n = run_dir("tests/fuzz/corpus/" FUZZ_TARGET);
        n += run_dir("tests/fuzz/regressions/" FUZZ_TARGET);
        CHECK(n > 0, "no inputs for " FUZZ_TARGET " under tests/fuzz/");
    }
    return check_done_named("fuzz_" FUZZ_TARGET ".c");
}
