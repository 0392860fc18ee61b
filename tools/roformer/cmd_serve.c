/*
 * cmd_serve.c — `roformer serve`: loads one model or several and answers
 * HTTP requests with TEI's and OpenAI's embedding APIs and the engine's
 * own jobs, until SIGTERM or SIGINT; SIGHUP loads the models' files again.
 * Command line and start-up here; the server itself is in serve/ (http.c,
 * routes.c, request.c, models.c, batcher.c, runner.c, ...).
 */
#include "cli.h"
#include "download_bar.h"
#include "options.h"
#include "progress.h"
#include "serve/http.h"
#include "serve/routes.h"
#include "serve/server.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How long a stop waits for requests already begun. */
#define SHUTDOWN_GRACE_SECONDS 30.0

static const char usage[] =
    "usage: roformer serve -m [NAME=]MODEL [-m NAME2=MODEL2 ...] [--host 127.0.0.1]\n"
    "                      [--port 8080] [options]\n"
    "\n"
    "An HTTP server for the models. Routes (TEI's and OpenAI's JSON):\n"
    "  POST /embed {\"inputs\": str|[str], \"normalize\": true, \"truncate\": false}\n"
    "  POST /v1/embeddings, /embeddings {\"input\": str|[str]|[id]|[[id]], \"model\",\n"
    "       \"encoding_format\": float|base64, \"dimensions\": N, \"user\"} (OpenAI's errors)\n"
    "  POST /predict {\"inputs\": str | [str, str] | [[str], [str, str], ...]}\n"
    "  POST /similarity {\"inputs\": {\"source_sentence\": str, \"sentences\": [str]}}\n"
    "  POST /tokenize {\"inputs\": str|[str], \"add_special_tokens\": true}\n"
    "  POST /fill-mask, /ner {\"inputs\": str|[str]}, /qa {\"inputs\": {\"question\", \"context\"}},\n"
    "       /scm {\"inputs\": {\"A\", \"B\", \"C\"}} (or lists of them; answers as the CLI's)\n"
    "  POST /embed_all {\"inputs\": str|[str]} (every token's vector), /decode {\"ids\"}\n"
    "  POST /pipeline/text-classification, /pipeline/fill-mask,\n"
    "       /pipeline/token-classification (HuggingFace's task shapes)\n"
    "  POST /rerank {\"query\": str, \"texts\": [str], \"raw_scores\", \"return_text\"} (TEI)\n"
    "  POST /v1/rerank {\"query\", \"documents\": [str], \"top_n\", \"return_documents\"} (Jina)\n"
    "  POST / the model's own task: rerank (one-label classifier), predict, else embed\n"
    "  Every POST takes \"truncate\" and \"truncation_direction\": \"right\"|\"left\".\n"
    "  GET /health, /info, /metrics (Prometheus), /v1/models; OPTIONS (CORS preflight)\n"
    "  POST /admin/reload: load every model's file again (as SIGHUP)\n"
    "A request runs on the first model unless it names another: \"model\" on\n"
    "/v1/embeddings and /v1/rerank, or any route under /models/NAME (/models/NAME/embed).\n"
    "Requests are batched together (padding-free) up to --max-batch-tokens. SIGTERM or\n"
    "SIGINT: stop accepting, answer what has begun, exit 0. SIGHUP: reload the models'\n"
    "files; requests already queued finish on the old weights. One log line per request\n"
    "on stderr.\n"
    "\n"
    "  -m, --model [NAME=]MODEL      a .gguf file or a HuggingFace checkpoint directory,\n"
    "                                named NAME (default: the path's last part); repeat\n"
    "                                for more models (up to 16)\n"
    "  --replicas N                  batches of one model run at once, each on --threads/N\n"
    "                                threads, sharing the weights (default 1)\n"
    "  --host ADDR                   address to bind (default 127.0.0.1)\n"
    "  --port N                      port (default 8080; 0 = any free port, printed)\n"
    "  --threads N                   compute threads, 0 to 256 (default 0: all cores)\n"
    "  --compute f32|bf16|int8       arithmetic of the matrix products (default f32)\n"
    "  --max-batch-tokens N          real tokens per batch across requests (default 16384)\n"
    "  --max-batch-requests N        inputs per batch across requests (default: no cap)\n"
    "  --max-client-batch-size N     inputs per request, more is 413 (default 32)\n"
    "  --max-concurrent-requests N   requests at once, more is 429 (default 512)\n"
    "  --max-input-length N          tokens per input; longer is 422 unless the request\n"
    "                                sets \"truncate\" (default: the model's\n"
    "                                sentence-transformers max_seq_length, else its maximum)\n"
    "  --auto-truncate               truncate what is longer unless a request says\n"
    "                                \"truncate\": false\n"
    "  --payload-limit N             request body bytes, more is 413 (default 2000000)\n"
    "  --api-key KEY                 require \"Authorization: Bearer KEY\" (not on /health)\n"
    "  --cors-allow-origin ORIGINS   answer browsers from these origins (comma-separated,\n"
    "                                or *): CORS headers and OPTIONS preflights\n"
    "  --pooling cls|mean|max|last|pooler  embeddings (default: the model's\n"
    "                                sentence-transformers pooling, else pooler when the\n"
    "                                model has one, else cls)\n"
    "  --log-format text|json        request log lines (default text)\n"
    "  --queue-timeout MS            a request queued longer is 503, not run (default 0: none)\n"
    "  --max-connections N           open connections in all (default 1024)\n"
    "  --max-connections-per-client N  open connections per client address (default 256)\n"
    "  --request-timeout SECONDS     close a connection silent this long, or a request whose\n"
    "                                body is still arriving this long after its headers\n"
    "                                (default 30)\n"
    "  --cache-mb N                  keep up to N MiB of results, each input's by model,\n"
    "                                job, options and token ids; a hit answers the bytes\n"
    "                                a recompute would (default 0: no cache)\n";

/* The command line into the server's settings; -1 when the command should
 * go on, else the exit code. */
static int parse_args(serve_server *s, cli_args *a, int argc, char **argv)
{
    if (cli_options_parse("serve", argc, argv, a) != 0)
        return CLI_USAGE;
    rf_context_params cp = cli_context_params(a);
    *s = (serve_server){
        .host = cli_arg_text(a, CLI_OPT_HOST, "127.0.0.1"),
        .port = cli_arg_int(a, CLI_OPT_PORT, 8080),
        .threads = cp.n_threads,
        .compute = cp.compute,
        .max_batch_tokens = cli_arg_int(a, CLI_OPT_MAX_BATCH_TOKENS, 16384),
        .max_batch_requests = cli_arg_int(a, CLI_OPT_MAX_BATCH_REQUESTS, 0),
        .max_client_batch = cli_arg_int(a, CLI_OPT_MAX_CLIENT_BATCH_SIZE, 32),
        .max_concurrent = cli_arg_int(a, CLI_OPT_MAX_CONCURRENT_REQUESTS, 512),
        .max_input_length = cli_arg_int(a, CLI_OPT_MAX_INPUT_LENGTH, 0),
        .replicas = cli_arg_int(a, CLI_OPT_REPLICAS, 1),
        .auto_truncate = a->given[CLI_OPT_AUTO_TRUNCATE],
        .payload_limit = (size_t)cli_arg_int(a, CLI_OPT_PAYLOAD_LIMIT, 2000000),
        .api_key = cli_arg_text(a, CLI_OPT_API_KEY, NULL),
        .cors_origins = cli_arg_text(a, CLI_OPT_CORS_ALLOW_ORIGIN, NULL),
        .log_format = cli_arg_int(a, CLI_OPT_LOG_FORMAT, CLI_LOG_TEXT) == CLI_LOG_JSON
                          ? SERVE_LOG_JSON
                          : SERVE_LOG_TEXT,
        .queue_timeout_ms = cli_arg_int(a, CLI_OPT_QUEUE_TIMEOUT, 0),
        .max_connections = cli_arg_int(a, CLI_OPT_MAX_CONNECTIONS, 1024),
        .max_connections_per_client = cli_arg_int(a, CLI_OPT_MAX_CONNECTIONS_PER_CLIENT, 256),
        .request_timeout = cli_arg_int(a, CLI_OPT_REQUEST_TIMEOUT, 30),
        .cache_mb = cli_arg_int(a, CLI_OPT_CACHE_MB, 0),
    };
    if (!a->given[CLI_OPT_MODEL])
        return cli_usage_error("serve", "-m MODEL is required");
    if (s->api_key && !s->api_key[0])
        return cli_usage_error("serve", "--api-key is empty");
    if (s->cors_origins && !s->cors_origins[0])
        return cli_usage_error("serve", "--cors-allow-origin is empty");
    return -1;
}

/* A model's name when -m gives none: the last part of its path. */
static const char *model_id(const char *path, char *buf, size_t n)
{
    snprintf(buf, n, "%s", path);
    size_t len = strlen(buf);
    while (len > 1 && buf[len - 1] == '/')
        buf[--len] = '\0';
    const char *slash = strrchr(buf, '/');
    return slash ? slash + 1 : buf;
}

/* Whether `name` can name a model: it goes in a URL path segment
 * (/models/NAME/...) and a Prometheus label. */
static bool valid_name(const char *name, size_t len)
{
    if (len == 0 || len > 64)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", name[i]))
            return false;
    return true;
}

/* The -m values into names and paths: NAME=PATH, or a PATH named by its
 * last part (a value whose text before its first '=' is no valid name is a
 * path). names[i] is malloc'd. -1 after a usage error. */
static int model_specs(const cli_args *a, char **names, const char **paths)
{
    for (int i = 0; i < a->n_repeated; i++) {
        const char *spec = a->repeated[i], *eq = strchr(spec, '=');
        char id[512];
        if (eq && valid_name(spec, (size_t)(eq - spec))) {
            names[i] = strndup(spec, (size_t)(eq - spec));
            paths[i] = eq + 1;
        } else {
            names[i] = strdup(model_id(spec, id, sizeof id));
            paths[i] = spec;
        }
        if (!names[i])
            return cli_error("out of memory"), -1;
        if (!paths[i][0])
            return cli_usage_error("serve", "-m %s: the path is empty", spec), -1;
        for (int j = 0; j < i; j++)
            if (!strcmp(names[j], names[i]))
                return cli_usage_error("serve",
                                       "two models are named '%s': name them with -m NAME=PATH",
                                       names[i]),
                       -1;
    }
    return 0;
}

/* An hf: name is pulled here, with the download bar, as every command
 * pulls it (load_model.h); the server then loads, and reloads, the pulled
 * copy. pulled[i] is malloc'd. -1 after the error is printed. */
static int pull_hub_models(const char **paths, char **pulled, int n)
{
    for (int i = 0; i < n; i++) {
        char path[4096];
        if (strncmp(paths[i], "hf:", 3))
            continue;
        if (cli_hub_pull(paths[i], NULL, CLI_PROGRESS_AUTO, path, sizeof path) != CLI_OK)
            return -1;
        if (!(pulled[i] = strdup(path)))
            return cli_error("out of memory"), -1;
        paths[i] = pulled[i];
    }
    return 0;
}

/* Each replica's threads: --threads (0: every core) shared out, at least
 * one each. */
static int32_t replica_threads(int32_t threads, int replicas)
{
    if (threads <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (int32_t)cores : 1;
    }
    return threads / replicas > 0 ? threads / replicas : 1;
}

/* SIGHUP's reloads run on a thread of their own, so that the main thread
 * is always in sigwait: a signal that comes while no thread waits for it
 * goes to a thread that does not block it (one a library started before
 * the mask was set), where its default action ends the process. */
typedef struct {
    serve_models *models;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool asked;          /* a SIGHUP not yet acted on (several make one reload) */
    bool stopping;
    pthread_t thread;
} reloader;

static void *reloader_main(void *arg)
{
    reloader *r = arg;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (!r->asked && !r->stopping)
            pthread_cond_wait(&r->wake, &r->lock);
        if (r->stopping)
            break;
        r->asked = false;
        pthread_mutex_unlock(&r->lock);
        serve_reload_result results[CLI_MAX_REPEATS];
        serve_models_reload(r->models, results); /* it logs a line per model */
        pthread_mutex_lock(&r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

static void reloader_ask(reloader *r, bool stop)
{
    pthread_mutex_lock(&r->lock);
    if (stop)
        r->stopping = true;
    else
        r->asked = true;
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->lock);
}

int cmd_serve(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        cli_options_help(stdout, "serve");
        fputs("  requests to /embed, /v1/embeddings, /predict, /similarity and /scm may set\n"
              "  \"window\" and \"stride\": a text longer than the window is cut and pooled\n"
              "  (docs/long-inputs.md)\n",
              stdout);
        return CLI_OK;
    }
    serve_server server;
    serve_server *s = &server;
    cli_args args;
    int rc = parse_args(s, &args, argc, argv);
    if (rc >= 0)
        return rc;
    int n_models = args.n_repeated;
    char *names[CLI_MAX_REPEATS] = {0}, *pulled[CLI_MAX_REPEATS] = {0};
    const char *paths[CLI_MAX_REPEATS] = {0};
    serve_http *http = NULL;
    char errbuf[256];
    s->models = NULL;
    s->metrics = NULL;
    if (model_specs(&args, names, paths) != 0) {
        rc = CLI_USAGE;
        goto done;
    }

    /* SIGTERM / SIGINT / SIGHUP are taken by sigwait below: block them
     * before any thread starts, so every thread inherits the mask. */
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    rc = CLI_FAILED;
    if (pull_hub_models(paths, pulled, n_models) != 0)
        goto done;
    rf_context_params cp = cli_context_params(&args);
    cp.n_threads = replica_threads(s->threads, s->replicas);
    s->metrics = serve_metrics_create(serve_route_names(), serve_route_count(),
                                      (const char *const *)names, n_models);
    if (s->cache_mb > 0)
        s->cache = serve_cache_create((size_t)s->cache_mb << 20, n_models);
    if (!s->metrics || (s->cache_mb > 0 && !s->cache)) {
        cli_error("out of memory");
        goto done;
    }
    serve_model_settings settings = {
        .context = cp, .replicas = s->replicas, .max_input_length = s->max_input_length,
        .pooling_given = args.given[CLI_OPT_POOLING],
        .pooling = (rf_pooling)cli_arg_int(&args, CLI_OPT_POOLING, 0),
        .max_batch_tokens = s->max_batch_tokens, .max_batch_requests = s->max_batch_requests,
        .queue_timeout = s->queue_timeout_ms / 1000.0, .metrics = s->metrics,
        .cache = s->cache};
    int loaded = serve_models_load((const char *const *)names, paths, n_models, &settings,
                                   &s->models);
    if (loaded != 0) {
        rc = loaded == -2 ? CLI_USAGE : CLI_FAILED;
        goto done;
    }
    if (serve_http_start(s, &http, errbuf, sizeof errbuf) != 0) {
        cli_error("%s", errbuf);
        goto done;
    }
    char threads[64] = "all cores";
    if (s->threads > 0)
        snprintf(threads, sizeof threads, "%d threads", s->threads);
    if (s->replicas > 1)
        snprintf(threads + strlen(threads), sizeof threads - strlen(threads),
                 ", %d replicas of %d", s->replicas, cp.n_threads);
    char served[1024] = "";
    for (int i = 0; i < n_models; i++) {
        serve_generation *g = serve_models_acquire(s->models, i);
        size_t at = strlen(served);
        snprintf(served + at, sizeof served - at, "%s%s, head %s", i ? "; model " : "", names[i],
                 rf_head_name(rf_model_hparams(g->model)->head));
        serve_generation_release(g);
    }
    /* an IPv6 address goes in brackets in a URL (RFC 3986) */
    bool v6 = strchr(s->host, ':') != NULL;
    fprintf(stderr, "roformer serve: listening on http://%s%s%s:%d (model %s, %s)\n",
            v6 ? "[" : "", s->host, v6 ? "]" : "", serve_http_port(http), served, threads);

    reloader reloads = {.models = s->models};
    pthread_mutex_init(&reloads.lock, NULL);
    pthread_cond_init(&reloads.wake, NULL);
    bool reloading = pthread_create(&reloads.thread, NULL, reloader_main, &reloads) == 0;
    if (!reloading)
        fprintf(stderr, "roformer serve: cannot start the reload thread: SIGHUP is ignored\n");
    int sig = 0;
    for (;;) {
        sigwait(&signals, &sig);
        if (sig != SIGHUP)
            break;
        if (reloading)
            reloader_ask(&reloads, false);
    }
    if (reloading) { /* a reload under way ends first */
        reloader_ask(&reloads, true);
        pthread_join(reloads.thread, NULL);
    }
    pthread_mutex_destroy(&reloads.lock);
    pthread_cond_destroy(&reloads.wake);
    fprintf(stderr, "roformer serve: %s: finishing the requests begun, then exiting\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM");
    serve_http_stop(http, SHUTDOWN_GRACE_SECONDS);
    http = NULL;
    rc = CLI_OK;
done:
    serve_http_stop(http, 0);
    serve_models_free(s->models);
    serve_metrics_free(s->metrics);
    serve_cache_free(s->cache);
    for (int i = 0; i < n_models; i++) {
        free(names[i]);
        free(pulled[i]);
    }
    return rc;
}
