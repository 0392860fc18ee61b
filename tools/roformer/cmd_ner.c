/*
 * cmd_ner.c — `roformer ner`: token classification; each token's label and
 * the entities grouped from BIO/BIOES tags, with character offsets into the
 * input text (HF token-classification pipeline, aggregation "simple").
 */
#include "cli.h"
#include "jobcli.h"
#include "output.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: roformer ner -m MODEL [options] [TEXT...]\n"
    "\n"
    "Token classification (named entities). Input lines are texts, or {\"text\": ...}.\n"
    "Output per input:\n"
    "  {\"tokens\": [{\"token\", \"label\", \"score\", \"start\", \"end\"}, ...],\n"
    "   \"entities\": [{\"entity\", \"text\", \"score\", \"start\", \"end\"}, ...]}\n"
    "start/end are character offsets into the text, end exclusive. Entities are\n"
    "grouped from B-/I-/E-/S- tags (BIO, BIOES); \"score\" of an entity is the mean\n"
    "of its tokens' scores.\n";

typedef struct {
    const rf_model *model;
    rf_pipeline *pl;
} ner_cmd;

static cJSON *result(const ner_cmd *c, const rf_ner_result *r, const char *text, size_t len)
{
    cJSON *obj = cJSON_CreateObject(), *tokens = cJSON_CreateArray(),
          *entities = cJSON_CreateArray();
    for (int32_t t = 0; t < r->n_tokens; t++) {
        const rf_token_tag *tag = &r->tokens[t];
        const char *label = rf_model_label(c->model, tag->label);
        cJSON *tok = cJSON_CreateObject();
        cJSON_AddStringToObject(tok, "token", rf_model_token(c->model, tag->id));
        cJSON_AddStringToObject(tok, "label", label ? label : "");
        cli_add_float(tok, "score", tag->score);
        cJSON_AddNumberToObject(tok, "start", tag->start);
        cJSON_AddNumberToObject(tok, "end", tag->end);
        cJSON_AddItemToArray(tokens, tok);
    }
    for (int32_t e = 0; e < r->n_entities; e++) {
        const rf_entity *ent = &r->entities[e];
        size_t b0, b1;
        cli_char_span_to_bytes(text, len, ent->start, ent->end, &b0, &b1);
        cJSON *obj_e = cJSON_CreateObject();
        char *type = strndup(ent->type, (size_t)ent->type_len);
        char *span = strndup(text + b0, b1 - b0);
        cJSON_AddStringToObject(obj_e, "entity", type ? type : "");
        cJSON_AddStringToObject(obj_e, "text", span ? span : "");
        cli_add_float(obj_e, "score", ent->score);
        cJSON_AddNumberToObject(obj_e, "start", ent->start);
        cJSON_AddNumberToObject(obj_e, "end", ent->end);
        cJSON_AddItemToArray(entities, obj_e);
        free(type);
        free(span);
    }
    cJSON_AddItemToObject(obj, "tokens", tokens);
    cJSON_AddItemToObject(obj, "entities", entities);
    return obj;
}

static int run_chunk(void *arg, cli_record *recs, int n)
{
    ner_cmd *c = arg;
    cli_batch b;
    if (cli_batch_collect(&b, recs, n, 0, -1))
        return CLI_FAILED;
    rf_ner_result *res = calloc((size_t)(b.n ? b.n : 1), sizeof *res);
    rf_error err;
    int rc = CLI_OK;
    if (!res)
        rc = cli_error("out of memory");
    else if (rf_token_classify(c->pl, b.texts, b.n, res, b.items, &err) != RF_OK)
        rc = cli_error("%s", err.message);
    for (int j = 0; rc == CLI_OK && j < b.n; j++) {
        cli_record *rec = &recs[b.rec[j]];
        if (cli_apply_item(rec, &b.items[j]))
            rec->result = result(c, &res[j], b.texts[j].text, b.texts[j].text_len);
        rf_ner_result_free(&res[j]);
    }
    free(res);
    cli_batch_free(&b);
    return rc;
}

int cmd_ner(int argc, char **argv)
{
    ner_cmd c = {0};
    cli_job_opts o;
    int rc = cli_job_parse(&o, "ner", usage, argc, argv);
    if (rc >= 0)
        return rc;
    static const cli_input_spec spec = {
        .names = {"text"}, .n_fields = 1, .n_required = 1, .tab_fields = 1};
    return cli_job_open_run(&o, "ner", &c.model, &c.pl, &spec, run_chunk, &c);
}
