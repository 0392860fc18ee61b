/*
 * commands.h — one declaration per subcommand listed in commands.def.
 */
#ifndef RF_COMMANDS_H
#define RF_COMMANDS_H

#define RF_COMMAND(name, summary) int cmd_##name(int argc, char **argv);
#include "commands.def"
#undef RF_COMMAND

#endif
