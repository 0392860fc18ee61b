/*
 * jobcli.h — what the job commands (classify, embed, similarity, scm,
 * fill-mask, ner, qa) share: the common options, help text, opening the
 * model and pipeline, and the read-run-write loop that keeps one output per
 * input, in input order.
 */
#ifndef RF_CLI_JOBCLI_H
#define RF_CLI_JOBCLI_H

#include "input.h"
#include "options.h"
#include "roformer.h"

#include <stdbool.h>

typedef struct {
    cli_args a;             /* the command line, the command's own options too */
    const char *model_path; /* -m */
    int32_t max_length;     /* --max-length; 0 = not given: the library's default */
    int32_t truncation_side; /* --truncation-direction: rf_truncation_side */
    int32_t batch_size;     /* --batch-size */
    rf_context_params context; /* --threads, --compute, the position options */
    int32_t window;         /* --window; 0 = off */
    int32_t stride;         /* --stride; -1 = not given */
    int progress;           /* CLI_PROGRESS_* */
    size_t max_line;        /* --max-line-bytes */
    bool truncate_default;  /* without --max-length, truncate at rf_model_max_input_length */
    bool timings;           /* --timings */
    const rf_pipeline *pl;  /* set by cli_job_open, for --timings */
    double t_open;          /* when cli_job_open finished, for --timings */
    char **args;            /* positional arguments */
    int n_args;
} cli_job_opts;

/* Prints the command's usage (its own lines) followed by the shared options. */
void cli_job_help(const char *cmd, const char *usage);

/* Loads the model and creates a pipeline with the shared options; prints
 * the error and returns CLI_USAGE / CLI_FAILED on failure. */
int cli_job_open(cli_job_opts *o, const char *cmd, rf_model **model, rf_pipeline **pl);

/* With --timings: one line on stderr saying where the time since
 * cli_job_open went (encoder, tokenizer, the rest: reading, writing, JSON).
 * cli_job_run calls it at its end. */
void cli_job_print_timings(const cli_job_opts *o);

/* Called with up to a chunk of records; sets each record's `result`
 * (a cJSON object) or `error`. Records that arrive with `error` set are
 * already failed and must be left alone. Returns CLI_OK, or CLI_FAILED on
 * a runtime error that ends the job (already printed). */
typedef int (*cli_chunk_fn)(void *cmd, cli_record *recs, int n);

/* The whole run of a job command that reads one record per line: opens
 * the model and the pipeline into *model and *pl (the command's own
 * fields, which fn reads) as cli_job_open does, runs fn over the records of
 * `spec` as cli_job_run does, and frees both. */
int cli_job_open_run(cli_job_opts *o, const char *cmd, const rf_model **model, rf_pipeline **pl,
                     const cli_input_spec *spec, cli_chunk_fn fn, void *arg);

/* Reads every input (positional arguments, else `path`, else stdin),
 * calls fn chunk by chunk and writes one line per record in order:
 * the result, or {"error": ..., "line": N}. With `errors_on_stderr` (a
 * non-JSON output format) failures are reported on stderr instead.
 * Returns CLI_OK, or CLI_FAILED when any record failed. */
int cli_job_run(const cli_job_opts *o, const cli_input_spec *spec, const char *path,
                cli_chunk_fn fn, void *cmd, bool errors_on_stderr);

/* Marks rec failed with the item's message when the item failed; true
 * when rec stands (its result is to be written). */
bool cli_apply_item(cli_record *rec, const rf_item_status *item);

/* Parses the whole command line (options.h): --help, --version, the
 * options, positional arguments (in place at the front of argv); a lone
 * "-" leaves none (read stdin), "-" beside others is a usage error. The
 * command reads its own options from o->a. Returns -1 when the command
 * should go on, otherwise the exit code to return. */
int cli_job_parse(cli_job_opts *o, const char *cmd, const char *usage, int argc, char **argv);

/* The records of a chunk that have not failed, as library inputs. */
typedef struct {
    int n;                 /* inputs collected */
    rf_text *texts;        /* [n] */
    int *rec;              /* [n] index of each input's record */
    rf_item_status *items; /* [n] */
} cli_batch;

/* Collects field `a` (and `b` as the pair when b >= 0) of each record that
 * has not failed. Returns 0, or -1 when out of memory (printed). */
int cli_batch_collect(cli_batch *b, cli_record *recs, int n, int a, int pair);
void cli_batch_free(cli_batch *b);

/* Byte offsets of the characters [c0, c1) of a valid UTF-8 string. */
void cli_char_span_to_bytes(const char *s, size_t len, int32_t c0, int32_t c1, size_t *b0,
                            size_t *b1);

#endif
