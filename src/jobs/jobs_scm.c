/*
 * jobs_scm.c — CAIL2019-SCM similar case matching (rf_scm): for each
 * triplet of legal documents (A, B, C), which of B and C is closer to A.
 *
 * Embed mode gathers the distinct documents of all triplets (a hash set
 * over their bytes; the stage-1 data reuses a pool of about 230 documents
 * across its triplets), embeds each once and compares cosines. Pair mode
 * runs (A, B) and (A, C) through a sequence-classification head. Both hand
 * the pipeline fixed chunks of RF_SCM_CHUNK documents or triplets: the
 * engine's numbers for one input may differ in the last bits with the
 * other inputs of its batch, so fixed chunks make every caller's numbers
 * the same.
 */
#include "jobs/pipeline.h"

#include "base/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char side_name[3] = {'A', 'B', 'C'};

rf_scm_params rf_scm_default_params(void)
{
    return (rf_scm_params){.mode = RF_SCM_EMBED, .pooling = RF_POOLING_CLS};
}

static void report_progress(const rf_scm_params *p, int64_t done, int64_t total)
{
    if (p->progress)
        p->progress(p->progress_user, done, total);
}

/* The side (0..2) of the first NULL document of t, or -1 when it has all three. */
static int missing_side(const rf_triplet *t)
{
    for (int s = 0; s < 3; s++)
        if (!t->doc[s])
            return s;
    return -1;
}

/* Fails triplet k for its missing document `side`. */
static rf_status fail_missing(int32_t k, int side, rf_item_status *items, rf_error *err)
{
    char msg[16];
    snprintf(msg, sizeof msg, "%c: missing", side_name[side]);
    return rf_item_fail(items, k, RF_ERR_INPUT, msg, err);
}

/* ==== Embedding documents ==== */

/* Embeds docs[n] (or the caller's encodings of them, encs[n], when not
 * NULL) in chunks of RF_SCM_CHUNK, reporting progress per chunk. items[n]
 * is required. */
static rf_status embed_chunks(rf_pipeline *pl, const rf_text *docs, const rf_encoding *encs,
                              int32_t n, rf_pooling pooling, float *vecs, rf_item_status *items,
                              const rf_scm_params *progress, rf_error *err)
{
    int32_t D = rf_model_hparams(rf_pipeline_model(pl))->hidden_size;
    for (int32_t d = 0; d < n; d += RF_SCM_CHUNK) {
        int32_t m = n - d < RF_SCM_CHUNK ? n - d : RF_SCM_CHUNK;
        float *v = vecs + (size_t)d * D;
        rf_status st = encs ? rf_embed_windowed_encodings(pl, encs + d, m, pooling, false, v,
                                                          items + d, err)
                            : rf_embed(pl, docs + d, m, pooling, false, v, items + d, err);
        if (st != RF_OK)
            return st;
        if (progress)
            report_progress(progress, d + m, n);
    }
    return RF_OK;
}

rf_status rf_scm_embed_documents(rf_pipeline *pl, const rf_text *docs, int32_t n,
                                 rf_pooling pooling, float *vecs, rf_item_status *items,
                                 rf_error *err)
{
    if (n <= 0)
        return n < 0 ? rf_fail(err, RF_ERR_INPUT, "negative document count %d", n) : RF_OK;
    rf_item_status *own = items ? NULL : malloc(sizeof *own * (size_t)n);
    if (!items && !own)
        return rf_fail(err, RF_ERR_NOMEM, "out of memory for %d documents", n);
    rf_status st = embed_chunks(pl, docs, NULL, n, pooling, vecs, items ? items : own, NULL, err);
    for (int32_t i = 0; own && st == RF_OK && i < n; i++)
        if (own[i].status != RF_OK)
            st = rf_item_fail(NULL, i, own[i].status, own[i].error.message, err);
    free(own);
    return st;
}

/* ==== Scoring from vectors ==== */

/* Triplet k from its documents' rows (all three present): the cosines and
 * the prediction, or the failure of its first failed document. */
static rf_status score_triplet(const float *vecs, int32_t D, const rf_item_status *doc_items,
                               const int32_t *row, int32_t k, rf_scm_result *out,
                               rf_item_status *items, rf_error *err)
{
    for (int s = 0; doc_items && s < 3; s++) {
        const rf_item_status *it = &doc_items[row[s]];
        if (it->status == RF_OK)
            continue;
        char msg[sizeof it->error.message];
        snprintf(msg, sizeof msg, "%c: %.500s", side_name[s], it->error.message);
        return rf_item_fail(items, k, it->status, msg, err);
    }
    const float *a = vecs + (size_t)row[0] * D;
    out[k].sim_ab = rf_cosine(a, vecs + (size_t)row[1] * D, D);
    out[k].sim_ac = rf_cosine(a, vecs + (size_t)row[2] * D, D);
    out[k].prediction = out[k].sim_ab >= out[k].sim_ac ? RF_SCM_B : RF_SCM_C;
    return RF_OK;
}

rf_status rf_scm_score(const float *vecs, int32_t D, const rf_item_status *doc_items,
                       const int32_t *doc_of, int32_t n, rf_scm_result *out,
                       rf_item_status *items, rf_error *err)
{
    if (n < 0 || D <= 0)
        return rf_fail(err, RF_ERR_INPUT, "scm scoring: %d triplets of width %d", n, D);
    for (int32_t k = 0; k < n; k++) {
        out[k] = (rf_scm_result){.prediction = RF_SCM_FAILED, .sim_ab = NAN, .sim_ac = NAN};
        if (items)
            items[k] = (rf_item_status){.status = RF_OK};
    }
    rf_status st = RF_OK;
    for (int32_t k = 0; k < n && st == RF_OK; k++) {
        const int32_t *row = doc_of + 3 * k;
        int missing = row[0] < 0 ? 0 : row[1] < 0 ? 1 : row[2] < 0 ? 2 : -1;
        st = missing >= 0 ? fail_missing(k, missing, items, err)
                          : score_triplet(vecs, D, doc_items, row, k, out, items, err);
    }
    return st;
}

/* ==== Distinct documents ==== */

typedef struct {
    rf_text *docs;   /* [n] distinct documents, in order of first appearance */
    rf_encoding *encs; /* [n] the caller's encoding of each, or NULL: none given */
    int32_t n;
    int32_t *slots;  /* open-addressing table of doc index + 1 (0 = empty) */
    size_t n_slots;  /* a power of two, at least twice the documents */
} doc_set;

static uint64_t fnv1a(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* Index of the document equal to (s, len), added when new (with its
 * encoding `enc` when the set keeps them). */
static int32_t doc_index(doc_set *set, const char *s, size_t len, const rf_encoding *enc)
{
    size_t i = (size_t)fnv1a(s, len) & (set->n_slots - 1);
    while (set->slots[i]) {
        const rf_text *d = &set->docs[set->slots[i] - 1];
        if (d->text_len == len && !memcmp(d->text, s, len))
            return set->slots[i] - 1;
        i = (i + 1) & (set->n_slots - 1);
    }
    set->docs[set->n] = (rf_text){.text = s, .text_len = len};
    if (set->encs)
        set->encs[set->n] = *enc;
    set->slots[i] = ++set->n;
    return set->n - 1;
}

/* encs: the caller's encodings of the triplets' documents ([n][3]), or NULL. */
static rf_status scm_embed(rf_pipeline *pl, const rf_triplet *t, const rf_encoding *encs,
                           int32_t n, const rf_scm_params *p, rf_scm_result *out,
                           int32_t *n_documents, rf_item_status *items, rf_error *err)
{
    int32_t D = rf_model_hparams(rf_pipeline_model(pl))->hidden_size;
    size_t cap = (size_t)3 * n;
    doc_set set = {.n_slots = 16};
    while (set.n_slots < 2 * cap)
        set.n_slots *= 2;
    int32_t *doc_of = malloc(sizeof *doc_of * cap); /* [n][3]; -1: a document is missing */
    set.docs = malloc(sizeof *set.docs * cap);
    set.slots = calloc(set.n_slots, sizeof *set.slots);
    set.encs = encs ? malloc(sizeof *set.encs * cap) : NULL;
    float *vecs = malloc(sizeof *vecs * cap * (size_t)D);
    rf_item_status *doc_items = malloc(sizeof *doc_items * cap);
    rf_status st = RF_OK;
    if (!doc_of || !set.docs || !set.slots || !vecs || !doc_items || (encs && !set.encs)) {
        st = rf_fail(err, RF_ERR_NOMEM, "out of memory for %d triplets", n);
        goto done;
    }
    for (int32_t k = 0; k < n; k++)
        for (int s = 0; s < 3; s++)
            doc_of[3 * k + s] = missing_side(&t[k]) < 0
                                    ? doc_index(&set, t[k].doc[s], t[k].len[s],
                                                encs ? &encs[3 * k + s] : NULL)
                                    : -1;
    if (n_documents)
        *n_documents = set.n;
    st = embed_chunks(pl, set.docs, set.encs, set.n, p->pooling, vecs, doc_items, p, err);
    for (int32_t k = 0; k < n && st == RF_OK; k++)
        st = doc_of[3 * k] < 0 ? fail_missing(k, missing_side(&t[k]), items, err)
                               : score_triplet(vecs, D, doc_items, doc_of + 3 * k, k, out,
                                               items, err);
done:
    free(doc_of);
    free(set.docs);
    free(set.encs);
    free(set.slots);
    free(vecs);
    free(doc_items);
    return st;
}

/* ==== Pairs through a classifier ==== */

static rf_status scm_pairs(rf_pipeline *pl, const rf_triplet *t, int32_t n,
                           const rf_scm_params *p, rf_scm_result *out, rf_item_status *items,
                           rf_error *err)
{
    const rf_hparams *hp = rf_model_hparams(rf_pipeline_model(pl));
    int32_t N = hp->num_labels;
    if (hp->head != RF_HEAD_SEQ_CLS || N < 1)
        return rf_fail(err, RF_ERR_UNSUPPORTED,
                       "scm pair mode needs a sequence-classification model");
    rf_text pairs[2 * RF_SCM_CHUNK];
    rf_item_status pair_items[2 * RF_SCM_CHUNK];
    float *probs = malloc(sizeof *probs * 2 * RF_SCM_CHUNK * (size_t)N);
    if (!probs)
        return rf_fail(err, RF_ERR_NOMEM, "out of memory for %d labels", N);
    rf_status st = RF_OK;
    for (int32_t k0 = 0; k0 < n && st == RF_OK; k0 += RF_SCM_CHUNK) {
        int32_t end = n - k0 < RF_SCM_CHUNK ? n : k0 + RF_SCM_CHUNK, m = 0;
        for (int32_t k = k0; k < end; k++) {
            if (missing_side(&t[k]) >= 0)
                continue;
            for (int s = 1; s <= 2; s++)
                pairs[m++] = (rf_text){t[k].doc[0], t[k].len[0], t[k].doc[s], t[k].len[s]};
        }
        if ((st = rf_classify(pl, pairs, m, probs, pair_items, err)) != RF_OK)
            break;
        for (int32_t k = k0, j = 0; k < end && st == RF_OK; k++) {
            int side = missing_side(&t[k]);
            if (side >= 0) {
                st = fail_missing(k, side, items, err);
                continue;
            }
            const rf_item_status *bad = pair_items[j].status != RF_OK       ? &pair_items[j]
                                        : pair_items[j + 1].status != RF_OK ? &pair_items[j + 1]
                                                                            : NULL;
            if (bad) {
                st = rf_item_fail(items, k, bad->status, bad->error.message, err);
            } else {
                out[k].sim_ab = probs[(size_t)j * N + N - 1];
                out[k].sim_ac = probs[(size_t)(j + 1) * N + N - 1];
                out[k].prediction = out[k].sim_ab >= out[k].sim_ac ? RF_SCM_B : RF_SCM_C;
            }
            j += 2;
        }
        report_progress(p, end, n);
    }
    free(probs);
    return st;
}

/* triplets, and the caller's encodings of their documents when encs is not
 * NULL (embed mode only). */
static rf_status scm(rf_pipeline *pl, const rf_triplet *triplets, const rf_encoding *encs,
                     int32_t n, const rf_scm_params *params, rf_scm_result *out,
                     int32_t *n_documents, rf_item_status *items, rf_error *err)
{
    rf_scm_params p = params ? *params : rf_scm_default_params();
    if (n_documents)
        *n_documents = 0;
    if (n < 0)
        return rf_fail(err, RF_ERR_INPUT, "negative triplet count %d", n);
    if (p.mode != RF_SCM_EMBED && p.mode != RF_SCM_PAIR)
        return rf_fail(err, RF_ERR_INPUT, "unknown scm mode %d", (int)p.mode);
    if (encs && p.mode != RF_SCM_EMBED)
        return rf_fail(err, RF_ERR_INPUT,
                       "scm pair mode runs (A, B) and (A, C) pairs, not the documents' "
                       "encodings; use rf_scm");
    for (int32_t k = 0; k < n; k++) {
        out[k] = (rf_scm_result){.prediction = RF_SCM_FAILED, .sim_ab = NAN, .sim_ac = NAN};
        if (items)
            items[k] = (rf_item_status){.status = RF_OK};
    }
    if (n == 0)
        return RF_OK;
    return p.mode == RF_SCM_PAIR ? scm_pairs(pl, triplets, n, &p, out, items, err)
                                 : scm_embed(pl, triplets, encs, n, &p, out, n_documents,
                                             items, err);
}

rf_status rf_scm(rf_pipeline *pl, const rf_triplet *triplets, int32_t n,
                 const rf_scm_params *params, rf_scm_result *out, int32_t *n_documents,
                 rf_item_status *items, rf_error *err)
{
    return scm(pl, triplets, NULL, n, params, out, n_documents, items, err);
}

rf_status rf_scm_encodings(rf_pipeline *pl, const rf_triplet *triplets, const rf_encoding *encs,
                           int32_t n, const rf_scm_params *params, rf_scm_result *out,
                           int32_t *n_documents, rf_item_status *items, rf_error *err)
{
    return scm(pl, triplets, encs, n, params, out, n_documents, items, err);
}
