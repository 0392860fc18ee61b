/*
 * cmd_forward.c — `roformer forward`: the raw forward pass on JSONL input.
 *
 * Each stdin line is one input: a JSON object with text to tokenize
 *     {"text": "...", "text_pair": "..."}
 * (any line that is not a JSON object is the text itself), or token ids, flat for one sequence or lists of lists for a padded batch
 * (the layout of the reference cases.jsonl)
 *     {"input_ids": [...], "token_type_ids": [...], "attention_mask": [...]}
 * with optional "output_positions": [p, ...] to run the MLM decoder only at
 * those positions (returned as "logits_at"). Each line gets one JSON object
 * on stdout: last_hidden_state, then as the head gives logits / logits_at /
 * start_logits / end_logits, pooled (models with a pooler), and with
 * --hidden-states every layer's output. A flat input gives outputs without
 * the batch dimension. Floats are printed with %.9g, which round-trips
 * float32. A bad line gets {"error": ..., "line": N} in its place; the exit
 * status is then 1.
 */
#include "cli.h"
#include "load_model.h"
#include "input.h"
#include "options.h"

#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: roformer forward -m MODEL [--head auto|none|mlm|cls|token|qa] [--hidden-states]\n"
            "                        [--max-length N] [--threads N] [--max-line-bytes N] [-]\n"
            "\n"
            "Reads stdin (also named '-'), one input per line:\n"
            "  {\"text\": ..., \"text_pair\": ...}                      text, tokenized by the model\n"
            "  any line that is not a JSON object                   the text itself\n"
            "  {\"input_ids\": [...], \"token_type_ids\": [...], \"attention_mask\": [...]}\n"
            "                                          ids, flat or [batch][len] (right-padded)\n"
            "  optional \"output_positions\": [p, ...]   MLM logits only at those positions (logits_at)\n"
            "Writes one JSON object per line: last_hidden_state, and as the head gives logits,\n"
            "logits_at, start_logits, end_logits, pooled; --hidden-states adds hidden_states\n"
            "(embeddings, then every layer). A bad line gives {\"error\": ..., \"line\": N}.\n"
            "\n"
            "  -m MODEL          .gguf file or HuggingFace directory\n"
            "  --head H          auto (the model's head, default), none (encoder only), or the\n"
            "                    head the model must have: mlm, cls, token, qa\n"
            "  --hidden-states   also print every layer's output\n"
            "  --max-length N    truncate text inputs to N tokens (default: no truncation)\n"
            "  --threads N       compute threads, 0 to 256 (default 0: all cores)\n"
            "  --compute f32|bf16|int8  arithmetic of the encoder's matrix products (default\n"
            "                    f32; bf16 needs AVX512_BF16 or ARM BF16, int8 AVX2 or ARM64)\n"
            "  --max-line-bytes N  longest input line accepted (default 1048576); a longer\n"
            "                    line gives an error in its place\n");
    cli_options_help(f, "forward");
}

/* ==== growing text buffer for the float arrays ==== */

typedef struct {
    char *p;
    size_t len, cap;
    int failed; /* out of memory */
} text_buf;

static void buf_reserve(text_buf *b, size_t more)
{
    if (b->failed || b->len + more < b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap <= b->len + more)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = 1;
        return;
    }
    b->p = p;
    b->cap = cap;
}

static void buf_putc(text_buf *b, char c)
{
    buf_reserve(b, 1);
    if (!b->failed)
        b->p[b->len++] = c, b->p[b->len] = '\0';
}

static void buf_float(text_buf *b, float v)
{
    buf_reserve(b, 32);
    if (b->failed)
        return;
    /* JSON has no NaN or infinity: they become null */
    int n = isfinite(v) ? snprintf(b->p + b->len, 32, "%.9g", (double)v)
                        : snprintf(b->p + b->len, 32, "null");
    b->len += (size_t)n;
}

/* Writes data as nested JSON arrays of the given dims (row-major). */
static void buf_array(text_buf *b, const float *data, const int *dims, int n_dims)
{
    buf_putc(b, '[');
    size_t inner = 1;
    for (int i = 1; i < n_dims; i++)
        inner *= (size_t)dims[i];
    for (int i = 0; i < dims[0]; i++) {
        if (i)
            buf_putc(b, ',');
        if (n_dims == 1)
            buf_float(b, data[i]);
        else
            buf_array(b, data + (size_t)i * inner, dims + 1, n_dims - 1);
    }
    buf_putc(b, ']');
}

/* Adds `name`: the array of dims[n_dims], without dimension `batch_dim`
 * (of size 1) when the input was flat. Returns -1 when out of memory. */
static int add_array(cJSON *obj, const char *name, const float *data, const int *dims,
                     int n_dims, int batch_dim, int flat)
{
    int shape[4];
    int n = 0;
    for (int i = 0; i < n_dims; i++)
        if (!(flat && i == batch_dim))
            shape[n++] = dims[i];
    text_buf b = {0};
    buf_array(&b, data, shape, n);
    cJSON *raw = b.failed ? NULL : cJSON_CreateRaw(b.p);
    free(b.p);
    if (!raw)
        return -1;
    cJSON_AddItemToObject(obj, name, raw);
    return 0;
}

/* ==== one input line ==== */

typedef struct {
    int B, L;
    int flat;                           /* input_ids was a flat list */
    int32_t *ids, *types, *mask;        /* [B][L] */
    int32_t *positions;                 /* output_positions, or NULL */
    int n_positions;
} line_input;

static void free_input(line_input *in)
{
    free(in->ids);
    free(in->types);
    free(in->mask);
    free(in->positions);
}

static int input_error(rf_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int input_error(rf_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return -1;
}

/* Reads an integer list (flat) or a list of equal-length lists into a
 * [B][L] array. When *B is 0 it sets *flat, *B and *L; otherwise the list
 * must have that shape. Returns 0, or -1 with the message in err. */
static int read_ints(const cJSON *v, const char *name, int *flat, int *B, int *L, int32_t **out,
                     rf_error *err)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return input_error(err, "\"%s\" must be a non-empty list", name);
    int f = !cJSON_IsArray(cJSON_GetArrayItem(v, 0));
    int b_n = f ? 1 : cJSON_GetArraySize(v);
    int l_n = f ? cJSON_GetArraySize(v) : cJSON_GetArraySize(cJSON_GetArrayItem(v, 0));
    if (*B && (f != *flat || b_n != *B || l_n != *L))
        return input_error(err, "\"%s\" has not the shape of \"input_ids\"", name);
    if (l_n == 0)
        return input_error(err, "\"%s\" has an empty sequence", name);
    int32_t *a = malloc((size_t)b_n * l_n * sizeof *a);
    if (!a)
        return input_error(err, "out of memory");
    for (int b = 0; b < b_n; b++) {
        const cJSON *row = f ? v : cJSON_GetArrayItem(v, b);
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != l_n) {
            free(a);
            return input_error(err, "\"%s\": every sequence of a batch must have %d values "
                               "(pad them)", name, l_n);
        }
        int t = 0;
        const cJSON *x;
        cJSON_ArrayForEach(x, row) {
            double d = cJSON_IsNumber(x) ? x->valuedouble : NAN;
            if (!(d >= INT32_MIN && d <= INT32_MAX) || d != floor(d)) {
                free(a);
                return input_error(err, "\"%s\"[%d] is not an integer", name, b * l_n + t);
            }
            a[(size_t)b * l_n + t++] = (int32_t)d;
        }
    }
    *flat = f;
    *B = b_n;
    *L = l_n;
    *out = a;
    return 0;
}

/* Parses the current line into `in`. Returns 0, or -1 with the message in
 * err. */
static int read_line(const rf_model *model, const cli_record *rec, int max_length,
                     rf_encoding *enc, line_input *in, rf_error *err)
{
    memset(in, 0, sizeof *in);
    if (rec->error)
        return input_error(err, "%s", rec->error);
    const char *text = rec->field[0], *pair = rec->field[1];
    size_t text_len = rec->len[0], pair_len = rec->len[1];
    if (rec->json) {
        const cJSON *obj = rec->json;
        const cJSON *ids = cJSON_GetObjectItemCaseSensitive(obj, "input_ids");
        const cJSON *types = cJSON_GetObjectItemCaseSensitive(obj, "token_type_ids");
        const cJSON *mask = cJSON_GetObjectItemCaseSensitive(obj, "attention_mask");
        const cJSON *pos = cJSON_GetObjectItemCaseSensitive(obj, "output_positions");
        if (pos) {
            int flat = 0, one = 0;
            if (read_ints(pos, "output_positions", &flat, &one, &in->n_positions, &in->positions, err))
                return -1;
            if (!flat)
                return input_error(err, "\"output_positions\" must be a flat list of integers");
        }
        if (ids) {
            if (read_ints(ids, "input_ids", &in->flat, &in->B, &in->L, &in->ids, err) ||
                (types && read_ints(types, "token_type_ids", &in->flat, &in->B, &in->L, &in->types, err)) ||
                (mask && read_ints(mask, "attention_mask", &in->flat, &in->B, &in->L, &in->mask, err)))
                return -1;
            return 0;
        }
        if (!text)
            return input_error(err, "needs \"input_ids\" (a list) or \"text\" (a string)");
    }
    if (rf_tokenize(model, text, text_len, pair, pair_len, max_length, enc, err) != RF_OK)
        return -1;
    in->flat = 1;
    in->B = 1;
    in->L = enc->n;
    in->ids = malloc((size_t)enc->n * sizeof(int32_t));
    in->types = malloc((size_t)enc->n * sizeof(int32_t));
    if (!in->ids || !in->types)
        return input_error(err, "out of memory");
    memcpy(in->ids, enc->ids, (size_t)enc->n * sizeof(int32_t));
    memcpy(in->types, enc->type_ids, (size_t)enc->n * sizeof(int32_t));
    return 0;
}

/* ==== running the model ==== */

typedef struct {
    const rf_model *model;
    const rf_hparams *hp;
    rf_head_kind head;      /* the head to run, RF_HEAD_NONE for none */
    int hidden_states;
    rf_context_params context; /* --threads, --compute, the position options */
    int32_t limit;          /* longest sequence accepted (rf_context_length_limit) */
    rf_context *ctx;
    int ctx_batch, ctx_len; /* what ctx is sized for */
} forward_job;

/* Grows the context to hold B x L tokens (never shrinks it). */
static rf_status fit_context(forward_job *job, int B, int L, rf_error *err)
{
    if (job->ctx && B <= job->ctx_batch && (L <= job->ctx_len || job->ctx_len == job->limit))
        return RF_OK;
    int nb = B > job->ctx_batch ? B : job->ctx_batch, nl = L > job->ctx_len ? L : job->ctx_len;
    /* longer than the model takes: rf_forward reports it with the model's limit */
    if (nl > job->limit)
        nl = job->limit;
    if (job->ctx) { /* grow in place: threads and packed weights stay */
        rf_status st = rf_context_resize(job->ctx, nb, nl, err);
        if (st == RF_OK) {
            job->ctx_batch = nb;
            job->ctx_len = nl;
        }
        return st;
    }
    rf_context_params cp = job->context;
    cp.max_batch = nb;
    cp.max_seq_len = nl;
    rf_status st = rf_context_create(job->model, &cp, &job->ctx, err);
    job->ctx_batch = st == RF_OK ? nb : 0;
    job->ctx_len = st == RF_OK ? nl : 0;
    return st;
}

/* Runs one parsed line and prints its JSON object. Returns 0, or -1 with
 * the message in err. */
static int run_line(forward_job *job, const line_input *in, rf_error *err)
{
    const rf_hparams *hp = job->hp;
    int B = in->B, L = in->L, D = hp->hidden_size, V = hp->vocab_size, N = hp->num_labels;
    if (in->positions && job->head != RF_HEAD_MLM)
        return input_error(err, "\"output_positions\" needs a masked-LM head");
    if (fit_context(job, B, L, err) != RF_OK)
        return -1;

    size_t BL = (size_t)B * L;
    int P = in->n_positions;
    size_t n_logits = job->head == RF_HEAD_MLM ? (size_t)B * (P ? P : L) * V
                      : job->head == RF_HEAD_SEQ_CLS ? (size_t)B * N
                      : job->head == RF_HEAD_TOKEN_CLS ? BL * N : 0;
    rf_outputs out = {0};
    out.last_hidden_state = malloc(BL * D * sizeof(float));
    if (job->hidden_states)
        out.hidden_states = malloc((size_t)(hp->num_layers + 1) * BL * D * sizeof(float));
    if (job->head != RF_HEAD_NONE && hp->has_pooler)
        out.pooled = malloc((size_t)B * D * sizeof(float));
    if (n_logits)
        out.logits = malloc(n_logits * sizeof(float));
    if (job->head == RF_HEAD_QA) {
        out.start_logits = malloc(BL * sizeof(float));
        out.end_logits = malloc(BL * sizeof(float));
    }
    out.mlm_positions = in->positions;
    out.n_mlm_positions = P;

    int failed = 0;
    cJSON *obj = NULL;
    if (!out.last_hidden_state || (job->hidden_states && !out.hidden_states) ||
        (n_logits && !out.logits) || (job->head == RF_HEAD_QA && (!out.start_logits || !out.end_logits)) ||
        (job->head != RF_HEAD_NONE && hp->has_pooler && !out.pooled)) {
        failed = input_error(err, "out of memory");
        goto done;
    }
    rf_batch batch = {B, L, in->ids, in->types, in->mask};
    if (rf_forward(job->ctx, &batch, &out, err) != RF_OK) {
        failed = -1;
        goto done;
    }

    obj = cJSON_CreateObject();
    int flat = in->flat, rc = obj ? 0 : -1;
    int dims_hidden[3] = {B, L, D};
    rc |= add_array(obj, "last_hidden_state", out.last_hidden_state, dims_hidden, 3, 0, flat);
    if (job->head == RF_HEAD_MLM && P) {
        int dims[3] = {B, P, V};
        rc |= add_array(obj, "logits_at", out.logits, dims, 3, 0, flat);
    } else if (job->head == RF_HEAD_MLM || job->head == RF_HEAD_TOKEN_CLS) {
        int dims[3] = {B, L, job->head == RF_HEAD_MLM ? V : N};
        rc |= add_array(obj, "logits", out.logits, dims, 3, 0, flat);
    } else if (job->head == RF_HEAD_SEQ_CLS) {
        int dims[2] = {B, N};
        rc |= add_array(obj, "logits", out.logits, dims, 2, 0, flat);
    } else if (job->head == RF_HEAD_QA) {
        int dims[2] = {B, L};
        rc |= add_array(obj, "start_logits", out.start_logits, dims, 2, 0, flat);
        rc |= add_array(obj, "end_logits", out.end_logits, dims, 2, 0, flat);
    }
    if (out.pooled) {
        int dims[2] = {B, D};
        rc |= add_array(obj, "pooled", out.pooled, dims, 2, 0, flat);
    }
    if (out.hidden_states) {
        int dims[4] = {hp->num_layers + 1, B, L, D};
        rc |= add_array(obj, "hidden_states", out.hidden_states, dims, 4, 1, flat);
    }
    char *text = rc ? NULL : cJSON_PrintUnformatted(obj);
    if (!text) {
        failed = input_error(err, "out of memory");
        goto done;
    }
    fputs(text, stdout);
    fputc('\n', stdout);
    free(text);
done:
    cJSON_Delete(obj);
    free(out.last_hidden_state);
    free(out.hidden_states);
    free(out.pooled);
    free(out.logits);
    free(out.start_logits);
    free(out.end_logits);
    return failed;
}

static void print_error(const char *msg, long line_no)
{
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddStringToObject(obj, "error", msg);
    cJSON_AddNumberToObject(obj, "line", (double)line_no);
    char *text = cJSON_PrintUnformatted(obj);
    if (text)
        puts(text);
    free(text);
    cJSON_Delete(obj);
}

/* ==== options ==== */

static const struct {
    const char *name;
    rf_head_kind head;
} heads[] = {{"mlm", RF_HEAD_MLM}, {"cls", RF_HEAD_SEQ_CLS}, {"token", RF_HEAD_TOKEN_CLS},
             {"qa", RF_HEAD_QA}};

/* The --head value that names `head`. */
static const char *head_option(rf_head_kind head)
{
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
        if (heads[i].head == head)
            return heads[i].name;
    return "none";
}

/* --head: auto, none, or the model's own head by name; -1 for another. */
static int parse_head(const char *s, const rf_hparams *hp, rf_head_kind *out)
{
    if (!strcmp(s, "auto")) {
        *out = hp->head;
        return 0;
    }
    if (!strcmp(s, "none")) {
        *out = RF_HEAD_NONE;
        return 0;
    }
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
        if (!strcmp(s, heads[i].name)) {
            if (hp->head != heads[i].head)
                return -1;
            *out = heads[i].head;
            return 0;
        }
    return -1;
}

int cmd_forward(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    cli_args args;
    if (cli_options_parse("forward", argc, argv, &args) != 0)
        return CLI_USAGE;
    const char *model_path = cli_arg_text(&args, CLI_OPT_MODEL, NULL);
    const char *head_name = cli_arg_text(&args, CLI_OPT_HEAD, "auto");
    int32_t max_length = cli_arg_int(&args, CLI_OPT_MAX_LENGTH, 0);
    int32_t max_line = cli_arg_int(&args, CLI_OPT_MAX_LINE_BYTES, CLI_DEFAULT_MAX_LINE);
    if (!model_path)
        return cli_usage_error("forward", "-m MODEL is required");
    if (strcmp(head_name, "auto") && strcmp(head_name, "none") && strcmp(head_name, "mlm") &&
        strcmp(head_name, "cls") && strcmp(head_name, "token") && strcmp(head_name, "qa"))
        return cli_usage_error("forward", "--head wants auto, none, mlm, cls, token or qa, not '%s'",
                               head_name);

    rf_model *model = cli_load_model(model_path);
    if (!model)
        return CLI_FAILED;
    rf_error err;
    forward_job job = {.model = model, .hp = rf_model_hparams(model),
                       .hidden_states = args.given[CLI_OPT_HIDDEN_STATES],
                       .context = cli_context_params(&args)};
    job.limit = rf_context_length_limit(model, &job.context);
    if (parse_head(head_name, job.hp, &job.head)) {
        cli_error("%s: --head %s, but the model's head is %s", model_path, head_name,
                  head_option(job.hp->head));
        rf_model_free(model);
        return CLI_FAILED;
    }

    /* "text" is optional: a JSON line may carry input_ids instead. */
    const cli_input_spec spec = {.names = {"text", "text_pair"}, .n_fields = 2,
                                 .n_required = 0, .tab_fields = 1, .max_line = (size_t)max_line};
    cli_reader *reader = cli_reader_open(&spec, NULL, NULL, 0);
    if (!reader) {
        rf_model_free(model);
        return CLI_FAILED;
    }
    rf_encoding enc = {0};
    cli_record rec;
    long n_failed = 0, n_lines = 0;
    int got;
    while ((got = cli_reader_next(reader, &rec)) == 1) {
        line_input in;
        n_lines++;
        if (read_line(model, &rec, (int)max_length, &enc, &in, &err) != 0 ||
            run_line(&job, &in, &err) != 0) {
            print_error(err.message, rec.line);
            n_failed++;
        }
        free_input(&in);
        cli_record_free(&rec);
        fflush(stdout);
    }
    int rc = CLI_OK;
    if (got < 0)
        rc = CLI_FAILED; /* the reader said why */
    else if (n_failed)
        rc = cli_error("%ld of %ld lines failed", n_failed, n_lines);
    if (fflush(stdout) != 0 || ferror(stdout))
        rc = cli_error("writing stdout failed");
    cli_reader_close(reader);
    rf_encoding_free(&enc);
    rf_context_free(job.ctx);
    rf_model_free(model);
    return rc;
}
