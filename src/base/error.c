/*
 * error.c — status names and the one-line error message writer.
 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

const char *rf_status_string(rf_status status)
{
    switch (status) {
    case RF_OK: return "ok";
    case RF_ERR_IO: return "i/o error";
    case RF_ERR_FORMAT: return "malformed input";
    case RF_ERR_UNSUPPORTED: return "unsupported";
    case RF_ERR_SHAPE: return "shape mismatch";
    case RF_ERR_INPUT: return "invalid input";
    case RF_ERR_LIMIT: return "limit exceeded";
    case RF_ERR_NOMEM: return "out of memory";
    case RF_ERR_NETWORK: return "download failed";
    }
    return "unknown status";
}

rf_status rf_fail(rf_error *err, rf_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return status;
}
