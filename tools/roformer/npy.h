/*
 * npy.h — a float32 matrix (N x D) written as a NumPy .npy file (format
 * version 1.0), row by row, N known only at the end.
 */
#ifndef RF_CLI_NPY_H
#define RF_CLI_NPY_H

#include <stdint.h>
#include <stdio.h>

typedef struct cli_npy cli_npy;

/* Writes to `f` (not closed here). A seekable file gets a header that is
 * patched at the end; a pipe gets the rows held in memory until then. */
cli_npy *cli_npy_open(FILE *f, int32_t cols);
/* Appends one row of `cols` values; returns 0 or -1 (out of memory, write error). */
int cli_npy_add_row(cli_npy *npy, const float *row);
/* Writes the final header (and buffered rows) and frees; returns 0 or -1. */
int cli_npy_close(cli_npy *npy);

#endif
