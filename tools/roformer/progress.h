/*
 * progress.h — a one-line progress bar on stderr: done/total, rate, ETA.
 *
 * Mode CLI_PROGRESS_AUTO shows it only when stderr is a terminal and the
 * job has run for more than a second; CLI_PROGRESS_ON always (also into a
 * file); CLI_PROGRESS_OFF never.
 */
#ifndef RF_CLI_PROGRESS_H
#define RF_CLI_PROGRESS_H

enum { CLI_PROGRESS_OFF = 0, CLI_PROGRESS_ON = 1, CLI_PROGRESS_AUTO = -1 };

typedef struct cli_progress cli_progress;

/* `unit` names what is counted ("lines", "documents"). */
cli_progress *cli_progress_start(int mode, const char *unit);
/* done / total drive the bar and ETA (total 0: unknown, e.g. a pipe);
 * items is the count shown with its rate. */
void cli_progress_update(cli_progress *p, double done, double total, long items);
/* Draws the final state (when shown at all), ends the line and frees. */
void cli_progress_finish(cli_progress *p);

#endif
