/*
 * kinds_owned.c — fill-mask and NER, whose results own memory (see
 * kinds_owned.h). Their cache values, field by field:
 *
 *   fill-mask  n_masks, top_k, positions[n_masks], ids[n_masks][top_k],
 *              scores[n_masks][top_k], whether it has a sequence, the
 *              sequence with its NUL
 *   NER        n_tokens, tokens[n_tokens], n_entities, then per entity its
 *              type as (label index, offset into that label), then the
 *              entity with its type pointer cleared
 */
#include "serve/kinds_owned.h"

#include <stdlib.h>
#include <string.h>

static size_t fill_result(int32_t D, int32_t N)
{
    (void)D;
    (void)N;
    return sizeof(rf_fill_mask_result);
}

static size_t ner_result(int32_t D, int32_t N)
{
    (void)D;
    (void)N;
    return sizeof(rf_ner_result);
}

/* ==== Fill-mask ==== */

static rf_status run_fill_mask(const serve_call *c, rf_error *err)
{
    return rf_fill_mask_encodings(c->pl, c->texts, c->encs, c->n, c->top_k, c->out->rows,
                                  c->out->items, err);
}

/* The largest top_k runs for the batch and each job keeps its own: it is
 * in the key. */
static void fill_mask_options(const serve_job *job, serve_bytes *key)
{
    serve_bytes_put_i32(key, job->top_k);
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

static void move_fill_mask(serve_results *dst, int32_t to, serve_results *src, int32_t from,
                           int32_t top_k)
{
    rf_fill_mask_result *d = (rf_fill_mask_result *)dst->rows + dst->first[to];
    rf_fill_mask_result *s = (rf_fill_mask_result *)src->rows + src->first[from];
    rf_fill_mask_result_free(d);
    *d = *s;
    *s = (rf_fill_mask_result){0};
    trim_top_k(d, top_k);
}

static void pack_fill_mask(const serve_results *r, int32_t i, int32_t top_k,
                           const rf_model *model, serve_bytes *v)
{
    (void)model;
    const rf_fill_mask_result *f = (const rf_fill_mask_result *)r->rows + r->first[i];
    int32_t k = top_k < f->top_k ? top_k : f->top_k;
    serve_bytes_put_i32(v, f->n_masks);
    serve_bytes_put_i32(v, k);
    serve_bytes_put(v, f->positions, sizeof *f->positions * (size_t)f->n_masks);
    for (int32_t m = 0; m < f->n_masks; m++)
        serve_bytes_put(v, f->ids + (size_t)m * f->top_k, sizeof *f->ids * (size_t)k);
    for (int32_t m = 0; m < f->n_masks; m++)
        serve_bytes_put(v, f->scores + (size_t)m * f->top_k, sizeof *f->scores * (size_t)k);
    serve_bytes_put_i32(v, f->sequence != NULL);
    if (f->sequence)
        serve_bytes_put(v, f->sequence, strlen(f->sequence) + 1);
}

static bool unpack_fill_mask(serve_results *res, int32_t i, const rf_model *model,
                             const void *value, size_t len)
{
    (void)model;
    serve_reader r = {.p = value, .end = (const unsigned char *)value + len};
    rf_fill_mask_result *f = (rf_fill_mask_result *)res->rows + res->first[i];
    rf_fill_mask_result_free(f);
    int32_t n_masks = serve_reader_take_i32(&r), k = serve_reader_take_i32(&r);
    size_t cells = (size_t)n_masks * k;
    *f = (rf_fill_mask_result){.n_masks = n_masks, .top_k = k,
                               .positions = malloc(sizeof(int32_t) * (n_masks ? n_masks : 1)),
                               .ids = malloc(sizeof(int32_t) * (cells ? cells : 1)),
                               .scores = malloc(sizeof(float) * (cells ? cells : 1))};
    if (!f->positions || !f->ids || !f->scores) {
        rf_fill_mask_result_free(f);
        return false;
    }
    memcpy(f->positions, serve_reader_take(&r, sizeof(int32_t) * n_masks),
           sizeof(int32_t) * n_masks);
    memcpy(f->ids, serve_reader_take(&r, sizeof(int32_t) * cells), sizeof(int32_t) * cells);
    memcpy(f->scores, serve_reader_take(&r, sizeof(float) * cells), sizeof(float) * cells);
    if (serve_reader_take_i32(&r) &&
        !(f->sequence = strndup((const char *)r.p, (size_t)(r.end - r.p)))) {
        rf_fill_mask_result_free(f);
        return false;
    }
    return true;
}

static void release_fill_mask(void *rows, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        rf_fill_mask_result_free((rf_fill_mask_result *)rows + i);
}

/* ==== NER ==== */

static rf_status run_ner(const serve_call *c, rf_error *err)
{
    return rf_token_classify_encodings(c->pl, c->texts, c->encs, c->n, c->out->rows,
                                       c->out->items, err);
}

static void no_options(const serve_job *job, serve_bytes *key)
{
    (void)job;
    (void)key;
}

static void move_ner(serve_results *dst, int32_t to, serve_results *src, int32_t from,
                     int32_t top_k)
{
    (void)top_k;
    rf_ner_result *d = (rf_ner_result *)dst->rows + dst->first[to];
    rf_ner_result *s = (rf_ner_result *)src->rows + src->first[from];
    rf_ner_result_free(d);
    *d = *s;
    *s = (rf_ner_result){0};
}

/* The label whose text `type` points into, and where: an entity's type
 * is a suffix of one of the model's labels. */
static void entity_type(const rf_model *model, const char *type, int32_t *label,
                        int32_t *offset)
{
    int32_t N = rf_model_hparams(model)->num_labels;
    for (int32_t l = 0; l < N; l++) {
        const char *s = rf_model_label(model, l);
        if (s && type >= s && type <= s + strlen(s)) {
            *label = l;
            *offset = (int32_t)(type - s);
            return;
        }
    }
    *label = -1;
    *offset = 0;
}

static void pack_ner(const serve_results *r, int32_t i, int32_t top_k, const rf_model *model,
                     serve_bytes *v)
{
    (void)top_k;
    const rf_ner_result *e = (const rf_ner_result *)r->rows + r->first[i];
    serve_bytes_put_i32(v, e->n_tokens);
    serve_bytes_put(v, e->tokens, sizeof *e->tokens * (size_t)e->n_tokens);
    serve_bytes_put_i32(v, e->n_entities);
    for (int32_t k = 0; k < e->n_entities; k++) {
        rf_entity ent = e->entities[k];
        int32_t label, offset;
        entity_type(model, ent.type, &label, &offset);
        serve_bytes_put_i32(v, label);
        serve_bytes_put_i32(v, offset);
        ent.type = NULL;
        serve_bytes_put(v, &ent, sizeof ent);
    }
}

static bool unpack_ner(serve_results *res, int32_t i, const rf_model *model, const void *value,
                       size_t len)
{
    serve_reader r = {.p = value, .end = (const unsigned char *)value + len};
    rf_ner_result *e = (rf_ner_result *)res->rows + res->first[i];
    rf_ner_result_free(e);
    int32_t n_tokens = serve_reader_take_i32(&r);
    *e = (rf_ner_result){.n_tokens = n_tokens,
                         .tokens = malloc(sizeof(rf_token_tag) * (n_tokens ? n_tokens : 1))};
    if (!e->tokens)
        return false;
    memcpy(e->tokens, serve_reader_take(&r, sizeof(rf_token_tag) * n_tokens),
           sizeof(rf_token_tag) * n_tokens);
    e->n_entities = serve_reader_take_i32(&r);
    e->entities = malloc(sizeof(rf_entity) * (e->n_entities ? e->n_entities : 1));
    if (!e->entities) {
        rf_ner_result_free(e);
        return false;
    }
    for (int32_t k = 0; k < e->n_entities; k++) {
        int32_t label = serve_reader_take_i32(&r), offset = serve_reader_take_i32(&r);
        memcpy(&e->entities[k], serve_reader_take(&r, sizeof(rf_entity)), sizeof(rf_entity));
        const char *s = label >= 0 ? rf_model_label(model, label) : NULL;
        e->entities[k].type = s ? s + offset : NULL;
    }
    return true;
}

static void release_ner(void *rows, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        rf_ner_result_free((rf_ner_result *)rows + i);
}

/* ==== The rows ==== */

const serve_kind_ops serve_kind_fill_mask =
    SERVE_KIND_ROW(SERVE_KIND_FILL_MASK, "fill_mask", 1, 1, false, true, fill_result,
                   run_fill_mask, fill_mask_options, move_fill_mask, pack_fill_mask,
                   unpack_fill_mask, release_fill_mask);
const serve_kind_ops serve_kind_ner =
    SERVE_KIND_ROW(SERVE_KIND_NER, "ner", 1, 1, false, true, ner_result, run_ner, no_options,
                   move_ner, pack_ner, unpack_ner, release_ner);
