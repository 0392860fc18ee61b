/*
 * convert_options.c — --dtype, --tokenizer and --pooler-activation for the
 * commands that convert a checkpoint (see convert_options.h).
 */
#include "convert_options.h"

#include "cli.h"

#include <string.h>

typedef struct {
    const char *name;
    int value;
} named_value;

static const named_value dtypes[] = {
    {"f32", RF_DTYPE_F32}, {"f16", RF_DTYPE_F16}, {"bf16", RF_DTYPE_BF16}, {"q8", RF_DTYPE_Q8}, {0}};
static const named_value tokenizers[] = {
    {"auto", RF_TOKENIZER_AUTO}, {"wobert", RF_TOKENIZER_WOBERT}, {"bert", RF_TOKENIZER_BERT}, {0}};
static const named_value pooler_activations[] = {
    {"tanh", RF_POOLER_ACT_TANH}, {"linear", RF_POOLER_ACT_LINEAR}, {0}};

/* The value of option `opt` among `values` into *out, or a usage error
 * listing them ("f32, f16, bf16 or q8"). */
static int parse_value(const char *command, const char *opt, const char *v,
                       const named_value *values, int *out)
{
    char list[128] = "";
    for (const named_value *n = values; n->name; n++) {
        if (v && !strcmp(v, n->name)) {
            *out = n->value;
            return 1;
        }
        if (n != values)
            strcat(list, n[1].name ? ", " : " or ");
        strcat(list, n->name);
    }
    if (!v)
        return cli_usage_error(command, "%s needs %s", opt, list);
    return cli_usage_error(command, "%s must be %s, not '%s'", opt, list, v);
}

int cli_convert_option(const char *command, int argc, char **argv, int *i,
                       rf_convert_params *params)
{
    const char *opt = argv[*i];
    const named_value *values;
    int value = 0, rc;
    if (!strcmp(opt, "--dtype"))
        values = dtypes;
    else if (!strcmp(opt, "--tokenizer"))
        values = tokenizers;
    else if (!strcmp(opt, "--pooler-activation"))
        values = pooler_activations;
    else
        return 0;
    const char *v = *i + 1 < argc ? argv[++*i] : NULL;
    if ((rc = parse_value(command, opt, v, values, &value)) != 1)
        return rc;
    if (values == dtypes)
        params->dtype = (rf_dtype)value;
    else if (values == tokenizers)
        params->tokenizer = (rf_tokenizer_choice)value;
    else
        params->pooler_activation = (rf_pooler_choice)value;
    return 1;
}
