/*
 * jobcli.c — the shared part of the job commands (see jobcli.h).
 */
#include "jobcli.h"

#include "cli.h"
#include "load_model.h"
#include "output.h"
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_job_help(const char *cmd, const char *usage)
{
    fputs(usage, stdout);
    fputs("\nshared options:\n", stdout);
    cli_options_help(stdout, cmd);
    fputs("\ninput: texts as arguments, or stdin one per line (also for a lone argument '-';\n"
          "'-' beside other arguments is a usage error); a line that is a JSON object\n"
          "is read by field name, any other line is the text. One output line per input,\n"
          "in order; a bad input gives {\"error\": \"...\", \"line\": N} in its place.\n"
          "exit status: 0 ok, 1 some inputs failed or runtime error, 2 usage error\n",
          stdout);
}

int cli_job_open(cli_job_opts *o, const char *cmd, rf_model **model, rf_pipeline **pl)
{
    *model = NULL;
    *pl = NULL;
    if (!o->model_path)
        return cli_usage_error(cmd, "a model is required: -m MODEL (only classify has a default model)");
    if (!(*model = cli_load_model(o->model_path)))
        return CLI_FAILED;
    rf_error err;
    const rf_hparams *hp = rf_model_hparams(*model);
    rf_context_params cp = o->context;
    int32_t limit = rf_context_length_limit(*model, &cp), max_position = hp->max_position;
    int32_t window = o->window;
    int32_t stride = o->stride >= 0 ? o->stride : rf_window_default_stride(window);
    const char *problem = NULL;
    if (o->max_length > limit)
        problem = "max-length";
    else if (window > limit)
        problem = "window";
    else if (o->stride >= 0 && !window)
        problem = "stride";
    else if (window && stride >= window - 2)
        problem = "stride-window";
    else if (window && strcmp(cmd, "embed") && strcmp(cmd, "similarity") &&
             strcmp(cmd, "classify") && strcmp(cmd, "scm"))
        problem = "window-job";
    if (problem) {
        rf_model_free(*model);
        *model = NULL;
        if (!strcmp(problem, "stride"))
            return cli_usage_error(cmd, "--stride needs --window");
        if (!strcmp(problem, "window-job"))
            return cli_usage_error(cmd, "--window is for embed, similarity, classify and scm%s",
                                   strcmp(cmd, "qa") ? "" : " (qa reads long contexts with --doc-stride)");
        if (!strcmp(problem, "stride-window"))
            return cli_usage_error(cmd,
                                   "--stride %d is not below the %d text tokens of a --window of %d",
                                   stride, window - 2, window);
        int32_t n = problem[0] == 'm' ? o->max_length : window;
        if (limit == max_position)
            return cli_usage_error(cmd,
                                   "--%s %d is over the model's maximum of %d (--extend-positions "
                                   "or --rope-scaling allow more)",
                                   problem, n, max_position);
        return cli_usage_error(cmd, "--%s %d is over the longest accepted, %d", problem, n, limit);
    }
    rf_pipeline_params pp = rf_pipeline_default_params();
    /* not given: the library's default (the pipeline's RF_MAX_LENGTH_MODEL) */
    if (o->max_length)
        pp.max_length = o->max_length;
    else if (o->truncate_default && !window)
        pp.max_length = rf_model_max_input_length(*model);
    pp.context = cp;
    pp.batch_size = o->batch_size;
    pp.window = window;
    pp.stride = o->stride; /* -1: the library's default, rf_window_default_stride */
    pp.truncation_side = o->truncation_side;
    if (rf_pipeline_create(*model, &pp, pl, &err) != RF_OK) {
        rf_model_free(*model);
        *model = NULL;
        return cli_error("%s", err.message);
    }
    o->pl = *pl;
    o->t_open = cli_now_seconds();
    return CLI_OK;
}

void cli_job_print_timings(const cli_job_opts *o)
{
    if (!o->timings || !o->pl)
        return;
    rf_pipeline_stats s;
    rf_pipeline_get_stats(o->pl, &s);
    double total = cli_now_seconds() - o->t_open;
    double rest = total - s.forward_seconds - s.tokenize_seconds;
    double pct = total > 0 ? 100.0 / total : 0.0;
    fprintf(stderr,
            "roformer: timings: %lld inputs, %lld tokens, %lld batches; %.3f s: encoder %.3f s "
            "(%.1f%%), tokenizer %.3f s (%.1f%%), reading/writing/other %.3f s (%.1f%%)\n",
            (long long)s.inputs, (long long)s.tokens, (long long)s.batches, total,
            s.forward_seconds, s.forward_seconds * pct, s.tokenize_seconds,
            s.tokenize_seconds * pct, rest, rest * pct);
    if (s.windowed_inputs > 0)
        fprintf(stderr, "roformer: timings: %lld inputs cut into %lld windows\n",
                (long long)s.windowed_inputs, (long long)s.windows);
}

bool cli_apply_item(cli_record *rec, const rf_item_status *item)
{
    if (item->status != RF_OK)
        cli_record_fail(rec, item->error.message);
    return !rec->error;
}

/* Writes the chunk's outputs in order; returns the failures, or -1 on a
 * write error. */
static long write_chunk(cli_record *recs, int n, bool errors_on_stderr)
{
    long failed = 0;
    for (int k = 0; k < n; k++) {
        cli_record *rec = &recs[k];
        int rc = 0;
        if (rec->error) {
            failed++;
            if (errors_on_stderr) {
                fprintf(stderr, "roformer: error: line %ld: %s\n", rec->line, rec->error);
            } else {
                cJSON *e = cli_json_error(rec->error, rec->line);
                rc = cli_write_json(stdout, e);
                cJSON_Delete(e);
            }
        } else if (rec->result) {
            rc = cli_write_json(stdout, rec->result);
        }
        if (rc != 0)
            return -1;
    }
    return fflush(stdout) == 0 ? failed : -1;
}

int cli_job_run(const cli_job_opts *o, const cli_input_spec *spec_in, const char *path,
                cli_chunk_fn fn, void *cmd, bool errors_on_stderr)
{
    cli_input_spec spec = *spec_in;
    spec.max_line = o->max_line;
    cli_reader *in = cli_reader_open(&spec, path, o->args, path ? 0 : o->n_args);
    if (!in)
        return CLI_FAILED;
    int chunk = o->batch_size * 8 < 64 ? 64 : o->batch_size * 8;
    cli_record *recs = calloc((size_t)chunk, sizeof *recs);
    cli_progress *progress = cli_progress_start(o->progress, "inputs");
    long failed = 0, done = 0;
    int rc = recs ? CLI_OK : cli_error("out of memory");
    bool more = rc == CLI_OK;
    while (more) {
        int n = 0, got = 0;
        /* Up to a chunk, but no waiting for more input while some is in hand. */
        while (n < chunk && (n == 0 || cli_reader_ready(in)) &&
               (got = cli_reader_next(in, &recs[n])) == 1)
            n++;
        if (got < 0)
            rc = CLI_FAILED;
        more = got == 1;
        if (n > 0 && rc == CLI_OK)
            rc = fn(cmd, recs, n);
        long f = rc == CLI_OK ? write_chunk(recs, n, errors_on_stderr) : 0;
        if (f < 0)
            rc = cli_error("writing the output failed");
        failed += f > 0 ? f : 0;
        done += n;
        for (int k = 0; k < n; k++)
            cli_record_free(&recs[k]);
        if (rc != CLI_OK)
            more = false;
        cli_progress_update(progress, cli_reader_done(in), cli_reader_total(in), done);
    }
    cli_progress_finish(progress);
    cli_reader_close(in);
    free(recs);
    if (rc == CLI_OK && failed)
        fprintf(stderr, "roformer: %ld of %ld inputs failed\n", failed, done);
    cli_job_print_timings(o);
    return rc != CLI_OK ? rc : failed ? CLI_FAILED : CLI_OK;
}

int cli_job_open_run(cli_job_opts *o, const char *cmd, const rf_model **model, rf_pipeline **pl,
                     const cli_input_spec *spec, cli_chunk_fn fn, void *arg)
{
    rf_model *m;
    int rc = cli_job_open(o, cmd, &m, pl);
    if (rc != CLI_OK)
        return rc;
    *model = m;
    rc = cli_job_run(o, spec, NULL, fn, arg, false);
    rf_pipeline_free(*pl);
    rf_model_free(m);
    return rc;
}

int cli_job_parse(cli_job_opts *o, const char *cmd, const char *usage, int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        cli_job_help(cmd, usage);
        return CLI_OK;
    }
    cli_args args;
    int r = cli_options_parse(cmd, argc, argv, &args);
    if (r > 0) {
        printf("roformer %s\n", RF_VERSION);
        return CLI_OK;
    }
    if (r < 0)
        return CLI_USAGE;
    const cli_args *a = &args;
    *o = (cli_job_opts){
        .a = args,
        .model_path = cli_arg_text(a, CLI_OPT_MODEL, NULL),
        .max_length = cli_arg_int(a, CLI_OPT_MAX_LENGTH, 0),
        .truncation_side = cli_arg_int(a, CLI_OPT_TRUNCATION_DIRECTION, RF_TRUNCATE_RIGHT),
        .batch_size = cli_arg_int(a, CLI_OPT_BATCH_SIZE, rf_pipeline_default_params().batch_size),
        .context = cli_context_params(a),
        .window = cli_arg_int(a, CLI_OPT_WINDOW, 0),
        .stride = cli_arg_int(a, CLI_OPT_STRIDE, -1),
        .progress = cli_arg_int(a, CLI_OPT_PROGRESS, CLI_PROGRESS_AUTO),
        .max_line = (size_t)cli_arg_int(a, CLI_OPT_MAX_LINE_BYTES, CLI_DEFAULT_MAX_LINE),
        .timings = a->given[CLI_OPT_TIMINGS],
        .args = a->args,
        .n_args = a->n_args,
    };
    /* A lone "-" is stdin, as if no input argument were given; beside
     * other arguments it would be read as the text "-", so it is refused. */
    for (int k = 0; k < o->n_args; k++) {
        if (strcmp(o->args[k], "-"))
            continue;
        if (o->n_args > 1)
            return cli_usage_error(cmd, "'-' (read stdin) must be the only input argument");
        o->n_args = 0;
    }
    return -1;
}

int cli_batch_collect(cli_batch *b, cli_record *recs, int n, int a, int pair)
{
    *b = (cli_batch){0};
    b->texts = calloc((size_t)n, sizeof *b->texts);
    b->rec = calloc((size_t)n, sizeof *b->rec);
    b->items = calloc((size_t)n, sizeof *b->items);
    if (!b->texts || !b->rec || !b->items) {
        cli_batch_free(b);
        cli_error("out of memory");
        return -1;
    }
    for (int k = 0; k < n; k++) {
        if (recs[k].error)
            continue;
        rf_text *t = &b->texts[b->n];
        t->text = recs[k].field[a];
        t->text_len = recs[k].len[a];
        if (pair >= 0 && recs[k].field[pair]) {
            t->pair = recs[k].field[pair];
            t->pair_len = recs[k].len[pair];
        }
        b->rec[b->n++] = k;
    }
    return 0;
}

void cli_batch_free(cli_batch *b)
{
    free(b->texts);
    free(b->rec);
    free(b->items);
    *b = (cli_batch){0};
}

void cli_char_span_to_bytes(const char *s, size_t len, int32_t c0, int32_t c1, size_t *b0,
                            size_t *b1)
{
    int32_t chars = 0;
    *b0 = *b1 = len;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
            continue; /* inside a character */
        if (chars == c0 && *b0 == len)
            *b0 = i;
        if (chars == c1) {
            *b1 = i;
            return;
        }
        chars++;
    }
}
