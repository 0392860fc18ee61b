/*
 * position_options.h — the options that take a model past its trained
 * length, shared by the job commands, forward, bench and serve:
 * --extend-positions, --rope-scaling none|linear|ntk, --rope-factor F.
 */
#ifndef RF_CLI_POSITION_OPTIONS_H
#define RF_CLI_POSITION_OPTIONS_H

#include "roformer.h"

#include <stdbool.h>

typedef struct {
    bool extend;          /* --extend-positions */
    int32_t scaling;      /* --rope-scaling: rf_rope_scaling, default the model's */
    float factor;         /* --rope-factor; 0 = the model's */
} cli_position_opts;

/* One of the three options at argv[*i]: 1 taken (*i advanced past a
 * value), 0 not one of them, -1 usage error printed (a bad value:
 * --rope-factor <= 0 or not a number, an unknown scaling). */
int cli_position_option(cli_position_opts *o, const char *cmd, int argc, char **argv, int *i);

/* Copies the options into context parameters. */
void cli_position_apply(const cli_position_opts *o, rf_context_params *cp);

/* The help lines of the three options. */
extern const char cli_position_help[];

#endif
