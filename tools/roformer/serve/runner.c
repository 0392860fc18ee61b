/*
 * runner.c — one library call for a batch of jobs (see runner.h). It joins
 * the jobs' texts in queue order, calls the job function once with
 * per-input statuses (so one bad input fails only its own request), then
 * hands every job its slice: vectors, probabilities and scm results are
 * copied, the fill-mask / NER / QA result structs are moved (the job frees
 * them).
 * Per-token vectors (embed_all) lie back to back, each text's rows at its
 * offset: the sum of the lengths before it.
 * The texts of scm jobs are triplets (A, B, C), so a batch of them is one
 * rf_scm call over all their triplets.
 * Every job runs the encodings its request counted (the *_encodings
 * calls): no text is tokenized twice. Cosine rerank's are two per pair,
 * query and document, which it embeds apart.
 */
#include "serve/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct serve_runner {
    const rf_model *model;
    rf_pipeline *pl;
    rf_pipeline_params params;
    rf_pipeline *windowed_pl; /* the pipeline of the last windows asked, or NULL */
    int32_t window, stride;   /* its windows */
    rf_pooling pooling;
    int32_t D; /* hidden_size */
    int32_t N; /* num_labels */
};

rf_status serve_runner_create(const rf_model *model, const rf_pipeline_params *params,
                              rf_pooling pooling, serve_runner **out, rf_error *err)
{
    *out = NULL;
    serve_runner *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err->message, sizeof err->message, "out of memory");
        return RF_ERR_NOMEM;
    }
    rf_status st = rf_pipeline_create(model, params, &r->pl, err);
    if (st != RF_OK) {
        free(r);
        return st;
    }
    const rf_hparams *hp = rf_model_hparams(model);
    r->model = model;
    r->params = *params;
    r->pooling = pooling;
    r->D = hp->hidden_size;
    r->N = hp->num_labels > 0 ? hp->num_labels : 1;
    *out = r;
    return RF_OK;
}

void serve_runner_free(serve_runner *r)
{
    if (!r)
        return;
    rf_pipeline_free(r->pl);
    rf_pipeline_free(r->windowed_pl);
    free(r);
}

/* Keeps the first k of each mask's top-K candidates (a prefix: the
 * candidates are sorted, so it is the top k). */
static void trim_top_k(rf_fill_mask_result *f, int32_t k)
{
    if (k >= f->top_k)
        return;
    for (int32_t m = 0; m < f->n_masks; m++) {
        memmove(f->ids + (size_t)m * k, f->ids + (size_t)m * f->top_k, sizeof *f->ids * k);
        memmove(f->scores + (size_t)m * k, f->scores + (size_t)m * f->top_k,
                sizeof *f->scores * k);
    }
    f->top_k = k;
}

static void fail_all(serve_job **jobs, int n, rf_status st, const rf_error *err)
{
    for (int j = 0; j < n; j++) {
        jobs[j]->status = st;
        jobs[j]->error = *err;
    }
}

/* The pipeline for jobs with these windows: the server's own without
 * windows, else one made for them (kept until other windows are asked). */
static rf_status pipeline_for(serve_runner *r, int32_t window, int32_t stride, rf_pipeline **pl,
                              rf_error *err)
{
    *pl = r->pl;
    if (!window)
        return RF_OK;
    if (!r->windowed_pl || r->window != window || r->stride != stride) {
        rf_pipeline_free(r->windowed_pl);
        r->windowed_pl = NULL;
        rf_pipeline_params p = r->params;
        p.window = window;
        p.stride = stride;
        p.max_length = 0; /* windows instead of truncation */
        rf_status st = rf_pipeline_create(r->model, &p, &r->windowed_pl, err);
        if (st != RF_OK)
            return st;
        r->window = window;
        r->stride = stride;
    }
    *pl = r->windowed_pl;
    return RF_OK;
}

double serve_runner_run(serve_runner *r, serve_job **jobs, int n)
{
    serve_kind kind = jobs[0]->kind;
    int32_t total = 0, top_k = 1, rows = 0;
    for (int j = 0; j < n; j++) {
        total += jobs[j]->n;
        if (jobs[j]->top_k > top_k)
            top_k = jobs[j]->top_k;
        for (int32_t i = 0; kind == SERVE_KIND_EMBED_ALL && i < jobs[j]->n; i++)
            rows += jobs[j]->lengths[i];
    }
    size_t T = total > 0 ? (size_t)total : 1;
    int encs_per_input = kind == SERVE_KIND_RERANK_COSINE ? 2 : 1;
    bool embeds = kind == SERVE_KIND_EMBED || kind == SERVE_KIND_EMBED_IDS;
    bool per_token = kind == SERVE_KIND_EMBED_ALL;
    size_t vector_rows = per_token ? (size_t)(rows > 0 ? rows : 1) : T;
    rf_text *texts = malloc(sizeof *texts * T);
    rf_item_status *items = malloc(sizeof *items * T);
    float *vectors = embeds || per_token ? malloc(sizeof(float) * vector_rows * r->D) : NULL;
    /* the requests' own encodings: token ids, or their texts as they were
       tokenized to be counted */
    rf_encoding *encs = malloc(sizeof *encs * T * encs_per_input);
    int32_t *offsets = per_token ? malloc(sizeof *offsets * T) : NULL;
    int32_t *lengths = per_token ? malloc(sizeof *lengths * T) : NULL;
    bool classify = kind == SERVE_KIND_CLASSIFY || kind == SERVE_KIND_LOGITS;
    bool one_score = kind == SERVE_KIND_RERANK || kind == SERVE_KIND_RERANK_COSINE;
    size_t per_input = one_score ? 1 : classify ? (size_t)r->N : 0;
    float *probs = per_input ? malloc(sizeof(float) * T * per_input) : NULL;
    rf_fill_mask_result *fill = kind == SERVE_KIND_FILL_MASK ? calloc(T, sizeof *fill) : NULL;
    rf_ner_result *ner = kind == SERVE_KIND_NER ? calloc(T, sizeof *ner) : NULL;
    rf_qa_result *qa = kind == SERVE_KIND_QA ? calloc(T, sizeof *qa) : NULL;
    rf_triplet *triplets = kind == SERVE_KIND_SCM ? calloc(T, sizeof *triplets) : NULL;
    rf_scm_result *scm = kind == SERVE_KIND_SCM ? malloc(sizeof *scm * T) : NULL;
    rf_error err = {{0}};
    rf_status st = RF_OK;
    rf_pipeline *pl = pl;
    rf_pipeline_stats before = {0}, after = {0};
    if (!(st = pipeline_for(r, jobs[0]->window, jobs[0]->stride, &pl, &err)))
        rf_pipeline_get_stats(pl, &before);
    if (st != RF_OK)
        goto done;
    if (!texts || !items || ((embeds || per_token) && !vectors) ||
        (per_input && !probs) || (kind == SERVE_KIND_FILL_MASK && !fill) ||
        (kind == SERVE_KIND_NER && !ner) || (kind == SERVE_KIND_QA && !qa) ||
        !encs ||
        (per_token && (!offsets || !lengths)) ||
        (kind == SERVE_KIND_SCM && (!triplets || !scm))) {
        snprintf(err.message, sizeof err.message, "out of memory for a batch of %d inputs", total);
        st = RF_ERR_NOMEM;
        goto done;
    }
    for (int j = 0, o = 0, row = 0; j < n; o += jobs[j]->n, j++) {
        memcpy(encs + (size_t)o * encs_per_input, jobs[j]->encs,
               sizeof *encs * jobs[j]->n * encs_per_input);
        if (jobs[j]->texts) /* NULL for token ids */
            memcpy(texts + o, jobs[j]->texts, sizeof *texts * jobs[j]->n);
        for (int32_t i = 0; per_token && i < jobs[j]->n; row += jobs[j]->lengths[i], i++) {
            offsets[o + i] = row;
            lengths[o + i] = jobs[j]->lengths[i];
        }
    }

    st = rf_pipeline_set_truncation_side(pl, jobs[0]->truncation_side, &err);
    if (st != RF_OK)
        goto done;
    rf_rerank_params rerank = rf_rerank_default_params();
    rerank.raw_scores = jobs[0]->raw_scores;
    switch (kind) {
    case SERVE_KIND_RERANK:
        st = rf_rerank_score_encodings(pl, encs, total, &rerank, probs, items, &err);
        break;
    case SERVE_KIND_RERANK_COSINE:
        st = rf_similarity_encodings(pl, encs, total, r->pooling, probs, items, &err);
        break;
    case SERVE_KIND_CLASSIFY:
        st = rf_classify_encodings(pl, encs, total, probs, items, &err);
        break;
    case SERVE_KIND_LOGITS:
        st = rf_classify_logits_encodings(pl, encs, total, probs, items, &err);
        break;
    case SERVE_KIND_FILL_MASK:
        st = rf_fill_mask_encodings(pl, texts, encs, total, top_k, fill, items, &err);
        break;
    case SERVE_KIND_NER:
        st = rf_token_classify_encodings(pl, texts, encs, total, ner, items, &err);
        break;
    case SERVE_KIND_QA:
        st = rf_qa_encodings(pl, texts, encs, total, jobs[0]->max_answer_tokens,
                             jobs[0]->doc_stride, qa, items, &err);
        break;
    case SERVE_KIND_EMBED:
        st = rf_embed_windowed_encodings(pl, encs, total, r->pooling, false, vectors, items, &err);
        break;
    case SERVE_KIND_EMBED_IDS:
    case SERVE_KIND_EMBED_ALL:
        st = per_token ? rf_token_embeddings(pl, encs, total, vectors, &err)
                       : rf_embed_encodings(pl, encs, total, r->pooling, vectors, &err);
        for (int32_t i = 0; st == RF_OK && i < total; i++)
            items[i] = (rf_item_status){.status = RF_OK};
        break;
    case SERVE_KIND_SCM: {
        rf_scm_params params = rf_scm_default_params();
        params.pooling = r->pooling;
        for (int32_t k = 0; k < total / 3; k++)
            for (int s = 0; s < 3; s++) {
                triplets[k].doc[s] = texts[3 * k + s].text;
                triplets[k].len[s] = texts[3 * k + s].text_len;
            }
        st = rf_scm_encodings(pl, triplets, encs, total / 3, &params, scm, NULL, items, &err);
        break;
    }
    }
    if (st != RF_OK)
        goto done;

    /* each job's slice */
    for (int j = 0, o = 0; j < n; o += jobs[j]->n, j++) {
        serve_job *job = jobs[j];
        job->status = RF_OK;
        if (scm) {
            memcpy(job->items, items + o / 3, sizeof *items * (job->n / 3));
            memcpy(job->scm, scm + o / 3, sizeof *scm * (job->n / 3));
            continue;
        }
        memcpy(job->items, items + o, sizeof *items * job->n);
        if (vectors && per_token && job->n > 0) {
            int32_t first = offsets[o], count = 0;
            for (int32_t i = 0; i < job->n; i++)
                count += job->lengths[i];
            memcpy(job->vectors, vectors + (size_t)first * r->D,
                   sizeof(float) * (size_t)count * r->D);
        } else if (vectors) {
            memcpy(job->vectors, vectors + (size_t)o * r->D, sizeof(float) * job->n * r->D);
        }
        if (probs)
            memcpy(job->probs, probs + (size_t)o * per_input,
                   sizeof(float) * job->n * per_input);
        for (int32_t i = 0; i < job->n; i++) {
            if (fill) {
                job->fill[i] = fill[o + i];
                fill[o + i] = (rf_fill_mask_result){0};
                trim_top_k(&job->fill[i], job->top_k);
            }
            if (ner) {
                job->ner[i] = ner[o + i];
                ner[o + i] = (rf_ner_result){0};
            }
            if (qa)
                job->qa[i] = qa[o + i];
        }
    }
done:
    if (st != RF_OK)
        fail_all(jobs, n, st, &err);
    for (int32_t i = 0; i < total; i++) { /* left only when the call failed */
        if (fill)
            rf_fill_mask_result_free(&fill[i]);
        if (ner)
            rf_ner_result_free(&ner[i]);
    }
    free(texts);
    free(items);
    free(vectors);
    free(encs);
    free(offsets);
    free(lengths);
    free(probs);
    free(fill);
    free(ner);
    free(qa);
    free(triplets);
    free(scm);
    if (pl)
        rf_pipeline_get_stats(pl, &after);
    return after.forward_seconds - before.forward_seconds;
}
