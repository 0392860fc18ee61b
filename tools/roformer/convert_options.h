/*
 * convert_options.h — the converter's options that `convert` and `pull`
 * share (--dtype, --tokenizer, --pooler-activation), parsed in one place so
 * both accept the same values with the same messages.
 */
#ifndef RF_CONVERT_OPTIONS_H
#define RF_CONVERT_OPTIONS_H

#include "roformer.h"

/* Reads argv[*i] if it is one of the shared options, taking its value
 * (advancing *i past it) into `params`. Returns 1 when it took the option,
 * 0 when argv[*i] is not one of them, and CLI_USAGE (after the usage
 * message, naming `command`) for a missing or bad value. */
int cli_convert_option(const char *command, int argc, char **argv, int *i,
                       rf_convert_params *params);

#endif
