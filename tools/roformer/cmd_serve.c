/*
 * cmd_serve.c — `roformer serve`: loads a model and answers HTTP requests
 * with TEI's and OpenAI's embedding APIs and the engine's own jobs, until
 * SIGTERM or SIGINT. Command line and start-up here; the server itself is
 * in serve/ (http.c, routes.c, request.c, batcher.c, runner.c, ...).
 */
#include "cli.h"
#include "load_model.h"
#include "pooling_option.h"
#include "position_options.h"
#include "serve/http.h"
#include "serve/routes.h"
#include "serve/server.h"
#include "shared_options.h"

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
    "  --log-format text|json        request log lines (default text)\n";

typedef struct {
    serve_server s;
    cli_position_opts positions; /* --extend-positions, --rope-scaling, --rope-factor */
    const char *model_path;
    int pooling;
} serve_opts;

static int parse_size(const char *name, const char *v, long lo, long hi, int32_t *out)
{
    return cli_int_value("serve", name, v, lo, hi, out);
}

/* The options other commands share, at argv[*i]: 1 taken, 0 not one of
 * them, -1 usage error printed. */
static int shared_option(serve_opts *o, int argc, char **argv, int *i)
{
    int r;
    if ((r = cli_model_option("serve", argc, argv, i, &o->model_path)) ||
        (r = cli_int_option_take("serve", argc, argv, i, CLI_OPT_THREADS, &o->s.threads)) ||
        (r = cli_compute_option("serve", argc, argv, i, &o->s.compute)) ||
        (r = cli_position_option(&o->positions, "serve", argc, argv, i)) ||
        (r = cli_int_option_take("serve", argc, argv, i, CLI_OPT_MAX_INPUT_LENGTH,
                                 &o->s.max_input_length)))
        return r;
    return 0;
}

static int parse_args(serve_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r = 0, bad = 0;
        int32_t n;
        if (!strcmp(argv[i], "--auto-truncate")) {
            o->s.auto_truncate = true;
            continue;
        }
        if ((r = shared_option(o, argc, argv, &i)) < 0)
            return CLI_USAGE;
        if (r > 0)
            continue;
#define OPT(name) ((r = cli_take_value("serve", argc, argv, &i, name, &v)) != 0)
        if (OPT("--host"))
            o->s.host = v;
        else if (OPT("--port"))
            bad = parse_size("--port", v, 0, 65535, &n) || (o->s.port = n, 0);
        else if (OPT("--max-batch-tokens"))
            bad = parse_size("--max-batch-tokens", v, 1, 1 << 24, &o->s.max_batch_tokens);
        else if (OPT("--max-batch-requests"))
            bad = parse_size("--max-batch-requests", v, 1, 1 << 20, &o->s.max_batch_requests);
        else if (OPT("--max-client-batch-size"))
            bad = parse_size("--max-client-batch-size", v, 1, 4096, &o->s.max_client_batch);
        else if (OPT("--max-concurrent-requests"))
            bad = parse_size("--max-concurrent-requests", v, 1, 1 << 16, &o->s.max_concurrent);
        else if (OPT("--payload-limit"))
            bad = parse_size("--payload-limit", v, 1, 1 << 30, &n) || (o->s.payload_limit = (size_t)n, 0);
        else if (OPT("--api-key"))
            o->s.api_key = v;
        else if (OPT("--cors-allow-origin"))
            o->s.cors_origins = v;
        else if (OPT("--pooling"))
            bad = cli_parse_pooling("serve", v, &o->pooling);
        else if (OPT("--log-format")) {
            if (!strcmp(v, "text") || !strcmp(v, "json"))
                o->s.log_format = !strcmp(v, "json") ? SERVE_LOG_JSON : SERVE_LOG_TEXT;
            else
                bad = (cli_usage_error("serve", "--log-format is text or json, not '%s'", v), 1);
        } else
            return cli_usage_error("serve", "unknown option or argument '%s'", argv[i]);
#undef OPT
        if (r < 0 || bad)
            return CLI_USAGE;
    }
    if (!o->model_path)
        return cli_usage_error("serve", "-m MODEL is required");
    if (o->s.api_key && !o->s.api_key[0])
        return cli_usage_error("serve", "--api-key is empty");
    if (o->s.cors_origins && !o->s.cors_origins[0])
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
        fputs(cli_position_help, stdout);
        fputs("  requests to /embed, /v1/embeddings, /predict, /similarity and /scm may set\n"
              "  \"window\" and \"stride\": a text longer than the window is cut and pooled\n"
              "  (docs/long-inputs.md)\n",
              stdout);
        return CLI_OK;
    }
    serve_opts o = {.s = {.host = "127.0.0.1", .port = 8080, .max_batch_tokens = 16384,
                          .max_client_batch = 32, .max_concurrent = 512,
                          .payload_limit = 2000000},
                    .pooling = CLI_POOLING_DEFAULT};
    int rc = parse_args(&o, argc, argv);
    if (rc >= 0)
        return rc;
    serve_server *s = &o.s;

    /* SIGTERM / SIGINT are taken by sigwait below: block them before any
     * thread starts, so every thread inherits the mask. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    rf_model *model = cli_load_model(o.model_path);
    if (!model)
        return CLI_FAILED;
    const rf_hparams *hp = rf_model_hparams(model);
    serve_runner *runner = NULL;
    serve_http *http = NULL;
    char id[512], errbuf[256];
    rc = CLI_FAILED;
    rf_context_params limit_params = rf_context_default_params();
    cli_position_apply(&o.positions, &limit_params);
    int32_t limit = rf_context_length_limit(model, &limit_params);
    if (s->max_input_length > limit) {
        rc = cli_usage_error("serve", "--max-input-length %d is over the model's maximum of %d%s",
                             s->max_input_length, limit,
                             limit == hp->max_position ? " (--extend-positions allows more)" : "");
        goto done;
    }
    if (!s->max_input_length)
        s->max_input_length = rf_model_max_input_length(model);
    s->model = model;
    s->model_id = model_id(o.model_path, id, sizeof id);
    if (cli_pooling_for("serve", model, o.pooling, &s->pooling)) {
        rc = CLI_USAGE;
        goto done;
    }

    /* The batch's inputs run sorted by length in forward passes of the
       pipeline's default 8 sequences, which pad less than larger ones
       (docs/performance.md, "roformer serve: sequences per forward pass"). */
    rf_pipeline_params pp = rf_pipeline_default_params();
    pp.max_length = s->max_input_length;
    pp.n_threads = s->threads;
    pp.compute = s->compute;
    pp.extend_positions = limit_params.extend_positions;
    pp.rope_scaling = limit_params.rope_scaling;
    pp.rope_factor = limit_params.rope_factor;
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
