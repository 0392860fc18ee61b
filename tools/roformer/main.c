/*
 * main.c — the `roformer` command: dispatches to one subcommand per file
 * (cmd_<name>.c).
 */
#include "blas_core.h"
#include "cli.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    cli_command_fn run;
    const char *summary;
} commands[] = {
#define RF_COMMAND(name, summary) {#name, cmd_##name, summary},
#include "commands.def"
#undef RF_COMMAND
};

/* A command is typed with '-' where its C name has '_' (fill-mask). */
static int command_is(const char *name, const char *arg)
{
    for (; *name && *arg; name++, arg++)
        if (*name != *arg && !(*name == '_' && *arg == '-'))
            return 0;
    return *name == *arg;
}

static void print_usage(FILE *f)
{
    fprintf(f, "usage: roformer <command> [options]   (roformer <command> --help)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s", commands[i].name);
        for (char *p = name; *p; p++)
            if (*p == '_')
                *p = '-';
        fprintf(f, "  %-12s %s\n", name, commands[i].summary);
    }
    fprintf(f, "\nexit status: 0 ok, 1 some inputs failed or runtime error, 2 usage error\n");
    fprintf(f, "environment: ROFORMER_BLAS_CORE=auto|none|NAME chooses OpenBLAS's kernels\n"
               "  (auto: SkylakeX on AVX-512 CPUs that OpenBLAS does not recognise);\n"
               "  a user-set OPENBLAS_CORETYPE is left alone;\n"
               "  ROFORMER_CACHE, HF_ENDPOINT, HF_TOKEN: where -m hf:OWNER/NAME and pull keep\n"
               "  checkpoints, the hub, its token (roformer pull --help)\n");
}

int main(int argc, char **argv)
{
    cli_select_blas_core(argv);
    if (argc < 2) {
        print_usage(stderr);
        return CLI_USAGE;
    }
    if (!strcmp(argv[1], "--version"))
        return cmd_version(argc - 1, argv + 1);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        print_usage(stdout);
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (command_is(commands[i].name, argv[1]))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "roformer: unknown command '%s'\n", argv[1]);
    print_usage(stderr);
    return CLI_USAGE;
}
