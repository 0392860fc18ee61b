/*
 * responses.c — result structs to response JSON (see responses.h). The
 * per-input objects of fill-mask, ner and qa carry the same fields as the
 * `roformer` job commands print.
 */
#include "serve/responses.h"

#include "jobcli.h"
#include "output.h"

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

/* A list of per-input values made by fn, or the first alone when the
 * request was not a list. */
typedef cJSON *(*item_fn)(const serve_request *r, const void *ctx, int32_t i);

static cJSON *one_or_list(const serve_request *r, const void *ctx, item_fn fn)
{
    if (!r->batch)
        return fn(r, ctx, 0);
    cJSON *arr = cJSON_CreateArray();
    for (int32_t i = 0; arr && i < r->n_items; i++)
        if (!add(arr, fn(r, ctx, i))) {
            cJSON_Delete(arr);
            return NULL;
        }
    return arr;
}

cJSON *serve_json_embed(const serve_request *r, const float *vecs, int32_t D)
{
    cJSON *arr = cJSON_CreateArray();
    for (int32_t i = 0; arr && i < r->n_texts; i++)
        if (!add(arr, cli_json_floats(vecs + (size_t)i * D, D))) {
            cJSON_Delete(arr);
            return NULL;
        }
    return arr;
}

static char *base64(const void *data, size_t n)
{
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *b = data;
    char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)b[i] << 16 | (i + 1 < n ? (unsigned)b[i + 1] << 8 : 0) |
                     (i + 2 < n ? b[i + 2] : 0);
        *o++ = digits[v >> 18 & 63];
        *o++ = digits[v >> 12 & 63];
        *o++ = i + 1 < n ? digits[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? digits[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

cJSON *serve_json_openai(const serve_request *r, const float *vecs, int32_t D,
                         const char *model, int32_t tokens)
{
    cJSON *obj = cJSON_CreateObject(), *data = cJSON_CreateArray(), *usage = cJSON_CreateObject();
    if (!obj || !data || !usage || !cJSON_AddItemToObject(obj, "data", data)) {
        cJSON_Delete(obj);
        cJSON_Delete(data);
        cJSON_Delete(usage);
        return NULL;
    }
    cJSON_AddStringToObject(obj, "object", "list");
    for (int32_t i = 0; i < (r->ids ? r->n_items : r->n_texts); i++) {
        const float *v = vecs + (size_t)i * D;
        cJSON *item = cJSON_CreateObject();
        if (!add(data, item))
            goto fail;
        cJSON_AddStringToObject(item, "object", "embedding");
        cJSON_AddNumberToObject(item, "index", i);
        cJSON *emb;
        if (r->base64) { /* x86-64 floats are little-endian already */
            char *s = base64(v, sizeof(float) * (size_t)D);
            emb = s ? cJSON_CreateString(s) : NULL;
            free(s);
        } else {
            emb = cli_json_floats(v, D);
        }
        if (!emb || !cJSON_AddItemToObject(item, "embedding", emb)) {
            cJSON_Delete(emb);
            goto fail;
        }
    }
    cJSON_AddStringToObject(obj, "model", r->model ? r->model : model);
    cJSON_AddNumberToObject(usage, "prompt_tokens", tokens);
    cJSON_AddNumberToObject(usage, "total_tokens", tokens);
    cJSON_AddItemToObject(obj, "usage", usage);
    return obj;
fail:
    cJSON_Delete(obj);
    cJSON_Delete(usage);
    return NULL;
}

typedef struct {
    const rf_model *m;
    const float *probs;
    int32_t N;
} predict_ctx;

static cJSON *predict_item(const serve_request *r, const void *arg, int32_t i)
{
    (void)r;
    const predict_ctx *c = arg;
    const float *p = c->probs + (size_t)i * c->N;
    int32_t *order = malloc(sizeof *order * (size_t)c->N);
    cJSON *arr = order ? cJSON_CreateArray() : NULL;
    int32_t k = arr ? rf_top_k(p, c->N, c->N, order) : 0;
    for (int32_t j = 0; j < k; j++) {
        char fallback[32];
        const char *label = rf_model_label(c->m, order[j]);
        if (!label) {
            snprintf(fallback, sizeof fallback, "LABEL_%d", order[j]);
            label = fallback;
        }
        cJSON *pred = cJSON_CreateObject();
        if (!add(arr, pred)) {
            cJSON_Delete(arr);
            arr = NULL;
            break;
        }
        cJSON_AddStringToObject(pred, "label", label);
        cli_add_float(pred, "score", p[order[j]]);
    }
    free(order);
    return arr;
}

cJSON *serve_json_predict(const serve_request *r, const rf_model *m, const float *probs,
                          int32_t N)
{
    predict_ctx c = {.m = m, .probs = probs, .N = N};
    return one_or_list(r, &c, predict_item);
}

cJSON *serve_json_similarity(const serve_request *r, const float *vecs, int32_t D)
{
    cJSON *arr = cJSON_CreateArray();
    for (int32_t i = 1; arr && i < r->n_texts; i++)
        if (!add(arr, cli_json_float(rf_cosine(vecs, vecs + (size_t)i * D, D)))) {
            cJSON_Delete(arr);
            return NULL;
        }
    return arr;
}

/* Characters (code points) in the first `bytes` bytes of valid UTF-8. */
static int32_t char_count(const char *s, int32_t bytes)
{
    int32_t n = 0;
    for (int32_t i = 0; i < bytes; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

static cJSON *token_list(const serve_request *r, const rf_model *m, const rf_text *t,
                         const rf_encoding *e)
{
    cJSON *arr = cJSON_CreateArray();
    for (int32_t k = 0; arr && k < e->n; k++) {
        bool special = e->start[k] < 0;
        if (special && !r->add_special_tokens)
            continue;
        cJSON *tok = cJSON_CreateObject();
        if (!add(arr, tok)) {
            cJSON_Delete(arr);
            return NULL;
        }
        cJSON_AddNumberToObject(tok, "id", e->ids[k]);
        if (special) {
            const char *s = rf_model_token(m, e->ids[k]);
            cJSON_AddStringToObject(tok, "text", s ? s : "");
            cJSON_AddBoolToObject(tok, "special", true);
            cJSON_AddNullToObject(tok, "start");
            cJSON_AddNullToObject(tok, "stop");
        } else {
            char *s = strndup(t->text + e->start[k], (size_t)(e->end[k] - e->start[k]));
            cJSON_AddStringToObject(tok, "text", s ? s : "");
            free(s);
            cJSON_AddBoolToObject(tok, "special", false);
            cJSON_AddNumberToObject(tok, "start", char_count(t->text, e->start[k]));
            cJSON_AddNumberToObject(tok, "stop", char_count(t->text, e->end[k]));
        }
    }
    return arr;
}

cJSON *serve_json_tokens(const serve_request *r, const rf_model *m, const rf_encoding *encs)
{
    cJSON *arr = cJSON_CreateArray();
    for (int32_t i = 0; arr && i < r->n_texts; i++)
        if (!add(arr, token_list(r, m, &r->texts[i], &encs[i]))) {
            cJSON_Delete(arr);
            return NULL;
        }
    return arr;
}

typedef struct {
    const rf_model *m;
    const void *res;
    const float *vecs;
    int32_t D;
} result_ctx;

static cJSON *fill_mask_item(const serve_request *r, const void *arg, int32_t i)
{
    (void)r;
    const result_ctx *c = arg;
    const rf_fill_mask_result *f = (const rf_fill_mask_result *)c->res + i;
    cJSON *obj = cJSON_CreateObject(), *masks = cJSON_CreateArray();
    if (!obj || !masks || !cJSON_AddItemToObject(obj, "masks", masks)) {
        cJSON_Delete(obj);
        cJSON_Delete(masks);
        return NULL;
    }
    cJSON_AddStringToObject(obj, "sequence", f->sequence ? f->sequence : "");
    for (int32_t k = 0; k < f->n_masks; k++) {
        cJSON *cands = cJSON_CreateArray();
        if (!add(masks, cands))
            goto fail;
        for (int32_t j = 0; j < f->top_k; j++) {
            int32_t id = f->ids[(size_t)k * f->top_k + j];
            cJSON *cand = cJSON_CreateObject();
            if (!add(cands, cand))
                goto fail;
            const char *tok = rf_model_token(c->m, id);
            cJSON_AddStringToObject(cand, "token", tok ? tok : "");
            cJSON_AddNumberToObject(cand, "id", id);
            cli_add_float(cand, "score", f->scores[(size_t)k * f->top_k + j]);
        }
    }
    return obj;
fail:
    cJSON_Delete(obj);
    return NULL;
}

cJSON *serve_json_fill_mask(const serve_request *r, const rf_model *m,
                            const rf_fill_mask_result *res)
{
    result_ctx c = {.m = m, .res = res};
    return one_or_list(r, &c, fill_mask_item);
}

static cJSON *ner_item(const serve_request *r, const void *arg, int32_t i)
{
    const result_ctx *c = arg;
    const rf_ner_result *n = (const rf_ner_result *)c->res + i;
    const rf_text *t = &r->texts[i];
    cJSON *obj = cJSON_CreateObject(), *tokens = cJSON_CreateArray(),
          *entities = cJSON_CreateArray();
    bool ok = obj && tokens && entities && cJSON_AddItemToObject(obj, "tokens", tokens);
    if (!ok)
        cJSON_Delete(tokens);
    ok = ok && cJSON_AddItemToObject(obj, "entities", entities);
    if (!ok) {
        cJSON_Delete(entities);
        cJSON_Delete(obj);
        return NULL;
    }
    for (int32_t k = 0; k < n->n_tokens; k++) {
        const rf_token_tag *tag = &n->tokens[k];
        const char *label = rf_model_label(c->m, tag->label), *tok = rf_model_token(c->m, tag->id);
        cJSON *o = cJSON_CreateObject();
        if (!add(tokens, o))
            goto fail;
        cJSON_AddStringToObject(o, "token", tok ? tok : "");
        cJSON_AddStringToObject(o, "label", label ? label : "");
        cli_add_float(o, "score", tag->score);
        cJSON_AddNumberToObject(o, "start", tag->start);
        cJSON_AddNumberToObject(o, "end", tag->end);
    }
    for (int32_t k = 0; k < n->n_entities; k++) {
        const rf_entity *e = &n->entities[k];
        size_t b0, b1;
        cli_char_span_to_bytes(t->text, t->text_len, e->start, e->end, &b0, &b1);
        char *type = strndup(e->type, (size_t)e->type_len), *span = strndup(t->text + b0, b1 - b0);
        cJSON *o = cJSON_CreateObject();
        bool added = add(entities, o);
        if (added) {
            cJSON_AddStringToObject(o, "entity", type ? type : "");
            cJSON_AddStringToObject(o, "text", span ? span : "");
            cli_add_float(o, "score", e->score);
            cJSON_AddNumberToObject(o, "start", e->start);
            cJSON_AddNumberToObject(o, "end", e->end);
        }
        free(type);
        free(span);
        if (!added)
            goto fail;
    }
    return obj;
fail:
    cJSON_Delete(obj);
    return NULL;
}

cJSON *serve_json_ner(const serve_request *r, const rf_model *m, const rf_ner_result *res)
{
    result_ctx c = {.m = m, .res = res};
    return one_or_list(r, &c, ner_item);
}

static cJSON *qa_item(const serve_request *r, const void *arg, int32_t i)
{
    const result_ctx *c = arg;
    const rf_qa_result *q = (const rf_qa_result *)c->res + i;
    const rf_text *t = &r->texts[i];
    cJSON *obj = cJSON_CreateObject();
    if (!obj)
        return NULL;
    char *answer = strndup(t->pair + q->byte_start, (size_t)(q->byte_end - q->byte_start));
    cJSON_AddStringToObject(obj, "answer", answer ? answer : "");
    free(answer);
    cli_add_float(obj, "score", q->score);
    cJSON_AddNumberToObject(obj, "start", q->start);
    cJSON_AddNumberToObject(obj, "end", q->end);
    return obj;
}

cJSON *serve_json_qa(const serve_request *r, const rf_qa_result *res)
{
    result_ctx c = {.res = res};
    return one_or_list(r, &c, qa_item);
}

static cJSON *scm_item(const serve_request *r, const void *arg, int32_t i)
{
    (void)r;
    const rf_scm_result *res = (const rf_scm_result *)((const result_ctx *)arg)->res + i;
    cJSON *obj = cJSON_CreateObject();
    if (!obj)
        return NULL;
    cJSON_AddStringToObject(obj, "prediction", res->prediction == 'B' ? "B" : "C");
    cli_add_float(obj, "sim_ab", res->sim_ab);
    cli_add_float(obj, "sim_ac", res->sim_ac);
    return obj;
}

cJSON *serve_json_scm(const serve_request *r, const rf_scm_result *res)
{
    result_ctx c = {.res = res};
    return one_or_list(r, &c, scm_item);
}

/* ==== Rerank ==== */

static cJSON *rerank_hit(const serve_request *r, const rf_rerank_hit *h)
{
    bool jina = r->api == SERVE_API_RERANK_JINA;
    const rf_text *t = &r->texts[h->index];
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "index", h->index);
    cli_add_float(o, jina ? "relevance_score" : "score", h->score);
    if (r->return_text && !jina) {
        cJSON_AddStringToObject(o, "text", t->pair);
    } else if (r->return_text) {
        cJSON *doc = cJSON_AddObjectToObject(o, "document");
        if (doc)
            cJSON_AddStringToObject(doc, "text", t->pair);
    }
    return o;
}

/* Jina's envelope around the hits. */
static cJSON *jina_envelope(const serve_request *r, cJSON *results, rf_rerank_scoring scoring,
                            const char *model, int32_t tokens)
{
    cJSON *obj = cJSON_CreateObject(), *usage = cJSON_CreateObject();
    if (!obj || !usage || !cJSON_AddItemToObject(obj, "results", results)) {
        cJSON_Delete(obj);
        cJSON_Delete(usage);
        cJSON_Delete(results);
        return NULL;
    }
    if (!cJSON_AddItemToObject(obj, "usage", usage)) {
        cJSON_Delete(usage);
        cJSON_Delete(obj);
        return NULL;
    }
    cJSON_AddStringToObject(obj, "model", r->model ? r->model : model);
    cJSON_AddStringToObject(obj, "object", "list");
    cJSON_AddNumberToObject(usage, "prompt_tokens", tokens);
    cJSON_AddNumberToObject(usage, "total_tokens", tokens);
    cJSON_AddStringToObject(obj, "scoring", rf_rerank_scoring_name(scoring));
    return obj;
}

cJSON *serve_json_rerank(const serve_request *r, const float *scores, rf_rerank_scoring scoring,
                         const char *model, int32_t tokens)
{
    bool jina = r->api == SERVE_API_RERANK_JINA;
    rf_rerank_hit *hits = malloc(sizeof *hits * (size_t)r->n_texts);
    cJSON *list = hits ? cJSON_CreateArray() : NULL;
    int32_t n = -1;
    if (list && rf_rerank_sort(scores, r->n_texts, jina ? r->top_n : 0, hits, &n, NULL) != RF_OK)
        n = -1;
    for (int32_t i = 0; i < n; i++)
        if (!add(list, rerank_hit(r, &hits[i]))) {
            n = -1;
            break;
        }
    free(hits);
    if (n < 0) {
        cJSON_Delete(list);
        return NULL;
    }
    return jina ? jina_envelope(r, list, scoring, model, tokens) : list;
}
