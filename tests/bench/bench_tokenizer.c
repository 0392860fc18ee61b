/*
 * bench_tokenizer.c — throughput of jieba segmentation and of the full
 * tokenizer on a text file (one input per line), one thread.
 *
 *   bench_tokenizer VOCAB DICT FILE [RUNS]
 *
 * Prints the dictionary build time, then for "cut" (segmentation alone)
 * and "tokenize" (lower-case + jieba + vocab/WordPiece + ids) the median
 * and spread of RUNS timed passes over the whole file, in MB/s of UTF-8
 * input (1 MB = 10^6 bytes), wall time. Run by scripts/bench_tokenizer.sh.
 */
#include "text/jieba_cut.h"
#include "../tokenizer_fixture.h"

#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    const char **line;
    size_t *len;
    size_t n, bytes;
} lines;

/* Median wall-time MB/s, its spread, and the median in CPU time (which a
 * busy shared machine disturbs less). */
static void report(const char *what, double *secs, double *cpu, int runs, size_t bytes)
{
    qsort(secs, (size_t)runs, sizeof *secs, cmp_double);
    qsort(cpu, (size_t)runs, sizeof *cpu, cmp_double);
    double med = secs[runs / 2];
    printf("%-9s %8.2f MB/s  (median of %d; min %.2f, max %.2f; CPU time %.2f MB/s)\n", what,
           bytes / med / 1e6, runs, bytes / secs[runs - 1] / 1e6, bytes / secs[0] / 1e6,
           bytes / cpu[runs / 2] / 1e6);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s VOCAB DICT FILE [RUNS]\n", argv[0]);
        return 2;
    }
    int runs = argc > 4 ? atoi(argv[4]) : 7;
    if (runs < 1 || runs > 1000)
        runs = 7;
    fixture fx;
    memset(&fx, 0, sizeof fx);
    size_t dlen, flen;
    fx.dict_buf = fixture_read(argv[2], &dlen);
    char *text = fixture_read(argv[3], &flen);
    if (!fx.dict_buf || !text || fixture_split_dict(&fx, dlen)) {
        fprintf(stderr, "cannot read %s or %s\n", argv[2], argv[3]);
        return 1;
    }
    lines in = {0};
    in.line = malloc((flen / 2 + 2) * sizeof *in.line);
    in.len = malloc((flen / 2 + 2) * sizeof *in.len);
    for (char *p = text, *nl; p < text + flen; p = nl + 1) {
        nl = memchr(p, '\n', (size_t)(text + flen - p));
        if (!nl)
            nl = text + flen;
        in.line[in.n] = p;
        in.len[in.n++] = (size_t)(nl - p);
        in.bytes += (size_t)(nl - p);
    }
    printf("input     %s: %zu lines, %zu bytes\n", argv[3], in.n, in.bytes);

    double *secs = malloc((size_t)runs * sizeof *secs);
    double *cpu = malloc((size_t)runs * sizeof *cpu);
    rf_error err;
    /* Dictionary build, as the model loader does it: wall and CPU time. */
    for (int r = 0; r < runs; r++) {
        rf_jieba_dict d;
        double t0 = now(), c0 = cpu_now();
        if (rf_jieba_dict_init(&d, fx.words, fx.word_len, fx.freq, fx.n_words, &err) != RF_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        secs[r] = now() - t0;
        cpu[r] = cpu_now() - c0;
        rf_jieba_dict_release(&d);
    }
    qsort(secs, (size_t)runs, sizeof *secs, cmp_double);
    qsort(cpu, (size_t)runs, sizeof *cpu, cmp_double);
    printf("dict      %8.1f ms build (median of %d; min %.1f, max %.1f; CPU time median %.1f ms)\n",
           secs[runs / 2] * 1e3, runs, secs[0] * 1e3, secs[runs - 1] * 1e3, cpu[runs / 2] * 1e3);

    rf_jieba_dict dict;
    rf_jieba_dict_init(&dict, fx.words, fx.word_len, fx.freq, fx.n_words, &err);
    rf_jieba_words words = {0};
    size_t n_words = 0;
    for (int r = -1; r < runs; r++) { /* run -1 warms up */
        double t0 = now(), c0 = cpu_now();
        n_words = 0;
        for (size_t i = 0; i < in.n; i++) {
            words.n = 0;
            rf_jieba_cut(&dict, in.line[i], in.len[i], &words, &err);
            n_words += words.n;
        }
        if (r >= 0) {
            secs[r] = now() - t0;
            cpu[r] = cpu_now() - c0;
        }
    }
    report("cut", secs, cpu, runs, in.bytes);
    printf("          %zu words\n", n_words);
    rf_jieba_words_release(&words);
    rf_jieba_dict_release(&dict);
    fixture_free(&fx);

    if (fixture_load(&fx, argv[1], argv[2], RF_TOKENIZER_WOBERT) != 0) {
        fprintf(stderr, "cannot build the tokenizer from %s\n", argv[1]);
        return 1;
    }
    rf_encoding enc = {0};
    size_t n_tokens = 0;
    for (int r = -1; r < runs; r++) {
        double t0 = now(), c0 = cpu_now();
        n_tokens = 0;
        for (size_t i = 0; i < in.n; i++) {
            if (rf_tokenizer_encode(fx.tok, in.line[i], in.len[i], NULL, 0, 0, &enc, &err) != RF_OK) {
                fprintf(stderr, "line %zu: %s\n", i + 1, err.message);
                return 1;
            }
            n_tokens += (size_t)enc.n;
        }
        if (r >= 0) {
            secs[r] = now() - t0;
            cpu[r] = cpu_now() - c0;
        }
    }
    report("tokenize", secs, cpu, runs, in.bytes);
    printf("          %zu tokens\n", n_tokens);
    rf_encoding_free(&enc);
    fixture_free(&fx);
    free(secs);
    free(cpu);
    free(in.line);
    free(in.len);
    free(text);
    return 0;
}
