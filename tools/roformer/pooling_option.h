/*
 * pooling_option.h — the --pooling option of embed, similarity and scm.
 */
#ifndef RF_CLI_POOLING_OPTION_H
#define RF_CLI_POOLING_OPTION_H

#include "roformer.h"

#define CLI_POOLING_HELP                                                                      \
    "  --pooling P  cls | mean (over real tokens) | pooler (RoFormer-Sim);\n"                 \
    "               default: pooler when the model has one, else cls\n"

enum { CLI_POOLING_DEFAULT = -1 };

/* Parses cls|mean|pooler into *out; -1 (usage error printed) otherwise. */
int cli_parse_pooling(const char *cmd, const char *value, int *out);
/* The pooling to use: the one asked for, or the model's default. */
rf_pooling cli_pooling_for(const rf_model *model, int asked);

#endif
