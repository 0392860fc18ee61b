/*
 * request.c — request bodies to job inputs (see request.h). Every string
 * is checked for valid UTF-8 and copied out of the cJSON tree, which is
 * freed before returning; unknown fields are ignored, as TEI ignores them.
 * Nothing here touches the model.
 */
#include "serve/request.h"

#include <cJSON.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int serve_fail(serve_error *err, int status, const char *type, const char *fmt, ...)
{
    err->status = status;
    err->type = type;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return -1;
}

static int invalid(serve_error *err, const char *fmt, const char *field)
{
    return serve_fail(err, 422, "Validation", fmt, field);
}

void serve_request_free(serve_request *r)
{
    if (!r)
        return;
    for (int32_t i = 0; i < r->n_texts; i++) {
        free((char *)r->texts[i].text);
        free((char *)r->texts[i].pair);
    }
    free(r->texts);
    for (int32_t i = 0; r->ids && i < r->n_items; i++)
        free(r->ids[i]);
    free(r->ids);
    free(r->n_ids);
    free(r->model);
    free(r->prompt_name);
    *r = (serve_request){0};
}

/* ==== Fields ==== */

/* A copy of string item `v` (named `field` in messages), checked for UTF-8. */
static int take_string(const cJSON *v, const char *field, const char **out, size_t *len,
                       serve_error *err)
{
    if (!cJSON_IsString(v) || !v->valuestring)
        return invalid(err, "%s: expected a string", field);
    size_t n = strlen(v->valuestring), bad;
    if (!rf_utf8_validate(v->valuestring, n, &bad))
        return serve_fail(err, 422, "Validation", "%s: invalid UTF-8 at byte %zu", field, bad);
    char *copy = malloc(n + 1);
    if (!copy)
        return serve_fail(err, 500, "Backend", "out of memory");
    memcpy(copy, v->valuestring, n + 1);
    *out = copy;
    *len = n;
    return 0;
}

/* An optional boolean field; absent or null keeps *out. */
static int take_bool(const cJSON *obj, const char *name, bool *out, serve_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsBool(v))
        return invalid(err, "%s: expected true or false", name);
    *out = cJSON_IsTrue(v);
    return 0;
}

/* Room for n items of n_texts_each texts, after the item-count limit;
 * `name` is the list's field. */
static int reserve_named(serve_request *r, const char *name, int n, int texts_per_item,
                         int extra, int32_t max_client_batch, serve_error *err)
{
    if (n == 0)
        return serve_fail(err, 422, "Empty", "%s: the list is empty", name);
    if (n > max_client_batch)
        return serve_fail(err, 413, "Validation",
                          "%s: %d inputs, over --max-client-batch-size %d", name, n,
                          max_client_batch);
    r->n_items = n;
    r->texts = calloc((size_t)n * texts_per_item + extra, sizeof *r->texts);
    if (!r->texts)
        return serve_fail(err, 500, "Backend", "out of memory");
    return 0;
}

static int reserve_items(serve_request *r, int n, int texts_per_item, int extra,
                         int32_t max_client_batch, serve_error *err)
{
    return reserve_named(r, "inputs", n, texts_per_item, extra, max_client_batch, err);
}

/* ==== Input shapes ==== */

/* str | [str, ...]: one text per item. */
static int parse_texts(serve_request *r, const cJSON *inputs, const char *name,
                       int32_t max_client_batch, serve_error *err)
{
    char field[64];
    if (cJSON_IsString(inputs)) {
        if (reserve_items(r, 1, 1, 0, max_client_batch, err))
            return -1;
        r->n_texts = 1;
        return take_string(inputs, name, &r->texts[0].text, &r->texts[0].text_len, err);
    }
    if (!cJSON_IsArray(inputs))
        return invalid(err, "%s: expected a string or a list of strings", name);
    r->batch = true;
    if (reserve_items(r, cJSON_GetArraySize(inputs), 1, 0, max_client_batch, err))
        return -1;
    const cJSON *v;
    cJSON_ArrayForEach(v, inputs) {
        snprintf(field, sizeof field, "%s[%d]", name, r->n_texts);
        rf_text *t = &r->texts[r->n_texts++];
        if (take_string(v, field, &t->text, &t->text_len, err))
            return -1;
    }
    return 0;
}

/* [str] or [str, str] into t. */
static int take_sequence(const cJSON *v, const char *field, rf_text *t, serve_error *err)
{
    int n = cJSON_GetArraySize(v);
    if (!cJSON_IsArray(v) || n < 1 || n > 2)
        return invalid(err, "%s: expected [text] or [text, text_pair]", field);
    char sub[80];
    snprintf(sub, sizeof sub, "%s[0]", field);
    if (take_string(cJSON_GetArrayItem(v, 0), sub, &t->text, &t->text_len, err))
        return -1;
    if (n == 2) {
        snprintf(sub, sizeof sub, "%s[1]", field);
        return take_string(cJSON_GetArrayItem(v, 1), sub, &t->pair, &t->pair_len, err);
    }
    return 0;
}

/* TEI's predict input: str | [str, str] | [[str] | [str, str], ...]. */
static int parse_predict(serve_request *r, const cJSON *inputs, int32_t max_client_batch,
                         serve_error *err)
{
    if (cJSON_IsString(inputs))
        return parse_texts(r, inputs, "inputs", max_client_batch, err);
    if (!cJSON_IsArray(inputs))
        return invalid(err, "%s: expected a string, a pair [text, text_pair] or a list of them",
                       "inputs");
    const cJSON *first = cJSON_GetArrayItem(inputs, 0);
    if (cJSON_IsString(first)) { /* one text or one pair, not a batch */
        if (reserve_items(r, 1, 1, 0, max_client_batch, err))
            return -1;
        r->n_texts = 1;
        if (cJSON_GetArraySize(inputs) > 2)
            return invalid(err, "%s: a pair has two texts; send a batch as [[text], ...]",
                           "inputs");
        return take_sequence(inputs, "inputs", &r->texts[0], err);
    }
    r->batch = true;
    if (reserve_items(r, cJSON_GetArraySize(inputs), 1, 0, max_client_batch, err))
        return -1;
    const cJSON *v;
    char field[64];
    cJSON_ArrayForEach(v, inputs) {
        snprintf(field, sizeof field, "inputs[%d]", r->n_texts);
        if (take_sequence(v, field, &r->texts[r->n_texts++], err))
            return -1;
    }
    return 0;
}

static int parse_similarity(serve_request *r, const cJSON *inputs, int32_t max_client_batch,
                            serve_error *err)
{
    if (!cJSON_IsObject(inputs))
        return invalid(err, "%s: expected {\"source_sentence\": ..., \"sentences\": [...]}",
                       "inputs");
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(inputs, "source_sentence");
    const cJSON *sents = cJSON_GetObjectItemCaseSensitive(inputs, "sentences");
    if (!src)
        return invalid(err, "%s: missing", "inputs.source_sentence");
    if (!cJSON_IsArray(sents))
        return invalid(err, "%s: expected a list of strings", "inputs.sentences");
    r->batch = true;
    if (reserve_items(r, cJSON_GetArraySize(sents), 1, 1, max_client_batch, err))
        return -1;
    r->n_texts = 1;
    if (take_string(src, "inputs.source_sentence", &r->texts[0].text, &r->texts[0].text_len,
                    err))
        return -1;
    const cJSON *v;
    char field[64];
    cJSON_ArrayForEach(v, sents) {
        snprintf(field, sizeof field, "inputs.sentences[%d]", r->n_texts - 1);
        rf_text *t = &r->texts[r->n_texts++];
        if (take_string(v, field, &t->text, &t->text_len, err))
            return -1;
    }
    return 0;
}

/* {"question", "context"} or {"A", "B", "C"} objects, one or a list:
 * qa makes one rf_text (question, context pair) per object, scm three. */
static int parse_objects(serve_request *r, const cJSON *inputs, int32_t max_client_batch,
                         serve_error *err)
{
    bool qa = r->api == SERVE_API_QA;
    static const char *const qa_names[] = {"question", "context"};
    static const char *const scm_names[] = {"A", "B", "C"};
    const char *const *names = qa ? qa_names : scm_names;
    int per = qa ? 1 : 3, n_names = qa ? 2 : 3;
    const cJSON *one = inputs;
    if (cJSON_IsArray(inputs)) {
        r->batch = true;
        one = NULL;
    } else if (!cJSON_IsObject(inputs)) {
        return invalid(err, qa ? "%s: expected {\"question\", \"context\"} or a list of them"
                               : "%s: expected {\"A\", \"B\", \"C\"} or a list of them",
                       "inputs");
    }
    if (reserve_items(r, one ? 1 : cJSON_GetArraySize(inputs), per, 0, max_client_batch, err))
        return -1;
    for (int32_t i = 0; i < r->n_items; i++) {
        const cJSON *obj = one ? one : cJSON_GetArrayItem(inputs, i);
        char field[64];
        if (!cJSON_IsObject(obj)) {
            snprintf(field, sizeof field, "inputs[%d]", i);
            return invalid(err, "%s: expected an object", field);
        }
        r->n_texts += per; /* counted before filling, so a failure frees what was taken */
        for (int k = 0; k < n_names; k++) {
            if (one)
                snprintf(field, sizeof field, "inputs.%s", names[k]);
            else
                snprintf(field, sizeof field, "inputs[%d].%s", i, names[k]);
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, names[k]);
            if (!v)
                return invalid(err, "%s: missing", field);
            rf_text *t = &r->texts[qa ? i : 3 * i + k];
            int rc = qa && k == 1 ? take_string(v, field, &t->pair, &t->pair_len, err)
                                  : take_string(v, field, &t->text, &t->text_len, err);
            if (rc)
                return -1;
        }
    }
    return 0;
}

/* [id, ...] into *ids / *n: integers from 0 to INT32_MAX (the vocabulary
 * is checked later, with the model), at least one. */
static int take_id_list(const cJSON *v, const char *field, int32_t **ids, int32_t *n,
                        serve_error *err)
{
    int count = cJSON_GetArraySize(v);
    if (!cJSON_IsArray(v) || count < 1)
        return invalid(err, "%s: expected a non-empty list of token ids", field);
    *ids = malloc(sizeof **ids * (size_t)count);
    if (!*ids)
        return serve_fail(err, 500, "Backend", "out of memory");
    *n = 0;
    const cJSON *id;
    cJSON_ArrayForEach(id, v) {
        /* range first: converting a double out of int32's range is undefined */
        if (!cJSON_IsNumber(id) || !(id->valuedouble >= 0 && id->valuedouble <= INT32_MAX) ||
            id->valuedouble != (double)(int32_t)id->valuedouble)
            return serve_fail(err, 422, "Validation",
                              "%s[%d]: expected a token id (an integer >= 0)", field, *n);
        (*ids)[(*n)++] = (int32_t)id->valuedouble;
    }
    return 0;
}

/* [id, ...] (one input) | [[id, ...], ...] (a batch) into r->ids. */
static int parse_ids(serve_request *r, const cJSON *v, const char *name, int32_t max_client_batch,
                     serve_error *err)
{
    bool one = cJSON_IsNumber(cJSON_GetArrayItem(v, 0));
    int n = one ? 1 : cJSON_GetArraySize(v);
    r->batch = !one;
    if (n == 0)
        return serve_fail(err, 422, "Empty", "%s: the list is empty", name);
    if (n > max_client_batch)
        return serve_fail(err, 413, "Validation", "%s: %d inputs, over --max-client-batch-size %d",
                          name, n, max_client_batch);
    r->ids = calloc((size_t)n, sizeof *r->ids);
    r->n_ids = calloc((size_t)n, sizeof *r->n_ids);
    if (!r->ids || !r->n_ids)
        return serve_fail(err, 500, "Backend", "out of memory");
    r->n_items = n;
    if (one)
        return take_id_list(v, name, &r->ids[0], &r->n_ids[0], err);
    for (int i = 0; i < n; i++) {
        char field[64];
        snprintf(field, sizeof field, "%s[%d]", name, i);
        if (take_id_list(cJSON_GetArrayItem(v, i), field, &r->ids[i], &r->n_ids[i], err))
            return -1;
    }
    return 0;
}

/* ==== Rerank ==== */

/* A document of /v1/rerank: a string, or {"text": str} as Jina and Cohere
 * also take. */
static int take_document(const cJSON *v, const char *field, const char **out, size_t *len,
                         serve_error *err)
{
    if (!cJSON_IsObject(v))
        return take_string(v, field, out, len, err);
    char sub[80];
    snprintf(sub, sizeof sub, "%s.text", field);
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(v, "text");
    if (!text)
        return invalid(err, "%s: missing", sub);
    return take_string(text, sub, out, len, err);
}

/* TEI's {"query", "texts"} or Jina's {"query", "documents"}: one
 * (query, document) pair per document, the query copied into each. */
static int parse_rerank(serve_request *r, const cJSON *root, int32_t max_client_batch,
                        serve_error *err)
{
    bool jina = r->api == SERVE_API_RERANK_JINA;
    const char *list_name = jina ? "documents" : "texts";
    const cJSON *query = cJSON_GetObjectItemCaseSensitive(root, "query");
    const cJSON *docs = cJSON_GetObjectItemCaseSensitive(root, list_name);
    if (!query)
        return invalid(err, "%s: missing", "query");
    if (!cJSON_IsString(query))
        return invalid(err, "%s: expected a string", "query");
    if (!docs)
        return invalid(err, "%s: missing", list_name);
    if (!cJSON_IsArray(docs))
        return invalid(err, jina ? "%s: expected a list of strings or {\"text\"} objects"
                                 : "%s: expected a list of strings",
                       list_name);
    r->batch = true;
    if (reserve_named(r, list_name, cJSON_GetArraySize(docs), 1, 0, max_client_batch, err))
        return -1;
    const cJSON *v;
    char field[64];
    cJSON_ArrayForEach(v, docs) {
        snprintf(field, sizeof field, "%s[%d]", list_name, r->n_texts);
        rf_text *t = &r->texts[r->n_texts++];
        if (take_string(query, "query", &t->text, &t->text_len, err) ||
            (jina ? take_document(v, field, &t->pair, &t->pair_len, err)
                  : take_string(v, field, &t->pair, &t->pair_len, err)))
            return -1;
    }
    if (jina) {
        const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
        size_t len;
        if (model && !cJSON_IsNull(model) &&
            take_string(model, "model", (const char **)&r->model, &len, err))
            return -1;
        return take_bool(root, "return_documents", &r->return_text, err);
    }
    return take_bool(root, "return_text", &r->return_text, err);
}

/* ==== Options ==== */

/* "truncation_direction": "right" | "left" (TEI spells them "Right" and
 * "Left"); absent or null keeps *side. */
static int take_direction(const cJSON *obj, const char *name, const char *field,
                          int32_t *side, serve_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (cJSON_IsString(v) && (!strcmp(v->valuestring, "right") || !strcmp(v->valuestring, "Right")))
        *side = RF_TRUNCATE_RIGHT;
    else if (cJSON_IsString(v) && (!strcmp(v->valuestring, "left") || !strcmp(v->valuestring, "Left")))
        *side = RF_TRUNCATE_LEFT;
    else
        return invalid(err, "%s: expected \"right\" or \"left\"", field);
    return 0;
}

/* "truncate" and "truncation_direction" of obj; prefix names the object
 * in messages ("" or "parameters."). */
static int parse_truncation(serve_request *r, const cJSON *obj, const char *prefix,
                            serve_error *err)
{
    char field[64];
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, "truncate");
    if (t && !cJSON_IsNull(t)) {
        if (!cJSON_IsBool(t)) {
            snprintf(field, sizeof field, "%struncate", prefix);
            return invalid(err, "%s: expected true or false", field);
        }
        r->truncate = cJSON_IsTrue(t);
        r->truncate_set = true;
    }
    snprintf(field, sizeof field, "%struncation_direction", prefix);
    return take_direction(obj, "truncation_direction", field, &r->truncation_side, err);
}

/* TEI's /similarity "parameters": {"truncate", "truncation_direction",
 * "prompt_name"}. */
static int parse_similarity_parameters(serve_request *r, const cJSON *root, serve_error *err)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "parameters");
    if (!p || cJSON_IsNull(p))
        return 0;
    if (!cJSON_IsObject(p))
        return invalid(err, "%s: expected an object", "parameters");
    if (parse_truncation(r, p, "parameters.", err))
        return -1;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "prompt_name");
    size_t len;
    if (name && !cJSON_IsNull(name) &&
        take_string(name, "parameters.prompt_name", (const char **)&r->prompt_name, &len, err))
        return -1;
    return 0;
}

static int parse_openai(serve_request *r, const cJSON *root, int32_t max_client_batch,
                        serve_error *err)
{
    const cJSON *input = cJSON_GetObjectItemCaseSensitive(root, "input");
    if (!input)
        return invalid(err, "%s: missing", "input");
    const cJSON *first = cJSON_GetArrayItem(input, 0);
    bool ids = cJSON_IsArray(input) && (cJSON_IsNumber(first) || cJSON_IsArray(first));
    if (ids ? parse_ids(r, input, "input", max_client_batch, err)
            : parse_texts(r, input, "input", max_client_batch, err))
        return -1;
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (model && !cJSON_IsNull(model)) {
        size_t len;
        if (take_string(model, "model", (const char **)&r->model, &len, err))
            return -1;
    }
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "encoding_format");
    if (fmt && !cJSON_IsNull(fmt)) {
        if (cJSON_IsString(fmt) && !strcmp(fmt->valuestring, "base64"))
            r->base64 = true;
        else if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "float") != 0)
            return invalid(err, "%s: expected \"float\" or \"base64\"", "encoding_format");
    }
    const cJSON *user = cJSON_GetObjectItemCaseSensitive(root, "user");
    if (user && !cJSON_IsNull(user) && !cJSON_IsString(user))
        return invalid(err, "%s: expected a string", "user");
    return 0;
}

/* An optional integer field in [lo, hi]; absent or null keeps *out. */
static int take_int(const cJSON *obj, const char *name, int32_t lo, int32_t hi, int32_t *out,
                    serve_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v || cJSON_IsNull(v))
        return 0;
    /* range first: converting a double out of int32's range is undefined */
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi) ||
        v->valuedouble != (double)(int32_t)v->valuedouble)
        return serve_fail(err, 422, "Validation", "%s: expected an integer from %d to %d", name,
                          lo, hi);
    *out = (int32_t)v->valuedouble;
    return 0;
}

/* The job's own integer options, as the CLI's flags allow them. */
static int parse_job_options(serve_request *r, const cJSON *root, serve_error *err)
{
    if (r->api == SERVE_API_FILL_MASK)
        return take_int(root, "top_k", 1, 1000, &r->top_k, err);
    if (r->api == SERVE_API_OPENAI)
        return take_int(root, "dimensions", 1, INT32_MAX, &r->dimensions, err);
    if (r->api == SERVE_API_DECODE)
        return take_bool(root, "skip_special_tokens", &r->skip_special_tokens, err);
    if (r->api == SERVE_API_HF_FILL_MASK) {
        const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "parameters");
        if (!params || cJSON_IsNull(params))
            return 0;
        if (!cJSON_IsObject(params))
            return invalid(err, "%s: expected an object", "parameters");
        if (take_int(params, "top_k", 1, 1000, &r->top_k, err))
            return serve_fail(err, 422, "Validation",
                              "parameters.top_k: expected an integer from 1 to 1000");
        return 0;
    }
    if (r->api == SERVE_API_QA)
        return take_int(root, "max_answer_tokens", 1, 1 << 20, &r->max_answer_tokens, err) ||
               take_int(root, "doc_stride", 0, 1 << 20, &r->doc_stride, err);
    if (r->api == SERVE_API_RERANK_JINA)
        return take_int(root, "top_n", 1, 1 << 20, &r->top_n, err);
    if (r->api == SERVE_API_EMBED || r->api == SERVE_API_OPENAI || r->api == SERVE_API_PREDICT ||
        r->api == SERVE_API_SIMILARITY || r->api == SERVE_API_SCM) {
        r->stride = -1;
        if (take_int(root, "window", 3, 1 << 20, &r->window, err) ||
            take_int(root, "stride", 0, 1 << 20, &r->stride, err))
            return -1;
        if (r->stride >= 0 && !r->window)
            return serve_fail(err, 422, "Validation", "%s: needs \"window\"", "stride");
        if (r->stride < 0)
            r->stride = rf_window_default_stride(r->window);
        if (r->window && r->stride >= r->window - 2)
            return serve_fail(err, 422, "Validation",
                              "stride: %d is not below the %d text tokens of a window of %d",
                              r->stride, r->window - 2, r->window);
        if (r->window && r->api == SERVE_API_SCM)
            r->truncate = false; /* windows instead of scm's truncation */
    }
    return 0;
}

cJSON *serve_request_read(const char *body, size_t len, serve_error *err)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(body, len, &end, false);
    while (root && end && end < body + len && (*end == ' ' || *end == '\t' || *end == '\r' ||
                                               *end == '\n'))
        end++;
    if (!root || (end && end < body + len)) {
        /* on failure cJSON sets `end` to where it stopped (its global error
           pointer is not thread-safe) */
        long at = end && end >= body && end <= body + len ? (long)(end - body) : 0;
        cJSON_Delete(root);
        serve_fail(err, 422, "Validation", "body: invalid JSON at byte %ld", at);
        return NULL;
    }
    return root;
}

int serve_request_from_json(serve_api api, const cJSON *root, int32_t max_client_batch,
                            serve_request *out, serve_error *err)
{
    *out = (serve_request){.api = api, .normalize = true, .add_special_tokens = true,
                           .truncate = api == SERVE_API_SCM, .top_k = 5,
                           .max_answer_tokens = RF_QA_MAX_ANSWER_TOKENS, .doc_stride = -1,
                           .skip_special_tokens = true};
    int rc = -1;
    if (!cJSON_IsObject(root)) {
        invalid(err, "%s: expected a JSON object", "body");
        goto done;
    }
    if (api == SERVE_API_OPENAI) {
        rc = parse_openai(out, root, max_client_batch, err);
    } else if (api == SERVE_API_DECODE) {
        const cJSON *ids = cJSON_GetObjectItemCaseSensitive(root, "ids");
        if (!cJSON_IsArray(ids))
            rc = invalid(err, "%s: expected a list of token ids or a list of such lists", "ids");
        else
            rc = parse_ids(out, ids, "ids", max_client_batch, err);
    } else if (api == SERVE_API_RERANK || api == SERVE_API_RERANK_JINA) {
        rc = parse_rerank(out, root, max_client_batch, err);
    } else {
        const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(root, "inputs");
        if (!inputs) {
            invalid(err, "%s: missing", "inputs");
            goto done;
        }
        switch (api) {
        case SERVE_API_PREDICT: rc = parse_predict(out, inputs, max_client_batch, err); break;
        case SERVE_API_SIMILARITY: rc = parse_similarity(out, inputs, max_client_batch, err); break;
        case SERVE_API_QA:
        case SERVE_API_SCM: rc = parse_objects(out, inputs, max_client_batch, err); break;
        default: rc = parse_texts(out, inputs, "inputs", max_client_batch, err); break;
        }
    }
    if (rc == 0)
        rc = parse_truncation(out, root, "", err) ||
             (api == SERVE_API_SIMILARITY && parse_similarity_parameters(out, root, err)) ||
             take_bool(root, "normalize", &out->normalize, err) ||
             take_bool(root, "raw_scores", &out->raw_scores, err) ||
             take_bool(root, "add_special_tokens", &out->add_special_tokens, err) ||
             parse_job_options(out, root, err) ? -1 : 0;
done:
    if (rc)
        serve_request_free(out);
    return rc;
}

int serve_request_parse(serve_api api, const char *body, size_t len, int32_t max_client_batch,
                        serve_request *out, serve_error *err)
{
    *out = (serve_request){.api = api};
    cJSON *root = serve_request_read(body, len, err);
    int rc = root ? serve_request_from_json(api, root, max_client_batch, out, err) : -1;
    cJSON_Delete(root);
    return rc;
}
