/*
 * cmd_bench.c — `roformer bench`: encoder throughput on a synthetic batch.
 *
 *   roformer bench -m MODEL [--seq-len L] [--batch B] [--threads T]
 *                  [--runs N] [--warmup W] [--lengths-from FILE] [--skip-padding]
 *
 * Times rf_forward (encoder + head, last_hidden_state written to a caller
 * buffer, as a user would run it) on a batch of random token ids: B sequences
 * of L tokens, or with --lengths-from one batch whose sequences have the
 * lengths listed in FILE (one integer a line, e.g. a real corpus's token
 * counts), right-padded to the longest with attention mask 0 — the engine may
 * skip the padding, a padded-batch runtime cannot. Token ids are random
 * because the cost does not depend on them.
 *
 * Prints the model, BLAS core and threads, ms per batch and tokens/s (real
 * tokens over the median time; min and max), model load time and peak RSS,
 * and where the median run spends its time by kind of step (products,
 * attention, norms, quantizing, element-wise, waits: rf_step_times of the
 * run of rank (runs - 1) / 2 by wall time, so that a run slowed by another
 * process does not weigh in); the last line is one JSON object for scripts
 * (scripts/compare.sh).
 * The one-time costs are reported apart from the timed runs: the model's
 * load, the context's creation and the first batch (which packs int8 /
 * bf16 weights and touches the context's buffers for the first time),
 * whatever --warmup says.
 */
#include "peak_probe.h"
#include "cli.h"
#include "options.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const char usage[] =
    "usage: roformer bench -m MODEL [--seq-len L] [--batch B] [--threads T]\n"
    "                      [--runs N] [--warmup W] [--lengths-from FILE] [--skip-padding]\n"
    "                      [--compute f32|bf16|int8] [--kernel TYPE=NAME,...]\n"
    "Times the encoder on a batch of B random sequences of L tokens (default 8 x 128)\n"
    "and prints tokens/s; the last line is a JSON object.\n"
    "  -m MODEL             a .gguf file or an HF checkpoint directory\n"
    "  --seq-len L          tokens per sequence (default 128)\n"
    "  --batch B            sequences per batch (default 8)\n"
    "  --threads T          compute threads, 0 to 256 (default 0: all cores)\n"
    "  --runs N             timed runs (default 10)\n"
    "  --warmup W           untimed runs first (default 2)\n"
    "  --lengths-from FILE  one batch with these sequence lengths (one integer a\n"
    "                       line), padded to the longest; replaces --seq-len/--batch\n"
    "  --skip-padding       run only the real tokens through the linear layers and\n"
    "                       attention per sequence (as the job commands do)\n"
    "  --compute f32|bf16|int8  arithmetic of the encoder's matrix products (default\n"
    "                       f32; bf16 needs AVX512_BF16 or ARM BF16, int8 AVX2 or ARM64)\n"
    "  --kernel TYPE=NAME,...  the kernels' builds instead of the CPU's choice, e.g.\n"
    "                       int8=vnni,elementwise=avx2,attention=f32 (as ROFORMER_KERNEL;\n"
    "                       docs/compute.md)\n";

typedef struct {
    const char *model;
    long seq_len, batch, runs, warmup;
    const char *lengths_file, *kernel;
    int skip_padding;
    rf_context_params context; /* --threads, --compute, the position options */
} bench_args;

/* The name of the product's build in use, "none" without one. */
static const char *build_in_use(const char *product)
{
    rf_kernel_build builds[64];
    int32_t n = rf_kernels_list(builds, 64);
    for (int32_t i = 0; i < n && i < 64; i++)
        if (builds[i].in_use && !strcmp(builds[i].product, product))
            return builds[i].name;
    return "none";
}

/* The instruction a kernel build is made of, as peak_probe.h names it;
 * false for a build the probe does not measure (AMX tiles, ARM64). */
static bool build_instruction(const char *build, peak_instruction *out)
{
    static const struct {
        const char *build;
        peak_instruction instruction;
    } builds[] = {{"avx2", PEAK_INT8_AVX2}, {"vnni", PEAK_INT8_VNNI},
                  {"avx512bf16", PEAK_BF16_AVX512}, {"f32fma", PEAK_F32_FMA}};
    for (size_t i = 0; i < sizeof builds / sizeof builds[0]; i++)
        if (strcmp(build, builds[i].build) == 0) {
            *out = builds[i].instruction;
            return true;
        }
    return false;
}

/* The share of the peak one forward pass of `seconds` reached: the time
 * its layers' multiply-adds (the Linear products, attention's two
 * products) take at the probed per-core peaks of the instructions that
 * run them, times the threads, over the pass's time. -1 where a peak is
 * not probed on this CPU. */
static double peak_share(const rf_hparams *hp, rf_compute_type compute, rf_kernel_info kernels,
                         const int32_t *lengths, int batch, int seq_len, bool packed,
                         long threads, double seconds)
{
    double D = hp->hidden_size, F = hp->intermediate_size, tokens = 0.0, attention = 0.0;
    for (int b = 0; b < batch; b++) {
        double L = packed ? lengths[b] : seq_len;
        tokens += L;
        attention += 2.0 * L * L * D; /* Q K^T and P V, all heads */
    }
    double linear = tokens * (4.0 * D * D + 2.0 * D * F);
    peak_instruction linear_by = PEAK_F32_FMA, attention_by = PEAK_F32_FMA;
    if (compute == RF_COMPUTE_INT8 && !build_instruction(kernels.int8, &linear_by))
        return -1.0;
    if (compute == RF_COMPUTE_BF16 && !build_instruction(kernels.bf16, &linear_by))
        return -1.0;
    if (compute != RF_COMPUTE_F32 && strcmp(kernels.attention, "bf16") == 0 &&
        !build_instruction(kernels.bf16, &attention_by))
        return -1.0;
    double linear_peak = peak_probe(linear_by), attention_peak = peak_probe(attention_by);
    if (linear_peak <= 0.0 || attention_peak <= 0.0 || seconds <= 0.0)
        return -1.0;
    double at_peak = hp->num_layers * (linear / linear_peak + attention / attention_peak);
    return at_peak / (double)threads / seconds;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median_sorted(const double *v, int n)
{
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Reads positive integers, one a line, into a new array; returns the count, or
 * -1 after printing what is wrong. */
static int read_lengths(const char *path, long max_len, int32_t **out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        cli_error("%s: cannot open", path);
        return -1;
    }
    int n = 0, cap = 0, line_no = 0;
    int32_t *v = NULL;
    char line[64];
    while (fgets(line, sizeof line, f)) {
        line_no++;
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        long len;
        if (cli_parse_int(line, 1, max_len, &len)) {
            cli_error("%s:%d: '%s' is not a length in 1..%ld", path, line_no, line, max_len);
            goto fail;
        }
        if (n == cap) {
            int32_t *grown = realloc(v, sizeof *v * (size_t)(cap = cap ? 2 * cap : 64));
            if (!grown) {
                cli_error("out of memory");
                goto fail;
            }
            v = grown;
        }
        v[n++] = (int32_t)len;
    }
    fclose(f);
    if (n == 0) {
        free(v);
        cli_error("%s: no lengths", path);
        return -1;
    }
    *out = v;
    return n;
fail:
    fclose(f);
    free(v);
    return -1;
}

/* Fills a right-padded batch: [CLS] random ids [SEP], then [PAD] with mask 0. */
static void fill_batch(const rf_hparams *hp, const int32_t *lengths, int batch, int seq_len,
                       int32_t *ids, int32_t *mask)
{
    uint32_t s = 12345;
    int32_t lo = hp->vocab_size > 2000 ? 1000 : 0;
    for (int b = 0; b < batch; b++) {
        for (int t = 0; t < seq_len; t++) {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            int32_t *id = &ids[(size_t)b * seq_len + t];
            *id = lo + (int32_t)(s % (uint32_t)(hp->vocab_size - lo));
            if (t == 0)
                *id = hp->cls_id;
            else if (t == lengths[b] - 1)
                *id = hp->sep_id;
            else if (t >= lengths[b])
                *id = hp->pad_id;
            mask[(size_t)b * seq_len + t] = t < lengths[b];
        }
    }
}

static long peak_rss_mb(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss / 1024 : -1;
}

static int parse_args(int argc, char **argv, bench_args *a)
{
    cli_args args;
    if (cli_options_parse("bench", argc, argv, &args) != 0)
        return CLI_USAGE;
    *a = (bench_args){.model = cli_arg_text(&args, CLI_OPT_MODEL, NULL),
                      .seq_len = cli_arg_int(&args, CLI_OPT_SEQ_LEN, 128),
                      .batch = cli_arg_int(&args, CLI_OPT_BATCH, 8),
                      .runs = cli_arg_int(&args, CLI_OPT_RUNS, 10),
                      .warmup = cli_arg_int(&args, CLI_OPT_WARMUP, 2),
                      .lengths_file = cli_arg_text(&args, CLI_OPT_LENGTHS_FROM, NULL),
                      .kernel = cli_arg_text(&args, CLI_OPT_KERNEL, NULL),
                      .skip_padding = args.given[CLI_OPT_SKIP_PADDING],
                      .context = cli_context_params(&args)};
    if (!a->model)
        return cli_usage_error("bench", "-m MODEL is required");
    return CLI_OK;
}

int cmd_bench(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        cli_options_help(stdout, "bench");
        return CLI_OK;
    }
    bench_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != CLI_OK)
        return rc;
    rf_error kernel_err;
    if (a.kernel && rf_kernels_select(a.kernel, &kernel_err) != RF_OK)
        return cli_error("%s", kernel_err.message);

    rf_error err;
    rf_model *model = NULL;
    rf_context *ctx = NULL;
    int32_t *lengths = NULL, *ids = NULL, *mask = NULL;
    float *hidden = NULL;
    double *ms = NULL;
    rf_step_times *run_steps = NULL;
    rc = CLI_FAILED;

    double t0 = 1e3 * cli_now_seconds();
    if (rf_model_load(a.model, &model, &err) != RF_OK) {
        cli_error("%s", err.message);
        goto done;
    }
    double load_ms = 1e3 * cli_now_seconds() - t0;
    const rf_hparams *hp = rf_model_hparams(model);
    rf_context_params cp = a.context;
    int32_t limit = rf_context_length_limit(model, &cp);

    int batch = (int)a.batch, seq_len = (int)a.seq_len;
    if (a.lengths_file) {
        batch = read_lengths(a.lengths_file, limit, &lengths);
        if (batch < 0)
            goto done;
        seq_len = 0;
        for (int b = 0; b < batch; b++)
            seq_len = lengths[b] > seq_len ? lengths[b] : seq_len;
    } else {
        if (seq_len > limit) {
            cli_error("--seq-len %d is over the model's maximum %d%s", seq_len, (int)limit,
                      limit == hp->max_position ? " (--extend-positions allows more)" : "");
            goto done;
        }
        lengths = malloc(sizeof *lengths * (size_t)batch);
        if (!lengths) {
            cli_error("out of memory");
            goto done;
        }
        for (int b = 0; b < batch; b++)
            lengths[b] = seq_len;
    }
    long real_tokens = 0;
    for (int b = 0; b < batch; b++)
        real_tokens += lengths[b];

    size_t n_tok = (size_t)batch * seq_len;
    ids = malloc(sizeof *ids * n_tok);
    mask = malloc(sizeof *mask * n_tok);
    hidden = malloc(sizeof *hidden * n_tok * (size_t)hp->hidden_size);
    ms = malloc(sizeof *ms * (size_t)a.runs);
    run_steps = malloc(sizeof *run_steps * (size_t)a.runs);
    if (!ids || !mask || !hidden || !ms || !run_steps) {
        cli_error("out of memory for a batch of %d x %d", batch, seq_len);
        goto done;
    }
    fill_batch(hp, lengths, batch, seq_len, ids, mask);

    cp.max_batch = batch;
    cp.max_seq_len = seq_len;
    cp.skip_padding = a.skip_padding;
    t0 = 1e3 * cli_now_seconds();
    if (rf_context_create(model, &cp, &ctx, &err) != RF_OK) {
        cli_error("%s", err.message);
        goto done;
    }
    double context_ms = 1e3 * cli_now_seconds() - t0;

    rf_batch in = {.batch = batch, .seq_len = seq_len, .input_ids = ids,
                   .token_type_ids = NULL, .attention_mask = mask};
    rf_outputs out = {.last_hidden_state = hidden};
    int64_t regions_before = rf_context_parallel_regions(ctx);
    /* the first batch, timed alone; the warm-up runs follow it */
    t0 = 1e3 * cli_now_seconds();
    if (rf_forward(ctx, &in, &out, &err) != RF_OK) {
        cli_error("%s", err.message);
        goto done;
    }
    double first_ms = 1e3 * cli_now_seconds() - t0;
    for (long r = -a.warmup; r < a.runs; r++) {
        if (r >= 0) /* each timed run's steps on their own */
            rf_context_time_steps(ctx, true);
        t0 = 1e3 * cli_now_seconds();
        if (rf_forward(ctx, &in, &out, &err) != RF_OK) {
            cli_error("%s", err.message);
            goto done;
        }
        if (r >= 0) {
            ms[r] = 1e3 * cli_now_seconds() - t0;
            rf_context_step_times(ctx, &run_steps[r]);
        }
    }
    /* every forward pass of one batch runs the same regions */
    double regions = (double)(rf_context_parallel_regions(ctx) - regions_before) /
                     (double)(1 + a.warmup + a.runs);
    double balance = rf_context_partition_efficiency(
        ctx, a.skip_padding ? (int32_t)real_tokens : batch * seq_len);
    int runs = (int)a.runs;
    /* the median run's steps: the run of rank (runs - 1) / 2 */
    int median_run = 0;
    for (int r = 0; r < runs; r++) {
        int below = 0, same_before = 0;
        for (int o = 0; o < runs; o++) {
            below += ms[o] < ms[r];
            same_before += o < r && ms[o] == ms[r];
        }
        if (below + same_before == (runs - 1) / 2)
            median_run = r;
    }
    rf_step_times steps = run_steps[median_run];
    qsort(ms, (size_t)a.runs, sizeof *ms, cmp_double);
    double med = median_sorted(ms, runs), lo = ms[0], hi = ms[runs - 1];
    double tps = real_tokens / (med * 1e-3);
    long threads = cp.n_threads > 0 ? cp.n_threads : sysconf(_SC_NPROCESSORS_ONLN);
    if (threads > RF_MAX_THREADS) /* all cores, as many as a context runs */
        threads = RF_MAX_THREADS;
    rf_blas_info blas = rf_blas_get_info();
    const char *compute_name = cp.compute == RF_COMPUTE_BF16   ? "bf16"
                               : cp.compute == RF_COMPUTE_INT8 ? "int8" : "f32";

    printf("model: %s (%d layers, hidden %d, %d heads, FFN %d), loaded in %.1f ms, context %.1f ms\n",
           a.model, (int)hp->num_layers, (int)hp->hidden_size, (int)hp->num_heads,
           (int)hp->intermediate_size, load_ms, context_ms);
    printf("blas: OpenBLAS core %s, %d OpenBLAS threads; engine threads %ld; compute %s\n",
           blas.core, (int)blas.threads, threads, compute_name);
    rf_kernel_info kernels = rf_kernels_get_info();
    const char *elementwise = build_in_use("elementwise");
    printf("kernels: int8 %s (chosen by %s), attention %s, bf16 %s (%s), element-wise %s (%s); "
           "AMX: %s\n",
           kernels.int8, kernels.int8_chosen_by, kernels.attention, kernels.bf16,
           kernels.bf16_chosen_by, elementwise, rf_kernels_chosen_by("elementwise"), kernels.amx);
    printf("batch: %d x %d (%ld real tokens%s), %d runs after %ld warm-up\n", batch, seq_len,
           real_tokens, a.lengths_file ? ", mixed lengths" : "", runs, a.warmup);
    printf("ms per batch: median %.2f, min %.2f, max %.2f\n", med, lo, hi);
    printf("tokens/s: median %.1f (from %.1f to %.1f, spread %.1f%%)\n", tps,
           real_tokens / (hi * 1e-3), real_tokens / (lo * 1e-3), 100.0 * (hi - lo) / med);
    printf("one-time: load %.1f ms, context %.1f ms, first batch %.1f ms\n", load_ms, context_ms,
           first_ms);
    printf("peak RSS: %ld MB\n", peak_rss_mb());
    double share = peak_share(hp, cp.compute, kernels, lengths, batch, seq_len, a.skip_padding,
                              threads, med * 1e-3);
    if (share > 0.0)
        printf("peak share: %.1f%% of the probed per-core peaks times %ld threads\n",
               100.0 * share, threads);
    else
        printf("peak share: no probe for this CPU's kernels\n");
    double per = steps.forwards > 0 ? 1.0 / (double)steps.forwards : 0.0;
    double outside = steps.forward_ms > 0 ? 1.0 - steps.products_ms / steps.forward_ms : 0.0;
    printf("median run by step, ms: products %.2f, attention %.2f, norms %.2f, quantize %.2f, "
           "element-wise %.2f, waits %.2f, of %.2f; outside the products %.1f%%\n",
           per * steps.products_ms, per * steps.attention_ms, per * steps.norms_ms,
           per * steps.quantize_ms, per * steps.elementwise_ms, per * steps.waits_ms,
           per * steps.forward_ms, 100.0 * outside);

    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "engine", "roformer");
    cJSON_AddNumberToObject(j, "seq_len", seq_len);
    cJSON_AddNumberToObject(j, "batch", batch);
    cJSON_AddNumberToObject(j, "real_tokens", (double)real_tokens);
    cJSON_AddNumberToObject(j, "threads", (double)threads);
    cJSON_AddNumberToObject(j, "runs", runs);
    cJSON_AddBoolToObject(j, "skip_padding", a.skip_padding);
    cJSON_AddStringToObject(j, "compute", compute_name);
    cJSON_AddNumberToObject(j, "tokens_per_second", tps);
    cJSON_AddNumberToObject(j, "ms_median", med);
    cJSON_AddNumberToObject(j, "ms_min", lo);
    cJSON_AddNumberToObject(j, "ms_max", hi);
    cJSON_AddStringToObject(j, "blas_core", blas.core);
    cJSON_AddStringToObject(j, "int8_kernel", kernels.int8);
    cJSON_AddStringToObject(j, "attention", kernels.attention);
    cJSON_AddStringToObject(j, "bf16_kernel", kernels.bf16);
    cJSON_AddStringToObject(j, "elementwise_kernel", elementwise);
    cJSON_AddNumberToObject(j, "blas_threads", blas.threads);
    cJSON_AddNumberToObject(j, "load_ms", load_ms);
    cJSON_AddNumberToObject(j, "context_ms", context_ms);
    cJSON_AddNumberToObject(j, "first_batch_ms", first_ms);
    cJSON_AddNumberToObject(j, "peak_rss_mb", (double)peak_rss_mb());
    cJSON *step_ms = cJSON_AddObjectToObject(j, "steps_ms");
    if (step_ms) {
        cJSON_AddNumberToObject(step_ms, "products", per * steps.products_ms);
        cJSON_AddNumberToObject(step_ms, "attention", per * steps.attention_ms);
        cJSON_AddNumberToObject(step_ms, "norms", per * steps.norms_ms);
        cJSON_AddNumberToObject(step_ms, "quantize", per * steps.quantize_ms);
        cJSON_AddNumberToObject(step_ms, "elementwise", per * steps.elementwise_ms);
        cJSON_AddNumberToObject(step_ms, "waits", per * steps.waits_ms);
        cJSON_AddNumberToObject(step_ms, "forward", per * steps.forward_ms);
    }
    cJSON_AddNumberToObject(j, "outside_products_share", outside);
    cJSON_AddNumberToObject(j, "parallel_regions", regions);
    cJSON_AddNumberToObject(j, "partition_efficiency", balance);
    if (share > 0.0)
        cJSON_AddNumberToObject(j, "peak_share", share);
    else
        cJSON_AddNullToObject(j, "peak_share");
    cJSON *arr = cJSON_AddArrayToObject(j, "ms");
    for (int r = 0; arr && r < runs; r++)
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(ms[r]));
    char *line = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!line) {
        cli_error("out of memory");
        goto done;
    }
    printf("%s\n", line);
    free(line);
    rc = CLI_OK;
done:
    rf_context_free(ctx);
    rf_model_free(model);
    free(lengths);
    free(ids);
    free(mask);
    free(hidden);
    free(ms);
    free(run_steps);
    return rc;
}
