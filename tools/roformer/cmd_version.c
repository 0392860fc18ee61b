/*
 * cmd_version.c — `roformer version` / `roformer --version`: the version and
 * the OpenBLAS build and kernels in use.
 */
#include "cli.h"

#include <stdio.h>

int cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    rf_blas_info blas = rf_blas_get_info();
    printf("roformer %s\n", rf_version());
    printf("blas: core %s, %d threads, %s\n", blas.core, (int)blas.threads, blas.config);
    rf_kernel_info kernels = rf_kernels_get_info();
    printf("kernels: int8 %s, attention %s, bf16 %s; AMX: %s\n", kernels.int8,
           kernels.attention, kernels.bf16, kernels.amx);
    return CLI_OK;
}
