/*
 * convert_temp.h — a checkpoint directory converted to a temporary GGUF
 * file, for tests that load a converted model: convert_temp(dir, dtype)
 * returns the file's path (the caller unlinks and frees it), or NULL after
 * a failed CHECK saying why.
 */
#ifndef RF_TEST_CONVERT_TEMP_H
#define RF_TEST_CONVERT_TEMP_H

#include "check.h"
#include "roformer.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *convert_temp(const char *dir, rf_dtype dtype)
{
    char *path = strdup("/tmp/rf_test_XXXXXX.gguf");
    int fd = path ? mkstemps(path, 5) : -1;
    rf_convert_params cv = rf_convert_default_params();
    cv.dtype = dtype;
    rf_error err;
    rf_status st = fd < 0 ? RF_ERR_IO : rf_convert(dir, path, &cv, &err);
    CHECK(st == RF_OK, "convert %s --dtype %s: %s", dir, rf_dtype_name(dtype),
          fd < 0 ? "no temporary file" : err.message);
    if (fd >= 0)
        close(fd);
    if (st != RF_OK) {
        if (fd >= 0)
            unlink(path);
        free(path);
        return NULL;
    }
    return path;
}

#endif
