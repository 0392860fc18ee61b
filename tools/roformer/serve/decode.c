/*
 * decode.c — ids to text with the WordPiece decoder's rules (see decode.h).
 * Each token is made into its piece (" tok", or "tok" without its "##"
 * after the first), the piece cleaned up, and the pieces appended.
 */
#include "serve/decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_special(const rf_hparams *hp, int32_t id)
{
    return id == hp->pad_id || id == hp->unk_id || id == hp->cls_id || id == hp->sep_id ||
           id == hp->mask_id;
}

/* The tokenizers library's cleanup of one piece, in its order. */
static void cleanup(char *s)
{
    static const char *const from[] = {" .", " ?", " !", " ,", " ' ", " n't", " 'm", " do not",
                                       " 's", " 've", " 're"};
    static const char *const to[] = {".", "?", "!", ",", "'", "n't", "'m", " don't", "'s", "'ve",
                                     "'re"};
    for (size_t k = 0; k < sizeof from / sizeof from[0]; k++) {
        size_t fl = strlen(from[k]), tl = strlen(to[k]); /* tl <= fl: in place */
        char *r = s, *w = s;
        while (*r) {
            if (!strncmp(r, from[k], fl)) {
                memcpy(w, to[k], tl);
                w += tl;
                r += fl;
            } else {
                *w++ = *r++;
            }
        }
        *w = '\0';
    }
}

char *serve_decode(const rf_model *m, const int32_t *ids, int32_t n, bool skip_special)
{
    const rf_hparams *hp = rf_model_hparams(m);
    size_t cap = 1;
    for (int32_t i = 0; i < n; i++) {
        const char *tok = rf_model_token(m, ids[i]);
        cap += (tok ? strlen(tok) : 0) + 1;
    }
    char *out = malloc(cap), *piece = malloc(cap);
    if (!out || !piece) {
        free(out);
        free(piece);
        return NULL;
    }
    size_t len = 0;
    int32_t kept = 0;
    for (int32_t i = 0; i < n; i++) {
        if (skip_special && is_special(hp, ids[i]))
            continue;
        const char *tok = rf_model_token(m, ids[i]);
        tok = tok ? tok : "";
        if (kept++ == 0)
            snprintf(piece, cap, "%s", tok);
        else if (!strncmp(tok, "##", 2))
            snprintf(piece, cap, "%s", tok + 2);
        else
            snprintf(piece, cap, " %s", tok);
        cleanup(piece);
        size_t pl = strlen(piece);
        memcpy(out + len, piece, pl);
        len += pl;
    }
    out[len] = '\0';
    free(piece);
    return out;
}
