/*
 * units.c — a batch's joined inputs and results, and each unit's key and
 * value for the cache (see units.h).
 *
 * Keys are int32 fields then bytes, in a fixed order per job; lengths
 * come before what they measure, so no two different inputs write the
 * same key. Values are the result's bytes: floats and plain structs as
 * they are, fill-mask and NER results field by field:
 *
 *   fill-mask  n_masks, top_k, positions[n_masks], ids[n_masks][top_k],
 *              scores[n_masks][top_k], whether it has a sequence, the
 *              sequence with its NUL
 *   NER        n_tokens, tokens[n_tokens], n_entities, then per entity its
 *              type as (label index, offset into that label), then the
 *              entity with its type pointer cleared
 */
#include "serve/units.h"

#include <stdlib.h>
#include <string.h>

int serve_units_inputs_per_unit(serve_kind kind)
{
    return kind == SERVE_KIND_SCM ? 3 : 1;
}

int serve_units_encodings_per_input(serve_kind kind)
{
    return kind == SERVE_KIND_RERANK_COSINE ? 2 : 1;
}

size_t serve_units_probs_per_input(const serve_units *u)
{
    switch (u->kind) {
    case SERVE_KIND_CLASSIFY:
    case SERVE_KIND_LOGITS: return (size_t)u->N;
    case SERVE_KIND_RERANK:
    case SERVE_KIND_RERANK_COSINE: return 1;
    default: return 0;
    }
}

static bool embeds(serve_kind kind)
{
    return kind == SERVE_KIND_EMBED || kind == SERVE_KIND_EMBED_IDS;
}

bool serve_units_alloc(serve_units *u, serve_kind kind, int32_t n, int32_t rows, int32_t D,
                       int32_t N)
{
    size_t T = n > 0 ? (size_t)n : 1;
    *u = (serve_units){.kind = kind, .D = D, .N = N, .n = n,
                       .units = n / serve_units_inputs_per_unit(kind), .rows = rows};
    bool per_token = kind == SERVE_KIND_EMBED_ALL, scm = kind == SERVE_KIND_SCM;
    size_t vector_rows = per_token ? (size_t)(rows > 0 ? rows : 1) : T;
    u->texts = calloc(T, sizeof *u->texts);
    u->encs = calloc(T * (size_t)serve_units_encodings_per_input(kind), sizeof *u->encs);
    u->items = calloc(T, sizeof *u->items);
    if (embeds(kind) || per_token)
        u->vectors = malloc(sizeof(float) * vector_rows * (size_t)D);
    if (per_token) {
        u->offsets = malloc(sizeof *u->offsets * T);
        u->lengths = malloc(sizeof *u->lengths * T);
    }
    size_t P = serve_units_probs_per_input(u);
    if (P)
        u->probs = malloc(sizeof(float) * T * P);
    if (kind == SERVE_KIND_FILL_MASK)
        u->fill = calloc(T, sizeof *u->fill);
    if (kind == SERVE_KIND_NER)
        u->ner = calloc(T, sizeof *u->ner);
    if (kind == SERVE_KIND_QA)
        u->qa = calloc(T, sizeof *u->qa);
    if (scm) {
        u->triplets = calloc(T, sizeof *u->triplets);
        u->scm = calloc(T, sizeof *u->scm);
    }
    return u->texts && u->encs && u->items && (!(embeds(kind) || per_token) || u->vectors) &&
           (!per_token || (u->offsets && u->lengths)) && (!P || u->probs) &&
           (kind != SERVE_KIND_FILL_MASK || u->fill) && (kind != SERVE_KIND_NER || u->ner) &&
           (kind != SERVE_KIND_QA || u->qa) && (!scm || (u->triplets && u->scm));
}

void serve_units_free(serve_units *u)
{
    for (int32_t i = 0; i < u->n; i++) {
        if (u->fill)
            rf_fill_mask_result_free(&u->fill[i]);
        if (u->ner)
            rf_ner_result_free(&u->ner[i]);
    }
    free(u->texts);
    free(u->encs);
    free(u->items);
    free(u->vectors);
    free(u->offsets);
    free(u->lengths);
    free(u->probs);
    free(u->fill);
    free(u->ner);
    free(u->qa);
    free(u->triplets);
    free(u->scm);
    *u = (serve_units){0};
}

/* ==== Bytes ==== */

void serve_bytes_free(serve_bytes *b)
{
    free(b->p);
    *b = (serve_bytes){0};
}

static void put(serve_bytes *b, const void *p, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *grown = realloc(b->p, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->p = grown;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void put_i32(serve_bytes *b, int32_t v)
{
    put(b, &v, sizeof v);
}

/* A reader over a value. */
typedef struct {
    const unsigned char *p, *end;
} reader;

static const void *take(reader *r, size_t n)
{
    const unsigned char *at = r->p;
    r->p += n;
    return at;
}

static int32_t take_i32(reader *r)
{
    int32_t v;
    memcpy(&v, take(r, sizeof v), sizeof v);
    return v;
}

/* ==== Keys ==== */

static void key_encoding(const rf_encoding *e, serve_bytes *key)
{
    put_i32(key, e->n);
    put(key, e->ids, sizeof *e->ids * (size_t)e->n);
    put(key, e->type_ids, sizeof *e->type_ids * (size_t)e->n);
}

static void key_text(const rf_text *t, serve_bytes *key)
{
    put_i32(key, (int32_t)t->text_len);
    put(key, t->text, t->text_len);
    put_i32(key, t->pair ? (int32_t)t->pair_len : -1);
    if (t->pair)
        put(key, t->pair, t->pair_len);
}

void serve_units_key(const serve_units *u, int32_t i, const serve_job *job,
                     const serve_key_context *ctx, serve_bytes *key)
{
    size_t id_len = strlen(ctx->load_id);
    put_i32(key, (int32_t)id_len);
    put(key, ctx->load_id, id_len);
    const int32_t fields[] = {ctx->compute, u->kind, ctx->pooling, ctx->max_length,
                              job->truncation_side, job->window, job->stride};
    put(key, fields, sizeof fields);
    switch (u->kind) {
    case SERVE_KIND_RERANK: put_i32(key, job->raw_scores); break;
    case SERVE_KIND_FILL_MASK: put_i32(key, job->top_k); break;
    case SERVE_KIND_QA:
        put_i32(key, job->max_answer_tokens);
        put_i32(key, job->doc_stride);
        break;
    default: break;
    }
    int per_unit = serve_units_inputs_per_unit(u->kind) * serve_units_encodings_per_input(u->kind);
    for (int k = 0; k < per_unit; k++)
        key_encoding(&u->encs[(size_t)i * per_unit + k], key);
    if (u->kind == SERVE_KIND_FILL_MASK || u->kind == SERVE_KIND_NER || u->kind == SERVE_KIND_QA)
        key_text(&u->texts[i], key);
}

/* ==== Values ==== */

static void pack_fill(const rf_fill_mask_result *f, int32_t top_k, serve_bytes *v)
{
    int32_t k = top_k < f->top_k ? top_k : f->top_k;
    put_i32(v, f->n_masks);
    put_i32(v, k);
    put(v, f->positions, sizeof *f->positions * (size_t)f->n_masks);
    for (int32_t m = 0; m < f->n_masks; m++)
        put(v, f->ids + (size_t)m * f->top_k, sizeof *f->ids * (size_t)k);
    for (int32_t m = 0; m < f->n_masks; m++)
        put(v, f->scores + (size_t)m * f->top_k, sizeof *f->scores * (size_t)k);
    put_i32(v, f->sequence != NULL);
    if (f->sequence)
        put(v, f->sequence, strlen(f->sequence) + 1);
}

static bool unpack_fill(reader *r, rf_fill_mask_result *f)
{
    int32_t n_masks = take_i32(r), k = take_i32(r);
    size_t cells = (size_t)n_masks * k;
    *f = (rf_fill_mask_result){.n_masks = n_masks, .top_k = k,
                               .positions = malloc(sizeof(int32_t) * (n_masks ? n_masks : 1)),
                               .ids = malloc(sizeof(int32_t) * (cells ? cells : 1)),
                               .scores = malloc(sizeof(float) * (cells ? cells : 1))};
    if (!f->positions || !f->ids || !f->scores) {
        rf_fill_mask_result_free(f);
        return false;
    }
    memcpy(f->positions, take(r, sizeof(int32_t) * n_masks), sizeof(int32_t) * n_masks);
    memcpy(f->ids, take(r, sizeof(int32_t) * cells), sizeof(int32_t) * cells);
    memcpy(f->scores, take(r, sizeof(float) * cells), sizeof(float) * cells);
    if (take_i32(r) && !(f->sequence = strndup((const char *)r->p, (size_t)(r->end - r->p)))) {
        rf_fill_mask_result_free(f);
        return false;
    }
    return true;
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

static void pack_ner(const rf_ner_result *e, const rf_model *model, serve_bytes *v)
{
    put_i32(v, e->n_tokens);
    put(v, e->tokens, sizeof *e->tokens * (size_t)e->n_tokens);
    put_i32(v, e->n_entities);
    for (int32_t k = 0; k < e->n_entities; k++) {
        rf_entity ent = e->entities[k];
        int32_t label, offset;
        entity_type(model, ent.type, &label, &offset);
        put_i32(v, label);
        put_i32(v, offset);
        ent.type = NULL;
        put(v, &ent, sizeof ent);
    }
}

static bool unpack_ner(reader *r, const rf_model *model, rf_ner_result *e)
{
    int32_t n_tokens = take_i32(r);
    *e = (rf_ner_result){.n_tokens = n_tokens,
                         .tokens = malloc(sizeof(rf_token_tag) * (n_tokens ? n_tokens : 1))};
    if (!e->tokens)
        return false;
    memcpy(e->tokens, take(r, sizeof(rf_token_tag) * n_tokens), sizeof(rf_token_tag) * n_tokens);
    e->n_entities = take_i32(r);
    e->entities = malloc(sizeof(rf_entity) * (e->n_entities ? e->n_entities : 1));
    if (!e->entities) {
        rf_ner_result_free(e);
        return false;
    }
    for (int32_t k = 0; k < e->n_entities; k++) {
        int32_t label = take_i32(r), offset = take_i32(r);
        memcpy(&e->entities[k], take(r, sizeof(rf_entity)), sizeof(rf_entity));
        const char *s = label >= 0 ? rf_model_label(model, label) : NULL;
        e->entities[k].type = s ? s + offset : NULL;
    }
    return true;
}

void serve_units_pack(const serve_units *u, int32_t i, int32_t top_k, const rf_model *model,
                      serve_bytes *value)
{
    size_t D = (size_t)u->D, P = serve_units_probs_per_input(u);
    switch (u->kind) {
    case SERVE_KIND_EMBED:
    case SERVE_KIND_EMBED_IDS: put(value, u->vectors + (size_t)i * D, sizeof(float) * D); break;
    case SERVE_KIND_EMBED_ALL:
        put(value, u->vectors + (size_t)u->offsets[i] * D,
            sizeof(float) * (size_t)u->lengths[i] * D);
        break;
    case SERVE_KIND_CLASSIFY:
    case SERVE_KIND_LOGITS:
    case SERVE_KIND_RERANK:
    case SERVE_KIND_RERANK_COSINE: put(value, u->probs + (size_t)i * P, sizeof(float) * P); break;
    case SERVE_KIND_QA: put(value, &u->qa[i], sizeof u->qa[i]); break;
    case SERVE_KIND_SCM: put(value, &u->scm[i], sizeof u->scm[i]); break;
    case SERVE_KIND_FILL_MASK: pack_fill(&u->fill[i], top_k, value); break;
    case SERVE_KIND_NER: pack_ner(&u->ner[i], model, value); break;
    }
}

bool serve_units_unpack(serve_units *u, int32_t i, const rf_model *model, const void *value,
                        size_t len)
{
    reader r = {.p = value, .end = (const unsigned char *)value + len};
    size_t D = (size_t)u->D;
    u->items[i] = (rf_item_status){.status = RF_OK};
    switch (u->kind) {
    case SERVE_KIND_EMBED:
    case SERVE_KIND_EMBED_IDS: memcpy(u->vectors + (size_t)i * D, value, len); return true;
    case SERVE_KIND_EMBED_ALL:
        memcpy(u->vectors + (size_t)u->offsets[i] * D, value, len);
        return true;
    case SERVE_KIND_CLASSIFY:
    case SERVE_KIND_LOGITS:
    case SERVE_KIND_RERANK:
    case SERVE_KIND_RERANK_COSINE:
        memcpy(u->probs + (size_t)i * serve_units_probs_per_input(u), value, len);
        return true;
    case SERVE_KIND_QA: memcpy(&u->qa[i], value, len); return true;
    case SERVE_KIND_SCM: memcpy(&u->scm[i], value, len); return true;
    case SERVE_KIND_FILL_MASK:
        rf_fill_mask_result_free(&u->fill[i]);
        return unpack_fill(&r, &u->fill[i]);
    case SERVE_KIND_NER:
        rf_ner_result_free(&u->ner[i]);
        return unpack_ner(&r, model, &u->ner[i]);
    }
    return false;
}

void serve_units_move(serve_units *dst, int32_t to, serve_units *src, int32_t from)
{
    size_t D = (size_t)dst->D, P = serve_units_probs_per_input(dst);
    dst->items[to] = src->items[from];
    if (dst->kind == SERVE_KIND_EMBED_ALL)
        memcpy(dst->vectors + (size_t)dst->offsets[to] * D,
               src->vectors + (size_t)src->offsets[from] * D,
               sizeof(float) * (size_t)src->lengths[from] * D);
    else if (dst->vectors)
        memcpy(dst->vectors + (size_t)to * D, src->vectors + (size_t)from * D, sizeof(float) * D);
    if (P)
        memcpy(dst->probs + (size_t)to * P, src->probs + (size_t)from * P, sizeof(float) * P);
    if (dst->qa)
        dst->qa[to] = src->qa[from];
    if (dst->scm)
        dst->scm[to] = src->scm[from];
    if (dst->fill) {
        rf_fill_mask_result_free(&dst->fill[to]);
        dst->fill[to] = src->fill[from];
        src->fill[from] = (rf_fill_mask_result){0};
    }
    if (dst->ner) {
        rf_ner_result_free(&dst->ner[to]);
        dst->ner[to] = src->ner[from];
        src->ner[from] = (rf_ner_result){0};
    }
}
