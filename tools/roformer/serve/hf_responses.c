/*
 * hf_responses.c — HuggingFace-shaped response JSON (see hf_responses.h).
 */
#include "serve/hf_responses.h"

#include "output.h"
#include "serve/decode.h"
#include "serve/responses.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Adds item to arr; on failure deletes it and returns false. */
static bool add(cJSON *arr, cJSON *item)
{
    if (arr && item && cJSON_AddItemToArray(arr, item))
        return true;
    cJSON_Delete(item);
    return false;
}

typedef cJSON *(*item_fn)(const serve_request *r, const rf_model *m, const void *ctx, int32_t i);

/* [fn(0), ...] for a list of inputs, fn(0) alone for one. */
static cJSON *per_input(const serve_request *r, const rf_model *m, const void *ctx, item_fn fn)
{
    if (!r->batch)
        return fn(r, m, ctx, 0);
    cJSON *arr = cJSON_CreateArray();
    for (int32_t i = 0; arr && i < r->n_items; i++)
        if (!add(arr, fn(r, m, ctx, i))) {
            cJSON_Delete(arr);
            return NULL;
        }
    return arr;
}

cJSON *serve_json_hf_classify(const serve_request *r, const rf_model *m, const float *probs,
                              int32_t N)
{
    cJSON *labels = serve_json_predict(r, m, probs, N);
    if (r->batch || !labels)
        return labels;
    cJSON *outer = cJSON_CreateArray();
    return add(outer, labels) ? outer : (cJSON_Delete(outer), NULL);
}

/* The candidates of mask k of one input. */
static cJSON *mask_candidates(const rf_model *m, const rf_encoding *e,
                              const rf_fill_mask_result *f, int32_t k, int32_t *ids)
{
    cJSON *arr = cJSON_CreateArray();
    bool single = f->n_masks == 1;
    memcpy(ids, e->ids, sizeof *ids * (size_t)e->n);
    for (int32_t j = 0; arr && j < f->top_k; j++) {
        int32_t id = f->ids[(size_t)k * f->top_k + j];
        ids[f->positions[k]] = id;
        char *sequence = serve_decode(m, ids, e->n, single);
        char *token_str = serve_decode(m, &id, 1, false);
        cJSON *c = cJSON_CreateObject();
        bool ok = sequence && token_str && add(arr, c);
        if (ok) {
            cli_add_float(c, "score", f->scores[(size_t)k * f->top_k + j]);
            cJSON_AddNumberToObject(c, "token", id);
            cJSON_AddStringToObject(c, "token_str", token_str);
            cJSON_AddStringToObject(c, "sequence", sequence);
        }
        free(sequence);
        free(token_str);
        if (!ok) {
            if (!sequence || !token_str)
                cJSON_Delete(c);
            cJSON_Delete(arr);
            return NULL;
        }
    }
    return arr;
}

typedef struct {
    const rf_encoding *encs;
    const rf_fill_mask_result *fill;
} fill_ctx;

static cJSON *fill_mask_item(const serve_request *r, const rf_model *m, const void *arg, int32_t i)
{
    (void)r;
    const fill_ctx *c = arg;
    const rf_encoding *e = &c->encs[i];
    const rf_fill_mask_result *f = &c->fill[i];
    int32_t *ids = malloc(sizeof *ids * (size_t)(e->n > 0 ? e->n : 1));
    cJSON *out = NULL;
    if (!ids)
        return NULL;
    if (f->n_masks == 1) {
        out = mask_candidates(m, e, f, 0, ids);
    } else {
        out = cJSON_CreateArray();
        for (int32_t k = 0; out && k < f->n_masks; k++)
            if (!add(out, mask_candidates(m, e, f, k, ids))) {
                cJSON_Delete(out);
                out = NULL;
            }
    }
    free(ids);
    return out;
}

cJSON *serve_json_hf_fill_mask(const serve_request *r, const rf_model *m, const rf_encoding *encs,
                               const rf_fill_mask_result *res)
{
    fill_ctx c = {.encs = encs, .fill = res};
    return per_input(r, m, &c, fill_mask_item);
}

static cJSON *ner_item(const serve_request *r, const rf_model *m, const void *arg, int32_t i)
{
    (void)r;
    const rf_ner_result *n = (const rf_ner_result *)arg + i;
    cJSON *arr = cJSON_CreateArray();
    int32_t *ids = malloc(sizeof *ids * (size_t)(n->n_tokens > 0 ? n->n_tokens : 1));
    for (int32_t k = 0; arr && ids && k < n->n_entities; k++) {
        const rf_entity *e = &n->entities[k];
        int32_t count = 0;
        for (int32_t t = e->first; t <= e->last; t++)
            ids[count++] = n->tokens[t].id;
        char *type = strndup(e->type, (size_t)e->type_len);
        char *word = serve_decode(m, ids, count, false);
        cJSON *o = cJSON_CreateObject();
        bool ok = type && word && add(arr, o);
        if (ok) {
            cJSON_AddStringToObject(o, "entity_group", type);
            cli_add_float(o, "score", e->score);
            cJSON_AddStringToObject(o, "word", word);
            cJSON_AddNumberToObject(o, "start", e->start);
            cJSON_AddNumberToObject(o, "end", e->end);
        } else if (!type || !word) {
            cJSON_Delete(o);
        }
        free(type);
        free(word);
        if (!ok) {
            cJSON_Delete(arr);
            arr = NULL;
        }
    }
    if (!ids) {
        cJSON_Delete(arr);
        arr = NULL;
    }
    free(ids);
    return arr;
}

cJSON *serve_json_hf_ner(const serve_request *r, const rf_model *m, const rf_ner_result *res)
{
    return per_input(r, m, res, ner_item);
}

cJSON *serve_json_embed_all(const serve_request *r, const float *vecs, const int32_t *lengths,
                            int32_t D)
{
    cJSON *arr = cJSON_CreateArray();
    size_t row = 0;
    for (int32_t i = 0; arr && i < r->n_texts; i++) {
        cJSON *tokens = cJSON_CreateArray();
        if (!add(arr, tokens)) {
            cJSON_Delete(arr);
            return NULL;
        }
        for (int32_t t = 0; t < lengths[i]; t++, row++)
            if (!add(tokens, cli_json_floats(vecs + row * D, D))) {
                cJSON_Delete(arr);
                return NULL;
            }
    }
    return arr;
}

cJSON *serve_json_decode(const serve_request *r, const rf_model *m)
{
    cJSON *arr = cJSON_CreateArray();
    for (int32_t i = 0; arr && i < r->n_items; i++) {
        char *text = serve_decode(m, r->ids[i], r->n_ids[i], r->skip_special_tokens);
        bool ok = text && add(arr, cJSON_CreateString(text));
        free(text);
        if (!ok) {
            cJSON_Delete(arr);
            return NULL;
        }
    }
    return arr;
}
