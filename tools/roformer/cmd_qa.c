/*
 * cmd_qa.c — `roformer qa`: extractive question answering, the best answer
 * span of the context with its score and character offsets (HF
 * question-answering pipeline; windows over a long context with
 * --doc-stride).
 */
#include "cli.h"
#include "jobcli.h"
#include "output.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: roformer qa -m MODEL [--max-answer-tokens N] [--doc-stride N] [options] [INPUT...]\n"
    "\n"
    "Extractive question answering. Input lines are\n"
    "{\"question\": ..., \"context\": ...} or question<TAB>context. Output per input:\n"
    "  {\"answer\": ..., \"score\": ..., \"start\": ..., \"end\": ...}\n"
    "start/end are character offsets into the context, end exclusive; score is\n"
    "p(start) * p(end), softmax over the context tokens and [CLS] (as HF). An\n"
    "input longer than the model allows needs --max-length (the longer of question\n"
    "and context is cut first) or --doc-stride.\n"
    "\n"
    "  --max-answer-tokens N   longest answer in tokens (default 15, as HF)\n"
    "  --doc-stride N          read a long context in windows, as HF's pipeline does:\n"
    "                          each window is the question and a part of the context,\n"
    "                          --max-length tokens (default: the model's maximum) long,\n"
    "                          starting N context tokens before the previous one ends\n"
    "                          (HF's default is 128); the best span of any window wins\n";

typedef struct {
    const rf_model *model;
    rf_pipeline *pl;
    int32_t max_answer_tokens;
    int32_t doc_stride; /* -1: no windows */
} qa_cmd;

static int run_chunk(void *arg, cli_record *recs, int n)
{
    qa_cmd *c = arg;
    cli_batch b;
    if (cli_batch_collect(&b, recs, n, 0, 1))
        return CLI_FAILED;
    rf_qa_result *res = calloc((size_t)(b.n ? b.n : 1), sizeof *res);
    rf_error err;
    int rc = CLI_OK;
    if (!res)
        rc = cli_error("out of memory");
    else if (rf_qa(c->pl, b.texts, b.n, c->max_answer_tokens, c->doc_stride, res, b.items,
                   &err) != RF_OK)
        rc = cli_error("%s", err.message);
    for (int j = 0; rc == CLI_OK && j < b.n; j++) {
        cli_record *rec = &recs[b.rec[j]];
        if (!cli_apply_item(rec, &b.items[j]))
            continue;
        const rf_qa_result *r = &res[j];
        char *answer = strndup(b.texts[j].pair + r->byte_start,
                               (size_t)(r->byte_end - r->byte_start));
        rec->result = cJSON_CreateObject();
        cJSON_AddStringToObject(rec->result, "answer", answer ? answer : "");
        cli_add_float(rec->result, "score", r->score);
        cJSON_AddNumberToObject(rec->result, "start", r->start);
        cJSON_AddNumberToObject(rec->result, "end", r->end);
        free(answer);
    }
    free(res);
    cli_batch_free(&b);
    return rc;
}

int cmd_qa(int argc, char **argv)
{
    qa_cmd c = {0};
    cli_job_opts o;
    int rc = cli_job_parse(&o, "qa", usage, argc, argv);
    if (rc >= 0)
        return rc;
    c.max_answer_tokens = cli_arg_int(&o.a, CLI_OPT_MAX_ANSWER_TOKENS, 0); /* 0: the library's default */
    c.doc_stride = cli_arg_int(&o.a, CLI_OPT_DOC_STRIDE, -1);
    static const cli_input_spec spec = {
        .names = {"question", "context"}, .n_fields = 2, .n_required = 2, .tab_fields = 2};
    return cli_job_open_run(&o, "qa", &c.model, &c.pl, &spec, run_chunk, &c);
}
