/*
 * pooling_option.c — parsing --pooling and applying the library's default
 * (rf_model_default_pooling) and check (rf_model_check_pooling).
 */
#include "pooling_option.h"

#include "cli.h"

#include <string.h>

int cli_parse_pooling(const char *cmd, const char *value, int *out)
{
    static const rf_pooling all[] = {RF_POOLING_CLS, RF_POOLING_MEAN, RF_POOLING_POOLER,
                                     RF_POOLING_MAX, RF_POOLING_LAST};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        if (!strcmp(value, rf_pooling_name(all[k]))) {
            *out = (int)all[k];
            return 0;
        }
    return cli_usage_error(cmd, "--pooling is cls, mean, max, last or pooler, not '%s'", value),
           -1;
}

int cli_pooling_for(const char *cmd, const rf_model *model, int asked, rf_pooling *out)
{
    rf_pooling pooling =
        asked == CLI_POOLING_DEFAULT ? rf_model_default_pooling(model) : (rf_pooling)asked;
    rf_error err;
    if (rf_model_check_pooling(model, pooling, &err) != RF_OK)
        return cli_usage_error(cmd, "--pooling %s: %s", rf_pooling_name(pooling), err.message),
               -1;
    *out = pooling;
    return 0;
}
