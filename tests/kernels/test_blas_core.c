/*
 * test_blas_core.c — the CLI's OpenBLAS core selection (tools/roformer/
 * blas_core.c): the re-execution keeps argv and stdin, sets the core,
 * happens at most once, and is skipped when the user chose a core.
 *
 * The test starts copies of itself as children (argv[1] == "child") with
 * known arguments, a known stdin and a chosen environment; each child
 * counts its own starts in RF_TEST_STARTS, runs cli_select_blas_core()
 * as main() does, and reports what it then sees on stdout.
 *
 * The expected values (the core OpenBLAS detects, the preferred one) are
 * computed in this process, so it must run in the children's environment:
 * started with any of the variables the children set (a user's
 * OPENBLAS_CORETYPE, say), it starts itself again without them first.
 */
#include "../check.h"

#include "../../tools/roformer/blas_core.c"

#include <cblas.h>
#include <errno.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const child_args[] = {"child", "two words", "", "\xe4\xbd\xa0\xe5\xa5\xbd",
                                          "--flag=1"};
#define N_CHILD_ARGS (int)(sizeof child_args / sizeof child_args[0])
static const char stdin_text[] = "line one\nline two \xe2\x9c\x93\n";

/* The variables every child starts without (run_child unsets them). */
static const char *const tested_vars[] = {"OPENBLAS_CORETYPE", "ROFORMER_BLAS_CORE", REEXEC_GUARD,
                                          "RF_TEST_STARTS"};

static int child_main(int argc, char **argv)
{
    const char *s = getenv("RF_TEST_STARTS");
    int starts = (s ? atoi(s) : 0) + 1;
    char buf[16];
    snprintf(buf, sizeof buf, "%d", starts);
    setenv("RF_TEST_STARTS", buf, 1);
    if (starts > 3)
        return 3; /* re-executing in a loop: stop it here */
    cli_select_blas_core(argv);

    int args_ok = argc == N_CHILD_ARGS + 1;
    for (int i = 1; args_ok && i < argc; i++)
        args_ok = !strcmp(argv[i], child_args[i - 1]);
    char in[256];
    size_t n = fread(in, 1, sizeof in - 1, stdin);
    in[n] = '\0';
    printf("starts=%d args=%d stdin=%d core=%s\n", starts, args_ok, !strcmp(in, stdin_text),
           openblas_get_corename());
    return 0;
}

/* Runs a child with `env` (NAME=VALUE strings, NULL-terminated; NAME= alone
 * unsets) and returns what it printed. */
static char *run_child(const char *self, const char *const *env)
{
    static char out[512];
    int in_pipe[2], out_pipe[2];
    out[0] = '\0';
    if (pipe(in_pipe) || pipe(out_pipe))
        return out;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in_pipe[0], 0);
        dup2(out_pipe[1], 1);
        close(in_pipe[1]);
        close(out_pipe[0]);
        for (size_t i = 0; i < sizeof tested_vars / sizeof tested_vars[0]; i++)
            unsetenv(tested_vars[i]);
        for (; *env; env++) {
            const char *eq = strchr(*env, '=');
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(eq - *env), *env);
            if (eq[1])
                setenv(name, eq + 1, 1);
            else
                unsetenv(name);
        }
        char *args[N_CHILD_ARGS + 2];
        args[0] = (char *)self;
        for (int i = 0; i < N_CHILD_ARGS; i++)
            args[i + 1] = (char *)child_args[i];
        args[N_CHILD_ARGS + 1] = NULL;
        execv(self, args);
        _exit(127);
    }
    close(in_pipe[0]);
    close(out_pipe[1]);
    if (write(in_pipe[1], stdin_text, sizeof stdin_text - 1) != (ssize_t)(sizeof stdin_text - 1))
        out[0] = '\0';
    close(in_pipe[1]);
    size_t len = 0;
    ssize_t got;
    while (len < sizeof out - 1 && (got = read(out_pipe[0], out + len, sizeof out - 1 - len)) > 0)
        len += (size_t)got;
    out[len] = '\0';
    close(out_pipe[0]);
    int status;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        snprintf(out, sizeof out, "child exit status %d", status);
    return out;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return child_main(argc, argv);
    const char *self = "/proc/self/exe";
    char exe[4096];
    ssize_t n = readlink(self, exe, sizeof exe - 1);
    if (n <= 0) {
        SKIP("no /proc/self/exe: the CLI cannot re-execute itself here");
        return check_done();
    }
    exe[n] = '\0';
    int inherited = 0;
    for (size_t i = 0; i < sizeof tested_vars / sizeof tested_vars[0]; i++) {
        if (getenv(tested_vars[i])) {
            unsetenv(tested_vars[i]);
            inherited = 1;
        }
    }
    if (inherited) {
        execv(exe, argv);
        CHECK(0, "restarting without the inherited OpenBLAS variables: %s", strerror(errno));
        return check_done();
    }

    /* A core other than the one OpenBLAS detects, so a re-execution shows. */
    const char *forced = strcasecmp(openblas_get_corename(), "Nehalem") ? "Nehalem" : "Sandybridge";
    char forced_env[64], expect[128];
    snprintf(forced_env, sizeof forced_env, "ROFORMER_BLAS_CORE=%s", forced);

    const char *env_forced[] = {forced_env, NULL};
    char *out = run_child(exe, env_forced);
    snprintf(expect, sizeof expect, "starts=2 args=1 stdin=1 core=%s\n", forced);
    CHECK(!strcmp(out, expect), "forced core: got '%s', expected '%s'", out, expect);

    const char *env_user[] = {forced_env, "OPENBLAS_CORETYPE=Sandybridge", NULL};
    out = run_child(exe, env_user);
    CHECK(!strcmp(out, "starts=1 args=1 stdin=1 core=Sandybridge\n"),
          "user's OPENBLAS_CORETYPE is kept without re-executing: got '%s'", out);

    const char *env_none[] = {"ROFORMER_BLAS_CORE=none", NULL};
    out = run_child(exe, env_none);
    CHECK(!strncmp(out, "starts=1 args=1 stdin=1 core=", 29), "none: got '%s'", out);

    const char *env_guard[] = {forced_env, REEXEC_GUARD "=1", NULL};
    out = run_child(exe, env_guard);
    CHECK(!strncmp(out, "starts=1 args=1 stdin=1 core=", 29),
          "guard set: no second re-execution: got '%s'", out);

    const char *env_auto[] = {NULL};
    out = run_child(exe, env_auto);
    const char *preferred = rf_blas_preferred_core();
    if (preferred)
        snprintf(expect, sizeof expect, "starts=2 args=1 stdin=1 core=%s\n", preferred);
    else
        snprintf(expect, sizeof expect, "starts=1 args=1 stdin=1 core=%s\n", openblas_get_corename());
    CHECK(!strcmp(out, expect), "auto: got '%s', expected '%s'", out, expect);

    /* The library's report matches OpenBLAS's. */
    rf_blas_info info = rf_blas_get_info();
    CHECK(info.core && !strcmp(info.core, openblas_get_corename()), "rf_blas_get_info core");
    CHECK(info.threads >= 1 && info.cpu_count >= 1, "threads %d, cpus %d", (int)info.threads,
          (int)info.cpu_count);
    return check_done();
}
