/*
 * cmd_classify.c — `roformer classify`: sequence classification, one
 * {"label", "score", "scores"} per input (HF text-classification pipeline).
 */
#include "cli.h"
#include "default_model.h"
#include "jobcli.h"
#include "output.h"

#include <stdio.h>
#include <stdlib.h>

static const char usage[] =
    "usage: roformer classify [-m MODEL] [--top-k K] [options] [TEXT...]\n"
    "\n"
    "Sequence classification with the model's labels (id2label). Input lines are\n"
    "texts, or {\"text\": ..., \"text_pair\": ...}. Output per input:\n"
    "  {\"label\": ..., \"score\": ..., \"scores\": {label: probability, ...}}\n"
    "with scores in decreasing order.\n"
    "\n"
    "Without -m: $ROFORMER_MODEL when set, else the default model, a small Chinese\n"
    "sentiment classifier (negative / positive): " CLI_DEFAULT_MODEL_FILE "\n"
    "in $(PREFIX)/share/roformer beside an installed roformer, or in models/ of\n"
    "the source tree for build/roformer.\n"
    "\n"
    "  --top-k K    list only the K most probable labels in \"scores\" (default: all)\n";

typedef struct {
    const rf_model *model;
    rf_pipeline *pl;
    int32_t top_k;
} classify_cmd;

static cJSON *result(const classify_cmd *c, const float *probs, int32_t N, int32_t *order)
{
    int32_t k = rf_top_k(probs, N, c->top_k > 0 ? c->top_k : N, order);
    cJSON *obj = cJSON_CreateObject(), *scores = cJSON_CreateObject();
    char fallback[32];
    for (int32_t j = 0; j < k; j++) {
        const char *label = rf_model_label(c->model, order[j]);
        if (!label) {
            snprintf(fallback, sizeof fallback, "LABEL_%d", order[j]);
            label = fallback;
        }
        if (j == 0) {
            cJSON_AddStringToObject(obj, "label", label);
            cli_add_float(obj, "score", probs[order[0]]);
        }
        cli_add_float(scores, label, probs[order[j]]);
    }
    cJSON_AddItemToObject(obj, "scores", scores);
    return obj;
}

static int run_chunk(void *arg, cli_record *recs, int n)
{
    classify_cmd *c = arg;
    int32_t N = rf_model_hparams(c->model)->num_labels;
    cli_batch b;
    if (cli_batch_collect(&b, recs, n, 0, 1))
        return CLI_FAILED;
    float *probs = malloc(sizeof(float) * (size_t)(b.n ? b.n : 1) * (size_t)(N > 0 ? N : 1));
    int32_t *order = malloc(sizeof(int32_t) * (size_t)(N > 0 ? N : 1));
    rf_error err;
    int rc = CLI_OK;
    if (!probs || !order)
        rc = cli_error("out of memory");
    else if (rf_classify(c->pl, b.texts, b.n, probs, b.items, &err) != RF_OK)
        rc = cli_error("%s", err.message);
    for (int j = 0; rc == CLI_OK && j < b.n; j++) {
        cli_record *rec = &recs[b.rec[j]];
        if (cli_apply_item(rec, &b.items[j]))
            rec->result = result(c, probs + (size_t)j * N, N, order);
    }
    free(probs);
    free(order);
    cli_batch_free(&b);
    return rc;
}

int cmd_classify(int argc, char **argv)
{
    classify_cmd c = {0};
    cli_job_opts o;
    int rc = cli_job_parse(&o, "classify", usage, argc, argv);
    if (rc >= 0)
        return rc;
    c.top_k = cli_arg_int(&o.a, CLI_OPT_TOP_K, 0);
    char default_path[4096 + 64];
    if (!o.model_path) {
        if (cli_default_model(default_path, sizeof default_path))
            return cli_usage_error("classify", "%s; give -m MODEL or set ROFORMER_MODEL",
                                   default_path);
        o.model_path = default_path;
    }
    static const cli_input_spec spec = {
        .names = {"text", "text_pair"}, .n_fields = 2, .n_required = 1, .tab_fields = 1};
    return cli_job_open_run(&o, "classify", &c.model, &c.pl, &spec, run_chunk, &c);
}
