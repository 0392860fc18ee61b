/*
 * cmd_rerank.c — `roformer rerank`: the documents of stdin (or the
 * arguments) scored against --query with rf_rerank and printed best first,
 * one {"index", "score", "text"} line each (sentence-transformers'
 * CrossEncoder.rank, TEI's /rerank). Unlike the other jobs the output is in
 * score order, so every document is read before anything is written.
 */
#include "cli.h"
#include "jobcli.h"
#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: roformer rerank -m MODEL --query Q [--top-n K] [options] [DOCUMENT...]\n"
    "\n"
    "Scores each document (a stdin line, or {\"text\": ...}) against the query and\n"
    "prints them best first, one line each:\n"
    "  {\"index\": 0-based position of the document, \"score\": ..., \"text\": ...}\n"
    "A sequence-classification model scores the pair [CLS] query [SEP] document\n"
    "[SEP]: the sigmoid of a single logit, else the softmax probability of the\n"
    "positive label (the label named positive/pos/entailment/relevant/yes/true/1,\n"
    "else the last). Any other model scores the cosine of the two pooled\n"
    "embeddings (RoFormer-Sim). Equal scores keep input order. A document that fails\n"
    "gives {\"error\": ..., \"line\": N} after the ranking (exit status 1).\n"
    "\n"
    "  --query Q           the query (required)\n"
    "  --top-n K           print only the K best (default: all)\n"
    "  --raw-scores        the positive label's logit instead of its probability\n"
    "  --positive-label N  classifier: score label N (0-based) instead\n" CLI_POOLING_HELP;

typedef struct {
    const char *query;
    int32_t top_n;
    int32_t positive_label;
    bool raw_scores;
    rf_pooling pooling; /* --pooling, or RF_POOLING_DEFAULT: rf_rerank_params' default */
} rerank_cmd;

/* Every record of the input, grown as read. */
typedef struct {
    cli_record *recs;
    int n, cap;
} record_list;

static int read_all(const cli_job_opts *o, record_list *l)
{
    static const cli_input_spec base = {.names = {"text"}, .n_fields = 1, .n_required = 1,
                                        .tab_fields = 1};
    cli_input_spec spec = base;
    spec.max_line = o->max_line;
    cli_reader *in = cli_reader_open(&spec, NULL, o->args, o->n_args);
    if (!in)
        return CLI_FAILED;
    int got = 0;
    for (;;) {
        if (l->n == l->cap) {
            int cap = l->cap ? 2 * l->cap : 64;
            cli_record *grown = realloc(l->recs, sizeof *grown * (size_t)cap);
            if (!grown) {
                cli_reader_close(in);
                return cli_error("out of memory for %d documents", cap);
            }
            l->recs = grown;
            l->cap = cap;
        }
        if ((got = cli_reader_next(in, &l->recs[l->n])) != 1)
            break;
        l->n++;
    }
    cli_reader_close(in);
    return got < 0 ? CLI_FAILED : CLI_OK;
}

static int print_hit(const cli_record *rec, const rf_rerank_hit *h)
{
    cJSON *obj = cJSON_CreateObject();
    if (!obj)
        return cli_error("out of memory");
    cJSON_AddNumberToObject(obj, "index", h->index);
    cli_add_float(obj, "score", h->score);
    cJSON_AddStringToObject(obj, "text", rec->field[0]);
    int rc = cli_write_json(stdout, obj);
    cJSON_Delete(obj);
    return rc ? CLI_FAILED : CLI_OK;
}

static int rank(const rerank_cmd *c, rf_pipeline *pl, record_list *l)
{
    int n = l->n, rc = CLI_OK, n_docs = 0;
    rf_text *docs = malloc(sizeof *docs * (size_t)(n ? n : 1));
    int *rec_of = malloc(sizeof *rec_of * (size_t)(n ? n : 1));
    rf_rerank_hit *hits = malloc(sizeof *hits * (size_t)(n ? n : 1));
    rf_item_status *items = malloc(sizeof *items * (size_t)(n ? n : 1));
    if (!docs || !rec_of || !hits || !items) {
        rc = cli_error("out of memory for %d documents", n);
        goto done;
    }
    /* the documents that read well; index counts every input line */
    for (int i = 0; i < n; i++) {
        if (l->recs[i].error)
            continue;
        docs[n_docs] = (rf_text){.text = l->recs[i].field[0], .text_len = l->recs[i].len[0]};
        rec_of[n_docs++] = i;
    }
    rf_rerank_params p = rf_rerank_default_params();
    p.raw_scores = c->raw_scores;
    p.positive_label = c->positive_label;
    p.pooling = c->pooling;
    rf_error err;
    int32_t n_hits = 0;
    if (rf_rerank(pl, c->query, strlen(c->query), docs, n_docs, c->top_n, &p, hits, &n_hits,
                  items, &err) != RF_OK) {
        rc = cli_error("%s", err.message);
        goto done;
    }
    for (int32_t k = 0; rc == CLI_OK && k < n_hits; k++) {
        int i = rec_of[hits[k].index];
        rf_rerank_hit h = {.index = i, .score = hits[k].score};
        rc = print_hit(&l->recs[i], &h);
    }
    for (int j = 0; j < n_docs; j++)
        cli_apply_item(&l->recs[rec_of[j]], &items[j]);
    bool failed = false;
    for (int i = 0; rc == CLI_OK && i < n; i++) {
        if (!l->recs[i].error)
            continue;
        failed = true;
        cJSON *e = cli_json_error(l->recs[i].error, l->recs[i].line);
        if (!e || cli_write_json(stdout, e))
            rc = CLI_FAILED;
        cJSON_Delete(e);
    }
    if (failed)
        rc = CLI_FAILED;
done:
    free(docs);
    free(rec_of);
    free(hits);
    free(items);
    return rc;
}

int cmd_rerank(int argc, char **argv)
{
    cli_job_opts o;
    int rc = cli_job_parse(&o, "rerank", usage, argc, argv);
    if (rc >= 0)
        return rc;
    const cli_args *a = &o.a;
    rerank_cmd c = {.query = cli_arg_text(a, CLI_OPT_QUERY, NULL),
                    .top_n = cli_arg_int(a, CLI_OPT_TOP_N, 0),
                    .positive_label = cli_arg_int(a, CLI_OPT_POSITIVE_LABEL, -1),
                    .raw_scores = a->given[CLI_OPT_RAW_SCORES],
                    .pooling = (rf_pooling)cli_arg_int(a, CLI_OPT_POOLING, RF_POOLING_DEFAULT)};
    if (!c.query)
        return cli_usage_error("rerank", "--query Q is required");
    rf_model *model;
    rf_pipeline *pl;
    if ((rc = cli_job_open(&o, "rerank", &model, &pl)) != CLI_OK)
        return rc;
    record_list l = {0};
    rc = read_all(&o, &l);
    if (rc == CLI_OK)
        rc = rank(&c, pl, &l);
    for (int i = 0; i < l.n; i++)
        cli_record_free(&l.recs[i]);
    free(l.recs);
    rf_pipeline_free(pl);
    rf_model_free(model);
    return rc;
}
