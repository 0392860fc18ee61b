/*
 * blas_core.c — choosing OpenBLAS's kernels before it is too late (see
 * blas_core.h).
 *
 * OpenBLAS (DYNAMIC_ARCH builds, as Debian's) reads OPENBLAS_CORETYPE in its
 * load-time constructor, which has already run when main() starts; the only
 * way to change its choice from inside the program is to set the variable
 * and start the program again. exec keeps the pid, argv, environment and
 * every open file descriptor, and nothing has been read from stdin or
 * buffered for stdout yet, so the second start sees exactly what the first
 * did. It costs one extra process start (a few milliseconds).
 */
#include "blas_core.h"

#include "roformer.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REEXEC_GUARD "ROFORMER_BLAS_REEXEC"

void cli_select_blas_core(char **argv)
{
    if (getenv("OPENBLAS_CORETYPE") || getenv(REEXEC_GUARD))
        return;
    const char *want = getenv("ROFORMER_BLAS_CORE");
    if (!want || !*want || !strcmp(want, "auto"))
        want = rf_blas_preferred_core();
    else if (!strcmp(want, "none"))
        want = NULL;
    if (!want)
        return;
    if (setenv("OPENBLAS_CORETYPE", want, 1) == 0 && setenv(REEXEC_GUARD, "1", 1) == 0)
        execv("/proc/self/exe", argv);
    /* No /proc, or out of memory: keep going on the kernels already loaded. */
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv(REEXEC_GUARD);
}
