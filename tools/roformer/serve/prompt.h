/*
 * prompt.h — sentence-transformers prompts on the embedding routes: the
 * model's prompt text put before each input, as sentence-transformers'
 * encode(prompt_name=...) does.
 */
#ifndef RF_SERVE_PROMPT_H
#define RF_SERVE_PROMPT_H

#include "serve/request.h"

/* Puts the model's prompt `name` (NULL: its default prompt; nothing when
 * it has none) before the first text of each input of r. 0, or -1 with
 * *err: 422 for a name the model does not have, 500 out of memory. */
int serve_apply_prompt(const rf_model *model, const char *name, serve_request *r,
                       serve_error *err);

#endif
