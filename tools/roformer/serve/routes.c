/*
 * routes.c — the route table and the handlers (see routes.h).
 *
 * An engine request goes: parse the body (422/413), tokenize every text
 * once here, on the request's own thread, to count its real tokens and to
 * refuse one longer than --max-input-length unless "truncate" is set
 * (422), queue the job and wait (batcher.h), then turn the results into
 * the route's JSON. The batcher's pipeline tokenizes again; tokenizing is
 * cheap next to the encoder, and it keeps the batcher's inputs plain texts.
 */
#include "serve/routes.h"

#include "serve/hf_responses.h"
#include "serve/openai.h"
#include "serve/prompt.h"
#include "serve/request.h"
#include "serve/responses.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ROUTE_* are the indices of the GET routes in the table below. */
enum { ENGINE_NONE = -1, ENGINE_ROOT = -2, ROUTE_HEALTH = 9, ROUTE_INFO, ROUTE_METRICS };

static const struct {
    const char *method, *path;
    int api; /* serve_api, ENGINE_NONE, or ENGINE_ROOT (the model's own task) */
} routes[] = {
    {"POST", "/embed", SERVE_API_EMBED},
    {"POST", "/v1/embeddings", SERVE_API_OPENAI},
    {"POST", "/predict", SERVE_API_PREDICT},
    {"POST", "/similarity", SERVE_API_SIMILARITY},
    {"POST", "/tokenize", SERVE_API_TOKENIZE},
    {"POST", "/fill-mask", SERVE_API_FILL_MASK},
    {"POST", "/ner", SERVE_API_NER},
    {"POST", "/qa", SERVE_API_QA},
    {"POST", "/scm", SERVE_API_SCM},
    {"GET", "/health", ENGINE_NONE},
    {"GET", "/info", ENGINE_NONE},
    {"GET", "/metrics", ENGINE_NONE},
    {"POST", "/rerank", SERVE_API_RERANK},
    {"POST", "/v1/rerank", SERVE_API_RERANK_JINA},
    {"POST", "/", ENGINE_ROOT},
    {"POST", "/embeddings", SERVE_API_OPENAI},
    {"POST", "/embed_all", SERVE_API_EMBED_ALL},
    {"POST", "/decode", SERVE_API_DECODE},
    {"POST", "/pipeline/text-classification", SERVE_API_HF_CLASSIFY},
    {"POST", "/pipeline/fill-mask", SERVE_API_HF_FILL_MASK},
    {"POST", "/pipeline/token-classification", SERVE_API_HF_NER},
};
enum { N_ROUTES = sizeof routes / sizeof routes[0] };

static const char *const route_names[N_ROUTES + 1] = {
    "/embed", "/v1/embeddings", "/predict", "/similarity", "/tokenize", "/fill-mask",
    "/ner",   "/qa",            "/scm",     "/health",     "/info",     "/metrics",
    "/rerank", "/v1/rerank", "/", "/embeddings", "/embed_all", "/decode",
    "/pipeline/text-classification", "/pipeline/fill-mask", "/pipeline/token-classification",
    "unknown"};

int serve_route_count(void) { return N_ROUTES + 1; }
const char *const *serve_route_names(void) { return route_names; }

int serve_route_find(const char *method, const char *path, int *route, const char **allow)
{
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

bool serve_route_uses_engine(int route)
{
    return route >= 0 && route < N_ROUTES && routes[route].api != ENGINE_NONE &&
           routes[route].api != SERVE_API_TOKENIZE && routes[route].api != SERVE_API_DECODE;
}

bool serve_route_speaks_openai(int route, const char *path)
{
    if (route >= 0 && route < N_ROUTES)
        return routes[route].api == SERVE_API_OPENAI || !strncmp(routes[route].path, "/v1/", 4);
    return !strncmp(path, "/v1/", 4);
}

const char *serve_route_method(int route)
{
    return route >= 0 && route < N_ROUTES ? routes[route].method : NULL;
}

bool serve_route_is_public(int route)
{
    return route == ROUTE_HEALTH;
}

bool serve_route_answers_draining(int route)
{
    return route == ROUTE_METRICS;
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

/* TEI's model_type: a sequence classifier is {"classifier": {"id2label":
 * {"0": label, ...}, "label2id": {label: 0, ...}}}, a one-label one
 * {"reranker": {...}} with the same fields (TEI's name for a cross-encoder,
 * which /rerank and POST / serve), any other model {"embedding":
 * {"pooling": ...}} (the pooling /embed uses). */
static cJSON *tei_model_type(const serve_server *s, const char *pooling)
{
    const rf_hparams *hp = rf_model_hparams(s->model);
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
        const char *l = rf_model_label(s->model, i);
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
static void add_rerank_info(const serve_server *s, cJSON *o)
{
    rf_rerank_scoring scoring = rf_rerank_scoring_of(s->model);
    cJSON *info = cJSON_AddObjectToObject(o, "rerank");
    if (!info)
        return;
    cJSON_AddStringToObject(info, "scoring", rf_rerank_scoring_name(scoring));
    if (scoring != RF_RERANK_CLASSIFIER)
        return;
    int32_t label = rf_model_rerank_label(s->model);
    char fallback[32];
    const char *name = rf_model_label(s->model, label);
    if (!name) {
        snprintf(fallback, sizeof fallback, "LABEL_%d", label);
        name = fallback;
    }
    cJSON_AddStringToObject(info, "label", name);
}

/* TEI's fields (model_id, model_sha, model_dtype, model_type, the limits,
 * tokenization_workers, version, ...), then the model's own. */
static void handle_info(const serve_server *s, serve_response *resp)
{
    const rf_hparams *hp = rf_model_hparams(s->model);
    /* TEI spells the last-token pooling "last_token" */
    const char *pooling = s->pooling == RF_POOLING_LAST ? "last_token" : rf_pooling_name(s->pooling);
    cJSON *o = cJSON_CreateObject(), *labels = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "model_id", s->model_id);
    cJSON_AddNullToObject(o, "model_sha");
    /* the encoder's arithmetic, in TEI's words */
    cJSON_AddStringToObject(o, "model_dtype",
                            s->compute == RF_COMPUTE_BF16   ? "bfloat16"
                            : s->compute == RF_COMPUTE_INT8 ? "int8"
                                                            : "float32");
    cJSON_AddItemToObject(o, "model_type", tei_model_type(s, pooling));
    cJSON_AddNumberToObject(o, "max_concurrent_requests", s->max_concurrent);
    cJSON_AddNumberToObject(o, "max_input_length", s->max_input_length);
    cJSON_AddNumberToObject(o, "max_batch_tokens", s->max_batch_tokens);
    if (s->max_batch_requests > 0)
        cJSON_AddNumberToObject(o, "max_batch_requests", s->max_batch_requests);
    else
        cJSON_AddNullToObject(o, "max_batch_requests"); /* no cap but the tokens */
    cJSON_AddNumberToObject(o, "max_client_batch_size", s->max_client_batch);
    cJSON_AddBoolToObject(o, "auto_truncate", s->auto_truncate);
    /* each request is tokenized on its own connection's thread */
    cJSON_AddNumberToObject(o, "tokenization_workers", s->max_concurrent);
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
        const char *l = rf_model_label(s->model, i);
        cJSON_AddItemToArray(labels, cJSON_CreateString(l ? l : ""));
    }
    cJSON_AddItemToObject(o, "labels", labels);
    add_rerank_info(s, o);
    cJSON_AddNumberToObject(o, "payload_limit", (double)s->payload_limit);
    respond_json(resp, 200, o);
}

static void handle_metrics(const serve_server *s, serve_gauges g, serve_response *resp)
{
    g.queued = serve_batcher_queued(s->batcher);
    g.running = serve_batcher_running(s->batcher);
    char *text = serve_metrics_render(s->metrics, &g);
    if (!text) {
        serve_response_error(resp, 500, "Backend", "out of memory writing the metrics");
        return;
    }
    *resp = (serve_response){.status = 200,
                             .content_type = "text/plain; version=0.0.4; charset=utf-8",
                             .body = text, .len = strlen(text)};
}

/* ==== Engine routes ==== */

/* How the client names text i of the request, for messages. */
static void field_name(const serve_request *r, int32_t i, char *buf, size_t n)
{
    const char *base = r->api == SERVE_API_OPENAI ? "input"
                       : r->api == SERVE_API_DECODE ? "ids"
                                                    : "inputs";
    static const char *const abc[] = {"A", "B", "C"};
    if (r->api == SERVE_API_RERANK || r->api == SERVE_API_RERANK_JINA)
        snprintf(buf, n, "%s[%d]", r->api == SERVE_API_RERANK ? "texts" : "documents", i);
    else if (r->api == SERVE_API_SIMILARITY && i == 0)
        snprintf(buf, n, "inputs.source_sentence");
    else if (r->api == SERVE_API_SIMILARITY)
        snprintf(buf, n, "inputs.sentences[%d]", i - 1);
    else if (r->api == SERVE_API_SCM && r->batch)
        snprintf(buf, n, "inputs[%d].%s", i / 3, abc[i % 3]);
    else if (r->api == SERVE_API_SCM)
        snprintf(buf, n, "inputs.%s", abc[i % 3]);
    else if (r->batch)
        snprintf(buf, n, "%s[%d]", base, i);
    else
        snprintf(buf, n, "%s", base);
}

/* The head each route needs (RF_HEAD_NONE: any model). */
static rf_head_kind head_needed(serve_api api)
{
    switch (api) {
    case SERVE_API_PREDICT:
    case SERVE_API_HF_CLASSIFY: return RF_HEAD_SEQ_CLS;
    case SERVE_API_FILL_MASK:
    case SERVE_API_HF_FILL_MASK: return RF_HEAD_MLM;
    case SERVE_API_NER:
    case SERVE_API_HF_NER: return RF_HEAD_TOKEN_CLS;
    case SERVE_API_QA: return RF_HEAD_QA;
    default: return RF_HEAD_NONE;
    }
}

static serve_kind kind_of(const serve_request *r)
{
    switch (r->api) {
    case SERVE_API_PREDICT: return r->raw_scores ? SERVE_KIND_LOGITS : SERVE_KIND_CLASSIFY;
    case SERVE_API_HF_CLASSIFY: return SERVE_KIND_CLASSIFY;
    case SERVE_API_FILL_MASK:
    case SERVE_API_HF_FILL_MASK: return SERVE_KIND_FILL_MASK;
    case SERVE_API_NER:
    case SERVE_API_HF_NER: return SERVE_KIND_NER;
    case SERVE_API_QA: return SERVE_KIND_QA;
    case SERVE_API_EMBED_ALL: return SERVE_KIND_EMBED_ALL;
    case SERVE_API_OPENAI: return r->ids ? SERVE_KIND_EMBED_IDS : SERVE_KIND_EMBED;
    case SERVE_API_RERANK:
    case SERVE_API_RERANK_JINA: return SERVE_KIND_RERANK;
    case SERVE_API_SCM: return SERVE_KIND_SCM;
    default: return SERVE_KIND_EMBED;
    }
}

/* Checks token-id inputs against the vocabulary and, when they are to run
 * (not /decode), against --max-input-length; sums them into *tokens and
 * points encs[i] at them (ids as given, type 0, mask 1: `plain` holds
 * max_input_length zeros then as many ones). Returns 0 or -1 with *err. */
static int count_ids(const serve_server *s, const serve_request *r, rf_encoding *encs,
                     int32_t *plain, int32_t *tokens, serve_error *err)
{
    int32_t V = rf_model_hparams(s->model)->vocab_size;
    *tokens = 0;
    for (int32_t i = 0; i < r->n_items; i++) {
        char field[64];
        field_name(r, i, field, sizeof field);
        for (int32_t k = 0; k < r->n_ids[i]; k++)
            if (r->ids[i][k] >= V)
                return serve_fail(err, 422, "Validation",
                                  "%s[%d]: token id %d is not in the vocabulary (%d tokens)", field,
                                  k, r->ids[i][k], V);
        if (r->api != SERVE_API_DECODE && r->n_ids[i] > s->max_input_length)
            return serve_fail(err, 422, "Validation", "%s: %d tokens, over the limit of %d",
                              field, r->n_ids[i], s->max_input_length);
        encs[i] = (rf_encoding){.ids = r->ids[i], .type_ids = plain,
                                .mask = plain + s->max_input_length, .n = r->n_ids[i]};
        *tokens += r->n_ids[i];
    }
    return 0;
}

/* Tokenizes every text into encs[] (truncated at --max-input-length when
 * the request allows it), sums the tokens and refuses a text that is too
 * long. A QA request with doc_stride reads a long context in windows of
 * --max-input-length tokens instead: nothing is too long, and the tokens
 * are those of its windows. Returns 0 or -1 with *err set. */
static int count_tokens(const serve_server *s, const serve_request *r, rf_encoding *encs,
                        int32_t *tokens, serve_error *err)
{
    bool windows = r->api == SERVE_API_QA && r->doc_stride >= 0;
    if (r->window > s->max_input_length)
        return serve_fail(err, 422, "Validation", "window: %d is over the limit of %d", r->window,
                          s->max_input_length);
    *tokens = 0;
    for (int32_t i = 0; i < r->n_texts; i++) {
        const rf_text *t = &r->texts[i];
        char field[64];
        rf_error e;
        if (rf_tokenize_truncated(s->model, t->text, t->text_len, t->pair,
                                  t->pair ? t->pair_len : 0,
                                  r->truncate && !windows ? s->max_input_length : 0,
                                  (rf_truncation_side)r->truncation_side, &encs[i],
                                  &e) != RF_OK) {
            field_name(r, i, field, sizeof field);
            return serve_fail(err, 422, "Tokenizer", "%s: %.200s", field, e.message);
        }
        if (windows) {
            *tokens += rf_qa_window_tokens(&encs[i], s->max_input_length, r->doc_stride);
            continue;
        }
        /* a single text longer than the window is cut into windows */
        bool cut = r->window > 0 && !t->pair && encs[i].n > r->window;
        if (encs[i].n > s->max_input_length && r->api != SERVE_API_TOKENIZE && !cut) {
            field_name(r, i, field, sizeof field);
            return serve_fail(err, 422, "Validation",
                              "%s: %d tokens, over the limit of %d; send \"truncate\": true to cut "
                              "it%s",
                              field, encs[i].n, s->max_input_length,
                              r->api == SERVE_API_QA ? " or \"doc_stride\" to read it in windows"
                                                     : "");
        }
        *tokens += encs[i].n;
    }
    return 0;
}

/* The job's result buffers, by kind; false when out of memory. */
static bool job_alloc(serve_job *job, const rf_hparams *hp, int32_t tokens)
{
    size_t n = (size_t)job->n, D = (size_t)hp->hidden_size;
    size_t N = hp->num_labels > 0 ? (size_t)hp->num_labels : 1;
    job->items = calloc(n, sizeof *job->items);
    if (!job->items)
        return false;
    switch (job->kind) {
    case SERVE_KIND_EMBED:
    case SERVE_KIND_EMBED_IDS: return (job->vectors = malloc(sizeof(float) * n * D)) != NULL;
    case SERVE_KIND_EMBED_ALL:
        return (job->vectors = malloc(sizeof(float) * (size_t)(tokens > 0 ? tokens : 1) * D));
    case SERVE_KIND_CLASSIFY:
    case SERVE_KIND_LOGITS: return (job->probs = malloc(sizeof(float) * n * N)) != NULL;
    case SERVE_KIND_FILL_MASK: return (job->fill = calloc(n, sizeof *job->fill)) != NULL;
    case SERVE_KIND_NER: return (job->ner = calloc(n, sizeof *job->ner)) != NULL;
    case SERVE_KIND_QA: return (job->qa = calloc(n, sizeof *job->qa)) != NULL;
    case SERVE_KIND_RERANK: return (job->probs = malloc(sizeof(float) * n)) != NULL;
    case SERVE_KIND_SCM: return (job->scm = calloc(n / 3 + 1, sizeof *job->scm)) != NULL;
    }
    return false;
}

/* The route's JSON from the job's results. */
static cJSON *answer(const serve_server *s, const serve_request *r, const serve_job *job,
                     const rf_encoding *encs, const int32_t *lengths, int32_t tokens)
{
    const rf_hparams *hp = rf_model_hparams(s->model);
    int32_t D = hp->hidden_size, N = hp->num_labels > 0 ? hp->num_labels : 1;
    switch (r->api) {
    case SERVE_API_EMBED: return serve_json_embed(r, job->vectors, D);
    case SERVE_API_OPENAI:
        if (r->dimensions > 0 && r->dimensions < D) {
            serve_openai_truncate(job->vectors, job->n, D, r->dimensions);
            D = r->dimensions;
        }
        return serve_json_openai(r, job->vectors, D, s->model_id, tokens);
    case SERVE_API_SIMILARITY: return serve_json_similarity(r, job->vectors, D);
    case SERVE_API_SCM: return serve_json_scm(r, job->scm);
    case SERVE_API_PREDICT: return serve_json_predict(r, s->model, job->probs, N);
    case SERVE_API_FILL_MASK: return serve_json_fill_mask(r, s->model, job->fill);
    case SERVE_API_NER: return serve_json_ner(r, s->model, job->ner);
    case SERVE_API_QA: return serve_json_qa(r, job->qa);
    case SERVE_API_EMBED_ALL: return serve_json_embed_all(r, job->vectors, lengths, D);
    case SERVE_API_HF_CLASSIFY: return serve_json_hf_classify(r, s->model, job->probs, N);
    case SERVE_API_HF_FILL_MASK: return serve_json_hf_fill_mask(r, s->model, encs, job->fill);
    case SERVE_API_HF_NER: return serve_json_hf_ner(r, s->model, job->ner);
    case SERVE_API_RERANK:
    case SERVE_API_RERANK_JINA:
        return serve_json_rerank(r, job->probs, rf_rerank_scoring_of(s->model), s->model_id,
                                 tokens);
    default: return NULL;
    }
}

/* Runs the job and writes its answer; the inputs are counted already
 * (encs: their tokens, or the token-id inputs). */
static void run_job(const serve_server *s, serve_request *r, const rf_encoding *encs,
                    int32_t tokens, serve_response *resp, serve_log_entry *log, serve_error *err)
{
    const rf_hparams *hp = rf_model_hparams(s->model);
    size_t D = (size_t)hp->hidden_size;
    int32_t n = r->ids ? r->n_items : r->n_texts;
    serve_kind kind = kind_of(r);
    /* the encodings count_tokens made run as they are, where no windows
       need the texts: each text is tokenized once */
    bool once = r->ids || kind == SERVE_KIND_EMBED_ALL || (kind == SERVE_KIND_EMBED && !r->window);
    serve_job job = {.kind = kind, .texts = r->texts, .n = n, .encs = once ? encs : NULL,
                     .tokens = tokens, .top_k = r->top_k,
                     .max_answer_tokens = r->max_answer_tokens, .doc_stride = r->doc_stride,
                     .window = r->window, .stride = r->stride,
                     .raw_scores = r->raw_scores, .truncation_side = r->truncation_side};
    int32_t *lengths =
        job.kind == SERVE_KIND_EMBED_ALL ? malloc(sizeof *lengths * (size_t)n) : NULL;
    for (int32_t i = 0; lengths && i < n; i++)
        lengths[i] = encs[i].n;
    job.lengths = lengths;
    if (!job_alloc(&job, hp, tokens) || (job.kind == SERVE_KIND_EMBED_ALL && !lengths)) {
        serve_fail(err, 500, "Backend", "out of memory for %d inputs", n);
        respond_error(resp, log, err);
        goto done;
    }

    serve_batcher_run(s->batcher, &job);
    log->queue_seconds = job.started_at - job.queued_at;
    log->inference_seconds = job.forward_seconds;

    if (job.status != RF_OK) {
        serve_fail(err, 500, "Backend", "%.240s", job.error.message);
        respond_error(resp, log, err);
        goto done;
    }
    /* scm's items are its triplets, named as the client sent them */
    for (int32_t i = 0; i < (job.kind == SERVE_KIND_SCM ? r->n_items : n); i++) {
        if (job.items[i].status == RF_OK)
            continue;
        char field[64];
        if (job.kind == SERVE_KIND_SCM)
            snprintf(field, sizeof field, r->batch ? "inputs[%d]" : "inputs", i);
        else
            field_name(r, i, field, sizeof field);
        serve_fail(err, 422, "Validation", "%s: %.200s", field, job.items[i].error.message);
        respond_error(resp, log, err);
        goto done;
    }
    if ((r->api == SERVE_API_EMBED && r->normalize) || r->api == SERVE_API_OPENAI)
        for (int32_t i = 0; i < n; i++)
            rf_l2_normalize(job.vectors + (size_t)i * D, (int32_t)D);
    respond_json(resp, 200, answer(s, r, &job, encs, lengths, tokens));
done:
    for (int32_t i = 0; i < n; i++) {
        if (job.fill)
            rf_fill_mask_result_free(&job.fill[i]);
        if (job.ner)
            rf_ner_result_free(&job.ner[i]);
    }
    free(lengths);
    free(job.items);
    free(job.vectors);
    free(job.probs);
    free(job.fill);
    free(job.ner);
    free(job.qa);
    free(job.scm);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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

/* The route POST / stands for, as TEI and HuggingFace Inference Endpoints
 * answer it: a one-label classifier reranks, another classifier predicts,
 * any other model embeds. */
static serve_api root_api(const rf_model *m)
{
    const rf_hparams *hp = rf_model_hparams(m);
    if (hp->head != RF_HEAD_SEQ_CLS)
        return SERVE_API_EMBED;
    return hp->num_labels == 1 ? SERVE_API_RERANK : SERVE_API_PREDICT;
}

/* /similarity's "parameters.prompt_name": that prompt before every
 * sentence; refusals name the field. */
static int similarity_prompt(const serve_server *s, serve_request *r, serve_error *err)
{
    if (!r->prompt_name || !serve_apply_prompt(s->model, r->prompt_name, r, err))
        return 0;
    char msg[sizeof err->message];
    snprintf(msg, sizeof msg, "parameters.%.240s", err->message);
    memcpy(err->message, msg, sizeof msg);
    return -1;
}

static void handle_engine(const serve_server *s, int api_or_root, const char *body, size_t len,
                          serve_response *resp, serve_log_entry *log)
{
    serve_api api = api_or_root == ENGINE_ROOT ? root_api(s->model) : (serve_api)api_or_root;
    serve_request r;
    serve_error err;
    if (serve_request_parse(api, body, len, s->max_client_batch, &r, &err)) {
        respond_error(resp, log, &err);
        return;
    }
    if (!r.truncate_set && s->auto_truncate)
        r.truncate = true;
    /* the embedding routes: the model's default sentence-transformers prompt;
       /similarity: the prompt its "parameters" name */
    if (((api == SERVE_API_EMBED || api == SERVE_API_OPENAI) &&
         serve_apply_prompt(s->model, NULL, &r, &err)) ||
        similarity_prompt(s, &r, &err)) {
        respond_error(resp, log, &err);
        serve_request_free(&r);
        return;
    }
    const rf_hparams *hp = rf_model_hparams(s->model);
    rf_head_kind head = head_needed(api);
    int32_t n = r.ids ? r.n_items : r.n_texts;
    rf_encoding *encs = calloc((size_t)n, sizeof *encs);
    /* the token-id inputs' type ids (zeros) and mask (ones) */
    int32_t *plain = r.ids ? calloc((size_t)2 * s->max_input_length, sizeof *plain) : NULL;
    for (int32_t k = 0; plain && k < s->max_input_length; k++)
        plain[s->max_input_length + k] = 1;
    int32_t tokens = 0;
    double t0 = now_seconds();
    log->batch = r.batch;
    log->characters = characters(&r);
    if (!encs || (r.ids && !plain)) {
        serve_fail(&err, 500, "Backend", "out of memory");
        respond_error(resp, log, &err);
    } else if (head != RF_HEAD_NONE && hp->head != head) {
        serve_fail(&err, 400, "Validation", "this route needs a model with a %s head; this one has %s",
                   rf_head_name(head), rf_head_name(hp->head));
        respond_error(resp, log, &err);
    } else if (r.dimensions > hp->hidden_size) {
        serve_fail(&err, 400, "Validation", "dimensions: %d is more than the model's %d",
                   r.dimensions, hp->hidden_size);
        respond_error(resp, log, &err);
    } else if (r.ids ? count_ids(s, &r, encs, plain, &tokens, &err)
                     : count_tokens(s, &r, encs, &tokens, &err)) {
        respond_error(resp, log, &err);
    } else {
        log->tokenize_seconds = now_seconds() - t0;
        log->inputs = n;
        log->tokens = tokens;
        if (api == SERVE_API_TOKENIZE)
            respond_json(resp, 200, serve_json_tokens(&r, s->model, encs));
        else if (api == SERVE_API_DECODE)
            respond_json(resp, 200, serve_json_decode(&r, s->model));
        else
            run_job(s, &r, encs, tokens, resp, log, &err);
    }
    for (int32_t i = 0; encs && !r.ids && i < n; i++)
        rf_encoding_free(&encs[i]);
    free(encs);
    free(plain);
    serve_request_free(&r);
}

void serve_route_handle(const serve_server *s, int route, const char *body, size_t len,
                        const serve_gauges *http, serve_response *resp, serve_log_entry *log)
{
    log->openai = serve_route_speaks_openai(route, "");
    switch (route) {
    case ROUTE_HEALTH:
        *resp = (serve_response){.status = 200, .content_type = "application/json",
                                 .body = strdup("{}"), .len = 2};
        break;
    case ROUTE_INFO: handle_info(s, resp); break;
    case ROUTE_METRICS: handle_metrics(s, *http, resp); break;
    default: handle_engine(s, routes[route].api, body, len, resp, log); break;
    }
}
