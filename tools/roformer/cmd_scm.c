/*
 * cmd_scm.c — `roformer scm`: CAIL2019 similar case matching. For each
 * triplet {"A", "B", "C"} it says which of B and C is closer to A, with
 * rf_scm (src/jobs/jobs_scm.c): --mode embed (default) compares document
 * embeddings, each distinct document embedded once; --mode pair scores
 * (A, B) and (A, C) with a sequence-classification model. This file reads
 * the triplets, writes one answer per line and, with "label" fields
 * present, the accuracy on stderr.
 *
 * Documents are long, so inputs are truncated at the model's maximum
 * length unless --max-length says otherwise.
 */
#include "cli.h"
#include "jobcli.h"
#include "output.h"
#include "progress.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: roformer scm -m MODEL [--mode embed|pair] [--pooling cls|mean|pooler]\n"
    "                    [--max-length N] [options] FILE|-\n"
    "\n"
    "CAIL2019-SCM similar case matching. Each line of FILE (or stdin) is a triplet\n"
    "{\"A\": ..., \"B\": ..., \"C\": ...[, \"label\": \"B\"|\"C\"]}. Output per line:\n"
    "  {\"prediction\": \"B\"|\"C\", \"sim_ab\": ..., \"sim_ac\": ...}\n"
    "and, when labels are present, the accuracy on stderr.\n"
    "\n"
    "  --mode embed  cosine of document embeddings, each distinct document embedded\n"
    "                once (default)\n"
    "  --mode pair   a sequence-classification model scores (A,B) and (A,C): the\n"
    "                probability of its last label\n" CLI_POOLING_HELP
    "  --max-length N  truncate documents to N tokens (default: the model's maximum)\n"
    "  --window N --stride S  instead of truncating, cut a longer document into windows\n"
    "                and embed it as the mean of theirs (--mode embed)\n";

enum { FIELD_A, FIELD_B, FIELD_C, FIELD_LABEL };

typedef struct {
    rf_pipeline *pl;
    const rf_model *model;
    bool pair_mode;
    rf_pooling use;  /* the pooling embed mode runs */
    cli_record *recs;
    int n_recs;
    rf_scm_result *results; /* [n_recs] */
    int progress;
} scm_cmd;

static void show_progress(void *bar, int64_t done, int64_t total)
{
    cli_progress_update(bar, (double)done, (double)total, (long)done);
}

/* Runs rf_scm over the records; a record that failed to read goes in as a
 * triplet with no documents, which keeps its place in rf_scm's chunks. */
static int run(scm_cmd *c)
{
    int n = c->n_recs, rc = CLI_OK;
    rf_scm_params params = rf_scm_default_params();
    params.mode = c->pair_mode ? RF_SCM_PAIR : RF_SCM_EMBED;
    params.pooling = c->use;
    rf_triplet *triplets = calloc((size_t)(n ? n : 1), sizeof *triplets);
    rf_item_status *items = malloc(sizeof *items * (size_t)(n ? n : 1));
    c->results = malloc(sizeof *c->results * (size_t)(n ? n : 1));
    if (!triplets || !items || !c->results) {
        rc = cli_error("out of memory");
        goto done;
    }
    for (int k = 0; k < n; k++)
        for (int s = FIELD_A; s <= FIELD_C && !c->recs[k].error; s++)
            triplets[k].doc[s] = c->recs[k].field[s], triplets[k].len[s] = c->recs[k].len[s];
    cli_progress *bar = cli_progress_start(c->progress, c->pair_mode ? "triplets" : "documents");
    params.progress = show_progress;
    params.progress_user = bar;
    int32_t n_documents = 0;
    rf_error err;
    if (rf_scm(c->pl, triplets, n, &params, c->results, &n_documents, items, &err) != RF_OK)
        rc = cli_error("%s", err.message);
    cli_progress_finish(bar);
    for (int k = 0; rc == CLI_OK && k < n; k++)
        cli_apply_item(&c->recs[k], &items[k]);
    if (!c->pair_mode)
        fprintf(stderr, "roformer scm: %d triplets, %d distinct documents embedded\n", n,
                n_documents);
done:
    free(triplets);
    free(items);
    return rc;
}

/* Reads every triplet; a bad label fails its line. */
static int read_all(scm_cmd *c, const cli_job_opts *o, const char *path)
{
    cli_input_spec spec = {.names = {"A", "B", "C", "label"}, .n_fields = 4, .n_required = 3,
                           .tab_fields = 3, .max_line = o->max_line};
    cli_reader *in = cli_reader_open(&spec, path, NULL, 0);
    if (!in)
        return CLI_FAILED;
    int cap = 0, got;
    cli_record rec;
    while ((got = cli_reader_next(in, &rec)) == 1) {
        if (c->n_recs == cap) {
            cap = cap ? cap * 2 : 512;
            cli_record *grown = realloc(c->recs, sizeof *grown * (size_t)cap);
            if (!grown) {
                cli_record_free(&rec);
                got = -1;
                cli_error("out of memory");
                break;
            }
            c->recs = grown;
        }
        const char *label = rec.field[FIELD_LABEL];
        if (!rec.error && label && strcmp(label, "B") && strcmp(label, "C"))
            cli_record_fail(&rec, "field \"label\" must be \"B\" or \"C\"");
        c->recs[c->n_recs++] = rec;
    }
    cli_reader_close(in);
    return got < 0 ? CLI_FAILED : CLI_OK;
}

static int write_all(const scm_cmd *c)
{
    long failed = 0, labelled = 0, correct = 0;
    for (int k = 0; k < c->n_recs; k++) {
        const cli_record *rec = &c->recs[k];
        cJSON *obj;
        if (rec->error) {
            failed++;
            obj = cli_json_error(rec->error, rec->line);
        } else {
            const char *pred = c->results[k].prediction == 'B' ? "B" : "C";
            obj = cJSON_CreateObject();
            cJSON_AddStringToObject(obj, "prediction", pred);
            cli_add_float(obj, "sim_ab", c->results[k].sim_ab);
            cli_add_float(obj, "sim_ac", c->results[k].sim_ac);
            if (rec->field[FIELD_LABEL]) {
                labelled++;
                correct += !strcmp(pred, rec->field[FIELD_LABEL]);
            }
        }
        int rc = cli_write_json(stdout, obj);
        cJSON_Delete(obj);
        if (rc != 0)
            return cli_error("writing the output failed");
    }
    if (fflush(stdout) != 0)
        return cli_error("writing the output failed");
    if (labelled)
        fprintf(stderr, "roformer scm: accuracy %.4f (%ld of %ld labelled triplets)\n",
                (double)correct / labelled, correct, labelled);
    if (failed)
        fprintf(stderr, "roformer: %ld of %d inputs failed\n", failed, c->n_recs);
    return failed ? CLI_FAILED : CLI_OK;
}

int cmd_scm(int argc, char **argv)
{
    scm_cmd c = {0};
    cli_job_opts o;
    int rc = cli_job_parse(&o, "scm", usage, argc, argv);
    if (rc >= 0)
        return rc;
    c.pair_mode = cli_arg_int(&o.a, CLI_OPT_MODE, CLI_MODE_EMBED) == CLI_MODE_PAIR;
    if (o.n_args > 1)
        return cli_usage_error("scm", "one input file (or -) expected, got %d", o.n_args);
    o.truncate_default = true;
    c.progress = o.progress;
    rf_model *model;
    if ((rc = cli_job_open(&o, "scm", &model, &c.pl)) != CLI_OK)
        return rc;
    c.model = model;
    if (!c.pair_mode && cli_pooling_for("scm", model, &o.a, &c.use))
        rc = CLI_USAGE;
    if (rc == CLI_OK)
        rc = read_all(&c, &o, o.n_args ? o.args[0] : "-");
    if (rc == CLI_OK && c.pair_mode &&
        (rf_model_hparams(model)->head != RF_HEAD_SEQ_CLS ||
         rf_model_hparams(model)->num_labels < 1))
        rc = cli_error("--mode pair needs a sequence-classification model");
    if (rc == CLI_OK)
        rc = run(&c);
    if (rc == CLI_OK)
        rc = write_all(&c);
    cli_job_print_timings(&o);
    for (int k = 0; k < c.n_recs; k++)
        cli_record_free(&c.recs[k]);
    free(c.recs);
    free(c.results);
    rf_pipeline_free(c.pl);
    rf_model_free(model);
    return rc;
}
