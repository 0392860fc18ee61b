/*
 * default_model.c — the default model of `roformer classify`: the model
 * file the project ships (models/sentiment-zh-small.gguf, a small Chinese
 * sentiment classifier; models/README.md), found without -m.
 *
 * Looked up relative to the running executable (/proc/self/exe), so that one
 * rule serves both places a binary lives: `make install` puts the binary in
 * $(PREFIX)/bin and the model in $(PREFIX)/share/roformer, and the build
 * tree's binary sits in build/ beside models/. A build-tree binary therefore
 * never picks up an older installed model, and an installed one never
 * depends on the source tree. $ROFORMER_MODEL overrides both.
 *
 * Only classify has a default: a sentiment classifier is no sentence
 * encoder, so embed, similarity and the rest still require -m.
 */
#include "default_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Places under the executable's directory, in the order they are tried. */
static const char *const candidates[] = {
    "../share/roformer/" CLI_DEFAULT_MODEL_FILE,
    "../models/" CLI_DEFAULT_MODEL_FILE,
};

int cli_default_model(char *buf, size_t size)
{
    const char *env = getenv("ROFORMER_MODEL");
    if (env && *env) {
        snprintf(buf, size, "%s", env);
        return 0;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(buf, size, "no model: the executable's own path is unknown");
        return -1;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        int len = snprintf(buf, size, "%s/%s", exe, candidates[i]);
        if (len > 0 && (size_t)len < size && access(buf, R_OK) == 0)
            return 0;
    }
    snprintf(buf, size, "no default model: neither %s/%s nor %s/%s exists", exe, candidates[0], exe,
             candidates[1]);
    return -1;
}
