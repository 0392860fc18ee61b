/*
 * blas_core.h — makes the CLI run on the OpenBLAS kernels its CPU is best
 * at, by setting OPENBLAS_CORETYPE and re-executing itself once.
 */
#ifndef RF_BLAS_CORE_H
#define RF_BLAS_CORE_H

/* Call first thing in main(), before anything reads stdin or writes
 * output. When OpenBLAS picked a slower core than this CPU can run (see
 * rf_blas_preferred_core), sets OPENBLAS_CORETYPE and re-executes
 * /proc/self/exe with the same argv, environment and open files; otherwise,
 * or if that fails, returns and the program goes on with the core it has.
 *
 * Environment: OPENBLAS_CORETYPE set by the user is left alone.
 * ROFORMER_BLAS_CORE=auto (default) | none (keep OpenBLAS's choice) | NAME
 * (an OpenBLAS core name, e.g. Haswell, SkylakeX). ROFORMER_BLAS_REEXEC is
 * set in the re-executed process and stops any further re-execution. */
void cli_select_blas_core(char **argv);

#endif
