/*
 * options.c — the table of the CLI's options and the one loop that reads
 * a command line with it (see options.h).
 */
#include "options.h"

#include "cli.h"
#include "progress.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ==== The commands ==== */

enum {
    CMD_CONVERT = 1u << 0,
    CMD_PULL = 1u << 1,
    CMD_INFO = 1u << 2,
    CMD_TOKENIZE = 1u << 3,
    CMD_FORWARD = 1u << 4,
    CMD_CLASSIFY = 1u << 5,
    CMD_EMBED = 1u << 6,
    CMD_SIMILARITY = 1u << 7,
    CMD_RERANK = 1u << 8,
    CMD_SCM = 1u << 9,
    CMD_FILL_MASK = 1u << 10,
    CMD_NER = 1u << 11,
    CMD_QA = 1u << 12,
    CMD_SERVE = 1u << 13,
    CMD_BENCH = 1u << 14,
    JOBS = CMD_CLASSIFY | CMD_EMBED | CMD_SIMILARITY | CMD_RERANK | CMD_SCM | CMD_FILL_MASK |
           CMD_NER | CMD_QA,
    POSITIONS = JOBS | CMD_FORWARD | CMD_SERVE | CMD_BENCH,
};

/* The positional arguments a command takes. */
typedef enum {
    ARGS_ANY,  /* any number (texts) */
    ARGS_ONE,  /* one (a directory, a repository) */
    ARGS_DASH, /* only "-", once: stdin, read anyway */
    ARGS_NONE,
} args_rule;

static const struct {
    const char *name;
    unsigned bit;
    args_rule args;
    const char *unknown;  /* format: the argument */
    const char *too_many; /* ARGS_ONE: format: the first, the second */
} commands[] = {
    {"convert", CMD_CONVERT, ARGS_ONE, "unknown option '%s'",
     "more than one input directory ('%s', '%s')"},
    {"pull", CMD_PULL, ARGS_ONE, "unknown option '%s'", "more than one repository ('%s', '%s')"},
    {"info", CMD_INFO, ARGS_NONE, "unexpected argument '%s'", NULL},
    {"tokenize", CMD_TOKENIZE, ARGS_DASH, "unexpected argument '%s'", NULL},
    {"forward", CMD_FORWARD, ARGS_DASH, "unknown option '%s'", NULL},
    {"classify", CMD_CLASSIFY, ARGS_ANY, "unknown option '%s'", NULL},
    {"embed", CMD_EMBED, ARGS_ANY, "unknown option '%s'", NULL},
    {"similarity", CMD_SIMILARITY, ARGS_ANY, "unknown option '%s'", NULL},
    {"rerank", CMD_RERANK, ARGS_ANY, "unknown option '%s'", NULL},
    {"scm", CMD_SCM, ARGS_ANY, "unknown option '%s'", NULL},
    {"fill-mask", CMD_FILL_MASK, ARGS_ANY, "unknown option '%s'", NULL},
    {"ner", CMD_NER, ARGS_ANY, "unknown option '%s'", NULL},
    {"qa", CMD_QA, ARGS_ANY, "unknown option '%s'", NULL},
    {"serve", CMD_SERVE, ARGS_NONE, "unknown option or argument '%s'", NULL},
    {"bench", CMD_BENCH, ARGS_NONE, "unknown option '%s'", NULL},
};

/* ==== The options ==== */

typedef enum {
    FLAG,   /* no value; sets `lo` */
    INT,    /* an integer in [lo, hi] */
    COUNT,  /* the same, refused as bench always has ("is not a valid count") */
    NUMBER, /* a number above lo, at most hi */
    TEXT,   /* any string */
    CHOICE, /* one of `choices` */
} value_kind;

typedef struct {
    const char *name;
    int value;
} choice;

static const choice computes[] = {
    {"f32", RF_COMPUTE_F32}, {"bf16", RF_COMPUTE_BF16}, {"int8", RF_COMPUTE_INT8}, {0}};
static const choice scalings[] = {{"none", RF_ROPE_SCALING_NONE},
                                  {"linear", RF_ROPE_SCALING_LINEAR},
                                  {"ntk", RF_ROPE_SCALING_NTK},
                                  {0}};
static const choice sides[] = {{"right", RF_TRUNCATE_RIGHT}, {"left", RF_TRUNCATE_LEFT}, {0}};
static const choice poolings[] = {{"cls", RF_POOLING_CLS},       {"mean", RF_POOLING_MEAN},
                                  {"max", RF_POOLING_MAX},       {"last", RF_POOLING_LAST},
                                  {"pooler", RF_POOLING_POOLER}, {0}};
static const choice formats[] = {{"jsonl", CLI_FORMAT_JSONL}, {"npy", CLI_FORMAT_NPY}, {0}};
static const choice modes[] = {{"embed", CLI_MODE_EMBED}, {"pair", CLI_MODE_PAIR}, {0}};
static const choice log_formats[] = {{"text", CLI_LOG_TEXT}, {"json", CLI_LOG_JSON}, {0}};
static const choice dtypes[] = {
    {"f32", RF_DTYPE_F32}, {"f16", RF_DTYPE_F16}, {"bf16", RF_DTYPE_BF16}, {"q8", RF_DTYPE_Q8}, {0}};
static const choice tokenizers[] = {
    {"auto", RF_TOKENIZER_AUTO}, {"wobert", RF_TOKENIZER_WOBERT}, {"bert", RF_TOKENIZER_BERT}, {0}};
static const choice pooler_activations[] = {
    {"tanh", RF_POOLER_ACT_TANH}, {"linear", RF_POOLER_ACT_LINEAR}, {0}};

/* How the messages of a value read: "option --x needs a value" and "--x
 * wants an integer from 1 to 8, not 'y'" unless a row says otherwise (the
 * converter's and bench's own options kept their wording). */
#define CONVERTER .missing = "%s needs %s", .verb = "must be"
#define BENCH_OWN .missing = "option '%s' needs a value"

typedef struct {
    const char *name, *alias; /* "--model", "-m" */
    cli_opt id;
    value_kind kind;
    long lo, hi;
    const choice *choices;
    unsigned commands; /* CMD_* of the commands that take it */
    const char *help;  /* its lines in those commands' help, or NULL */
    const char *missing; /* format of a missing value: the name, the choices */
    const char *verb;    /* "--x VERB a, b or c, not 'y'" (default "is") */
    bool repeats;        /* each value is kept (cli_args.repeated), not only the last */
} option;

/* A command takes the first row that names it; the rows of an option for
 * different commands differ in their help. The job commands' help prints
 * their rows in this order. */
static const option options[] = {
    {"-m", "--model", CLI_OPT_MODEL, TEXT, .commands = JOBS,
     .help = "  -m, --model MODEL     a converted .gguf file or a HuggingFace checkpoint directory;\n"
             "                        required (only classify has a default model)\n"},
    {"-m", "--model", CLI_OPT_MODEL, TEXT, .commands = CMD_INFO | CMD_TOKENIZE | CMD_FORWARD |
                                                        CMD_BENCH},
    /* serve takes several models, one -m each */
    {"-m", "--model", CLI_OPT_MODEL, TEXT, .commands = CMD_SERVE, .repeats = true},
    {"--max-length", NULL, CLI_OPT_MAX_LENGTH, INT, 2, 1 << 20, .commands = JOBS,
     .help = "  --max-length N        truncate inputs to N tokens (default: the model's\n"
             "                        sentence-transformers max_seq_length, else no truncation;\n"
             "                        an input longer than the model's maximum is then an error line)\n"},
    {"--max-length", NULL, CLI_OPT_MAX_LENGTH, INT, 2, 1 << 20,
     .commands = CMD_TOKENIZE | CMD_FORWARD},
    {"--truncation-direction", NULL, CLI_OPT_TRUNCATION_DIRECTION, CHOICE, .choices = sides,
     .commands = JOBS,
     .help = "  --truncation-direction right|left  which end --max-length cuts: right keeps\n"
             "                        the first tokens (default), left the last\n"},
    {"--batch-size", NULL, CLI_OPT_BATCH_SIZE, INT, 1, 4096, .commands = JOBS,
     .help = "  --batch-size N        sequences per forward pass (default 8)\n"},
    {"--threads", NULL, CLI_OPT_THREADS, INT, 0, RF_MAX_THREADS, .commands = JOBS,
     .help = "  --threads N           compute threads, 0 to 256 (default 0: all cores)\n"},
    {"--threads", NULL, CLI_OPT_THREADS, INT, 0, RF_MAX_THREADS,
     .commands = CMD_FORWARD | CMD_SERVE | CMD_BENCH},
    {"--compute", NULL, CLI_OPT_COMPUTE, CHOICE, .choices = computes, .commands = JOBS,
     .help = "  --compute f32|bf16|int8  arithmetic of the encoder's matrix products (default\n"
             "                        f32; bf16: bf16 rounding, needs AVX512_BF16 or ARM BF16;\n"
             "                        int8: 8-bit weights and inputs, needs AVX2 or ARM64)\n"},
    {"--compute", NULL, CLI_OPT_COMPUTE, CHOICE, .choices = computes,
     .commands = CMD_FORWARD | CMD_SERVE | CMD_BENCH},
    {"--window", NULL, CLI_OPT_WINDOW, INT, 3, 1 << 20, .commands = JOBS,
     .help = "  --window N            a text longer than N tokens is cut into overlapping windows\n"
             "                        of N tokens, each encoded, and pooled into one result: the\n"
             "                        mean of the window vectors (embed, similarity, scm), of\n"
             "                        the window logits (classify); --timings counts them\n"},
    {"--stride", NULL, CLI_OPT_STRIDE, INT, 0, 1 << 20, .commands = JOBS,
     .help = "  --stride S            text tokens a window shares with the previous one (default\n"
             "                        N / 4; below N - 2)\n"},
    {"--extend-positions", NULL, CLI_OPT_EXTEND_POSITIONS, FLAG, 1, .commands = POSITIONS,
     .help = "  --extend-positions    accept inputs longer than the model's max_position, with\n"
             "                        rotary angles computed past it by the same formula; what\n"
             "                        the model makes of positions it was not trained on depends\n"
             "                        on the checkpoint, not on the engine (docs/long-inputs.md)\n"},
    {"--rope-scaling", NULL, CLI_OPT_ROPE_SCALING, CHOICE, .choices = scalings,
     .commands = POSITIONS, .verb = "wants",
     .help = "  --rope-scaling none|linear|ntk  stretch the trained positions instead: linear\n"
             "                        divides positions by the factor, ntk multiplies the rotary\n"
             "                        base by factor^(d/(d-2)); up to max_position x factor tokens\n"
             "                        are then accepted (default: the model's own, else none)\n"},
    {"--rope-factor", NULL, CLI_OPT_ROPE_FACTOR, NUMBER, 0, 1024, .commands = POSITIONS,
     .help = "  --rope-factor F       the scaling factor, > 0 (default: the model's, else 1)\n"},
    {"--progress", NULL, CLI_OPT_PROGRESS, FLAG, CLI_PROGRESS_ON, .commands = JOBS,
     .help = "  --progress            progress bar on stderr (default: only when stderr is a\n"
             "                        terminal and the job runs over a second); --no-progress\n"},
    {"--no-progress", NULL, CLI_OPT_PROGRESS, FLAG, CLI_PROGRESS_OFF, .commands = JOBS | CMD_PULL},
    {"--progress", NULL, CLI_OPT_PROGRESS, FLAG, CLI_PROGRESS_ON, .commands = CMD_PULL},
    {"--max-line-bytes", NULL, CLI_OPT_MAX_LINE_BYTES, INT, 1, 1 << 30, .commands = JOBS,
     .help = "  --max-line-bytes N    longest input line accepted (default 1048576)\n"},
    {"--max-line-bytes", NULL, CLI_OPT_MAX_LINE_BYTES, INT, 1, 1 << 30,
     .commands = CMD_TOKENIZE | CMD_FORWARD},
    {"--timings", NULL, CLI_OPT_TIMINGS, FLAG, 1, .commands = JOBS,
     .help = "  --timings             at the end, where the time went on stderr: encoder,\n"
             "                        tokenizer, and the rest (reading, writing, JSON)\n"},
    {"--version", NULL, CLI_OPT_VERSION, FLAG, 1, .commands = JOBS,
     .help = "  --version, -h/--help\n"},

    /* the jobs' own */
    {"--pooling", NULL, CLI_OPT_POOLING, CHOICE, .choices = poolings,
     .commands = CMD_EMBED | CMD_SIMILARITY | CMD_RERANK | CMD_SCM | CMD_SERVE},
    {"--top-k", NULL, CLI_OPT_TOP_K, INT, 1, 1 << 20, .commands = CMD_CLASSIFY | CMD_FILL_MASK},
    {"--normalize", NULL, CLI_OPT_NORMALIZE, FLAG, 1, .commands = CMD_EMBED},
    {"--no-normalize", NULL, CLI_OPT_NORMALIZE, FLAG, 0, .commands = CMD_EMBED},
    {"--prompt-name", NULL, CLI_OPT_PROMPT_NAME, TEXT, .commands = CMD_EMBED},
    {"--prompt", NULL, CLI_OPT_PROMPT, TEXT, .commands = CMD_EMBED},
    {"--format", NULL, CLI_OPT_FORMAT, CHOICE, .choices = formats, .commands = CMD_EMBED},
    {"-o", NULL, CLI_OPT_OUTPUT, TEXT, .commands = CMD_EMBED},
    {"--query", NULL, CLI_OPT_QUERY, TEXT, .commands = CMD_RERANK},
    {"--top-n", NULL, CLI_OPT_TOP_N, INT, 1, 1 << 30, .commands = CMD_RERANK},
    {"--raw-scores", NULL, CLI_OPT_RAW_SCORES, FLAG, 1, .commands = CMD_RERANK},
    {"--positive-label", NULL, CLI_OPT_POSITIVE_LABEL, INT, 0, 1 << 20, .commands = CMD_RERANK},
    {"--mode", NULL, CLI_OPT_MODE, CHOICE, .choices = modes, .commands = CMD_SCM},
    {"--doc-stride", NULL, CLI_OPT_DOC_STRIDE, INT, 0, 1 << 20, .commands = CMD_QA},
    {"--max-answer-tokens", NULL, CLI_OPT_MAX_ANSWER_TOKENS, INT, 1, 1 << 20, .commands = CMD_QA},

    /* forward: --head is checked once the model is required (cmd_forward.c) */
    {"--head", NULL, CLI_OPT_HEAD, TEXT, .commands = CMD_FORWARD},
    {"--hidden-states", NULL, CLI_OPT_HIDDEN_STATES, FLAG, 1, .commands = CMD_FORWARD},

    /* convert and pull */
    {"--dtype", NULL, CLI_OPT_DTYPE, CHOICE, .choices = dtypes, .commands = CMD_CONVERT | CMD_PULL,
     CONVERTER},
    {"--tokenizer", NULL, CLI_OPT_TOKENIZER, CHOICE, .choices = tokenizers,
     .commands = CMD_CONVERT | CMD_PULL, CONVERTER},
    {"--pooler-activation", NULL, CLI_OPT_POOLER_ACTIVATION, CHOICE, .choices = pooler_activations,
     .commands = CMD_CONVERT | CMD_PULL, CONVERTER},
    {"-o", "--output", CLI_OPT_OUTPUT, TEXT, .commands = CMD_CONVERT, .missing = "%s needs a path"},
    {"--jieba-dict", NULL, CLI_OPT_JIEBA_DICT, TEXT, .commands = CMD_CONVERT,
     .missing = "%s needs a path"},
    {"--list", NULL, CLI_OPT_LIST, FLAG, 1, .commands = CMD_PULL},

    /* serve */
    {"--host", NULL, CLI_OPT_HOST, TEXT, .commands = CMD_SERVE},
    {"--port", NULL, CLI_OPT_PORT, INT, 0, 65535, .commands = CMD_SERVE},
    {"--replicas", NULL, CLI_OPT_REPLICAS, INT, 1, RF_MAX_THREADS, .commands = CMD_SERVE},
    {"--max-batch-tokens", NULL, CLI_OPT_MAX_BATCH_TOKENS, INT, 1, 1 << 24, .commands = CMD_SERVE},
    {"--max-batch-requests", NULL, CLI_OPT_MAX_BATCH_REQUESTS, INT, 1, 1 << 20,
     .commands = CMD_SERVE},
    {"--max-client-batch-size", NULL, CLI_OPT_MAX_CLIENT_BATCH_SIZE, INT, 1, 4096,
     .commands = CMD_SERVE},
    {"--max-concurrent-requests", NULL, CLI_OPT_MAX_CONCURRENT_REQUESTS, INT, 1, 1 << 16,
     .commands = CMD_SERVE},
    {"--max-input-length", NULL, CLI_OPT_MAX_INPUT_LENGTH, INT, 2, 1 << 20, .commands = CMD_SERVE},
    {"--auto-truncate", NULL, CLI_OPT_AUTO_TRUNCATE, FLAG, 1, .commands = CMD_SERVE},
    {"--payload-limit", NULL, CLI_OPT_PAYLOAD_LIMIT, INT, 1, 1 << 30, .commands = CMD_SERVE},
    {"--api-key", NULL, CLI_OPT_API_KEY, TEXT, .commands = CMD_SERVE},
    {"--cors-allow-origin", NULL, CLI_OPT_CORS_ALLOW_ORIGIN, TEXT, .commands = CMD_SERVE},
    {"--log-format", NULL, CLI_OPT_LOG_FORMAT, CHOICE, .choices = log_formats,
     .commands = CMD_SERVE},
    {"--queue-timeout", NULL, CLI_OPT_QUEUE_TIMEOUT, INT, 0, 1 << 30, .commands = CMD_SERVE},
    {"--max-connections", NULL, CLI_OPT_MAX_CONNECTIONS, INT, 1, 1 << 20, .commands = CMD_SERVE},
    {"--max-connections-per-client", NULL, CLI_OPT_MAX_CONNECTIONS_PER_CLIENT, INT, 1, 1 << 20,
     .commands = CMD_SERVE},
    {"--request-timeout", NULL, CLI_OPT_REQUEST_TIMEOUT, INT, 1, 86400, .commands = CMD_SERVE},
    {"--cache-mb", NULL, CLI_OPT_CACHE_MB, INT, 0, 1 << 20, .commands = CMD_SERVE},

    /* bench */
    {"--seq-len", NULL, CLI_OPT_SEQ_LEN, COUNT, 1, 1 << 20, .commands = CMD_BENCH, BENCH_OWN},
    {"--batch", NULL, CLI_OPT_BATCH, COUNT, 1, 1 << 20, .commands = CMD_BENCH, BENCH_OWN},
    {"--runs", NULL, CLI_OPT_RUNS, COUNT, 1, 1 << 20, .commands = CMD_BENCH, BENCH_OWN},
    {"--warmup", NULL, CLI_OPT_WARMUP, COUNT, 0, 1 << 20, .commands = CMD_BENCH, BENCH_OWN},
    {"--lengths-from", NULL, CLI_OPT_LENGTHS_FROM, TEXT, .commands = CMD_BENCH, BENCH_OWN},
    {"--kernel", NULL, CLI_OPT_KERNEL, TEXT, .commands = CMD_BENCH, BENCH_OWN},
    {"--skip-padding", NULL, CLI_OPT_SKIP_PADDING, FLAG, 1, .commands = CMD_BENCH},
};

/* ==== The loop ==== */

/* The row of command `cmd`; every caller names one of the table's. */
static size_t command_row(const char *cmd)
{
    size_t k = 0;
    while (k < sizeof commands / sizeof *commands && strcmp(commands[k].name, cmd))
        k++;
    assert(k < sizeof commands / sizeof *commands);
    return k;
}

/* "a, b or c" */
static void choice_list(const choice *c, char *buf, size_t n)
{
    buf[0] = '\0';
    for (const choice *p = c; p->name; p++) {
        if (p != c)
            strncat(buf, p[1].name ? ", " : " or ", n - strlen(buf) - 1);
        strncat(buf, p->name, n - strlen(buf) - 1);
    }
}

/* Reads value `v` of option row `o` (typed as `name`) into `a`; -1 after
 * the usage error. */
static int take_value(const char *cmd, const option *o, const char *name, const char *v,
                      cli_args *a)
{
    double x = 0;
    if (o->kind == INT || o->kind == COUNT) {
        long n;
        if (cli_parse_int(v, o->lo, o->hi, &n) != 0) {
            if (o->kind == COUNT)
                return cli_usage_error(cmd, "%s: '%s' is not a valid count", name, v), -1;
            return cli_usage_error(cmd, "%s wants an integer from %ld to %ld, not '%s'", name,
                                   o->lo, o->hi, v),
                   -1;
        }
        x = (double)n;
    } else if (o->kind == NUMBER) {
        char *end;
        x = strtod(v, &end);
        if (end == v || *end || !(x > (double)o->lo) || x > (double)o->hi)
            return cli_usage_error(cmd, "%s wants a number above %ld and at most %ld, not '%s'",
                                   name, o->lo, o->hi, v),
                   -1;
    } else if (o->kind == CHOICE) {
        const choice *c = o->choices;
        while (c->name && strcmp(c->name, v))
            c++;
        if (!c->name) {
            char list[128];
            choice_list(o->choices, list, sizeof list);
            return cli_usage_error(cmd, "%s %s %s, not '%s'", name, o->verb ? o->verb : "is",
                                   list, v),
                   -1;
        }
        x = c->value;
    }
    if (o->repeats) {
        if (a->n_repeated == CLI_MAX_REPEATS)
            return cli_usage_error(cmd, "%s is given more than %d times", name, CLI_MAX_REPEATS),
                   -1;
        a->repeated[a->n_repeated++] = v;
    }
    a->given[o->id] = true;
    a->text[o->id] = v;
    a->value[o->id] = x;
    return 0;
}

int cli_options_parse(const char *cmd, int argc, char **argv, cli_args *a)
{
    size_t c = command_row(cmd);
    *a = (cli_args){.args = argv};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v = NULL, *name = NULL;
        const option *o = NULL;
        for (size_t k = 0; !o && k < sizeof options / sizeof *options; k++) {
            if (!(options[k].commands & commands[c].bit))
                continue;
            for (int s = 0; s < 2 && !o; s++) {
                const char *n = s ? options[k].alias : options[k].name;
                size_t len = n ? strlen(n) : 0;
                if (!n || strncmp(arg, n, len))
                    continue;
                if (arg[len] == '\0' || (arg[len] == '=' && options[k].kind != FLAG)) {
                    o = &options[k];
                    name = n;
                    v = arg[len] ? arg + len + 1 : NULL;
                }
            }
        }
        if (o && o->kind == FLAG) {
            a->given[o->id] = true;
            a->value[o->id] = (double)o->lo;
            if (o->id == CLI_OPT_VERSION)
                return 1;
            continue;
        }
        if (o) {
            if (!v && i + 1 >= argc) {
                char list[128] = "";
                if (o->choices)
                    choice_list(o->choices, list, sizeof list);
                if (o->missing)
                    return cli_usage_error(cmd, o->missing, name, list), -1;
                return cli_usage_error(cmd, "option %s needs a value", name), -1;
            }
            if (take_value(cmd, o, name, v ? v : argv[++i], a))
                return -1;
            continue;
        }
        /* a positional argument, or what the command does not know */
        bool option_like = arg[0] == '-' && arg[1] != '\0';
        args_rule rule = commands[c].args;
        if (rule == ARGS_ONE && !option_like && a->n_args == 1)
            return cli_usage_error(cmd, commands[c].too_many, a->args[0], arg), -1;
        if ((rule == ARGS_ANY && !option_like) || (rule == ARGS_ONE && !option_like) ||
            (rule == ARGS_DASH && !strcmp(arg, "-") && a->n_args == 0)) {
            a->args[a->n_args++] = argv[i];
            continue;
        }
        return cli_usage_error(cmd, commands[c].unknown, arg), -1;
    }
    /* allowed (the threads take turns), but rarely what was meant */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (a->given[CLI_OPT_THREADS] && cores > 0 && a->value[CLI_OPT_THREADS] > cores)
        fprintf(stderr, "roformer: note: --threads %d is more than the %ld cores online\n",
                (int)a->value[CLI_OPT_THREADS], cores);
    return 0;
}

int cli_command_args(const char *cmd, const char *usage, int argc, char **argv, cli_args *a)
{
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    return cli_options_parse(cmd, argc, argv, a) != 0 ? CLI_USAGE : -1;
}

int32_t cli_arg_int(const cli_args *a, cli_opt id, int32_t dflt)
{
    return a->given[id] ? (int32_t)a->value[id] : dflt;
}

const char *cli_arg_text(const cli_args *a, cli_opt id, const char *dflt)
{
    return a->given[id] ? a->text[id] : dflt;
}

rf_context_params cli_context_params(const cli_args *a)
{
    rf_context_params cp = rf_context_default_params();
    cp.n_threads = cli_arg_int(a, CLI_OPT_THREADS, cp.n_threads);
    cp.compute = (rf_compute_type)cli_arg_int(a, CLI_OPT_COMPUTE, (int32_t)cp.compute);
    cp.extend_positions = a->given[CLI_OPT_EXTEND_POSITIONS];
    cp.rope_scaling =
        (rf_rope_scaling)cli_arg_int(a, CLI_OPT_ROPE_SCALING, (int32_t)cp.rope_scaling);
    if (a->given[CLI_OPT_ROPE_FACTOR])
        cp.rope_factor = (float)a->value[CLI_OPT_ROPE_FACTOR];
    return cp;
}

rf_convert_params cli_convert_params(const cli_args *a)
{
    rf_convert_params p = rf_convert_default_params();
    p.dtype = (rf_dtype)cli_arg_int(a, CLI_OPT_DTYPE, (int32_t)p.dtype);
    p.tokenizer = (rf_tokenizer_choice)cli_arg_int(a, CLI_OPT_TOKENIZER, (int32_t)p.tokenizer);
    p.pooler_activation =
        (rf_pooler_choice)cli_arg_int(a, CLI_OPT_POOLER_ACTIVATION, (int32_t)p.pooler_activation);
    p.jieba_dict = cli_arg_text(a, CLI_OPT_JIEBA_DICT, p.jieba_dict);
    return p;
}

void cli_options_help(FILE *f, const char *cmd)
{
    unsigned bit = commands[command_row(cmd)].bit;
    for (size_t k = 0; k < sizeof options / sizeof *options; k++)
        if ((options[k].commands & bit) && options[k].help)
            fputs(options[k].help, f);
}

int cli_pooling_for(const char *cmd, const rf_model *model, const cli_args *a, rf_pooling *out)
{
    rf_pooling pooling = a->given[CLI_OPT_POOLING] ? (rf_pooling)a->value[CLI_OPT_POOLING]
                                                   : rf_model_default_pooling(model);
    rf_error err;
    if (rf_model_check_pooling(model, pooling, &err) != RF_OK)
        return cli_usage_error(cmd, "--pooling %s: %s", rf_pooling_name(pooling), err.message),
               -1;
    *out = pooling;
    return 0;
}
