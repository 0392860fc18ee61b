/*
 * progress.c — the --progress bar (see progress.h). Redrawn at most ten
 * times a second with "\r"; the ETA extrapolates the rate so far.
 */
#include "progress.h"

#include "cli.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct cli_progress {
    int mode;
    const char *unit;
    double t0, last_draw;
    bool shown;
    double done, total;
    long items;
};

cli_progress *cli_progress_start(int mode, const char *unit)
{
    if (mode == CLI_PROGRESS_AUTO && !isatty(STDERR_FILENO))
        mode = CLI_PROGRESS_OFF;
    if (mode == CLI_PROGRESS_OFF)
        return NULL;
    cli_progress *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->mode = mode;
    p->unit = unit;
    p->t0 = p->last_draw = cli_now_seconds();
    return p;
}

static void draw(cli_progress *p, double t)
{
    double elapsed = t - p->t0;
    double rate = elapsed > 0 ? p->items / elapsed : 0.0;
    char bar[32] = "";
    if (p->total > 0) {
        double frac = p->done / p->total;
        if (frac > 1)
            frac = 1;
        int width = 24, full = (int)(frac * width);
        for (int i = 0; i < width; i++)
            bar[i] = i < full ? '#' : '.';
        bar[width] = '\0';
        double eta = frac > 0 ? elapsed * (1 - frac) / frac : 0;
        fprintf(stderr, "\r[%s] %3.0f%%  %ld %s  %.1f/s  ETA %d:%02d ", bar, frac * 100, p->items,
                p->unit, rate, (int)eta / 60, (int)eta % 60);
    } else {
        fprintf(stderr, "\r%ld %s  %.1f/s  %d:%02d elapsed ", p->items, p->unit, rate,
                (int)elapsed / 60, (int)elapsed % 60);
    }
    fflush(stderr);
    p->shown = true;
    p->last_draw = t;
}

void cli_progress_update(cli_progress *p, double done, double total, long items)
{
    if (!p)
        return;
    p->done = done;
    p->total = total;
    p->items = items;
    double t = cli_now_seconds();
    bool started = p->mode == CLI_PROGRESS_ON || t - p->t0 > 1.0;
    if (started && (!p->shown || t - p->last_draw >= 0.1))
        draw(p, t);
}

void cli_progress_finish(cli_progress *p)
{
    if (!p)
        return;
    if (p->shown || p->mode == CLI_PROGRESS_ON) {
        draw(p, cli_now_seconds());
        fputc('\n', stderr);
    }
    free(p);
}
