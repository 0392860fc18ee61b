/*
 * shared_options.c — the options more than one command takes (see
 * shared_options.h): one table of names and ranges.
 */
#include "shared_options.h"

#include "cli.h"

#include <string.h>

static const struct {
    const char *name;
    long lo, hi;
} int_options[] = {
    [CLI_OPT_MAX_LENGTH] = {"--max-length", 2, 1 << 20},
    [CLI_OPT_MAX_INPUT_LENGTH] = {"--max-input-length", 2, 1 << 20},
    [CLI_OPT_BATCH_SIZE] = {"--batch-size", 1, 4096},
    [CLI_OPT_THREADS] = {"--threads", 0, RF_MAX_THREADS},
    [CLI_OPT_MAX_LINE_BYTES] = {"--max-line-bytes", 1, 1 << 30},
    [CLI_OPT_WINDOW] = {"--window", 3, 1 << 20},
    [CLI_OPT_STRIDE] = {"--stride", 0, 1 << 20},
};

int cli_take_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                   const char **value)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return 0;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        cli_usage_error(cmd, "option %s needs a value", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

int cli_int_value(const char *cmd, const char *name, const char *value, long lo, long hi,
                  int32_t *out)
{
    long v;
    if (cli_parse_int(value, lo, hi, &v) != 0) {
        cli_usage_error(cmd, "%s wants an integer from %ld to %ld, not '%s'", name, lo, hi, value);
        return -1;
    }
    *out = (int32_t)v;
    return 0;
}

int cli_int_option_take(const char *cmd, int argc, char **argv, int *i, cli_int_option which,
                        int32_t *out)
{
    const char *v;
    int r = cli_take_value(cmd, argc, argv, i, int_options[which].name, &v);
    if (r <= 0)
        return r;
    return cli_int_value(cmd, int_options[which].name, v, int_options[which].lo,
                         int_options[which].hi, out)
               ? -1
               : 1;
}

int cli_model_option(const char *cmd, int argc, char **argv, int *i, const char **path)
{
    int r = cli_take_value(cmd, argc, argv, i, "-m", path);
    return r ? r : cli_take_value(cmd, argc, argv, i, "--model", path);
}

int cli_compute_option(const char *cmd, int argc, char **argv, int *i, int32_t *compute)
{
    const char *v;
    int r = cli_take_value(cmd, argc, argv, i, "--compute", &v);
    if (r <= 0)
        return r;
    return cli_parse_compute(cmd, v, compute) ? -1 : 1;
}
