/*
 * cmd_fill_mask.c — `roformer fill-mask`: the most probable tokens for each
 * [MASK] (HF fill-mask pipeline), and the text with the best ones filled in.
 */
#include "cli.h"
#include "jobcli.h"
#include "output.h"

#include <stdlib.h>

static const char usage[] =
    "usage: roformer fill-mask -m MODEL [--top-k K] [options] [TEXT...]\n"
    "\n"
    "Predicts each [MASK] of the text with a masked-LM model. Input lines are texts,\n"
    "or {\"text\": ...}. Output per input:\n"
    "  {\"sequence\": the text with each [MASK] replaced by its best token,\n"
    "   \"masks\": [[{\"token\": ..., \"id\": ..., \"score\": ...}, ... top K], ... per [MASK]]}\n"
    "\n"
    "  --top-k K    candidates per [MASK] (default 5)\n";

typedef struct {
    const rf_model *model;
    rf_pipeline *pl;
    int32_t top_k;
} fill_mask_cmd;

static cJSON *result(const fill_mask_cmd *c, const rf_fill_mask_result *r)
{
    cJSON *obj = cJSON_CreateObject(), *masks = cJSON_CreateArray();
    cJSON_AddStringToObject(obj, "sequence", r->sequence);
    for (int32_t m = 0; m < r->n_masks; m++) {
        cJSON *cands = cJSON_CreateArray();
        for (int32_t k = 0; k < r->top_k; k++) {
            int32_t id = r->ids[(size_t)m * r->top_k + k];
            cJSON *cand = cJSON_CreateObject();
            cJSON_AddStringToObject(cand, "token", rf_model_token(c->model, id));
            cJSON_AddNumberToObject(cand, "id", id);
            cli_add_float(cand, "score", r->scores[(size_t)m * r->top_k + k]);
            cJSON_AddItemToArray(cands, cand);
        }
        cJSON_AddItemToArray(masks, cands);
    }
    cJSON_AddItemToObject(obj, "masks", masks);
    return obj;
}

static int run_chunk(void *arg, cli_record *recs, int n)
{
    fill_mask_cmd *c = arg;
    cli_batch b;
    if (cli_batch_collect(&b, recs, n, 0, -1))
        return CLI_FAILED;
    rf_fill_mask_result *res = calloc((size_t)(b.n ? b.n : 1), sizeof *res);
    rf_error err;
    int rc = CLI_OK;
    if (!res)
        rc = cli_error("out of memory");
    else if (rf_fill_mask(c->pl, b.texts, b.n, c->top_k, res, b.items, &err) != RF_OK)
        rc = cli_error("%s", err.message);
    for (int j = 0; rc == CLI_OK && j < b.n; j++) {
        cli_record *rec = &recs[b.rec[j]];
        if (cli_apply_item(rec, &b.items[j]))
            rec->result = result(c, &res[j]);
        rf_fill_mask_result_free(&res[j]);
    }
    free(res);
    cli_batch_free(&b);
    return rc;
}

int cmd_fill_mask(int argc, char **argv)
{
    fill_mask_cmd c = {0};
    cli_job_opts o;
    int rc = cli_job_parse(&o, "fill-mask", usage, argc, argv);
    if (rc >= 0)
        return rc;
    c.top_k = cli_arg_int(&o.a, CLI_OPT_TOP_K, 5);
    static const cli_input_spec spec = {
        .names = {"text"}, .n_fields = 1, .n_required = 1, .tab_fields = 1};
    return cli_job_open_run(&o, "fill-mask", &c.model, &c.pl, &spec, run_chunk, &c);
}
