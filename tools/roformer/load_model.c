/*
 * load_model.c — a subcommand's model, with the download bar for an hf:
 * name (see load_model.h).
 */
#include "load_model.h"

#include "cli.h"
#include "download_bar.h"
#include "progress.h"

#include <string.h>

rf_model *cli_load_model(const char *path)
{
    rf_error err;
    rf_model *model;
    char pulled[4096];
    /* the library reads hf: names itself; pulling here first adds the bar */
    if (!strncmp(path, "hf:", 3)) {
        if (cli_hub_pull(path, NULL, CLI_PROGRESS_AUTO, pulled, sizeof pulled) != CLI_OK)
            return NULL;
        path = pulled;
    }
    if (rf_model_load(path, &model, &err) != RF_OK) {
        cli_error("%s", err.message);
        return NULL;
    }
    return model;
}
