/*
 * prompt.c — the model's prompt before each text of an embedding request
 * (see prompt.h). The request owns its texts, so each is replaced by a new
 * copy with the prompt in front.
 */
#include "serve/prompt.h"

#include <stdlib.h>
#include <string.h>

int serve_apply_prompt(const rf_model *model, const char *name, serve_request *r,
                       serve_error *err)
{
    const char *prompt = rf_model_prompt(model, name);
    if (!prompt && name)
        return serve_fail(err, 422, "Validation", "prompt_name '%s' is not one of the model's "
                          "prompts", name);
    size_t np = prompt ? strlen(prompt) : 0;
    for (int32_t i = 0; np && i < r->n_texts; i++) {
        rf_text *t = &r->texts[i];
        char *s = malloc(np + t->text_len + 1);
        if (!s)
            return serve_fail(err, 500, "Backend", "out of memory");
        memcpy(s, prompt, np);
        memcpy(s + np, t->text, t->text_len);
        s[np + t->text_len] = '\0';
        free((char *)t->text);
        t->text = s;
        t->text_len += np;
    }
    return 0;
}
