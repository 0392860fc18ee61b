/*
 * windows.h — cutting one long encoding into overlapping windows (internal):
 * QA's windows over a long context (HF's doc_stride) and the pipeline's
 * windows over a long single text (rf_pipeline_params.window) are both a
 * fixed header ([CLS], or [CLS] question [SEP]), a run of body tokens and
 * the closing [SEP]:
 *
 *   full:      [CLS] b0 b1 b2 b3 b4 b5 b6 [SEP]        header 1, body 7
 *   room 4, stride 1 (windows start room - stride = 3 apart):
 *   window 0:  [CLS] b0 b1 b2 b3 [SEP]
 *   window 1:  [CLS] b3 b4 b5 b6 [SEP]
 */
#ifndef RF_WINDOWS_H
#define RF_WINDOWS_H

#include "roformer.h"

/* Body tokens [first, first + count) of input `input`. */
typedef struct {
    int32_t input;
    int32_t first, count;
} rf_window;

/* Appends to *wins (grown as needed, *cap its capacity) the windows of an
 * input with `body` tokens, at most `room` body tokens each, each starting
 * `stride` tokens before the previous one ends (stride < room when body >
 * room: checked by the caller); one window when body <= room. Returns
 * RF_ERR_NOMEM when out of memory, else RF_OK. */
rf_status rf_windows_plan(int32_t input, int32_t body, int32_t room, int32_t stride,
                          rf_window **wins, int32_t *n_wins, int32_t *cap);

/* The number of windows rf_windows_plan makes for the same arguments.
 * Every window but the last is full and shares `stride` tokens with the
 * next, so together they hold body + (count - 1) * stride body tokens. */
int32_t rf_windows_count(int32_t body, int32_t room, int32_t stride);

/* Copies window w out of the full encoding (its first `header` tokens are
 * the header, its last token the closing one) into *out, which owns its
 * arrays (rf_encoding_free). false when out of memory. */
bool rf_window_encoding(const rf_encoding *full, int32_t header, const rf_window *w,
                        rf_encoding *out);

#endif
