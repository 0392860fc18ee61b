/*
 * shared_options.h — the options that more than one command takes, parsed
 * in one place, so that a flag has the same name, range and error text in
 * every command (the jobs, serve, forward): -m/--model, --compute,
 * --max-length, --batch-size, --threads, --max-line-bytes, --window,
 * --stride, serve's --max-input-length.
 */
#ifndef RF_CLI_SHARED_OPTIONS_H
#define RF_CLI_SHARED_OPTIONS_H

#include "roformer.h"

/* Matches argv[*i] against option `name` taking a value ("--name V" or
 * "--name=V"). 1: matched, *value set, *i advanced past it; 0: not this
 * option; -1: value missing (usage error printed). */
int cli_take_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                   const char **value);
/* Parses an integer option value in [lo, hi]; prints a usage error and
 * returns -1 when it is not one. */
int cli_int_value(const char *cmd, const char *name, const char *value, long lo, long hi,
                  int32_t *out);

/* The shared integer options. */
typedef enum {
    CLI_OPT_MAX_LENGTH,       /* --max-length N: 2 .. 2^20 */
    CLI_OPT_MAX_INPUT_LENGTH, /* --max-input-length N (serve): 2 .. 2^20 */
    CLI_OPT_BATCH_SIZE,       /* --batch-size N: 1 .. 4096 */
    CLI_OPT_THREADS,          /* --threads N: 0 (all cores) .. RF_MAX_THREADS */
    CLI_OPT_MAX_LINE_BYTES,   /* --max-line-bytes N: 1 .. 2^30 */
    CLI_OPT_WINDOW,           /* --window N: 3 .. 2^20 */
    CLI_OPT_STRIDE,           /* --stride N: 0 .. 2^20 */
} cli_int_option;

/* Option `which` at argv[*i]: 1 taken (*out set), 0 not this option, -1
 * usage error printed ("--threads wants an integer from 0 to 64, not 'x'"). */
int cli_int_option_take(const char *cmd, int argc, char **argv, int *i, cli_int_option which,
                        int32_t *out);
/* -m MODEL / --model MODEL at argv[*i]: 1, 0 or -1 as above. */
int cli_model_option(const char *cmd, int argc, char **argv, int *i, const char **path);
/* --compute f32|bf16|int8 at argv[*i]: 1, 0 or -1 as above. */
int cli_compute_option(const char *cmd, int argc, char **argv, int *i, int32_t *compute);

#endif
