/*
 * download_bar.h — the progress bar of hub downloads on stderr, fed by
 * rf_hub_pull's progress callback: one line per file, redrawn with "\r"
 * at most ten times a second, ended when the file is complete.
 *
 * Mode CLI_PROGRESS_AUTO draws it only when stderr is a terminal and only
 * for files of 1 MiB or more (the weights); CLI_PROGRESS_ON draws every
 * file, into a file too; CLI_PROGRESS_OFF never.
 */
#ifndef RF_CLI_DOWNLOAD_BAR_H
#define RF_CLI_DOWNLOAD_BAR_H

#include "roformer.h"

#include <stdbool.h>

typedef struct {
    int mode;           /* CLI_PROGRESS_* after the terminal check */
    double t0, last_draw;
    bool open;          /* a line is drawn and not yet ended */
    char file[64];      /* the file being drawn */
} cli_download_bar;

void cli_download_bar_init(cli_download_bar *b, int mode);
/* An rf_hub_progress_fn; user is the cli_download_bar. */
void cli_download_bar_update(void *user, const char *file, int64_t done, int64_t total);
/* Ends a line left open by a download that failed, before its message. */
void cli_download_bar_end(cli_download_bar *b);

/* rf_hub_pull with the bar in `mode`; prints the error and returns
 * CLI_FAILED on failure. */
int cli_hub_pull(const char *spec, const rf_convert_params *convert, int mode, char *path,
                 size_t size);

#endif
