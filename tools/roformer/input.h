/*
 * input.h — the inputs of the line-oriented commands (the jobs, tokenize,
 * forward): one record per stdin/file line or per positional argument.
 *
 * A record that starts with '{' is a JSON object and its fields are looked
 * up by name; any other record is plain text: the whole line is the first
 * field, or, for commands with several fields (similarity, qa), the line is
 * split at TABs. A bad record (invalid UTF-8, bad JSON, a missing or
 * non-string field, a line over the length cap) gets `error` set and the
 * reader goes on with the next one: nothing is dropped or reordered.
 */
#ifndef RF_CLI_READER_H
#define RF_CLI_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CLI_MAX_FIELDS 4
#define CLI_DEFAULT_MAX_LINE (1 << 20) /* bytes */

typedef struct {
    const char *names[CLI_MAX_FIELDS]; /* JSON field names, e.g. "text", "text_pair" */
    int n_fields;
    int n_required;  /* the first n_required fields must be present */
    int tab_fields;  /* plain text: split at TAB into this many fields (1 = whole line) */
    size_t max_line; /* longest accepted record, in bytes */
} cli_input_spec;

typedef struct {
    long line;                          /* 1-based line (or argument) number */
    char *error;                        /* why the record has no result, or NULL (owned) */
    const char *field[CLI_MAX_FIELDS];  /* NUL-terminated values, NULL when absent */
    size_t len[CLI_MAX_FIELDS];         /* their byte lengths */
    char *storage;                      /* owns the field values */
    void *json;                         /* the parsed object of a JSON line (cJSON *), else NULL */
    void *result;                       /* a command's output for this record (cJSON *) */
} cli_record;

typedef struct cli_reader cli_reader;

/* Reads `path` ("-" or NULL: stdin) or, when n_args > 0, the arguments.
 * Returns NULL with a message printed when the file cannot be opened. */
cli_reader *cli_reader_open(const cli_input_spec *spec, const char *path, char **args, int n_args);
/* Reads an open stream (not closed by the reader); `name` is used in messages. */
cli_reader *cli_reader_open_stream(const cli_input_spec *spec, FILE *f, const char *name);
/* 1: *rec holds the next record; 0: end of input; -1: read error (printed). */
int cli_reader_next(cli_reader *in, cli_record *rec);
/* True when the next record can be read without waiting (buffered bytes,
 * a readable or closed pipe, a file): lets a batch be answered as soon as
 * its writer pauses. */
bool cli_reader_ready(const cli_reader *in);
/* Progress: bytes (or arguments) consumed so far, and the total when known (else 0). */
double cli_reader_done(const cli_reader *in);
double cli_reader_total(const cli_reader *in);
void cli_reader_close(cli_reader *in);

/* Sets rec->error to a copy of msg (keeps an earlier error). */
void cli_record_fail(cli_record *rec, const char *msg);
void cli_record_free(cli_record *rec);

#endif
