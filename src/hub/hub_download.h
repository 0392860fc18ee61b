/*
 * hub_download.h — one file from the hub into the cache: an HTTP GET with
 * libcurl into {dest}.part (resumed with a Range request when a .part is
 * already there), then, once complete, its sha256 checked against the
 * hub's and the .part renamed to {dest}. A final name only ever holds a
 * whole, verified file.
 *
 * It does not decide what a 404 means (a missing optional file, a missing
 * repository): it reports the status and X-Error-Code and leaves the
 * message to the caller.
 */
#ifndef RF_HUB_DOWNLOAD_H
#define RF_HUB_DOWNLOAD_H

#include "roformer.h"

typedef struct rf_hub_session rf_hub_session;

/* One connection cache and the settings every request shares (user agent,
 * HF_TOKEN, timeouts). */
rf_status rf_hub_session_open(rf_hub_session **out, rf_error *err);
void rf_hub_session_close(rf_hub_session *s);

typedef struct {
    const char *url;  /* the hub's URL of the file */
    const char *dest; /* its final path in the cache */
    const char *file; /* its name, for messages and progress */
    const char *repo; /* "hf:OWNER/NAME@REVISION", for messages */
    rf_hub_progress_fn progress;
    void *progress_user;
} rf_hub_fetch;

/* RF_OK with *not_found = false: dest holds the file. RF_OK with
 * *not_found = true: the hub answered 404, X-Error-Code copied into
 * error_code[64] ("" when absent); nothing was written. Anything else is
 * an error with its one-line message (a .part kept for resuming when the
 * transfer was cut, deleted when its bytes are wrong). */
rf_status rf_hub_download(rf_hub_session *s, const rf_hub_fetch *f, bool *not_found,
                          char error_code[64], rf_error *err);

#endif
