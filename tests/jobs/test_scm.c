/*
 * test_scm.c — rf_scm, the CAIL2019-SCM job, on the reference models and
 * the shared CAIL2019-SCM triplets: each result equals, to the bit, what
 * the job's building blocks give when run the way rf_scm documents
 * (distinct documents in order of first appearance, rf_embed per chunk of
 * RF_SCM_CHUNK, rf_cosine; or rf_classify of (A, B), (A, C) per chunk of
 * triplets), so every caller of the job gets the same numbers. Also the
 * per-triplet failures, progress reports and refused calls.
 * tests/python/test_scm.py compares the CLI, Python and this job.
 */
#include "../check.h"
#include "../reference_cases.h"
#include "roformer.h"

#include <cJSON.h>
#include <math.h>

enum { MAX_TRIPLETS = 120 };

typedef struct {
    char *storage;                 /* the data file's bytes; documents point into it */
    rf_triplet t[MAX_TRIPLETS];
    int n;
    cJSON *json[MAX_TRIPLETS];
} triplet_file;

/* Reads up to `limit` triplets of <data>/cail2019_scm/stage1_train.jsonl. */
static int read_triplets(triplet_file *f, int limit)
{
    const char *data = getenv("ROFORMER_DATA");
    char path[512];
    snprintf(path, sizeof path, "%s/cail2019_scm/stage1_train.jsonl",
             data && *data ? data : "../shared/data");
    memset(f, 0, sizeof *f);
    if (!(f->storage = check_read_file(path, NULL)))
        return -1;
    for (char *line = f->storage, *end; *line && f->n < limit; line = end + 1) {
        end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        char saved = *end;
        *end = '\0';
        cJSON *obj = cJSON_Parse(line);
        *end = saved;
        if (!obj)
            return -1;
        f->json[f->n] = obj;
        for (int s = 0; s < 3; s++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, (const char[]){"ABC"[s], 0});
            if (!cJSON_IsString(v))
                return -1;
            f->t[f->n].doc[s] = v->valuestring;
            f->t[f->n].len[s] = strlen(v->valuestring);
        }
        f->n++;
        if (!saved)
            break;
    }
    return 0;
}

static void free_triplets(triplet_file *f)
{
    for (int k = 0; k < f->n; k++)
        cJSON_Delete(f->json[k]);
    free(f->storage);
}

static int64_t progress_done, progress_seen_total, progress_calls;
static void count_progress(void *user, int64_t done, int64_t total)
{
    (void)user;
    progress_done = done;
    progress_seen_total = total;
    progress_calls++;
}

static rf_pipeline *pipeline(const rf_model *m, int32_t batch_size, int32_t max_length)
{
    rf_pipeline_params pp = rf_pipeline_default_params();
    pp.batch_size = batch_size;
    pp.max_length = max_length;
    pp.context.n_threads = 2;
    rf_pipeline *pl = NULL;
    rf_error err;
    CHECK(rf_pipeline_create(m, &pp, &pl, &err) == RF_OK, "pipeline: %s", err.message);
    return pl;
}

/* rf_scm over the triplets against the expected scores: the same bits,
 * the distinct documents counted, progress once per chunk of
 * `progress_total` units, and a second call giving the same bits. */
static void check_scm(rf_pipeline *pl, const triplet_file *f, rf_scm_params params,
                      const float *want_ab, const float *want_ac, int32_t want_documents,
                      int64_t progress_total, const char *what)
{
    int n = f->n;
    rf_scm_result out[MAX_TRIPLETS], again[MAX_TRIPLETS];
    rf_item_status items[MAX_TRIPLETS];
    int32_t n_documents = -1;
    rf_error err;
    params.progress = count_progress;
    progress_calls = 0;
    CHECK(rf_scm(pl, f->t, n, &params, out, &n_documents, items, &err) == RF_OK, "%s: %s",
          what, err.message);
    int same = 0;
    for (int k = 0; k < n; k++)
        same += items[k].status == RF_OK && check_same_finite(&out[k].sim_ab, &want_ab[k], 1) &&
                check_same_finite(&out[k].sim_ac, &want_ac[k], 1) &&
                out[k].prediction == (want_ab[k] >= want_ac[k] ? 'B' : 'C');
    CHECK(same == n, "%s: %d of %d triplets equal the building blocks to the bit", what, same, n);
    CHECK(n_documents == want_documents, "%s: %d distinct documents, expected %d", what,
          n_documents, want_documents);
    CHECK(progress_calls == (progress_total + RF_SCM_CHUNK - 1) / RF_SCM_CHUNK &&
              progress_done == progress_total && progress_seen_total == progress_total,
          "%s: progress once per chunk: %ld calls, last %ld of %ld", what, (long)progress_calls,
          (long)progress_done, (long)progress_seen_total);
    /* the same triplets give the same bits again on the warm pipeline */
    params.progress = NULL;
    bool st_ok = rf_scm(pl, f->t, n, &params, again, NULL, NULL, &err) == RF_OK;
    int repeated = 0;
    for (int k = 0; k < n; k++)
        repeated += again[k].prediction == out[k].prediction &&
                    check_same_finite(&again[k].sim_ab, &out[k].sim_ab, 1) &&
                    check_same_finite(&again[k].sim_ac, &out[k].sim_ac, 1);
    CHECK(st_ok && repeated == n,
          "%s: a second call, without items or a document count, gives the same bits (%d of %d)",
          what, repeated, n);
}

/* Embed mode against distinct documents embedded chunk by chunk. */
static void test_embed_mode(const rf_model *m, const triplet_file *f, rf_pooling pooling,
                            int32_t batch_size, int32_t max_length)
{
    int n = f->n;
    int32_t D = rf_model_hparams(m)->hidden_size;
    rf_pipeline *pl = pipeline(m, batch_size, max_length);
    rf_text docs[3 * MAX_TRIPLETS];
    int doc_of[3 * MAX_TRIPLETS], n_docs = 0;
    for (int k = 0; k < n; k++)
        for (int s = 0; s < 3; s++) { /* distinct by bytes, first appearance first */
            int d = 0;
            while (d < n_docs && !(docs[d].text_len == f->t[k].len[s] &&
                                   !memcmp(docs[d].text, f->t[k].doc[s], f->t[k].len[s])))
                d++;
            if (d == n_docs)
                docs[n_docs++] = (rf_text){f->t[k].doc[s], f->t[k].len[s], NULL, 0};
            doc_of[3 * k + s] = d;
        }
    float *vecs = malloc(sizeof(float) * (size_t)n_docs * D);
    float want_ab[MAX_TRIPLETS], want_ac[MAX_TRIPLETS];
    rf_error err;
    bool ok = true;
    for (int d = 0; d < n_docs && ok; d += RF_SCM_CHUNK)
        ok = rf_embed(pl, docs + d, n_docs - d < RF_SCM_CHUNK ? n_docs - d : RF_SCM_CHUNK,
                      pooling, false, vecs + (size_t)d * D, NULL, &err) == RF_OK;
    CHECK(ok, "building blocks: %s", err.message);
    for (int k = 0; k < n && ok; k++) {
        const float *a = vecs + (size_t)doc_of[3 * k] * D;
        want_ab[k] = rf_cosine(a, vecs + (size_t)doc_of[3 * k + 1] * D, D);
        want_ac[k] = rf_cosine(a, vecs + (size_t)doc_of[3 * k + 2] * D, D);
    }
    char what[96];
    snprintf(what, sizeof what, "embed, pooling %s, batch %d, max_length %d",
             rf_pooling_name(pooling), batch_size, max_length);
    rf_scm_params params = rf_scm_default_params();
    params.pooling = pooling;
    if (ok)
        check_scm(pl, f, params, want_ab, want_ac, n_docs, n_docs, what);
    free(vecs);
    rf_pipeline_free(pl);
}

/* Pair mode against rf_classify of (A, B) and (A, C), per chunk of triplets. */
static void test_pair_mode(const rf_model *m, const triplet_file *f)
{
    int n = f->n;
    int32_t N = rf_model_hparams(m)->num_labels;
    rf_pipeline *pl = pipeline(m, 4, 128);
    rf_text pairs[2 * RF_SCM_CHUNK];
    float *probs = malloc(sizeof(float) * 2 * RF_SCM_CHUNK * (size_t)N);
    float want_ab[MAX_TRIPLETS], want_ac[MAX_TRIPLETS];
    rf_error err;
    bool ok = true;
    for (int k0 = 0; k0 < n && ok; k0 += RF_SCM_CHUNK) {
        int m_ = n - k0 < RF_SCM_CHUNK ? n - k0 : RF_SCM_CHUNK;
        for (int j = 0; j < m_; j++)
            for (int s = 1; s <= 2; s++)
                pairs[2 * j + s - 1] = (rf_text){f->t[k0 + j].doc[0], f->t[k0 + j].len[0],
                                                 f->t[k0 + j].doc[s], f->t[k0 + j].len[s]};
        ok = rf_classify(pl, pairs, 2 * m_, probs, NULL, &err) == RF_OK;
        for (int j = 0; j < m_ && ok; j++) {
            want_ab[k0 + j] = probs[(size_t)2 * j * N + N - 1];
            want_ac[k0 + j] = probs[(size_t)(2 * j + 1) * N + N - 1];
        }
    }
    CHECK(ok, "building blocks: %s", err.message);
    rf_scm_params params = rf_scm_default_params();
    params.mode = RF_SCM_PAIR;
    if (ok)
        check_scm(pl, f, params, want_ab, want_ac, 0, n, "pair, batch 4, max_length 128");
    free(probs);
    rf_pipeline_free(pl);
}

/* Failures stay with their triplet; a triplet without documents keeps its place. */
static void test_failures(const rf_model *mlm, const rf_model *cls)
{
    rf_pipeline *pl = pipeline(mlm, 8, 64);
    const char *ok1 = "今天天气很好", *ok2 = "今天天气不错", *bad = "bad \xff byte";
    rf_triplet t[4] = {
        {{ok1, ok2, ok1}, {strlen(ok1), strlen(ok2), strlen(ok1)}},
        {{ok1, bad, ok2}, {strlen(ok1), strlen(bad), strlen(ok2)}},
        {{ok1, ok2, NULL}, {strlen(ok1), strlen(ok2), 0}},
        {{ok2, ok1, ok2}, {strlen(ok2), strlen(ok1), strlen(ok2)}},
    };
    rf_scm_result out[4];
    rf_item_status items[4];
    int32_t n_documents;
    rf_error err;
    rf_scm_params params = rf_scm_default_params();
    CHECK(rf_scm(pl, t, 4, &params, out, &n_documents, items, &err) == RF_OK, "with items: %s",
          err.message);
    /* cos(A, A) is 1 up to the float32 rounding of a dot product and two
     * norms over D terms, well inside 1e-5 for D <= 1024 */
    CHECK(items[0].status == RF_OK && items[3].status == RF_OK && out[0].prediction == 'C' &&
              out[3].prediction == 'C' && fabsf(out[0].sim_ac - 1) <= 1e-5f,
          "good triplets answer C, the copy of A (cos %.9g)", out[0].sim_ac);
    CHECK(items[1].status == RF_ERR_INPUT && !strncmp(items[1].error.message, "B: ", 3) &&
              strstr(items[1].error.message, "UTF-8") && out[1].prediction == 0 &&
              isnan(out[1].sim_ab) && isnan(out[1].sim_ac),
          "a bad document fails its triplet, named by side: '%s'", items[1].error.message);
    CHECK(items[2].status == RF_ERR_INPUT && !strcmp(items[2].error.message, "C: missing"),
          "a NULL document fails its triplet: '%s'", items[2].error.message);
    CHECK(n_documents == 3, "distinct documents of the triplets that have them: %d", n_documents);
    CHECK(rf_scm(pl, t, 4, &params, out, NULL, NULL, &err) == RF_ERR_INPUT &&
              strstr(err.message, "input 2: B: "),
          "without items the first bad triplet fails the call: '%s'", err.message);

    params.mode = RF_SCM_PAIR;
    CHECK(rf_scm(pl, t, 1, &params, out, NULL, items, &err) == RF_ERR_UNSUPPORTED,
          "pair mode on an MLM model: unsupported ('%s')", err.message);
    params.mode = (rf_scm_mode)7;
    CHECK(rf_scm(pl, t, 1, &params, out, NULL, items, &err) == RF_ERR_INPUT, "unknown mode");
    params = rf_scm_default_params();
    CHECK(rf_scm(pl, t, -1, &params, out, NULL, items, &err) == RF_ERR_INPUT, "negative count");
    CHECK(rf_scm(pl, t, 0, NULL, out, &n_documents, items, &err) == RF_OK && n_documents == 0,
          "no triplets, default parameters");
    rf_pipeline_free(pl);

    if (cls) {
        rf_pipeline *cpl = pipeline(cls, 8, 64);
        params.mode = RF_SCM_PAIR;
        CHECK(rf_scm(cpl, t, 4, &params, out, NULL, items, &err) == RF_OK, "pair: %s",
              err.message);
        CHECK(items[0].status == RF_OK && items[3].status == RF_OK &&
                  items[1].status == RF_ERR_INPUT && strstr(items[1].error.message, "UTF-8") &&
                  items[2].status == RF_ERR_INPUT && isnan(out[2].sim_ab),
              "pair mode: bad and missing documents fail their own triplets");
        rf_pipeline_free(cpl);
    }

    /* rf_scm_embed_documents: the embed mode's chunks, on their own */
    rf_pipeline *epl = pipeline(mlm, 8, 64);
    int32_t D = rf_model_hparams(mlm)->hidden_size;
    rf_text docs[2] = {{ok1, strlen(ok1), NULL, 0}, {bad, strlen(bad), NULL, 0}};
    float *vecs = malloc(sizeof(float) * 2 * (size_t)D), *one = malloc(sizeof(float) * (size_t)D);
    CHECK(rf_scm_embed_documents(epl, docs, 2, RF_POOLING_CLS, vecs, items, &err) == RF_OK &&
              items[0].status == RF_OK && items[1].status == RF_ERR_INPUT && isnan(vecs[D]),
          "embed_documents: a bad document fails alone, its row NaN");
    CHECK(rf_embed(epl, docs, 1, RF_POOLING_CLS, false, one, NULL, &err) == RF_OK &&
              check_same_finite(one, vecs, (size_t)D),
          "embed_documents: rf_embed's vector");
    CHECK(rf_scm_embed_documents(epl, docs, 2, RF_POOLING_CLS, vecs, NULL, &err) ==
                  RF_ERR_INPUT && strstr(err.message, "input 2:"),
          "embed_documents without items: the bad document fails the call: '%s'", err.message);
    free(vecs);
    free(one);
    rf_pipeline_free(epl);
}

int main(void)
{
    REFERENCE_OR_SKIP(ref, "rf_scm");
    rf_model *mlm = load_reference_model(ref, "tiny-word-mlm");
    rf_model *cls = load_reference_model(ref, "tiny-word-cls");
    if (mlm)
        test_failures(mlm, cls);
    triplet_file f;
    if (read_triplets(&f, MAX_TRIPLETS) != 0 || f.n == 0) {
        SKIP("CAIL2019-SCM data absent or unreadable (../shared/data or $ROFORMER_DATA)");
    } else {
        if (mlm) {
            test_embed_mode(mlm, &f, RF_POOLING_POOLER, 8, 512);
            test_embed_mode(mlm, &f, RF_POOLING_MEAN, 3, 96);
        }
        if (cls) {
            test_embed_mode(cls, &f, RF_POOLING_CLS, 8, 256);
            test_pair_mode(cls, &f);
        }
    }
    free_triplets(&f);
    rf_model_free(mlm);
    rf_model_free(cls);
    return check_done();
}
