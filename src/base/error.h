/*
 * error.h — filling an rf_error: one formatted line, and the status it goes with.
 *
 * Library code reports with `return rf_fail(err, RF_ERR_FORMAT, "%s: ...", path)`;
 * `err` may be NULL, in which case only the status is returned.
 */
#ifndef RF_ERROR_H
#define RF_ERROR_H

#include "roformer.h"

#if defined(__GNUC__)
#define RF_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define RF_PRINTF(f, a)
#endif

rf_status rf_fail(rf_error *err, rf_status status, const char *fmt, ...) RF_PRINTF(3, 4);

#endif
