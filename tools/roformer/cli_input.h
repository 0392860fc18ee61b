/*
 * cli_input.h — reading the CLI's line-oriented input: one input per line
 * of stdin; a line whose first non-blank character is '{' is a JSON object
 * whose string fields are read with their true length (a text may contain
 * U+0000, which cJSON alone would cut short); any other line is the text.
 *
 *     cli_input in = {0};
 *     while (cli_input_next(&in, stdin)) {
 *         if (in.is_json) ... cli_input_field(&in, "text", &s, &n) ...
 *         else ... in.line, in.len ...
 *     }
 *     cli_input_free(&in);
 */
#ifndef RF_CLI_INPUT_H
#define RF_CLI_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cJSON.h>

typedef struct {
    char *line;     /* the current line, without "\n" or "\r\n"; NUL-terminated */
    size_t len;     /* its length (it may hold NUL bytes) */
    long line_no;   /* 1-based */
    bool is_json;   /* the line is a JSON object, parsed into `json` */
    cJSON *json;
    char error[256]; /* why the line could not be read, when `bad` */
    bool bad;
    bool nul_marked; /* "\u0000" escapes were replaced on this line */
    /* storage */
    size_t cap;
    char *escaped;
    size_t escaped_cap;
} cli_input;

/* Reads and classifies the next line; false at the end of input. A JSON
 * line that does not parse sets `bad` and `error`. */
bool cli_input_next(cli_input *in, FILE *f);
/* The string field `name` of the current JSON object: 1 with *text and
 * *len set, 0 when absent or null, -1 when it is not a string. Read each
 * field once per line (U+0000 markers are decoded in place). */
int cli_input_field(cli_input *in, const char *name, const char **text, size_t *len);
void cli_input_free(cli_input *in);

#endif
