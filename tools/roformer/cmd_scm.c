/*
 * cmd_scm.c — `roformer scm`: CAIL2019 similar case matching. For each
 * triplet {"A", "B", "C"} it says which of B and C is closer to A:
 *
 *   --mode embed (default): cosine of the documents' embeddings; every
 *     distinct document is embedded once (the stage-1 data reuses a pool of
 *     about 230 documents across its triplets);
 *   --mode pair: a sequence-classification model scores the pairs (A, B)
 *     and (A, C); the score is the probability of its last label (for a
 *     binary matcher, label 1 = similar).
 *
 * Documents are long, so inputs are truncated at the model's maximum
 * length unless --max-length says otherwise. With "label" fields present
 * the accuracy goes to stderr.
 */
#include "cli.h"
#include "jobcli.h"
#include "output.h"
#include "pooling_option.h"
#include "progress.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: roformer scm -m MODEL [--mode embed|pair] [--pooling cls|mean|pooler]\n"
    "                    [--max-length N] [options] FILE|-\n"
    "\n"
    "CAIL2019-SCM similar case matching. Each line of FILE (or stdin) is a triplet\n"
    "{\"A\": ..., \"B\": ..., \"C\": ...[, \"label\": \"B\"|\"C\"]}. Output per line:\n"
    "  {\"prediction\": \"B\"|\"C\", \"sim_ab\": ..., \"sim_ac\": ...}\n"
    "and, when labels are present, the accuracy on stderr.\n"
    "\n"
    "  --mode embed  cosine of document embeddings, each distinct document embedded\n"
    "                once (default)\n"
    "  --mode pair   a sequence-classification model scores (A,B) and (A,C): the\n"
    "                probability of its last label\n" CLI_POOLING_HELP
    "  --max-length N  truncate documents to N tokens (default: the model's maximum)\n"
    "  --window N --stride S  instead of truncating, cut a longer document into windows\n"
    "                and embed it as the mean of theirs (--mode embed)\n";

enum { FIELD_A, FIELD_B, FIELD_C, FIELD_LABEL };

typedef struct {
    rf_pipeline *pl;
    const rf_model *model;
    bool pair_mode;
    int pooling;
    cli_record *recs;
    int n_recs;
    float *sim_ab, *sim_ac; /* [n_recs] */
    int progress;
} scm_cmd;

static int own_option(void *arg, const char *cmd, int argc, char **argv, int *i)
{
    scm_cmd *c = arg;
    const char *v;
    int r;
    if ((r = cli_take_value(cmd, argc, argv, i, "--pooling", &v)))
        return r < 0 || cli_parse_pooling(cmd, v, &c->pooling) ? -1 : 1;
    if ((r = cli_take_value(cmd, argc, argv, i, "--mode", &v))) {
        if (r < 0)
            return r;
        if (strcmp(v, "embed") && strcmp(v, "pair"))
            return cli_usage_error(cmd, "--mode is embed or pair, not '%s'", v), -1;
        c->pair_mode = !strcmp(v, "pair");
        return 1;
    }
    return 0;
}

/* ==== Distinct documents ==== */

typedef struct {
    rf_text *docs;  /* [n] distinct documents */
    int n;
    int *slots;     /* open-addressing table of doc index + 1 (0 = empty) */
    size_t n_slots; /* a power of two */
} doc_set;

static uint64_t fnv1a(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* Index of the document equal to (s, len), added when new. */
static int doc_index(doc_set *set, const char *s, size_t len)
{
    size_t i = (size_t)fnv1a(s, len) & (set->n_slots - 1);
    while (set->slots[i]) {
        const rf_text *d = &set->docs[set->slots[i] - 1];
        if (d->text_len == len && !memcmp(d->text, s, len))
            return set->slots[i] - 1;
        i = (i + 1) & (set->n_slots - 1);
    }
    set->docs[set->n] = (rf_text){.text = s, .text_len = len};
    set->slots[i] = ++set->n;
    return set->n - 1;
}

static const char *const side_name[] = {"A", "B", "C"};

/* Embeds each distinct document once, then compares. */
static int run_embed(scm_cmd *c)
{
    int n = c->n_recs, D = rf_model_hparams(c->model)->hidden_size, rc = CLI_OK;
    rf_pooling pooling = cli_pooling_for(c->model, c->pooling);
    doc_set set = {0};
    set.n_slots = 16;
    while (set.n_slots < (size_t)n * 6)
        set.n_slots *= 2;
    int *doc_of = malloc(sizeof(int) * (size_t)(n ? n : 1) * 3);
    set.docs = malloc(sizeof *set.docs * (size_t)(n ? n : 1) * 3);
    set.slots = calloc(set.n_slots, sizeof *set.slots);
    if (!doc_of || !set.docs || !set.slots) {
        rc = cli_error("out of memory");
        goto done;
    }
    for (int k = 0; k < n; k++)
        for (int s = 0; s < 3 && !c->recs[k].error; s++)
            doc_of[3 * k + s] = doc_index(&set, c->recs[k].field[s], c->recs[k].len[s]);

    float *vecs = malloc(sizeof(float) * (size_t)(set.n ? set.n : 1) * (size_t)D);
    rf_item_status *items = malloc(sizeof *items * (size_t)(set.n ? set.n : 1));
    cli_progress *progress = cli_progress_start(c->progress, "documents");
    if (!vecs || !items)
        rc = cli_error("out of memory");
    for (int d = 0; rc == CLI_OK && d < set.n; d += 64) {
        int m = set.n - d < 64 ? set.n - d : 64;
        rf_error err;
        if (rf_embed(c->pl, set.docs + d, m, pooling, false, vecs + (size_t)d * D, items + d,
                     &err) != RF_OK)
            rc = cli_error("%s", err.message);
        cli_progress_update(progress, d + m, set.n, d + m);
    }
    cli_progress_finish(progress);
    for (int k = 0; rc == CLI_OK && k < n; k++) {
        cli_record *rec = &c->recs[k];
        for (int s = 0; s < 3 && !rec->error; s++) {
            const rf_item_status *it = &items[doc_of[3 * k + s]];
            if (it->status != RF_OK) {
                char msg[600];
                snprintf(msg, sizeof msg, "%s: %s", side_name[s], it->error.message);
                cli_record_fail(rec, msg);
            }
        }
        if (rec->error)
            continue;
        const float *a = vecs + (size_t)doc_of[3 * k] * D;
        c->sim_ab[k] = rf_cosine(a, vecs + (size_t)doc_of[3 * k + 1] * D, D);
        c->sim_ac[k] = rf_cosine(a, vecs + (size_t)doc_of[3 * k + 2] * D, D);
    }
    fprintf(stderr, "roformer scm: %d triplets, %d distinct documents embedded\n", n, set.n);
    free(vecs);
    free(items);
done:
    free(doc_of);
    free(set.docs);
    free(set.slots);
    return rc;
}

/* Scores (A, B) and (A, C) with a sequence-classification model. */
static int run_pairs(scm_cmd *c)
{
    int n = c->n_recs, rc = CLI_OK;
    int32_t N = rf_model_hparams(c->model)->num_labels;
    if (rf_model_hparams(c->model)->head != RF_HEAD_SEQ_CLS || N < 1)
        return cli_error("--mode pair needs a sequence-classification model");
    enum { CHUNK = 64 };
    rf_text pairs[2 * CHUNK];
    rf_item_status items[2 * CHUNK];
    int owner[2 * CHUNK];
    float *probs = malloc(sizeof(float) * 2 * CHUNK * (size_t)N);
    cli_progress *progress = cli_progress_start(c->progress, "triplets");
    if (!probs)
        rc = cli_error("out of memory");
    for (int k0 = 0; rc == CLI_OK && k0 < n; k0 += CHUNK) {
        int m = 0;
        for (int k = k0; k < n && k < k0 + CHUNK; k++) {
            cli_record *rec = &c->recs[k];
            if (rec->error)
                continue;
            for (int s = FIELD_B; s <= FIELD_C; s++) {
                pairs[m] = (rf_text){rec->field[FIELD_A], rec->len[FIELD_A], rec->field[s],
                                     rec->len[s]};
                owner[m++] = k;
            }
        }
        rf_error err;
        if (rf_classify(c->pl, pairs, m, probs, items, &err) != RF_OK) {
            rc = cli_error("%s", err.message);
            break;
        }
        for (int j = 0; j < m; j += 2) {
            cli_record *rec = &c->recs[owner[j]];
            cli_apply_item(rec, &items[j]);
            cli_apply_item(rec, &items[j + 1]);
            c->sim_ab[owner[j]] = probs[(size_t)j * N + N - 1];
            c->sim_ac[owner[j]] = probs[(size_t)(j + 1) * N + N - 1];
        }
        cli_progress_update(progress, k0 + CHUNK < n ? k0 + CHUNK : n, n,
                            k0 + CHUNK < n ? k0 + CHUNK : n);
    }
    cli_progress_finish(progress);
    free(probs);
    return rc;
}

/* Reads every triplet; a bad label fails its line. */
static int read_all(scm_cmd *c, const cli_job_opts *o, const char *path)
{
    cli_input_spec spec = {.names = {"A", "B", "C", "label"}, .n_fields = 4, .n_required = 3,
                           .tab_fields = 3, .max_line = o->max_line};
    cli_reader *in = cli_reader_open(&spec, path, NULL, 0);
    if (!in)
        return CLI_FAILED;
    int cap = 0, got;
    cli_record rec;
    while ((got = cli_reader_next(in, &rec)) == 1) {
        if (c->n_recs == cap) {
            cap = cap ? cap * 2 : 512;
            cli_record *grown = realloc(c->recs, sizeof *grown * (size_t)cap);
            if (!grown) {
                cli_record_free(&rec);
                got = -1;
                cli_error("out of memory");
                break;
            }
            c->recs = grown;
        }
        const char *label = rec.field[FIELD_LABEL];
        if (!rec.error && label && strcmp(label, "B") && strcmp(label, "C"))
            cli_record_fail(&rec, "field \"label\" must be \"B\" or \"C\"");
        c->recs[c->n_recs++] = rec;
    }
    cli_reader_close(in);
    return got < 0 ? CLI_FAILED : CLI_OK;
}

static int write_all(const scm_cmd *c)
{
    long failed = 0, labelled = 0, correct = 0;
    for (int k = 0; k < c->n_recs; k++) {
        const cli_record *rec = &c->recs[k];
        cJSON *obj;
        if (rec->error) {
            failed++;
            obj = cli_json_error(rec->error, rec->line);
        } else {
            const char *pred = c->sim_ab[k] >= c->sim_ac[k] ? "B" : "C";
            obj = cJSON_CreateObject();
            cJSON_AddStringToObject(obj, "prediction", pred);
            cli_add_float(obj, "sim_ab", c->sim_ab[k]);
            cli_add_float(obj, "sim_ac", c->sim_ac[k]);
            if (rec->field[FIELD_LABEL]) {
                labelled++;
                correct += !strcmp(pred, rec->field[FIELD_LABEL]);
            }
        }
        int rc = cli_write_json(stdout, obj);
        cJSON_Delete(obj);
        if (rc != 0)
            return cli_error("writing the output failed");
    }
    if (fflush(stdout) != 0)
        return cli_error("writing the output failed");
    if (labelled)
        fprintf(stderr, "roformer scm: accuracy %.4f (%ld of %ld labelled triplets)\n",
                (double)correct / labelled, correct, labelled);
    if (failed)
        fprintf(stderr, "roformer: %ld of %d inputs failed\n", failed, c->n_recs);
    return failed ? CLI_FAILED : CLI_OK;
}

int cmd_scm(int argc, char **argv)
{
    scm_cmd c = {.pooling = CLI_POOLING_DEFAULT};
    cli_job_opts o;
    cli_job_opts_init(&o, argv);
    int rc = cli_job_parse(&o, "scm", usage, argc, argv, own_option, &c);
    if (rc >= 0)
        return rc;
    if (o.n_args > 1)
        return cli_usage_error("scm", "one input file (or -) expected, got %d", o.n_args);
    o.truncate_default = true;
    c.progress = o.progress;
    rf_model *model;
    if ((rc = cli_job_open(&o, "scm", &model, &c.pl)) != CLI_OK)
        return rc;
    c.model = model;
    if (!c.pair_mode && cli_pooling_for(model, c.pooling) == RF_POOLING_POOLER &&
        !rf_model_hparams(model)->has_pooler)
        rc = cli_usage_error("scm", "the model has no pooler; use --pooling cls or mean");
    if (rc == CLI_OK)
        rc = read_all(&c, &o, o.n_args ? o.args[0] : "-");
    if (rc == CLI_OK) {
        c.sim_ab = calloc((size_t)(c.n_recs ? c.n_recs : 1), sizeof(float));
        c.sim_ac = calloc((size_t)(c.n_recs ? c.n_recs : 1), sizeof(float));
        rc = !c.sim_ab || !c.sim_ac ? cli_error("out of memory")
             : c.pair_mode          ? run_pairs(&c)
                                    : run_embed(&c);
    }
    if (rc == CLI_OK)
        rc = write_all(&c);
    cli_job_print_timings(&o);
    for (int k = 0; k < c.n_recs; k++)
        cli_record_free(&c.recs[k]);
    free(c.recs);
    free(c.sim_ab);
    free(c.sim_ac);
    rf_pipeline_free(c.pl);
    rf_model_free(model);
    return rc;
}
