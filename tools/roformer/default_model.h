/*
 * default_model.h — where `roformer classify` finds its model when no -m is
 * given (the other job commands have no default: see default_model.c).
 */
#ifndef RF_CLI_DEFAULT_MODEL_H
#define RF_CLI_DEFAULT_MODEL_H

#include <stddef.h>

/* File name of the default model (a sentiment classifier), in the source
 * tree's models/ and in $(PREFIX)/share/roformer/. */
#define CLI_DEFAULT_MODEL_FILE "sentiment-zh-small.gguf"

/* Writes the default model's path into buf (size bytes): $ROFORMER_MODEL
 * when set and not empty, else the first existing one of
 *   <exe dir>/../share/roformer/sentiment-zh-small.gguf  (after make install)
 *   <exe dir>/../models/sentiment-zh-small.gguf          (the build tree)
 * where <exe dir> is the directory of the running executable.
 * Returns 0, or -1 when there is none (buf then names the places looked at,
 * for the error message). */
int cli_default_model(char *buf, size_t size);

#endif
