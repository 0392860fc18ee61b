/*
 * cmd_embed.c — `roformer embed`: one sentence vector per input, as JSON
 * lines {"embedding": [...]} or one float32 .npy matrix (N x D).
 */
#include "cli.h"
#include "jobcli.h"
#include "npy.h"
#include "output.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: roformer embed -m MODEL [--pooling cls|mean|max|last|pooler] [--normalize]\n"
    "                      [--prompt-name NAME | --prompt TEXT]\n"
    "                      [--format jsonl|npy] [-o FILE] [options] [TEXT...]\n"
    "\n"
    "Sentence embeddings. Input lines are texts, or {\"text\": ..., \"text_pair\": ...}.\n"
    "Output per input: {\"embedding\": [...]}, or with --format npy one float32 matrix\n"
    "(inputs x hidden size) that numpy.load reads; a failed input is a row of NaN\n"
    "there, reported on stderr.\n"
    "\n" CLI_POOLING_HELP
    "  --normalize  scale each vector to unit L2 norm (the default for a sentence-\n"
    "               transformers model with a Normalize module); --no-normalize\n"
    "  --prompt-name NAME  put the model's prompt NAME (`roformer info` lists them)\n"
    "               before each text (default: its default prompt, if it has one)\n"
    "  --prompt TEXT  put TEXT before each text instead\n"
    "  --format F   jsonl (default) or npy\n"
    "  -o FILE      write to FILE instead of stdout\n";

typedef struct {
    rf_pipeline *pl;
    rf_pooling use;
    int normalize; /* -1: the model's default */
    bool npy;
    const char *prompt_name, *prompt; /* --prompt-name, --prompt; prompt: the text used */
    const char *out_path;
    int32_t D;
    cli_npy *writer;
} embed_cmd;

/* Puts `prompt` before the first text of each input of the batch; the
 * batch's texts then point at the returned copies (free each, then the
 * array). NULL when out of memory. */
static char **prefix_texts(cli_batch *b, const char *prompt)
{
    size_t np = strlen(prompt);
    char **copies = calloc((size_t)(b->n ? b->n : 1), sizeof *copies);
    for (int j = 0; copies && j < b->n; j++) {
        rf_text *t = &b->texts[j];
        if (!(copies[j] = malloc(np + t->text_len + 1))) {
            for (int k = 0; k < j; k++)
                free(copies[k]);
            free(copies);
            return NULL;
        }
        memcpy(copies[j], prompt, np);
        memcpy(copies[j] + np, t->text, t->text_len);
        t->text = copies[j];
        t->text_len += np;
    }
    return copies;
}

/* The prompt text of --prompt-name NAME, or of the model's default prompt
 * (NULL: none). A NAME the model lacks is a usage error (-1). */
static int choose_prompt(embed_cmd *c, const rf_model *model)
{
    if (c->prompt)
        return 0;
    c->prompt = rf_model_prompt(model, c->prompt_name);
    if (c->prompt || !c->prompt_name)
        return 0;
    cli_usage_error("embed", "--prompt-name '%s': the model has no such prompt (%d prompts; "
                    "`roformer info` lists them)", c->prompt_name,
                    (int)rf_model_sentence_config(model)->n_prompts);
    return -1;
}

static int run_chunk(void *arg, cli_record *recs, int n)
{
    embed_cmd *c = arg;
    cli_batch b;
    if (cli_batch_collect(&b, recs, n, 0, 1))
        return CLI_FAILED;
    char **prompted = c->prompt && *c->prompt ? prefix_texts(&b, c->prompt) : NULL;
    if (c->prompt && *c->prompt && !prompted) {
        cli_batch_free(&b);
        return cli_error("out of memory");
    }
    float *vecs = malloc(sizeof(float) * (size_t)(b.n ? b.n : 1) * (size_t)c->D);
    float *nan_row = malloc(sizeof(float) * (size_t)c->D);
    rf_error err;
    int rc = CLI_OK;
    if (!vecs || !nan_row)
        rc = cli_error("out of memory");
    else if (rf_embed(c->pl, b.texts, b.n, c->use, c->normalize, vecs, b.items, &err) != RF_OK)
        rc = cli_error("%s", err.message);
    for (int j = 0; rc == CLI_OK && j < b.n; j++) {
        cli_record *rec = &recs[b.rec[j]];
        if (cli_apply_item(rec, &b.items[j]) && !c->npy) {
            rec->result = cJSON_CreateObject();
            cJSON_AddItemToObject(rec->result, "embedding",
                                  cli_json_floats(vecs + (size_t)j * c->D, c->D));
        }
    }
    /* .npy: one row per record, in order; NaN where the record failed. */
    for (int k = 0, j = 0; rc == CLI_OK && c->npy && k < n; k++) {
        for (int32_t d = 0; d < c->D; d++)
            nan_row[d] = NAN;
        const float *row = nan_row;
        if (j < b.n && b.rec[j] == k) {
            if (!recs[k].error)
                row = vecs + (size_t)j * c->D;
            j++;
        }
        if (cli_npy_add_row(c->writer, row) != 0)
            rc = cli_error("writing the .npy output failed");
    }
    free(vecs);
    free(nan_row);
    for (int j = 0; prompted && j < b.n; j++)
        free(prompted[j]);
    free(prompted);
    cli_batch_free(&b);
    return rc;
}

int cmd_embed(int argc, char **argv)
{
    cli_job_opts o;
    int rc = cli_job_parse(&o, "embed", usage, argc, argv);
    if (rc >= 0)
        return rc;
    const cli_args *a = &o.a;
    embed_cmd c = {.normalize = cli_arg_int(a, CLI_OPT_NORMALIZE, -1),
                   .npy = cli_arg_int(a, CLI_OPT_FORMAT, CLI_FORMAT_JSONL) == CLI_FORMAT_NPY,
                   .prompt_name = cli_arg_text(a, CLI_OPT_PROMPT_NAME, NULL),
                   .prompt = cli_arg_text(a, CLI_OPT_PROMPT, NULL),
                   .out_path = cli_arg_text(a, CLI_OPT_OUTPUT, NULL)};
    if (c.prompt && c.prompt_name)
        return cli_usage_error("embed", "--prompt and --prompt-name: give one");
    if (c.npy && !c.out_path && isatty(STDOUT_FILENO))
        return cli_usage_error("embed", "not writing binary .npy to a terminal; use -o FILE");
    rf_model *model;
    if ((rc = cli_job_open(&o, "embed", &model, &c.pl)) != CLI_OK)
        return rc;
    c.D = rf_model_hparams(model)->hidden_size;
    if (c.normalize < 0)
        c.normalize = rf_model_sentence_config(model)->normalize;
    if (cli_pooling_for("embed", model, &o.a, &c.use))
        rc = CLI_USAGE;
    else if (choose_prompt(&c, model))
        rc = CLI_USAGE;
    /* The output file is created only once the model is known to work. */
    if (rc == CLI_OK && c.out_path && !freopen(c.out_path, c.npy ? "w+b" : "w", stdout))
        rc = cli_error("%s: %s", c.out_path, strerror(errno));
    if (rc == CLI_OK && c.npy && !(c.writer = cli_npy_open(stdout, c.D)))
        rc = cli_error("cannot start the .npy output");
    if (rc == CLI_OK) {
        static const cli_input_spec spec = {
            .names = {"text", "text_pair"}, .n_fields = 2, .n_required = 1, .tab_fields = 1};
        rc = cli_job_run(&o, &spec, NULL, run_chunk, &c, c.npy);
    }
    if (c.writer && cli_npy_close(c.writer) != 0 && rc == CLI_OK)
        rc = cli_error("writing the .npy output failed");
    rf_pipeline_free(c.pl);
    rf_model_free(model);
    return rc;
}
