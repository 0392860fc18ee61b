/*
 * npy.c — the .npy writer (numpy/lib/format.py, version 1.0):
 *
 *   OFFSET  SIZE  DESCRIPTION
 *   0       6     magic "\x93NUMPY"
 *   6       2     version 1, 0
 *   8       2     header length H, little-endian uint16
 *   10      H     "{'descr': '<f4', 'fortran_order': False, 'shape': (N, D), }"
 *                 padded with spaces and ended by '\n' so that 10 + H is a
 *                 multiple of 64
 *   10 + H  ...   N * D little-endian float32, row-major
 *
 * The header is always 128 bytes here, room for any N, so a seekable file
 * can be written row by row and the header rewritten with the final N.
 */
#include "npy.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { HEADER_BYTES = 128 };

struct cli_npy {
    FILE *f;
    int32_t cols;
    int64_t rows;
    bool seekable;
    long start;      /* file offset of the header */
    float *held;     /* rows kept in memory when f is not seekable */
    size_t held_cap; /* in rows */
    bool failed;
};

static int write_header(cli_npy *npy)
{
    char header[HEADER_BYTES];
    memset(header, ' ', sizeof header);
    memcpy(header, "\x93NUMPY\x01\x00", 8);
    header[8] = (char)(HEADER_BYTES - 10);
    header[9] = 0;
    int n = snprintf(header + 10, HEADER_BYTES - 10,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (%lld, %d), }",
                     (long long)npy->rows, (int)npy->cols);
    header[10 + n] = ' '; /* snprintf's NUL becomes padding */
    header[HEADER_BYTES - 1] = '\n';
    return fwrite(header, 1, sizeof header, npy->f) == sizeof header ? 0 : -1;
}

cli_npy *cli_npy_open(FILE *f, int32_t cols)
{
    cli_npy *npy = calloc(1, sizeof *npy);
    if (!npy)
        return NULL;
    npy->f = f;
    npy->cols = cols;
    npy->start = ftell(f);
    npy->seekable = npy->start >= 0 && fseek(f, npy->start, SEEK_SET) == 0;
    if (npy->seekable && write_header(npy) != 0) {
        free(npy);
        return NULL;
    }
    return npy;
}

int cli_npy_add_row(cli_npy *npy, const float *row)
{
    size_t cols = (size_t)npy->cols;
    if (npy->seekable) {
        if (fwrite(row, sizeof(float), cols, npy->f) != cols)
            npy->failed = true;
    } else {
        if ((size_t)npy->rows == npy->held_cap) {
            size_t cap = npy->held_cap ? npy->held_cap * 2 : 256;
            float *grown = realloc(npy->held, cap * cols * sizeof(float));
            if (!grown) {
                npy->failed = true;
                return -1;
            }
            npy->held = grown;
            npy->held_cap = cap;
        }
        memcpy(npy->held + (size_t)npy->rows * cols, row, cols * sizeof(float));
    }
    npy->rows++;
    return npy->failed ? -1 : 0;
}

int cli_npy_close(cli_npy *npy)
{
    if (!npy)
        return -1;
    bool ok = !npy->failed;
    if (ok && npy->seekable) {
        long end = ftell(npy->f);
        ok = fseek(npy->f, npy->start, SEEK_SET) == 0 && write_header(npy) == 0 &&
             fseek(npy->f, end, SEEK_SET) == 0;
    } else if (ok) {
        size_t count = (size_t)npy->rows * (size_t)npy->cols;
        ok = write_header(npy) == 0 && fwrite(npy->held, sizeof(float), count, npy->f) == count;
    }
    ok = fflush(npy->f) == 0 && ok;
    free(npy->held);
    free(npy);
    return ok ? 0 : -1;
}
