/*
 * options.h — every option of every `roformer` command, in one table
 * (options.c: name, value kind, range, help, the commands that take it),
 * read by one loop, so that an option has the same name, range and error
 * text wherever it is taken.
 *
 * A command parses its whole command line with cli_options_parse and then
 * reads what was given from the cli_args it filled (cli_arg_int, ...);
 * the options that become the context's parameters (--threads, --compute,
 * --extend-positions, --rope-scaling, --rope-factor) are read in one
 * place, cli_context_params. The help of the options more than one
 * command prints (the job commands' shared options, the position options)
 * is in the table too; a command's own options are described in its usage
 * text, beside its prose.
 */
#ifndef RF_CLI_OPTIONS_H
#define RF_CLI_OPTIONS_H

#include "roformer.h"

#include <stdbool.h>
#include <stdio.h>

/* What an option sets. Two spellings of one setting (--normalize and
 * --no-normalize, -o for embed and -o/--output for convert) set one id. */
typedef enum {
    /* shared: model, lengths, batching, the context */
    CLI_OPT_MODEL,
    CLI_OPT_MAX_LENGTH,
    CLI_OPT_TRUNCATION_DIRECTION, /* rf_truncation_side */
    CLI_OPT_BATCH_SIZE,
    CLI_OPT_THREADS,
    CLI_OPT_COMPUTE, /* rf_compute_type */
    CLI_OPT_WINDOW,
    CLI_OPT_STRIDE,
    CLI_OPT_EXTEND_POSITIONS,
    CLI_OPT_ROPE_SCALING, /* rf_rope_scaling */
    CLI_OPT_ROPE_FACTOR,
    CLI_OPT_PROGRESS, /* CLI_PROGRESS_ON / _OFF */
    CLI_OPT_MAX_LINE_BYTES,
    CLI_OPT_TIMINGS,
    CLI_OPT_VERSION,
    CLI_OPT_POOLING, /* rf_pooling */
    CLI_OPT_OUTPUT,
    /* the jobs' own */
    CLI_OPT_TOP_K,
    CLI_OPT_NORMALIZE, /* 1 or 0 */
    CLI_OPT_PROMPT_NAME,
    CLI_OPT_PROMPT,
    CLI_OPT_FORMAT, /* CLI_FORMAT_* */
    CLI_OPT_QUERY,
    CLI_OPT_TOP_N,
    CLI_OPT_RAW_SCORES,
    CLI_OPT_POSITIVE_LABEL,
    CLI_OPT_MODE, /* CLI_MODE_* */
    CLI_OPT_DOC_STRIDE,
    CLI_OPT_MAX_ANSWER_TOKENS,
    /* forward */
    CLI_OPT_HEAD,
    CLI_OPT_HIDDEN_STATES,
    /* convert and pull */
    CLI_OPT_DTYPE,             /* rf_dtype */
    CLI_OPT_TOKENIZER,         /* rf_tokenizer_choice */
    CLI_OPT_POOLER_ACTIVATION, /* rf_pooler_choice */
    CLI_OPT_JIEBA_DICT,
    CLI_OPT_LIST,
    /* serve */
    CLI_OPT_HOST,
    CLI_OPT_PORT,
    CLI_OPT_MAX_BATCH_TOKENS,
    CLI_OPT_MAX_BATCH_REQUESTS,
    CLI_OPT_MAX_CLIENT_BATCH_SIZE,
    CLI_OPT_MAX_CONCURRENT_REQUESTS,
    CLI_OPT_MAX_INPUT_LENGTH,
    CLI_OPT_AUTO_TRUNCATE,
    CLI_OPT_PAYLOAD_LIMIT,
    CLI_OPT_API_KEY,
    CLI_OPT_CORS_ALLOW_ORIGIN,
    CLI_OPT_LOG_FORMAT, /* CLI_LOG_* */
    CLI_OPT_REPLICAS,
    CLI_OPT_QUEUE_TIMEOUT,
    CLI_OPT_MAX_CONNECTIONS,
    CLI_OPT_MAX_CONNECTIONS_PER_CLIENT,
    CLI_OPT_REQUEST_TIMEOUT,
    CLI_OPT_CACHE_MB,
    /* bench */
    CLI_OPT_SEQ_LEN,
    CLI_OPT_BATCH,
    CLI_OPT_RUNS,
    CLI_OPT_WARMUP,
    CLI_OPT_LENGTHS_FROM,
    CLI_OPT_KERNEL,
    CLI_OPT_SKIP_PADDING,
    CLI_OPT_COUNT
} cli_opt;

/* The values of the choices that are not the library's enums. */
enum { CLI_FORMAT_JSONL, CLI_FORMAT_NPY };
enum { CLI_MODE_EMBED, CLI_MODE_PAIR };
enum { CLI_LOG_TEXT, CLI_LOG_JSON };

/* Most values of a repeatable option (serve's -m). */
#define CLI_MAX_REPEATS 16

/* A parsed command line. */
typedef struct {
    bool given[CLI_OPT_COUNT];
    const char *text[CLI_OPT_COUNT]; /* the value as typed (NULL for a flag) */
    double value[CLI_OPT_COUNT];     /* an integer's, a number's, a choice's or a flag's */
    /* every value of the command's repeatable option, in order (text[] has the last) */
    const char *repeated[CLI_MAX_REPEATS];
    int n_repeated;
    char **args;                     /* the positional arguments, in place at the front of argv */
    int n_args;
} cli_args;

/* Parses argv[1..] for command `cmd` ("fill-mask", ...): the options the
 * table gives it and the positional arguments it takes. 0: parsed; 1:
 * --version was met (the job commands print the version and stop there);
 * -1: a usage error, printed ("roformer CMD: ..."), in argv order. */
int cli_options_parse(const char *cmd, int argc, char **argv, cli_args *a);

/* The start of a command that is not a job command: prints `usage` for
 * --help (CLI_OK), or parses argv into *a with cli_options_parse (any other
 * outcome than parsed is CLI_USAGE). -1: go on with *a. */
int cli_command_args(const char *cmd, const char *usage, int argc, char **argv, cli_args *a);

/* The value given, or `dflt`. */
int32_t cli_arg_int(const cli_args *a, cli_opt id, int32_t dflt);
const char *cli_arg_text(const cli_args *a, cli_opt id, const char *dflt);

/* The context's parameters: the library's defaults with --threads,
 * --compute, --extend-positions, --rope-scaling and --rope-factor. */
rf_context_params cli_context_params(const cli_args *a);

/* The converter's parameters: the library's defaults with --dtype,
 * --tokenizer, --pooler-activation and --jieba-dict. */
rf_convert_params cli_convert_params(const cli_args *a);

/* Prints the table's help lines for command `cmd`, in table order: for the
 * job commands their shared options, for forward, serve and bench the
 * position options. */
void cli_options_help(FILE *f, const char *cmd);

/* The pooling to use: --pooling when given, else the library's default for
 * the model (rf_model_default_pooling), checked against the model. 0, or
 * -1 with the usage error printed. */
int cli_pooling_for(const char *cmd, const rf_model *model, const cli_args *a, rf_pooling *out);

/* The help line of --pooling, for the commands' usage texts. */
#define CLI_POOLING_HELP                                                                      \
    "  --pooling P  cls | mean | max | last (over real tokens) | pooler (RoFormer-Sim);\n"    \
    "               default: the model's sentence-transformers pooling when it has one,\n"   \
    "               else pooler when the model has one, else cls\n"

#endif
