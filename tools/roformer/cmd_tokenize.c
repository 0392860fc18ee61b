/*
 * cmd_tokenize.c — `roformer tokenize -m MODEL [--max-length N]`: the
 * model's tokenizer (HF RoFormerTokenizer, or BertTokenizer for char-level
 * models) on every line of stdin, one JSON object out per line.
 */
#include "cli.h"
#include "load_model.h"
#include "input.h"
#include "output.h"
#include "options.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: roformer tokenize -m MODEL [--max-length N] [--max-line-bytes N] [-]\n"
    "\n"
    "Tokenizes stdin (also named '-'), one input per line, exactly as HuggingFace's tokenizer\n"
    "for the model does (tok(text, text_pair, truncation=True, max_length=N)).\n"
    "A line whose first non-blank character is '{' is a JSON object\n"
    "{\"text\": ..., \"text_pair\": ...} (text_pair optional); any other line is\n"
    "the text itself. For each input one JSON object is written:\n"
    "  {\"tokens\": [...], \"input_ids\": [...], \"token_type_ids\": [...],\n"
    "   \"attention_mask\": [...]}\n"
    "where tokens are the vocab entries of input_ids ([CLS] ... [SEP]).\n"
    "A line that cannot be tokenized (invalid UTF-8, bad JSON, no \"text\")\n"
    "gives {\"error\": \"...\", \"line\": N} in its place; the other lines go on,\n"
    "and the exit status is then 1.\n"
    "\n"
    "  -m, --model MODEL   a .gguf file or an HF checkpoint directory\n"
    "  --max-length N      truncate to N tokens (longest_first), specials included\n"
    "  --max-line-bytes N  longest input line accepted (default 1048576); a longer\n"
    "                      line gives an error in its place\n";

static cJSON *int_array(const int32_t *v, int32_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (int32_t i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

/* The record's result object, or NULL with rec->error set. */
static cJSON *tokenize_record(const rf_model *model, cli_record *rec, int32_t max_length,
                              rf_encoding *enc)
{
    rf_error err;
    if (rf_tokenize(model, rec->field[0], rec->len[0], rec->field[1], rec->len[1], max_length,
                    enc, &err) != RF_OK) {
        cli_record_fail(rec, err.message);
        return NULL;
    }
    cJSON *obj = cJSON_CreateObject();
    cJSON *tokens = cJSON_AddArrayToObject(obj, "tokens");
    for (int32_t i = 0; i < enc->n; i++) {
        const char *t = rf_model_token(model, enc->ids[i]);
        cJSON_AddItemToArray(tokens, cJSON_CreateString(t ? t : ""));
    }
    cJSON_AddItemToObject(obj, "input_ids", int_array(enc->ids, enc->n));
    cJSON_AddItemToObject(obj, "token_type_ids", int_array(enc->type_ids, enc->n));
    cJSON_AddItemToObject(obj, "attention_mask", int_array(enc->mask, enc->n));
    return obj;
}

int cmd_tokenize(int argc, char **argv)
{
    cli_args args; /* "-", stdin, is what tokenize reads anyway */
    int start = cli_command_args("tokenize", usage, argc, argv, &args);
    if (start >= 0)
        return start;
    const char *path = cli_arg_text(&args, CLI_OPT_MODEL, NULL);
    int32_t max_length = cli_arg_int(&args, CLI_OPT_MAX_LENGTH, 0);
    int32_t max_line = cli_arg_int(&args, CLI_OPT_MAX_LINE_BYTES, CLI_DEFAULT_MAX_LINE);
    if (!path)
        return cli_usage_error("tokenize", "missing -m MODEL");
    rf_model *model = cli_load_model(path);
    if (!model)
        return CLI_FAILED;

    const cli_input_spec spec = {.names = {"text", "text_pair"}, .n_fields = 2,
                                 .n_required = 1, .tab_fields = 1, .max_line = (size_t)max_line};
    cli_reader *in = cli_reader_open(&spec, NULL, NULL, 0);
    if (!in) {
        rf_model_free(model);
        return CLI_FAILED;
    }
    rf_encoding enc = {0};
    cli_record rec;
    long failed = 0, lines = 0;
    int got = 0, rc = CLI_OK;
    while (rc == CLI_OK && (got = cli_reader_next(in, &rec)) == 1) {
        lines++;
        cJSON *obj = rec.error ? NULL : tokenize_record(model, &rec, (int32_t)max_length, &enc);
        if (rec.error) {
            failed++;
            obj = cli_json_error(rec.error, rec.line);
        }
        if (cli_write_json(stdout, obj) != 0)
            rc = cli_error("writing stdout failed");
        cJSON_Delete(obj);
        cli_record_free(&rec);
    }
    if (rc == CLI_OK && got < 0)
        rc = CLI_FAILED; /* the reader said why */
    else if (rc == CLI_OK && failed)
        rc = cli_error("%ld of %ld lines could not be tokenized", failed, lines);
    if (fflush(stdout) != 0)
        rc = cli_error("writing stdout failed");
    cli_reader_close(in);
    rf_encoding_free(&enc);
    rf_model_free(model);
    return rc;
}
