/*
 * cmd_tokenize.c — `roformer tokenize -m MODEL [--max-length N]`: the
 * model's tokenizer (HF RoFormerTokenizer, or BertTokenizer for char-level
 * models) on every line of stdin, one JSON object out per line.
 */
#include "cli.h"
#include "cli_input.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: roformer tokenize -m MODEL [--max-length N]\n"
    "\n"
    "Tokenizes stdin, one input per line, exactly as HuggingFace's tokenizer\n"
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
    "  --max-length N      truncate to N tokens (longest_first), specials included\n";

static cJSON *int_array(const int32_t *v, int32_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (int32_t i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

static void print_json(cJSON *obj)
{
    char *s = cJSON_PrintUnformatted(obj);
    if (s) {
        fputs(s, stdout);
        fputc('\n', stdout);
        free(s);
    }
    cJSON_Delete(obj);
}

static void print_error(const char *message, long line_no)
{
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddStringToObject(obj, "error", message);
    cJSON_AddNumberToObject(obj, "line", (double)line_no);
    print_json(obj);
}

/* Tokenizes the current line; false (with the error printed) on failure. */
static bool tokenize_line(const rf_model *model, cli_input *in, int32_t max_length, rf_encoding *enc)
{
    const char *text = in->line, *pair = NULL;
    size_t text_len = in->len, pair_len = 0;
    char msg[600];
    if (in->bad) {
        print_error(in->error, in->line_no);
        return false;
    }
    if (in->is_json) {
        int got = cli_input_field(in, "text", &text, &text_len);
        if (got != 1) {
            print_error(got == 0 ? "missing \"text\"" : "\"text\" is not a string", in->line_no);
            return false;
        }
        if (cli_input_field(in, "text_pair", &pair, &pair_len) < 0) {
            print_error("\"text_pair\" is not a string", in->line_no);
            return false;
        }
    }
    rf_error err;
    if (rf_tokenize(model, text, text_len, pair, pair_len, max_length, enc, &err) != RF_OK) {
        snprintf(msg, sizeof msg, "%s", err.message);
        print_error(msg, in->line_no);
        return false;
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
    print_json(obj);
    return true;
}

int cmd_tokenize(int argc, char **argv)
{
    const char *path = NULL;
    long max_length = 0;
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m") || !strcmp(argv[i], "--model")) {
            if (i + 1 >= argc)
                return cli_usage_error("tokenize", "%s needs a model path", argv[i]);
            path = argv[++i];
        } else if (!strcmp(argv[i], "--max-length")) {
            if (i + 1 >= argc || cli_parse_int(argv[i + 1], 1, INT32_MAX, &max_length))
                return cli_usage_error("tokenize", "--max-length needs a positive integer");
            i++;
        } else {
            return cli_usage_error("tokenize", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!path)
        return cli_usage_error("tokenize", "missing -m MODEL");
    rf_model *model = cli_load_model(path);
    if (!model)
        return CLI_FAILED;

    cli_input in = {0};
    rf_encoding enc = {0};
    long failed = 0;
    while (cli_input_next(&in, stdin))
        failed += !tokenize_line(model, &in, (int32_t)max_length, &enc);
    int rc = CLI_OK;
    if (ferror(stdin))
        rc = cli_error("reading stdin failed");
    else if (failed)
        rc = cli_error("%ld of %ld lines could not be tokenized", failed, in.line_no);
    if (fflush(stdout) != 0)
        rc = cli_error("writing stdout failed");
    cli_input_free(&in);
    rf_encoding_free(&enc);
    rf_model_free(model);
    return rc;
}
