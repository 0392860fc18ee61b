/*
 * output.h — what the job commands write: one JSON object per line (cJSON),
 * floats printed with the fewest digits that read back as the same float32.
 */
#ifndef RF_CLI_OUTPUT_H
#define RF_CLI_OUTPUT_H

#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>

/* A float32 as a JSON number (shortest round-trip form); null when not finite. */
cJSON *cli_json_float(float v);
/* [x0, x1, ...] of n float32 values. */
cJSON *cli_json_floats(const float *x, int32_t n);
/* {"error": msg, "line": line} */
cJSON *cli_json_error(const char *msg, long line);
/* Writes obj on one line of `f`; returns 0, or -1 on a write or memory error. */
int cli_write_json(FILE *f, const cJSON *obj);
/* Adds a float field to obj (NULL-safe helpers for building results). */
void cli_add_float(cJSON *obj, const char *name, float v);

#endif
