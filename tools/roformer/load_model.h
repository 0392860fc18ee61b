/*
 * load_model.h — how every subcommand loads its model: the library's
 * rf_model_load, with the download bar (download_bar.h) while an
 * hf:OWNER/NAME is pulled first.
 */
#ifndef RF_CLI_LOAD_MODEL_H
#define RF_CLI_LOAD_MODEL_H

#include "roformer.h"

/* Loads a model (.gguf file, HF directory or hf:OWNER/NAME[@REVISION],
 * pulled with a progress bar on a terminal); on failure prints the error
 * and returns NULL. */
rf_model *cli_load_model(const char *path);

#endif
