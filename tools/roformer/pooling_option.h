/*
 * pooling_option.h — the --pooling option of embed, similarity and scm.
 */
#ifndef RF_CLI_POOLING_OPTION_H
#define RF_CLI_POOLING_OPTION_H

#include "roformer.h"

#define CLI_POOLING_HELP                                                                      \
    "  --pooling P  cls | mean | max | last (over real tokens) | pooler (RoFormer-Sim);\n"    \
    "               default: the model's sentence-transformers pooling when it has one,\n"   \
    "               else pooler when the model has one, else cls\n"

enum { CLI_POOLING_DEFAULT = -1 };

/* Parses cls|mean|max|last|pooler into *out; -1 (usage error printed) otherwise. */
int cli_parse_pooling(const char *cmd, const char *value, int *out);
/* The pooling to use: the one asked for, or the library's default for the
 * model (rf_model_default_pooling), checked against the model. 0, or -1
 * with the usage error printed. */
int cli_pooling_for(const char *cmd, const rf_model *model, int asked, rf_pooling *out);

#endif
