/*
 * routes.c — the route table and the handlers (see routes.h).
 *
 * A route is one row of routes[]: method and path, then for GET routes
 * the handler, for POST routes the body's shape (request.c parses it), the
 * library call (serve_kind), the head the model needs, the answer's writer
 * and how messages name its inputs. Nothing else lists the routes.
 *
 * A POST request goes: parse the body as JSON once (422; the model a body
 * names is read from that), read its fields (422/413), tokenize every text
 * once here, on the connection's HTTP thread, to count its real tokens and
 * to refuse one longer than --max-input-length unless "truncate" is set
 * (422), queue the job with those encodings and the results its kind
 * allocates (batcher.h, kinds.h): the library runs them as they are (the
 * *_encodings calls), so no text is tokenized twice. Then the row's writer
 * turns the results into JSON.
 * With --cache-mb, a job the cache holds every input of is answered from
 * it at once, here, and never queued.
 */
#include "serve/routes.h"

#include "cli.h"
#include "serve/hf_responses.h"
#include "serve/openai.h"
#include "serve/kinds.h"
#include "serve/prompt.h"
#include "serve/request.h"
#include "serve/responses.h"
#include "serve/results.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ==== The route table ==== */

/* The server and the model a request runs on: the generation it took
 * (its model, batcher and limits), held until it is answered, and the
 * model's name (what /info and /v1/embeddings call it). */
typedef struct {
    const serve_server *server;
    serve_generation *g;
    const char *model_id;
} request_model;

/* What a route's answer is written from: the request, and for routes that
 * run a job, the job's results. */
typedef struct {
    const request_model *rm;
    const serve_request *r;
    serve_job *job;          /* NULL for routes that run no job */
    const rf_encoding *encs; /* the inputs as they were counted (and ran) */
    int32_t tokens;
} answer_in;

typedef cJSON *(*answer_fn)(const answer_in *a);
typedef void (*get_fn)(const request_model *rm, const serve_gauges *http, serve_response *resp);
/* How messages name text i of the request (into buf[n]). */
typedef void (*name_fn)(const serve_request *r, const char *list, int32_t i, char *buf, size_t n);

enum {
    NO_JOB = -1,              /* kind of a route that answers without the engine */
    R_PUBLIC = 1 << 0,        /* needs no API key */
    R_WHILE_DRAINING = 1 << 1, /* still answered while the server drains */
    R_OPENAI = 1 << 2,        /* errors in OpenAI's shape (as every path under /v1/) */
    R_PROMPT = 1 << 3,        /* the model's default sentence-transformers prompt first */
    R_ANY_LENGTH = 1 << 4,    /* inputs over --max-input-length are not refused */
    R_RAW_SCORES = 1 << 5,    /* "raw_scores" turns classify into logits */
    R_MODEL_TASK = 1 << 6,    /* answers as the route of the model's own task */
    R_MODEL_FIELD = 1 << 7,   /* the body's "model" chooses the model */
};

/* One route: its method and path, then for GET routes the handler, for
 * POST routes the body's shape (parsed by request.c), the library call
 * (serve_kind, or NO_JOB), the head the model needs, the answer's writer
 * and how messages name the inputs. */
typedef struct {
    const char *method, *path;
    get_fn get;
    serve_api body;
    int kind;
    rf_head_kind head;
    answer_fn answer;
    const char *list; /* the inputs' field in messages: "inputs[2]", or "inputs" for one */
    name_fn name;     /* NULL: list_name */
    unsigned flags;
} route;

static void handle_health(const request_model *rm, const serve_gauges *http, serve_response *resp);
static void handle_info(const request_model *rm, const serve_gauges *http, serve_response *resp);
static void handle_metrics(const request_model *rm, const serve_gauges *http, serve_response *resp);
static void handle_models(const request_model *rm, const serve_gauges *http, serve_response *resp);
static void handle_reload(const request_model *rm, const serve_gauges *http, serve_response *resp);
static void list_name(const serve_request *r, const char *list, int32_t i, char *buf, size_t n);
static void similarity_name(const serve_request *r, const char *list, int32_t i, char *buf,
                            size_t n);
static void scm_name(const serve_request *r, const char *list, int32_t i, char *buf, size_t n);
static cJSON *answer_embed(const answer_in *a);
static cJSON *answer_openai(const answer_in *a);
static cJSON *answer_predict(const answer_in *a);
static cJSON *answer_similarity(const answer_in *a);
static cJSON *answer_tokenize(const answer_in *a);
static cJSON *answer_fill_mask(const answer_in *a);
static cJSON *answer_ner(const answer_in *a);
static cJSON *answer_qa(const answer_in *a);
static cJSON *answer_scm(const answer_in *a);
static cJSON *answer_rerank(const answer_in *a);
static cJSON *answer_embed_all(const answer_in *a);
static cJSON *answer_decode(const answer_in *a);
static cJSON *answer_hf_classify(const answer_in *a);
static cJSON *answer_hf_fill_mask(const answer_in *a);
static cJSON *answer_hf_ner(const answer_in *a);

#define POST(path, body, kind, head, answer, list, name, flags) \
    {"POST", path, NULL, body, kind, head, answer, list, name, flags}
#define GET(path, get, flags) {"GET", path, get, 0, NO_JOB, RF_HEAD_NONE, NULL, NULL, NULL, flags}
/* a POST that takes no body and runs no job */
#define ACTION(path, fn, flags) {"POST", path, fn, 0, NO_JOB, RF_HEAD_NONE, NULL, NULL, NULL, flags}

static const route routes[] = {
    POST("/embed", SERVE_API_EMBED, SERVE_KIND_EMBED, RF_HEAD_NONE, answer_embed, "inputs", NULL,
         R_PROMPT),
    POST("/v1/embeddings", SERVE_API_OPENAI, SERVE_KIND_EMBED, RF_HEAD_NONE, answer_openai,
         "input", NULL, R_PROMPT | R_OPENAI | R_MODEL_FIELD),
    POST("/predict", SERVE_API_PREDICT, SERVE_KIND_CLASSIFY, RF_HEAD_SEQ_CLS, answer_predict,
         "inputs", NULL, R_RAW_SCORES),
    POST("/similarity", SERVE_API_SIMILARITY, SERVE_KIND_EMBED, RF_HEAD_NONE, answer_similarity,
         "inputs", similarity_name, 0),
    POST("/tokenize", SERVE_API_TOKENIZE, NO_JOB, RF_HEAD_NONE, answer_tokenize, "inputs", NULL,
         R_ANY_LENGTH),
    POST("/fill-mask", SERVE_API_FILL_MASK, SERVE_KIND_FILL_MASK, RF_HEAD_MLM, answer_fill_mask,
         "inputs", NULL, 0),
    POST("/ner", SERVE_API_NER, SERVE_KIND_NER, RF_HEAD_TOKEN_CLS, answer_ner, "inputs", NULL, 0),
    POST("/qa", SERVE_API_QA, SERVE_KIND_QA, RF_HEAD_QA, answer_qa, "inputs", NULL, 0),
    POST("/scm", SERVE_API_SCM, SERVE_KIND_SCM, RF_HEAD_NONE, answer_scm, "inputs", scm_name, 0),
    GET("/health", handle_health, R_PUBLIC),
    GET("/info", handle_info, 0),
    GET("/metrics", handle_metrics, R_WHILE_DRAINING),
    POST("/rerank", SERVE_API_RERANK, SERVE_KIND_RERANK, RF_HEAD_NONE, answer_rerank, "texts",
         NULL, 0),
    POST("/v1/rerank", SERVE_API_RERANK_JINA, SERVE_KIND_RERANK, RF_HEAD_NONE, answer_rerank,
         "documents", NULL, R_OPENAI | R_MODEL_FIELD),
    POST("/", 0, NO_JOB, RF_HEAD_NONE, NULL, NULL, NULL, R_MODEL_TASK),
    POST("/embeddings", SERVE_API_OPENAI, SERVE_KIND_EMBED, RF_HEAD_NONE, answer_openai, "input",
         NULL, R_PROMPT | R_OPENAI | R_MODEL_FIELD),
    POST("/embed_all", SERVE_API_EMBED_ALL, SERVE_KIND_EMBED_ALL, RF_HEAD_NONE, answer_embed_all,
         "inputs", NULL, 0),
    POST("/decode", SERVE_API_DECODE, NO_JOB, RF_HEAD_NONE, answer_decode, "ids", NULL, 0),
    POST("/pipeline/text-classification", SERVE_API_HF_CLASSIFY, SERVE_KIND_CLASSIFY,
         RF_HEAD_SEQ_CLS, answer_hf_classify, "inputs", NULL, 0),
    POST("/pipeline/fill-mask", SERVE_API_HF_FILL_MASK, SERVE_KIND_FILL_MASK, RF_HEAD_MLM,
         answer_hf_fill_mask, "inputs", NULL, 0),
    POST("/pipeline/token-classification", SERVE_API_HF_NER, SERVE_KIND_NER, RF_HEAD_TOKEN_CLS,
         answer_hf_ner, "inputs", NULL, 0),
    GET("/v1/models", handle_models, R_OPENAI),
    ACTION("/admin/reload", handle_reload, 0),
};
enum { N_ROUTES = sizeof routes / sizeof routes[0] };

int serve_route_count(void) { return N_ROUTES + 1; }

const char *const *serve_route_names(void)
{
    static const char *names[N_ROUTES + 1]; /* filled at start-up, before any thread */
    for (int r = 0; r < N_ROUTES; r++)
        names[r] = routes[r].path;
    names[N_ROUTES] = "unknown";
    return names;
}

/* The model prefix of a path: "/models/NAME/..." gives NAME (its length in
 * *len) and the route's path after it; NULL when the path has none. */
static const char *model_prefix(const char *path, size_t *len, const char **rest)
{
    static const char prefix[] = "/models/";
    if (strncmp(path, prefix, sizeof prefix - 1))
        return NULL;
    const char *name = path + sizeof prefix - 1, *slash = strchr(name, '/');
    if (!slash || slash == name)
        return NULL;
    *len = (size_t)(slash - name);
    *rest = slash;
    return name;
}

int serve_route_find(const char *method, const char *path, int *route, const char **allow)
{
    size_t len;
    model_prefix(path, &len, &path);
    for (int r = 0; r < N_ROUTES; r++) {
        if (strcmp(path, routes[r].path) != 0)
            continue;
        *route = r;
        if (strcmp(method, routes[r].method) == 0)
            return 200;
        *allow = routes[r].method;
        return 405;
    }
    *route = N_ROUTES;
    return 404;
}

static const route *route_at(int r)
{
    return r >= 0 && r < N_ROUTES ? &routes[r] : NULL;
}

bool serve_route_uses_engine(int r)
{
    const route *rt = route_at(r);
    return rt && (rt->kind != NO_JOB || rt->flags & R_MODEL_TASK);
}

bool serve_route_speaks_openai(int r, const char *path)
{
    const route *rt = route_at(r);
    return rt ? (rt->flags & R_OPENAI) != 0 : !strncmp(path, "/v1/", 4);
}

const char *serve_route_method(int r)
{
    return route_at(r) ? routes[r].method : NULL;
}

bool serve_route_is_public(int r)
{
    return route_at(r) && routes[r].flags & R_PUBLIC;
}

bool serve_route_answers_draining(int r)
{
    return route_at(r) && routes[r].flags & R_WHILE_DRAINING;
}

/* The route POST / stands for, as TEI and HuggingFace Inference Endpoints
 * answer it: a one-label classifier reranks, another classifier predicts,
 * any other model embeds. */
static const route *model_task(const rf_model *m)
{
    const rf_hparams *hp = rf_model_hparams(m);
    const char *path = hp->head != RF_HEAD_SEQ_CLS ? "/embed"
                       : hp->num_labels == 1       ? "/rerank"
                                                   : "/predict";
    int r = N_ROUTES;
    const char *allow;
    serve_route_find("POST", path, &r, &allow);
    return &routes[r];
}

/* ==== Responses ==== */

static void respond_json(serve_response *resp, int status, cJSON *json)
{
    char *text = json ? cJSON_PrintUnformatted(json) : NULL;
    cJSON_Delete(json);
    if (!text) {
        serve_response_error(resp, 500, "Backend", "out of memory writing the response");
        return;
    }
    *resp = (serve_response){.status = status, .content_type = "application/json",
                             .body = text, .len = strlen(text)};
}

void serve_response_error(serve_response *resp, int status, const char *type, const char *msg)
{
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddStringToObject(obj, "error", msg);
    cJSON_AddStringToObject(obj, "error_type", type);
    char *text = obj ? cJSON_PrintUnformatted(obj) : NULL;
    cJSON_Delete(obj);
    if (!text) /* nothing left to build JSON with: a fixed body */
        text = strdup("{\"error\":\"out of memory\",\"error_type\":\"Backend\"}");
    *resp = (serve_response){.status = status, .content_type = "application/json",
                             .body = text, .len = text ? strlen(text) : 0};
}

static void respond_error(serve_response *resp, serve_log_entry *log, const serve_error *err)
{
    if (log->openai)
        serve_openai_error(resp, err->status, err->message);
    else
        serve_response_error(resp, err->status, err->type, err->message);
    log->error_type = err->type;
    snprintf(log->error, sizeof log->error, "%s", err->message);
}

/* ==== GET routes ==== */

static void handle_health(const request_model *rm, const serve_gauges *http, serve_response *resp)
{
    (void)rm;
    (void)http;
    *resp = (serve_response){.status = 200, .content_type = "application/json",
                             .body = strdup("{}"), .len = 2};
}

/* TEI's model_type: a sequence classifier is {"classifier": {"id2label":
 * {"0": label, ...}, "label2id": {label: 0, ...}}}, a one-label one
 * {"reranker": {...}} with the same fields (TEI's name for a cross-encoder,
 * which /rerank and POST / serve), any other model {"embedding":
 * {"pooling": ...}} (the pooling /embed uses). */
static cJSON *tei_model_type(const request_model *rm, const char *pooling)
{
    const rf_hparams *hp = rf_model_hparams(rm->g->model);
    cJSON *type = cJSON_CreateObject(), *inner = cJSON_CreateObject();
    if (!type || !inner) {
        cJSON_Delete(type);
        cJSON_Delete(inner);
        return NULL;
    }
    if (hp->head != RF_HEAD_SEQ_CLS) {
        cJSON_AddItemToObject(type, "embedding", inner);
        cJSON_AddStringToObject(inner, "pooling", pooling);
        return type;
    }
    cJSON_AddItemToObject(type, hp->num_labels == 1 ? "reranker" : "classifier", inner);
    cJSON *id2label = cJSON_AddObjectToObject(inner, "id2label");
    cJSON *label2id = cJSON_AddObjectToObject(inner, "label2id");
    for (int32_t i = 0; id2label && label2id && i < hp->num_labels; i++) {
        char id[16], fallback[32];
        const char *l = rf_model_label(rm->g->model, i);
        if (!l) {
            snprintf(fallback, sizeof fallback, "LABEL_%d", i);
            l = fallback;
        }
        snprintf(id, sizeof id, "%d", i);
        cJSON_AddStringToObject(id2label, id, l);
        cJSON_AddNumberToObject(label2id, l, i);
    }
    return type;
}

/* How /rerank scores: {"scoring": "classifier" | "cosine", "label": the
 * label whose score it reads (classifier only)}. */
static void add_rerank_info(const request_model *rm, cJSON *o)
{
    rf_rerank_scoring scoring = rf_rerank_scoring_of(rm->g->model);
    cJSON *info = cJSON_AddObjectToObject(o, "rerank");
    if (!info)
        return;
    cJSON_AddStringToObject(info, "scoring", rf_rerank_scoring_name(scoring));
    if (scoring != RF_RERANK_CLASSIFIER)
        return;
    int32_t label = rf_model_rerank_label(rm->g->model);
    char fallback[32];
    const char *name = rf_model_label(rm->g->model, label);
    if (!name) {
        snprintf(fallback, sizeof fallback, "LABEL_%d", label);
        name = fallback;
    }
    cJSON_AddStringToObject(info, "label", name);
}

/* TEI's fields (model_id, model_sha, model_dtype, model_type, the limits,
 * tokenization_workers, version, ...), then the model's own. */
static void handle_info(const request_model *rm, const serve_gauges *http, serve_response *resp)
{
    (void)http;
    const rf_hparams *hp = rf_model_hparams(rm->g->model);
    /* TEI spells the last-token pooling "last_token" */
    rf_pooling pool = rm->g->pooling;
    const char *pooling = pool == RF_POOLING_LAST ? "last_token" : rf_pooling_name(pool);
    cJSON *o = cJSON_CreateObject(), *labels = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "model_id", rm->model_id);
    cJSON_AddNullToObject(o, "model_sha");
    /* the encoder's arithmetic, in TEI's words */
    cJSON_AddStringToObject(o, "model_dtype",
                            rm->server->compute == RF_COMPUTE_BF16   ? "bfloat16"
                            : rm->server->compute == RF_COMPUTE_INT8 ? "int8"
                                                            : "float32");
    cJSON_AddItemToObject(o, "model_type", tei_model_type(rm, pooling));
    cJSON_AddNumberToObject(o, "max_concurrent_requests", rm->server->max_concurrent);
    cJSON_AddNumberToObject(o, "max_input_length", rm->g->max_input_length);
    cJSON_AddNumberToObject(o, "max_batch_tokens", rm->server->max_batch_tokens);
    if (rm->server->max_batch_requests > 0)
        cJSON_AddNumberToObject(o, "max_batch_requests", rm->server->max_batch_requests);
    else
        cJSON_AddNullToObject(o, "max_batch_requests"); /* no cap but the tokens */
    cJSON_AddNumberToObject(o, "max_client_batch_size", rm->server->max_client_batch);
    cJSON_AddBoolToObject(o, "auto_truncate", rm->server->auto_truncate);
    /* kept as it was answered when each connection had a thread of its own;
       the tokenizing now runs on http.c's pool */
    cJSON_AddNumberToObject(o, "tokenization_workers", rm->server->max_concurrent);
    cJSON_AddStringToObject(o, "version", RF_VERSION);
    cJSON_AddNullToObject(o, "sha");

    cJSON_AddStringToObject(o, "head", rf_head_name(hp->head));
    cJSON_AddStringToObject(o, "weights_dtype", rf_dtype_name(hp->dtype));
    cJSON_AddNumberToObject(o, "hidden_size", hp->hidden_size);
    cJSON_AddNumberToObject(o, "num_layers", hp->num_layers);
    cJSON_AddNumberToObject(o, "vocab_size", hp->vocab_size);
    cJSON_AddNumberToObject(o, "max_position", hp->max_position);
    cJSON_AddStringToObject(o, "tokenizer", rf_tokenizer_mode_name(hp->tokenizer));
    cJSON_AddStringToObject(o, "pooling", pooling);
    for (int32_t i = 0; labels && i < hp->num_labels; i++) {
        const char *l = rf_model_label(rm->g->model, i);
        cJSON_AddItemToArray(labels, cJSON_CreateString(l ? l : ""));
    }
    cJSON_AddItemToObject(o, "labels", labels);
    add_rerank_info(rm, o);
    cJSON_AddNumberToObject(o, "payload_limit", (double)rm->server->payload_limit);
    /* this model's file as loaded now, and the others served beside it */
    const serve_generation *g = rm->g;
    char when[32];
    struct tm utc;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&g->loaded_at, &utc));
    if (g->sha256[0])
        cJSON_AddStringToObject(o, "file_sha256", g->sha256);
    else
        cJSON_AddNullToObject(o, "file_sha256"); /* a HuggingFace directory */
    cJSON_AddStringToObject(o, "loaded_at", when);
    cJSON_AddNumberToObject(o, "load", g->number);
    cJSON *names = cJSON_AddArrayToObject(o, "models");
    for (int i = 0; names && i < serve_models_count(rm->server->models); i++)
        cJSON_AddItemToArray(names, cJSON_CreateString(serve_models_name(rm->server->models, i)));
    respond_json(resp, 200, o);
}

static void handle_metrics(const request_model *rm, const serve_gauges *http, serve_response *resp)
{
    serve_gauges g = *http;
    int n = serve_models_count(rm->server->models);
    serve_queue_gauges *queues = calloc((size_t)n, sizeof *queues);
    for (int i = 0; queues && i < n; i++) {
        serve_generation *gen = serve_models_acquire(rm->server->models, i);
        queues[i] = (serve_queue_gauges){.queued = serve_batcher_queued(gen->batcher),
                                         .running = serve_batcher_running(gen->batcher)};
        serve_generation_release(gen);
        if (rm->server->cache)
            serve_cache_get_stats(rm->server->cache, i, &queues[i].cache);
    }
    g.models = queues;
    char *text = queues ? serve_metrics_render(rm->server->metrics, &g) : NULL;
    free(queues);
    if (!text) {
        serve_response_error(resp, 500, "Backend", "out of memory writing the metrics");
        return;
    }
    *resp = (serve_response){.status = 200,
                             .content_type = "text/plain; version=0.0.4; charset=utf-8",
                             .body = text, .len = strlen(text)};
}

/* OpenAI's list of models: GET /v1/models. "created" is when the model's
 * file was loaded (Unix seconds). */
static void handle_models(const request_model *rm, const serve_gauges *http, serve_response *resp)
{
    (void)http;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "object", "list");
    cJSON *data = cJSON_AddArrayToObject(o, "data");
    for (int i = 0; data && i < serve_models_count(rm->server->models); i++) {
        serve_generation *g = serve_models_acquire(rm->server->models, i);
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "id", serve_models_name(rm->server->models, i));
        cJSON_AddStringToObject(m, "object", "model");
        cJSON_AddNumberToObject(m, "created", (double)g->loaded_at);
        cJSON_AddStringToObject(m, "owned_by", "roformer");
        cJSON_AddItemToArray(data, m);
        serve_generation_release(g);
    }
    respond_json(resp, 200, o);
}

/* POST /admin/reload: every model's file loaded again (as SIGHUP does);
 * {"models": [{"name", "reloaded", "message", "file_sha256", "load"}]}
 * with what each model serves now; 200 when any reloaded, else 500. */
static void handle_reload(const request_model *rm, const serve_gauges *http, serve_response *resp)
{
    (void)http;
    int n = serve_models_count(rm->server->models);
    serve_reload_result *results = calloc((size_t)n, sizeof *results);
    if (!results) {
        serve_response_error(resp, 500, "Backend", "out of memory");
        return;
    }
    int reloaded = serve_models_reload(rm->server->models, results);
    cJSON *o = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(o, "models");
    for (int i = 0; list && i < n; i++) {
        serve_generation *g = serve_models_acquire(rm->server->models, i);
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "name", serve_models_name(rm->server->models, i));
        cJSON_AddBoolToObject(m, "reloaded", results[i].ok);
        cJSON_AddStringToObject(m, "message", results[i].message);
        if (g->sha256[0])
            cJSON_AddStringToObject(m, "file_sha256", g->sha256);
        else
            cJSON_AddNullToObject(m, "file_sha256");
        cJSON_AddNumberToObject(m, "load", g->number);
        cJSON_AddItemToArray(list, m);
        serve_generation_release(g);
    }
    free(results);
    respond_json(resp, reloaded > 0 ? 200 : 500, o);
}

/* ==== Engine routes ==== */

static void list_name(const serve_request *r, const char *list, int32_t i, char *buf, size_t n)
{
    if (r->batch)
        snprintf(buf, n, "%s[%d]", list, i);
    else
        snprintf(buf, n, "%s", list);
}

/* texts[0] is the source sentence, then the sentences. */
static void similarity_name(const serve_request *r, const char *list, int32_t i, char *buf,
                            size_t n)
{
    (void)r;
    if (i == 0)
        snprintf(buf, n, "%s.source_sentence", list);
    else
        snprintf(buf, n, "%s.sentences[%d]", list, i - 1);
}

/* The texts are A, B, C of each triplet. */
static void scm_name(const serve_request *r, const char *list, int32_t i, char *buf, size_t n)
{
    static const char *const abc[] = {"A", "B", "C"};
    if (r->batch)
        snprintf(buf, n, "%s[%d].%s", list, i / 3, abc[i % 3]);
    else
        snprintf(buf, n, "%s.%s", list, abc[i % 3]);
}

/* How the client names text i of the request, for messages. */
static void field_name(const route *rt, const serve_request *r, int32_t i, char *buf, size_t n)
{
    (rt->name ? rt->name : list_name)(r, rt->list, i, buf, n);
}

/* The library call for this request: the route's, with "raw_scores" (where
 * the route takes it), token-id inputs and a model that reranks by cosine
 * choosing their own. */
static serve_kind kind_of(const request_model *rm, const route *rt, const serve_request *r)
{
    if (rt->kind == SERVE_KIND_RERANK && rf_rerank_scoring_of(rm->g->model) == RF_RERANK_COSINE)
        return SERVE_KIND_RERANK_COSINE;
    if (rt->kind == SERVE_KIND_CLASSIFY && rt->flags & R_RAW_SCORES && r->raw_scores)
        return SERVE_KIND_LOGITS;
    if (rt->kind == SERVE_KIND_EMBED && r->ids)
        return SERVE_KIND_EMBED_IDS;
    return (serve_kind)rt->kind;
}

/* Checks token-id inputs against the vocabulary and, when they are to run
 * (not /decode), against --max-input-length; counts them into each[i], sums
 * them into *tokens and
 * points encs[i] at them (ids as given, type 0, mask 1: `plain` holds
 * max_input_length zeros then as many ones). Returns 0 or -1 with *err. */
static int count_ids(const request_model *rm, const route *rt, const serve_request *r,
                     rf_encoding *encs, int32_t *plain, int32_t *each, int32_t *tokens,
                     serve_error *err)
{
    int32_t V = rf_model_hparams(rm->g->model)->vocab_size;
    *tokens = 0;
    for (int32_t i = 0; i < r->n_items; i++) {
        char field[64];
        field_name(rt, r, i, field, sizeof field);
        for (int32_t k = 0; k < r->n_ids[i]; k++)
            if (r->ids[i][k] >= V)
                return serve_fail(err, 422, "Validation",
                                  "%s[%d]: token id %d is not in the vocabulary (%d tokens)", field,
                                  k, r->ids[i][k], V);
        if (rt->kind != NO_JOB && r->n_ids[i] > rm->g->max_input_length)
            return serve_fail(err, 422, "Validation", "%s: %d tokens, over the limit of %d",
                              field, r->n_ids[i], rm->g->max_input_length);
        encs[i] = (rf_encoding){.ids = r->ids[i], .type_ids = plain,
                                .mask = plain + rm->g->max_input_length, .n = r->n_ids[i]};
        *tokens += each[i] = r->n_ids[i];
    }
    return 0;
}

/* Tokenizes text t (with its pair, if any) into *enc as the job will run
 * it, sets *counted to its tokens and refuses it when too long:
 * - plainly: cut at --max-input-length when the request allows it;
 * - with "window": not cut (a single text longer than the window runs as
 *   windows, a pair whole); one the request allows to be cut counts at
 *   most --max-input-length tokens;
 * - QA with doc_stride: not cut either; the context is read in windows of
 *   --max-input-length tokens, so nothing is too long, and the tokens are
 *   those of its windows.
 * Messages name the text `field`, or the request's text i when NULL.
 * Returns 0 or -1 with *err set. */
static int count_text(const request_model *rm, const route *rt, const serve_request *r, int32_t i,
                      const char *field, const rf_text *t, rf_encoding *enc, int32_t *counted,
                      serve_error *err)
{
    bool qa_windows = r->doc_stride >= 0;
    int32_t max = rm->g->max_input_length;
    char name[64];
    rf_error e;
    if (!field) {
        field_name(rt, r, i, name, sizeof name);
        field = name;
    }
    if (rf_tokenize_truncated(rm->g->model, t->text, t->text_len, t->pair,
                              t->pair ? t->pair_len : 0,
                              r->truncate && !qa_windows && !r->window ? max : 0,
                              (rf_truncation_side)r->truncation_side, enc, &e) != RF_OK)
        return serve_fail(err, 422, "Tokenizer", "%s: %.200s", field, e.message);
    if (qa_windows) {
        *counted = rf_qa_window_tokens(enc, max, r->doc_stride);
        return 0;
    }
    /* a single text longer than the window is cut into windows */
    bool cut = r->window > 0 && !t->pair && enc->n > r->window;
    if (enc->n > max && !(rt->flags & R_ANY_LENGTH) && !cut && !r->truncate)
        return serve_fail(err, 422, "Validation",
                          "%s: %d tokens, over the limit of %d; send \"truncate\": true to cut "
                          "it%s",
                          field, enc->n, max,
                          rt->kind == SERVE_KIND_QA ? " or \"doc_stride\" to read it in windows"
                                                    : "");
    *counted = r->truncate && enc->n > max ? max : enc->n;
    return 0;
}

/* Tokenizes every text into encs[] as the job will run it, counts its
 * tokens into each[i] (count_text) and sums them. Returns 0 or -1 with
 * *err set. */
static int count_tokens(const request_model *rm, const route *rt, const serve_request *r,
                        rf_encoding *encs, int32_t *each, int32_t *tokens, serve_error *err)
{
    if (r->window > rm->g->max_input_length)
        return serve_fail(err, 422, "Validation", "window: %d is over the limit of %d", r->window,
                          rm->g->max_input_length);
    *tokens = 0;
    for (int32_t i = 0; i < r->n_texts; i++) {
        int32_t counted;
        if (count_text(rm, rt, r, i, NULL, &r->texts[i], &encs[i], &counted, err))
            return -1;
        *tokens += each[i] = counted;
    }
    return 0;
}

/* Cosine rerank embeds query and document apart, so they are tokenized
 * apart: the query (every pair's text) once into encs[n], document i into
 * encs[i]. sides[2i] and sides[2i + 1] are views of pair i's two
 * encodings, as rf_similarity_encodings reads them; the query's tokens
 * count once for every pair, as it runs once for each (each[i]: pair i's).
 * Returns 0 or -1
 * with *err set. */
static int count_sides(const request_model *rm, const route *rt, const serve_request *r,
                       rf_encoding *encs, rf_encoding *sides, int32_t *each, int32_t *tokens,
                       serve_error *err)
{
    int32_t n = r->n_texts, query_tokens = 0;
    *tokens = 0;
    if (n == 0)
        return 0;
    const rf_text query = {.text = r->texts[0].text, .text_len = r->texts[0].text_len};
    if (count_text(rm, rt, r, 0, "query", &query, &encs[n], &query_tokens, err))
        return -1;
    for (int32_t i = 0; i < n; i++) {
        const rf_text doc = {.text = r->texts[i].pair, .text_len = r->texts[i].pair_len};
        int32_t counted;
        if (count_text(rm, rt, r, i, NULL, &doc, &encs[i], &counted, err))
            return -1;
        *tokens += each[i] = query_tokens + counted;
        sides[2 * i] = encs[n];
        sides[2 * i + 1] = encs[i];
    }
    return 0;
}

/* ==== Answers ==== */

static int32_t hidden_size(const answer_in *a)
{
    return rf_model_hparams(a->rm->g->model)->hidden_size;
}

static int32_t labels(const answer_in *a)
{
    int32_t N = rf_model_hparams(a->rm->g->model)->num_labels;
    return N > 0 ? N : 1;
}

/* Each of the job's vectors to unit length. */
static void normalize_vectors(const answer_in *a)
{
    float *vectors = a->job->out.rows;
    for (int32_t i = 0; i < a->job->n; i++)
        rf_l2_normalize(vectors + (size_t)i * hidden_size(a), hidden_size(a));
}

static cJSON *answer_embed(const answer_in *a)
{
    if (a->r->normalize)
        normalize_vectors(a);
    return serve_json_embed(a->r, a->job->out.rows, hidden_size(a));
}

/* Normalized as TEI, then cut to "dimensions" (Matryoshka). */
static cJSON *answer_openai(const answer_in *a)
{
    int32_t D = hidden_size(a);
    normalize_vectors(a);
    if (a->r->dimensions > 0 && a->r->dimensions < D) {
        serve_openai_truncate(a->job->out.rows, a->job->n, D, a->r->dimensions);
        D = a->r->dimensions;
    }
    return serve_json_openai(a->r, a->job->out.rows, D, a->rm->model_id, a->tokens);
}

static cJSON *answer_predict(const answer_in *a)
{
    return serve_json_predict(a->r, a->rm->g->model, a->job->out.rows, labels(a));
}

static cJSON *answer_similarity(const answer_in *a)
{
    return serve_json_similarity(a->r, a->job->out.rows, hidden_size(a));
}

static cJSON *answer_tokenize(const answer_in *a)
{
    return serve_json_tokens(a->r, a->rm->g->model, a->encs);
}

static cJSON *answer_fill_mask(const answer_in *a)
{
    return serve_json_fill_mask(a->r, a->rm->g->model, a->job->out.rows);
}

static cJSON *answer_ner(const answer_in *a)
{
    return serve_json_ner(a->r, a->rm->g->model, a->job->out.rows);
}

static cJSON *answer_qa(const answer_in *a)
{
    return serve_json_qa(a->r, a->job->out.rows);
}

static cJSON *answer_scm(const answer_in *a)
{
    return serve_json_scm(a->r, a->job->out.rows);
}

static cJSON *answer_rerank(const answer_in *a)
{
    return serve_json_rerank(a->r, a->job->out.rows, rf_rerank_scoring_of(a->rm->g->model),
                             a->rm->model_id, a->tokens);
}

static cJSON *answer_embed_all(const answer_in *a)
{
    return serve_json_embed_all(a->r, a->job->out.rows, a->job->out.count, hidden_size(a));
}

static cJSON *answer_decode(const answer_in *a)
{
    return serve_json_decode(a->r, a->rm->g->model);
}

static cJSON *answer_hf_classify(const answer_in *a)
{
    return serve_json_hf_classify(a->r, a->rm->g->model, a->job->out.rows, labels(a));
}

static cJSON *answer_hf_fill_mask(const answer_in *a)
{
    return serve_json_hf_fill_mask(a->r, a->rm->g->model, a->encs, a->job->out.rows);
}

static cJSON *answer_hf_ner(const answer_in *a)
{
    return serve_json_hf_ner(a->r, a->rm->g->model, a->job->out.rows);
}

/* ==== Running a job ==== */

/* A request whose job is queued or running: everything its answer is
 * written from, kept until serve_route_finish. */
struct serve_pending {
    request_model rm;   /* holds its generation's reference */
    const route *rt;
    serve_request r;
    rf_encoding *encs;  /* the inputs as they were counted (and run) */
    int32_t n_encs;     /* n; cosine rerank: n + 1, the query last */
    rf_encoding *sides; /* cosine rerank: [2n] views of encs, each pair's query and document */
    int32_t *plain;     /* the token-id inputs' type ids and mask */
    int32_t *counted;   /* [n] each input's tokens, as counted */
    int32_t n, tokens;
    serve_job job;
};

/* The first half of running a job: builds it on the encodings counted
 * (encs: the texts as they were tokenized, or the token-id inputs), with
 * the results its kind needs (kinds.h), ready to be queued. Returns -1
 * with the answer written when that fails. */
static int prepare_job(serve_pending *p, serve_response *resp, serve_log_entry *log,
                       serve_error *err)
{
    const request_model *rm = &p->rm;
    const rf_hparams *hp = rf_model_hparams(rm->g->model);
    serve_request *r = &p->r;
    int32_t n = p->n;
    p->job = (serve_job){.kind = kind_of(rm, p->rt, r), .texts = r->texts, .n = n,
                         .encs = p->sides ? p->sides : p->encs, .tokens = p->tokens,
                         .input_tokens = p->counted,
                         .top_k = r->top_k, .max_answer_tokens = r->max_answer_tokens,
                         .doc_stride = r->doc_stride, .window = r->window, .stride = r->stride,
                         .raw_scores = r->raw_scores, .truncation_side = r->truncation_side};
    serve_job *job = &p->job;
    const serve_kind_ops *kind = serve_kind_ops_of(job->kind);
    if (!serve_results_alloc(&job->out, kind, n / kind->inputs_per_unit, job->encs,
                             hp->hidden_size, hp->num_labels > 0 ? hp->num_labels : 1)) {
        serve_fail(err, 500, "Backend", "out of memory for %d inputs", n);
        respond_error(resp, log, err);
        return -1;
    }
    return 0;
}

/* The second half: the answer from the job's results, or the error of a
 * job that failed or was dropped unrun. */
static void answer_job(serve_pending *p, serve_response *resp, serve_log_entry *log,
                       serve_error *err)
{
    const route *rt = p->rt;
    serve_request *r = &p->r;
    serve_job *job = &p->job;
    if (job->outcome != SERVE_JOB_RAN) {
        serve_fail(err, 503, "Overloaded", "%s",
                   job->outcome == SERVE_JOB_QUEUE_TIMEOUT
                       ? "waited in the queue longer than --queue-timeout; not run"
                       : "the client went away; not run");
        respond_error(resp, log, err);
        return;
    }
    log->queue_seconds = job->started_at - job->queued_at;
    log->inference_seconds = job->forward_seconds;
    log->tokens = job->ran_tokens; /* what was answered from the cache cost none */

    if (job->status != RF_OK) {
        serve_fail(err, 500, "Backend", "%.240s", job->error.message);
        respond_error(resp, log, err);
        return;
    }
    /* a unit of several texts (scm's triplet) is named as the client sent it */
    bool by_item = job->out.kind->inputs_per_unit > 1;
    for (int32_t i = 0; i < job->out.units; i++) {
        if (job->out.items[i].status == RF_OK)
            continue;
        char field[64];
        if (by_item)
            list_name(r, rt->list, i, field, sizeof field);
        else
            field_name(rt, r, i, field, sizeof field);
        serve_fail(err, 422, "Validation", "%s: %.200s", field, job->out.items[i].error.message);
        respond_error(resp, log, err);
        return;
    }
    respond_json(resp, 200,
                 rt->answer(&(answer_in){.rm = &p->rm, .r = r, .job = job, .encs = p->encs,
                                         .tokens = p->tokens}));
}

void serve_route_pending_free(serve_pending *p)
{
    if (!p)
        return;
    serve_results_free(&p->job.out);
    free(p->counted);
    for (int32_t i = 0; p->encs && !p->r.ids && i < p->n_encs; i++)
        rf_encoding_free(&p->encs[i]);
    free(p->encs);
    free(p->sides);
    free(p->plain);
    serve_request_free(&p->r);
    /* last: this may free the generation (and its model) */
    serve_generation_release(p->rm.g);
    free(p);
}

/* Characters (code points) of the request's texts, for x-compute-characters. */
static int64_t characters(const serve_request *r)
{
    int64_t n = 0;
    for (int32_t i = 0; i < r->n_texts; i++) {
        const rf_text *t = &r->texts[i];
        for (size_t b = 0; b < t->text_len; b++)
            n += ((unsigned char)t->text[b] & 0xC0) != 0x80;
        for (size_t b = 0; t->pair && b < t->pair_len; b++)
            n += ((unsigned char)t->pair[b] & 0xC0) != 0x80;
    }
    return n;
}

/* /similarity's "parameters.prompt_name": that prompt before every
 * sentence; refusals name the field. */
static int similarity_prompt(const request_model *rm, serve_request *r, serve_error *err)
{
    if (!r->prompt_name || !serve_apply_prompt(rm->g->model, r->prompt_name, r, err))
        return 0;
    char msg[sizeof err->message];
    snprintf(msg, sizeof msg, "parameters.%.240s", err->message);
    memcpy(err->message, msg, sizeof msg);
    return -1;
}

/* Frees a request answered before it became pending: its generation
 * stays the caller's. Returns NULL. */
static serve_pending *drop(serve_pending *p)
{
    p->rm.g = NULL;
    serve_route_pending_free(p);
    return NULL;
}

/* A POST route: check the parsed body (`root`; NULL: it was not JSON,
 * *parse_err says why) against the model and the limits, count its tokens,
 * then answer at once, or, for a route that runs a job, return the job
 * ready to be queued (NULL when answered). The pending request takes over
 * rm's generation; without one (answered), the caller keeps it. */
static serve_pending *handle_post(const request_model *rm, const route *rt, const cJSON *root,
                                  const serve_error *parse_err, serve_response *resp,
                                  serve_log_entry *log)
{
    serve_pending *p = calloc(1, sizeof *p);
    serve_error err;
    if (!p) {
        serve_fail(&err, 500, "Backend", "out of memory");
        respond_error(resp, log, &err);
        return NULL;
    }
    p->rm = *rm;
    rm = &p->rm;
    p->rt = rt;
    serve_request *r = &p->r;
    if (!root)
        err = *parse_err;
    if (!root || serve_request_from_json(rt->body, root, rm->server->max_client_batch, r, &err)) {
        respond_error(resp, log, &err);
        return drop(p);
    }
    if (!r->truncate_set && rm->server->auto_truncate)
        r->truncate = true;
    /* the embedding routes: the model's default sentence-transformers prompt;
       /similarity: the prompt its "parameters" name */
    if ((rt->flags & R_PROMPT && serve_apply_prompt(rm->g->model, NULL, r, &err)) ||
        similarity_prompt(rm, r, &err)) {
        respond_error(resp, log, &err);
        return drop(p);
    }
    const rf_hparams *hp = rf_model_hparams(rm->g->model);
    int32_t n = p->n = r->ids ? r->n_items : r->n_texts;
    bool by_sides = rt->kind != NO_JOB && kind_of(rm, rt, r) == SERVE_KIND_RERANK_COSINE;
    p->n_encs = by_sides && n > 0 ? n + 1 : n;
    rf_encoding *encs = p->encs = calloc((size_t)p->n_encs, sizeof *encs);
    p->counted = calloc((size_t)n + 1, sizeof *p->counted);
    /* + 1: an empty request still gets an array, so NULL means out of memory */
    p->sides = by_sides ? calloc((size_t)2 * n + 1, sizeof *p->sides) : NULL;
    /* the token-id inputs' type ids (zeros) and mask (ones) */
    int32_t *plain = p->plain =
        r->ids ? calloc((size_t)2 * rm->g->max_input_length, sizeof *plain) : NULL;
    for (int32_t k = 0; plain && k < rm->g->max_input_length; k++)
        plain[rm->g->max_input_length + k] = 1;
    int32_t tokens = 0;
    double t0 = cli_now_seconds();
    log->batch = r->batch;
    log->characters = characters(r);
    if (!encs || !p->counted || (r->ids && !plain) || (by_sides && !p->sides)) {
        serve_fail(&err, 500, "Backend", "out of memory");
        respond_error(resp, log, &err);
    } else if (rt->head != RF_HEAD_NONE && hp->head != rt->head) {
        serve_fail(&err, 400, "Validation", "this route needs a model with a %s head; this one has %s",
                   rf_head_name(rt->head), rf_head_name(hp->head));
        respond_error(resp, log, &err);
    } else if (r->dimensions > hp->hidden_size) {
        serve_fail(&err, 400, "Validation", "dimensions: %d is more than the model's %d",
                   r->dimensions, hp->hidden_size);
        respond_error(resp, log, &err);
    } else if (r->ids      ? count_ids(rm, rt, r, encs, plain, p->counted, &tokens, &err)
               : by_sides ? count_sides(rm, rt, r, encs, p->sides, p->counted, &tokens, &err)
                          : count_tokens(rm, rt, r, encs, p->counted, &tokens, &err)) {
        respond_error(resp, log, &err);
    } else {
        log->tokenize_seconds = cli_now_seconds() - t0;
        log->inputs = n;
        log->tokens = p->tokens = tokens;
        if (rt->kind == NO_JOB)
            respond_json(resp, 200,
                         rt->answer(&(answer_in){.rm = rm, .r = r, .encs = encs,
                                                 .tokens = tokens}));
        else if (prepare_job(p, resp, log, &err) == 0)
            return p;
    }
    return drop(p);
}

/* The "model" of a parsed body that names one (R_MODEL_FIELD routes), read
 * ahead of the handler so that the request runs on one model from its
 * start; the handler's parser checks the field again. NULL when the body
 * names none. */
static const char *body_model(const cJSON *root, size_t max)
{
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    return cJSON_IsString(model) && strlen(model->valuestring) < max ? model->valuestring : NULL;
}

/* The model a request runs on: the path's /models/NAME prefix, else the
 * body's "model" where the route has one and the server several models
 * (with one, "model" is only echoed, whatever it says), else the first.
 * -1 when the name is not served, with a 404 answered unless resp is NULL. */
static int choose_model(const serve_server *s, const route *rt, const char *path,
                        const cJSON *root, serve_response *resp, serve_log_entry *log)
{
    size_t name_len;
    const char *rest, *name = path ? model_prefix(path, &name_len, &rest) : NULL;
    const char *field = !name && rt->flags & R_MODEL_FIELD && serve_models_count(s->models) > 1
                            ? body_model(root, 256)
                            : NULL;
    if (field) {
        name = field;
        name_len = strlen(field);
    }
    if (!name)
        return 0;
    int i = serve_models_find(s->models, name, name_len);
    if (i >= 0 || !resp)
        return i;
    char names[512];
    serve_models_list(s->models, names, sizeof names);
    serve_error err;
    /* "model: ..." names the field (OpenAI's param) */
    serve_fail(&err, 404, "NotFound", "model%s '%.*s' is not served here; the models are: %s",
               field ? ":" : "", (int)(name_len > 200 ? 200 : name_len), name, names);
    respond_error(resp, log, &err);
    return -1;
}

/* Whether a route's body is read: POST routes that are not actions. */
static bool reads_body(const route *rt)
{
    return rt->get == NULL;
}

int serve_route_model(const serve_server *s, int route_id, const char *path, const char *body,
                      size_t len)
{
    const route *rt = &routes[route_id];
    serve_error err;
    bool by_field = rt->flags & R_MODEL_FIELD && serve_models_count(s->models) > 1;
    cJSON *root = by_field ? serve_request_read(body, len, &err) : NULL;
    int m = choose_model(s, rt, path, root, NULL, NULL);
    cJSON_Delete(root);
    return m < 0 ? 0 : m;
}

serve_pending *serve_route_submit(const serve_server *s, int route_id, const char *body,
                                  size_t len, const serve_gauges *http, serve_response *resp,
                                  serve_log_entry *log)
{
    const route *rt = &routes[route_id];
    log->openai = serve_route_speaks_openai(route_id, "");
    /* parsed once: the model it names, then the request */
    serve_error parse_err;
    cJSON *root = reads_body(rt) ? serve_request_read(body, len, &parse_err) : NULL;
    int m = choose_model(s, rt, log->path, root, resp, log);
    if (m < 0) {
        cJSON_Delete(root);
        return NULL;
    }
    /* the request's model: its generation, held until the answer is
       written (by a pending request, until it is freed) */
    request_model rm = {.server = s, .g = serve_models_acquire(s->models, m),
                        .model_id = serve_models_name(s->models, m)};
    log->model = m;
    if (rt->flags & R_MODEL_TASK)
        rt = model_task(rm.g->model);
    serve_pending *p = NULL;
    if (rt->get)
        rt->get(&rm, http, resp);
    else
        p = handle_post(&rm, rt, root, &parse_err, resp, log);
    cJSON_Delete(root);
    if (!p) {
        serve_generation_release(rm.g);
    } else if (rm.g->cache_runner && serve_runner_answer_cached(rm.g->cache_runner, &p->job)) {
        /* every input was in the cache: answered here, never queued (this
           also gives the generation back) */
        p->job.outcome = SERVE_JOB_RAN;
        p->job.queued_at = p->job.started_at = cli_now_seconds();
        serve_route_finish(p, resp, log);
        return NULL;
    }
    return p;
}

void serve_route_queue(serve_pending *p, serve_job_done_fn on_done, serve_job_gone_fn client_gone,
                       void *arg)
{
    p->job.client_gone = client_gone;
    serve_batcher_submit(p->rm.g->batcher, &p->job, on_done, arg);
}

serve_job *serve_route_job(serve_pending *p)
{
    return &p->job;
}

void serve_route_finish(serve_pending *p, serve_response *resp, serve_log_entry *log)
{
    serve_error err;
    answer_job(p, resp, log, &err);
    serve_route_pending_free(p);
}
