/*
 * download_bar.c — the download progress bar (see download_bar.h) and the
 * CLI's one way to pull, used by `roformer pull` and by every -m hf:...
 */
#include "download_bar.h"

#include "cli.h"
#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define AUTO_MIN_BYTES (1 << 20)

void cli_download_bar_init(cli_download_bar *b, int mode)
{
    memset(b, 0, sizeof *b);
    b->mode = mode == CLI_PROGRESS_AUTO && !isatty(STDERR_FILENO) ? CLI_PROGRESS_OFF : mode;
}

static void draw(cli_download_bar *b, int64_t done, int64_t total, double t)
{
    double elapsed = t - b->t0;
    /* sizes in MB, or kB for a small file */
    double unit = total >= 0 && total < 1000000 ? 1e-3 : 1e-6;
    const char *name = unit < 1e-3 ? "MB" : "kB";
    double rate = elapsed > 0 ? done * 1e-6 / elapsed : 0.0;
    if (total > 0) {
        char bar[25];
        double frac = done >= total ? 1.0 : (double)done / (double)total;
        int full = (int)(frac * 24);
        for (int i = 0; i < 24; i++)
            bar[i] = i < full ? '#' : '.';
        bar[24] = '\0';
        fprintf(stderr, "\r%s [%s] %3.0f%%  %.1f/%.1f %s  %.1f MB/s ", b->file, bar, frac * 100,
                done * unit, total * unit, name, rate);
    } else {
        fprintf(stderr, "\r%s %.1f %s  %.1f MB/s ", b->file, done * unit, name, rate);
    }
    fflush(stderr);
    b->last_draw = t;
}

void cli_download_bar_update(void *user, const char *file, int64_t done, int64_t total)
{
    cli_download_bar *b = user;
    if (b->mode == CLI_PROGRESS_OFF)
        return;
    if (b->mode == CLI_PROGRESS_AUTO && (total < AUTO_MIN_BYTES))
        return;
    double t = cli_now_seconds();
    if (!b->open || strncmp(b->file, file, sizeof b->file - 1)) {
        cli_download_bar_end(b);
        snprintf(b->file, sizeof b->file, "%s", file);
        b->t0 = t;
        b->open = true;
    } else if (done != total && t - b->last_draw < 0.1) {
        return;
    }
    draw(b, done, total, t);
    if (done == total)
        cli_download_bar_end(b);
}

void cli_download_bar_end(cli_download_bar *b)
{
    if (b->open)
        fputc('\n', stderr);
    b->open = false;
}

int cli_hub_pull(const char *spec, const rf_convert_params *convert, int mode, char *path,
                 size_t size)
{
    cli_download_bar bar;
    rf_hub_params params = rf_hub_default_params();
    rf_error err;
    if (convert)
        params.convert = *convert;
    cli_download_bar_init(&bar, mode);
    params.progress = cli_download_bar_update;
    params.progress_user = &bar;
    rf_status st = rf_hub_pull(spec, &params, path, size, &err);
    cli_download_bar_end(&bar);
    return st ? cli_error("%s", err.message) : CLI_OK;
}
