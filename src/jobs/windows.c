/*
 * windows.c — overlapping windows over a long encoding (see windows.h).
 */
#include "jobs/windows.h"

#include <stdlib.h>
#include <string.h>

rf_status rf_windows_plan(int32_t input, int32_t body, int32_t room, int32_t stride,
                          rf_window **wins, int32_t *n_wins, int32_t *cap)
{
    for (int32_t first = 0;; first += room - stride) {
        if (*n_wins == *cap) {
            int32_t grown_cap = *cap ? 2 * *cap : 16;
            rf_window *grown = realloc(*wins, sizeof *grown * (size_t)grown_cap);
            if (!grown)
                return RF_ERR_NOMEM;
            *wins = grown;
            *cap = grown_cap;
        }
        int32_t count = body - first < room ? body - first : room;
        (*wins)[(*n_wins)++] = (rf_window){.input = input, .first = first, .count = count};
        if (first + count >= body)
            return RF_OK;
    }
}

int32_t rf_windows_count(int32_t body, int32_t room, int32_t stride)
{
    int32_t n = 1;
    for (int32_t first = 0; first + room < body; first += room - stride)
        n++;
    return n;
}

bool rf_window_encoding(const rf_encoding *full, int32_t header, const rf_window *w,
                        rf_encoding *out)
{
    int32_t n = header + w->count + 1;
    *out = (rf_encoding){.n = n, .cap = n};
    out->ids = malloc(sizeof(int32_t) * (size_t)n);
    out->type_ids = malloc(sizeof(int32_t) * (size_t)n);
    out->mask = malloc(sizeof(int32_t) * (size_t)n);
    out->start = malloc(sizeof(int32_t) * (size_t)n);
    out->end = malloc(sizeof(int32_t) * (size_t)n);
    if (!out->ids || !out->type_ids || !out->mask || !out->start || !out->end)
        return false;
    /* the header, the window's body tokens, the closing token */
    const int32_t *src[] = {full->ids, full->type_ids, full->mask, full->start, full->end};
    int32_t *dst[] = {out->ids, out->type_ids, out->mask, out->start, out->end};
    for (int a = 0; a < 5; a++) {
        memcpy(dst[a], src[a], sizeof(int32_t) * (size_t)header);
        memcpy(dst[a] + header, src[a] + header + w->first, sizeof(int32_t) * (size_t)w->count);
        dst[a][n - 1] = src[a][full->n - 1];
    }
    return true;
}
