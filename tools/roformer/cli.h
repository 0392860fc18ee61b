/*
 * cli.h — what the subcommands of the `roformer` CLI share: exit codes,
 * error printing, and the command table entry type.
 *
 * Exit codes: 0 ok, 1 some inputs failed or a runtime error, 2 usage error.
 * Results go to stdout only; every message goes to stderr as
 * "roformer: error: ..." (or "roformer <cmd>: ..." for usage).
 */
#ifndef RF_CLI_H
#define RF_CLI_H

#include "roformer.h"

enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

/* Prints "roformer: error: <message>" and returns CLI_FAILED. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "roformer <cmd>: <message>" and a hint to --help; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True when argv[1..] holds -h or --help. */
int cli_wants_help(int argc, char **argv);
/* Parses a whole decimal int in [lo, hi]; returns 0 on success. */
int cli_parse_int(const char *s, long lo, long hi, long *out);
/* Seconds on the monotonic clock, for durations. */
double cli_now_seconds(void);
/* Each subcommand: argv[0] is the subcommand name. */
typedef int (*cli_command_fn)(int argc, char **argv);

#endif
