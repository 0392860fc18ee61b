/*
 * test_batch_invariance.c — a text's output is a function of the text, the
 * model and the compute type: byte-identical whether it runs alone or at
 * any place of any batch, on any number of threads (docs/compute.md,
 * "Reproducibility").
 *
 * For every reference model and every compute type this CPU runs, 30 texts
 * of mixed lengths (ChnSentiCorp reviews cut to 1 to 300 characters) run
 * each alone on one thread, batch size 1: the expected bytes. Then all 30,
 * shuffled, in batches of 2 to 64, on 1, 2, 3, 7 and 16 threads, through
 * the jobs the model's head has: embed (mean, cls, and the pooler where
 * the model has one; on every model), classify's logits, fill-mask's ids
 * and scores, token classification's labels and scores, QA's span and
 * score. Every output is compared with memcmp: no tolerance, since the
 * claim is the same bits.
 *
 * Under OPENBLAS_CORETYPE the f32 products run another OpenBLAS kernel
 * (Haswell, Sandybridge, SkylakeX...): tests/kernels/test_blas_cores.sh runs this
 * test under each, and the same bytes must hold on each.
 */
#include "../check.h"
#include "../reference_cases.h"
#include "roformer.h"

#include "kernels/gemm_bf16.h"
#include "kernels/gemm_int8.h"

enum { N_TEXTS = 30, MAX_OUT = 1 << 16 };

static const int thread_counts[] = {1, 2, 3, 7, 16};
static const int batch_sizes[] = {2, 3, 4, 5, 7, 8, 13, 16, 30, 64};

/* Deterministic shuffles, whatever the C library's rand. */
static uint32_t rng = 12345;
static uint32_t next_rand(void)
{
    rng = rng * 1664525u + 1013904223u;
    return rng >> 8;
}

/* ==== The texts ==== */

static char *texts[N_TEXTS];

/* The first n code points of s (UTF-8), as a new string. */
static char *first_chars(const char *s, int n)
{
    const char *p = s;
    for (int i = 0; i < n && *p; i++) {
        p++;
        while ((*p & 0xC0) == 0x80)
            p++;
    }
    size_t len = (size_t)(p - s);
    char *out = malloc(len + 1);
    memcpy(out, s, len);
    out[len] = 0;
    return out;
}

/* 30 ChnSentiCorp reviews, the i-th cut to lengths[i % 15] characters. */
static int load_texts(void)
{
    static const int lengths[] = {1, 3, 6, 9, 14, 20, 27, 36, 48, 64, 90, 120, 170, 230, 300};
    const char *data = getenv("ROFORMER_DATA");
    char path[1024];
    snprintf(path, sizeof path, "%s/chnsenticorp/dev.tsv", data && *data ? data : "../shared/data");
    size_t len;
    char *all = check_read_file(path, &len);
    if (!all)
        return 0;
    char *line = strchr(all, '\n'); /* past the header */
    int n = 0;
    while (line && n < N_TEXTS) {
        line++;
        char *end = strchr(line, '\n'), *tab = strchr(line, '\t');
        if (end)
            *end = 0;
        if (tab && strlen(tab + 1) > 0) {
            texts[n] = first_chars(tab + 1, lengths[n % 15]);
            n++;
        }
        line = end;
    }
    free(all);
    return n;
}

/* ==== The jobs ==== */

/* Bytes of the UTF-8 character at p (0 at the end). */
static size_t char_len(const char *p)
{
    size_t n = *p ? 1 : 0;
    while (n && (p[n] & 0xC0) == 0x80)
        n++;
    return n;
}

/* One job over inputs[0, n): writes each input's output bytes to out[i]
 * (at most MAX_OUT bytes) and their count to len[i]. */
typedef struct {
    const char *name;
    bool (*applies)(const rf_hparams *hp);
    rf_status (*run)(rf_pipeline *pl, const rf_hparams *hp, const rf_text *in, int n,
                     unsigned char **out, size_t *len, rf_error *err);
} job;

static bool any(const rf_hparams *hp) { (void)hp; return true; }
static bool pooled(const rf_hparams *hp) { return hp->has_pooler; }
static bool seq_cls(const rf_hparams *hp) { return hp->head == RF_HEAD_SEQ_CLS; }
static bool mlm(const rf_hparams *hp) { return hp->head == RF_HEAD_MLM; }
static bool token_cls(const rf_hparams *hp) { return hp->head == RF_HEAD_TOKEN_CLS; }
static bool qa(const rf_hparams *hp) { return hp->head == RF_HEAD_QA; }

static rf_status embed_with(rf_pooling pooling, rf_pipeline *pl, const rf_hparams *hp,
                            const rf_text *in, int n, unsigned char **out, size_t *len,
                            rf_error *err)
{
    size_t D = (size_t)hp->hidden_size;
    float *v = malloc(sizeof(float) * D * (size_t)n);
    rf_status st = rf_embed(pl, in, n, pooling, false, v, NULL, err);
    for (int i = 0; i < n && st == RF_OK; i++) {
        len[i] = D * sizeof(float);
        memcpy(out[i], v + D * (size_t)i, len[i]);
    }
    free(v);
    return st;
}

static rf_status embed_mean(rf_pipeline *pl, const rf_hparams *hp, const rf_text *in, int n,
                            unsigned char **out, size_t *len, rf_error *err)
{
    return embed_with(RF_POOLING_MEAN, pl, hp, in, n, out, len, err);
}

static rf_status embed_cls(rf_pipeline *pl, const rf_hparams *hp, const rf_text *in, int n,
                           unsigned char **out, size_t *len, rf_error *err)
{
    return embed_with(RF_POOLING_CLS, pl, hp, in, n, out, len, err);
}

static rf_status embed_pooler(rf_pipeline *pl, const rf_hparams *hp, const rf_text *in, int n,
                              unsigned char **out, size_t *len, rf_error *err)
{
    return embed_with(RF_POOLING_POOLER, pl, hp, in, n, out, len, err);
}

static rf_status classify(rf_pipeline *pl, const rf_hparams *hp, const rf_text *in, int n,
                          unsigned char **out, size_t *len, rf_error *err)
{
    size_t N = (size_t)hp->num_labels;
    float *v = malloc(sizeof(float) * N * (size_t)n);
    rf_status st = rf_classify_logits(pl, in, n, v, NULL, err);
    for (int i = 0; i < n && st == RF_OK; i++) {
        len[i] = N * sizeof(float);
        memcpy(out[i], v + N * (size_t)i, len[i]);
    }
    free(v);
    return st;
}

/* Appends n bytes of p to out at *at. */
static void put(unsigned char *out, size_t *at, const void *p, size_t n)
{
    if (*at + n <= MAX_OUT)
        memcpy(out + *at, p, n);
    *at += n;
}

static rf_status fill_mask(rf_pipeline *pl, const rf_hparams *hp, const rf_text *in, int n,
                           unsigned char **out, size_t *len, rf_error *err)
{
    (void)hp;
    rf_fill_mask_result *r = calloc((size_t)n, sizeof *r);
    rf_status st = rf_fill_mask(pl, in, n, 5, r, NULL, err);
    for (int i = 0; i < n && st == RF_OK; i++) {
        len[i] = 0;
        size_t k = (size_t)r[i].n_masks * (size_t)r[i].top_k;
        put(out[i], &len[i], r[i].positions, sizeof(int32_t) * (size_t)r[i].n_masks);
        put(out[i], &len[i], r[i].ids, sizeof(int32_t) * k);
        put(out[i], &len[i], r[i].scores, sizeof(float) * k);
    }
    for (int i = 0; i < n && st == RF_OK; i++)
        rf_fill_mask_result_free(&r[i]);
    free(r);
    return st;
}

static rf_status ner(rf_pipeline *pl, const rf_hparams *hp, const rf_text *in, int n,
                     unsigned char **out, size_t *len, rf_error *err)
{
    (void)hp;
    rf_ner_result *r = calloc((size_t)n, sizeof *r);
    rf_status st = rf_token_classify(pl, in, n, r, NULL, err);
    for (int i = 0; i < n && st == RF_OK; i++) {
        len[i] = 0;
        put(out[i], &len[i], r[i].tokens, sizeof(rf_token_tag) * (size_t)r[i].n_tokens);
        rf_ner_result_free(&r[i]);
    }
    free(r);
    return st;
}

static rf_status answer(rf_pipeline *pl, const rf_hparams *hp, const rf_text *in, int n,
                        unsigned char **out, size_t *len, rf_error *err)
{
    (void)hp;
    rf_text *pairs = calloc((size_t)n, sizeof *pairs);
    for (int i = 0; i < n; i++) { /* question: the text's first two characters; context: the text */
        size_t q = char_len(in[i].text);
        q += char_len(in[i].text + q);
        pairs[i] = (rf_text){in[i].text, q, in[i].text, in[i].text_len};
    }
    rf_qa_result *r = calloc((size_t)n, sizeof *r);
    rf_status st = rf_qa(pl, pairs, n, 0, -1, r, NULL, err);
    for (int i = 0; i < n && st == RF_OK; i++) {
        len[i] = sizeof r[i];
        memcpy(out[i], &r[i], sizeof r[i]);
    }
    free(r);
    free(pairs);
    return st;
}

static const job jobs[] = {
    {"embed mean", any, embed_mean},         {"embed cls", any, embed_cls},
    {"embed pooler", pooled, embed_pooler},  {"classify", seq_cls, classify},
    {"fill-mask", mlm, fill_mask},           {"ner", token_cls, ner},
    {"qa", qa, answer},
};

/* ==== The check ==== */

static rf_pipeline *pipeline(const rf_model *m, rf_compute_type compute, int threads, int batch)
{
    rf_pipeline_params pp = rf_pipeline_default_params();
    pp.context.compute = compute;
    pp.context.n_threads = threads;
    pp.batch_size = batch;
    rf_pipeline *pl = NULL;
    rf_error err;
    if (rf_pipeline_create(m, &pp, &pl, &err) != RF_OK)
        CHECK(0, "pipeline (%d threads, batch %d): %s", threads, batch, err.message);
    return pl;
}

struct outputs {
    unsigned char *bytes[N_TEXTS];
    size_t len[N_TEXTS];
};

static void outputs_init(struct outputs *o)
{
    for (int i = 0; i < N_TEXTS; i++)
        o->bytes[i] = malloc(MAX_OUT);
}

static void outputs_free(struct outputs *o)
{
    for (int i = 0; i < N_TEXTS; i++)
        free(o->bytes[i]);
}

/* The inputs of a job on model hp: fill-mask's have a [MASK] in place of
 * their second character (after the only one, in a one-character text). */
static void make_inputs(const rf_hparams *hp, rf_text *in, char **owned)
{
    for (int i = 0; i < N_TEXTS; i++) {
        owned[i] = NULL;
        in[i] = (rf_text){texts[i], strlen(texts[i]), NULL, 0};
        if (hp->head != RF_HEAD_MLM)
            continue;
        size_t first = char_len(texts[i]);
        const char *after = texts[i] + first + char_len(texts[i] + first);
        size_t n = first + 6 + strlen(after) + 1;
        owned[i] = malloc(n);
        snprintf(owned[i], n, "%.*s[MASK]%s", (int)first, texts[i], after);
        in[i] = (rf_text){owned[i], strlen(owned[i]), NULL, 0};
    }
}

static void check_model(const char *dir, const char *name, void *user)
{
    (void)user;
    rf_model *m = NULL;
    rf_error err;
    if (rf_model_load(dir, &m, &err) != RF_OK) {
        CHECK(0, "loading %s: %s", dir, err.message);
        return;
    }
    const rf_hparams *hp = rf_model_hparams(m);
    rf_text in[N_TEXTS];
    char *owned[N_TEXTS];
    make_inputs(hp, in, owned);
    static const struct {
        rf_compute_type type;
        const char *name;
    } computes[] = {{RF_COMPUTE_F32, "f32"}, {RF_COMPUTE_BF16, "bf16"}, {RF_COMPUTE_INT8, "int8"}};
    for (size_t c = 0; c < sizeof computes / sizeof computes[0]; c++) {
        if (computes[c].type == RF_COMPUTE_BF16 && !rf_bf16_supported()) {
            SKIP("%s bf16: this CPU has no " RF_BF16_CPU_NEEDS, name);
            continue;
        }
        if (computes[c].type == RF_COMPUTE_INT8 && !rf_int8_supported()) {
            SKIP("%s int8: this CPU has no int8 kernel", name);
            continue;
        }
        for (size_t j = 0; j < sizeof jobs / sizeof jobs[0]; j++) {
            if (!jobs[j].applies(hp))
                continue;
            /* alone, one thread, batch 1 */
            struct outputs alone;
            outputs_init(&alone);
            rf_pipeline *pl = pipeline(m, computes[c].type, 1, 1);
            bool ok = pl != NULL;
            for (int i = 0; i < N_TEXTS && ok; i++) {
                ok = jobs[j].run(pl, hp, &in[i], 1, &alone.bytes[i], &alone.len[i], &err) ==
                     RF_OK;
                CHECK(ok, "%s %s %s: text %d alone: %s", name, computes[c].name, jobs[j].name, i,
                      err.message);
            }
            rf_pipeline_free(pl);
            for (size_t t = 0; t < sizeof thread_counts / sizeof thread_counts[0] && ok; t++) {
                int batch = batch_sizes[next_rand() % (sizeof batch_sizes / sizeof batch_sizes[0])];
                int order[N_TEXTS];
                for (int i = 0; i < N_TEXTS; i++)
                    order[i] = i;
                for (int i = N_TEXTS - 1; i > 0; i--) {
                    int k = (int)(next_rand() % (uint32_t)(i + 1)), tmp = order[i];
                    order[i] = order[k];
                    order[k] = tmp;
                }
                rf_text shuffled[N_TEXTS];
                for (int i = 0; i < N_TEXTS; i++)
                    shuffled[i] = in[order[i]];
                struct outputs got;
                outputs_init(&got);
                pl = pipeline(m, computes[c].type, thread_counts[t], batch);
                rf_status st = pl ? jobs[j].run(pl, hp, shuffled, N_TEXTS, got.bytes, got.len, &err)
                                  : RF_ERR_INPUT;
                CHECK(st == RF_OK, "%s %s %s: batch %d, %d threads: %s", name, computes[c].name,
                      jobs[j].name, batch, thread_counts[t], err.message);
                int differ = 0, first = -1;
                for (int i = 0; i < N_TEXTS && st == RF_OK; i++) {
                    int k = order[i];
                    if (got.len[i] != alone.len[k] || got.len[i] > MAX_OUT ||
                        memcmp(got.bytes[i], alone.bytes[k], got.len[i]) != 0) {
                        differ++;
                        first = first < 0 ? k : first;
                    }
                }
                CHECK(st != RF_OK || differ == 0,
                      "%s %s %s: batches of %d on %d threads: %d of %d texts differ from alone "
                      "(first: text %d, %zu characters)",
                      name, computes[c].name, jobs[j].name, batch, thread_counts[t], differ,
                      N_TEXTS, first, first >= 0 ? strlen(texts[first]) : 0);
                rf_pipeline_free(pl);
                outputs_free(&got);
            }
            outputs_free(&alone);
        }
    }
    for (int i = 0; i < N_TEXTS; i++)
        free(owned[i]);
    rf_model_free(m);
}

int main(void)
{
    REFERENCE_OR_SKIP(ref, "batch invariance");
    CHECK(load_texts() == N_TEXTS, "30 texts from chnsenticorp/dev.tsv");
    if (!texts[N_TEXTS - 1])
        return check_done();
    for_each_reference_model(ref, "config.json", check_model, NULL);
    for (int i = 0; i < N_TEXTS; i++)
        free(texts[i]);
    return check_done();
}
