/*
 * cmd_version.c — `roformer version` / `roformer --version`.
 */
#include "cli.h"

#include <stdio.h>

int cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("roformer %s\n", RF_VERSION);
    return CLI_OK;
}
