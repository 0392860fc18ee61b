/*
 * pooling_option.c — parsing --pooling and choosing the default.
 */
#include "pooling_option.h"

#include "cli.h"

#include <string.h>

int cli_parse_pooling(const char *cmd, const char *value, int *out)
{
    if (!strcmp(value, "cls"))
        *out = RF_POOLING_CLS;
    else if (!strcmp(value, "mean"))
        *out = RF_POOLING_MEAN;
    else if (!strcmp(value, "pooler"))
        *out = RF_POOLING_POOLER;
    else if (!strcmp(value, "max"))
        *out = RF_POOLING_MAX;
    else if (!strcmp(value, "last"))
        *out = RF_POOLING_LAST;
    else
        return cli_usage_error(cmd, "--pooling is cls, mean, max, last or pooler, not '%s'", value),
               -1;
    return 0;
}

rf_pooling cli_pooling_for(const rf_model *model, int asked)
{
    const rf_sentence_config *sc = rf_model_sentence_config(model);
    if (asked != CLI_POOLING_DEFAULT)
        return (rf_pooling)asked;
    if (sc->present)
        return (rf_pooling)sc->pooling;
    return rf_model_hparams(model)->has_pooler ? RF_POOLING_POOLER : RF_POOLING_CLS;
}
