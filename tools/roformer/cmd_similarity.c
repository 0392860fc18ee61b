/*
 * cmd_similarity.c — `roformer similarity`: the cosine similarity of the
 * embeddings of two texts, {"cosine": ...} per input.
 */
#include "cli.h"
#include "jobcli.h"
#include "output.h"

#include <stdlib.h>

static const char usage[] =
    "usage: roformer similarity -m MODEL [--pooling cls|mean|pooler] [options] [PAIR...]\n"
    "\n"
    "Cosine similarity of two texts, each embedded on its own. Input lines are\n"
    "{\"text_a\": ..., \"text_b\": ...} or text_a<TAB>text_b. Output per input:\n"
    "  {\"cosine\": ...}\n"
    "\n" CLI_POOLING_HELP;

typedef struct {
    rf_pipeline *pl;
    rf_pooling use;
} similarity_cmd;

static int run_chunk(void *arg, cli_record *recs, int n)
{
    similarity_cmd *c = arg;
    cli_batch b;
    if (cli_batch_collect(&b, recs, n, 0, 1))
        return CLI_FAILED;
    float *cosine = malloc(sizeof(float) * (size_t)(b.n ? b.n : 1));
    rf_error err;
    int rc = CLI_OK;
    if (!cosine)
        rc = cli_error("out of memory");
    else if (rf_similarity(c->pl, b.texts, b.n, c->use, cosine, b.items, &err) != RF_OK)
        rc = cli_error("%s", err.message);
    for (int j = 0; rc == CLI_OK && j < b.n; j++) {
        cli_record *rec = &recs[b.rec[j]];
        if (cli_apply_item(rec, &b.items[j])) {
            rec->result = cJSON_CreateObject();
            cli_add_float(rec->result, "cosine", cosine[j]);
        }
    }
    free(cosine);
    cli_batch_free(&b);
    return rc;
}

int cmd_similarity(int argc, char **argv)
{
    similarity_cmd c = {0};
    cli_job_opts o;
    int rc = cli_job_parse(&o, "similarity", usage, argc, argv);
    if (rc >= 0)
        return rc;
    rf_model *model;
    if ((rc = cli_job_open(&o, "similarity", &model, &c.pl)) != CLI_OK)
        return rc;
    if (cli_pooling_for("similarity", model, &o.a, &c.use)) {
        rc = CLI_USAGE;
    } else {
        static const cli_input_spec spec = {
            .names = {"text_a", "text_b"}, .n_fields = 2, .n_required = 2, .tab_fields = 2};
        rc = cli_job_run(&o, &spec, NULL, run_chunk, &c, false);
    }
    rf_pipeline_free(c.pl);
    rf_model_free(model);
    return rc;
}
