/*
 * cmd_serve.c — `roformer serve`: loads a model and answers HTTP requests
 * with TEI's and OpenAI's embedding APIs and the engine's own jobs, until
 * SIGTERM or SIGINT. Command line and start-up here; the server itself is
 * in serve/ (http.c, routes.c, request.c, batcher.c, runner.c, ...).
 */
#include "cli.h"
#include "load_model.h"
#include "options.h"
#include "serve/http.h"
#include "serve/routes.h"
#include "serve/server.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How long a stop waits for requests already begun. */
#define SHUTDOWN_GRACE_SECONDS 30.0

static const char usage[] =
    "usage: roformer serve -m MODEL [--host 127.0.0.1] [--port 8080] [options]\n"
    "\n"
    "An HTTP server for the model. Routes (TEI's and OpenAI's JSON):\n"
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
    "  GET /health, /info, /metrics (Prometheus); OPTIONS (CORS preflight)\n"
    "Requests are batched together (padding-free) up to --max-batch-tokens. SIGTERM or\n"
    "SIGINT: stop accepting, answer what has begun, exit 0. One log line per request\n"
    "on stderr.\n"
    "\n"
    "  -m, --model MODEL             a .gguf file or a HuggingFace checkpoint directory\n"
    "  --host ADDR                   address to bind (default 127.0.0.1)\n"
    "  --port N                      port (default 8080; 0 = any free port, printed)\n"
    "  --threads N                   compute threads, 0 to 64 (default 0: all cores)\n"
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
    "                                (default 30)\n";

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
    };
    if (!a->given[CLI_OPT_MODEL])
        return cli_usage_error("serve", "-m MODEL is required");
    if (s->api_key && !s->api_key[0])
        return cli_usage_error("serve", "--api-key is empty");
    if (s->cors_origins && !s->cors_origins[0])
        return cli_usage_error("serve", "--cors-allow-origin is empty");
    return -1;
}

/* The model's name in /info and /v1/embeddings: the last part of its path. */
static const char *model_id(const char *path, char *buf, size_t n)
{
    snprintf(buf, n, "%s", path);
    size_t len = strlen(buf);
    while (len > 1 && buf[len - 1] == '/')
        buf[--len] = '\0';
    const char *slash = strrchr(buf, '/');
    return slash ? slash + 1 : buf;
}

static void on_batch(void *arg, int jobs, int32_t inputs, int32_t tokens, double seconds)
{
    serve_metrics_batch(arg, jobs, inputs, tokens, seconds);
}

/* Runs one short input so that the context exists (and a compute type the
 * CPU lacks fails here, not on the first request). */
static int warm_up(serve_runner *runner, const rf_model *model, int32_t D)
{
    rf_text text = {.text = "warm up", .text_len = 7};
    rf_encoding enc = {0};
    rf_item_status item;
    rf_error err;
    if (rf_tokenize(model, text.text, text.text_len, NULL, 0, 0, &enc, &err) != RF_OK)
        return cli_error("%s", err.message);
    float *vec = malloc(sizeof(float) * (size_t)D);
    if (!vec) {
        rf_encoding_free(&enc);
        return cli_error("out of memory");
    }
    serve_job job = {.kind = SERVE_KIND_EMBED, .texts = &text, .encs = &enc, .n = 1,
                     .items = &item, .vectors = vec};
    serve_job *batch = &job;
    serve_runner_run(runner, &batch, 1);
    free(vec);
    rf_encoding_free(&enc);
    if (job.status != RF_OK)
        return cli_error("%s", job.error.message);
    return 0;
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
    const char *model_path = cli_arg_text(&args, CLI_OPT_MODEL, NULL);

    /* SIGTERM / SIGINT are taken by sigwait below: block them before any
     * thread starts, so every thread inherits the mask. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    rf_model *model = cli_load_model(model_path);
    if (!model)
        return CLI_FAILED;
    const rf_hparams *hp = rf_model_hparams(model);
    serve_runner *runner = NULL;
    serve_http *http = NULL;
    char id[512], errbuf[256];
    rc = CLI_FAILED;
    rf_context_params cp = cli_context_params(&args);
    int32_t limit = rf_context_length_limit(model, &cp);
    if (s->max_input_length > limit) {
        rc = cli_usage_error("serve", "--max-input-length %d is over the model's maximum of %d%s",
                             s->max_input_length, limit,
                             limit == hp->max_position ? " (--extend-positions allows more)" : "");
        goto done;
    }
    if (!s->max_input_length)
        s->max_input_length = rf_model_max_input_length(model);
    s->model = model;
    s->model_id = model_id(model_path, id, sizeof id);
    if (cli_pooling_for("serve", model, &args, &s->pooling)) {
        rc = CLI_USAGE;
        goto done;
    }

    /* The batch's inputs run sorted by length in forward passes of the
       pipeline's default 8 sequences, which pad less than larger ones
       (docs/performance.md, "roformer serve: sequences per forward pass"). */
    rf_pipeline_params pp = rf_pipeline_default_params();
    pp.context = cp;
    pp.max_length = s->max_input_length;
    rf_error err;
    if (serve_runner_create(model, &pp, s->pooling, &runner, &err) != RF_OK) {
        cli_error("%s", err.message);
        goto done;
    }
    if (warm_up(runner, model, hp->hidden_size) != 0)
        goto done;
    s->metrics = serve_metrics_create(serve_route_names(), serve_route_count());
    if (!s->metrics || serve_batcher_start(runner, s->max_batch_tokens, s->max_batch_requests,
                                           on_batch, s->metrics, &s->batcher) != 0) {
        cli_error("cannot start the batcher");
        goto done;
    }
    serve_batcher_set_queue_timeout(s->batcher, s->queue_timeout_ms / 1000.0);
    if (serve_http_start(s, &http, errbuf, sizeof errbuf) != 0) {
        cli_error("%s", errbuf);
        goto done;
    }
    char threads[32] = "all cores";
    if (s->threads > 0)
        snprintf(threads, sizeof threads, "%d threads", s->threads);
    /* an IPv6 address goes in brackets in a URL (RFC 3986) */
    bool v6 = strchr(s->host, ':') != NULL;
    fprintf(stderr, "roformer serve: listening on http://%s%s%s:%d (model %s, head %s, %s)\n",
            v6 ? "[" : "", s->host, v6 ? "]" : "", serve_http_port(http), s->model_id,
            rf_head_name(hp->head), threads);

    int sig = 0;
    sigwait(&stop_signals, &sig);
    fprintf(stderr, "roformer serve: %s: finishing the requests begun, then exiting\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM");
    serve_http_stop(http, SHUTDOWN_GRACE_SECONDS);
    http = NULL;
    rc = CLI_OK;
done:
    serve_http_stop(http, 0);
    serve_batcher_stop(s->batcher);
    serve_metrics_free(s->metrics);
    serve_runner_free(runner);
    rf_model_free(model);
    return rc;
}
