/*
 * model.c — loading a model: a GGUF file (memory-mapped, read-only), an
 * HF checkpoint directory (converted in memory first), or "hf:OWNER/NAME"
 * (the GGUF that rf_hub_pull keeps in its cache).
 *
 * Everything in the file is checked before use: the GGUF structure by
 * gguf.c, then here the architecture, every hyper-parameter's type and
 * range, the vocab and dictionary arrays, and each tensor's presence, type
 * and shape against the table in tensor_map.c. f32 tensors are used in
 * place. Of the q8, f16 and bf16 ones, the layers' matrices and the word
 * embeddings stay as stored (kept_stored: packed or widened when a context
 * needs them, read a row at a time); the rest are widened once into one
 * f32 block.
 * Keys and tensors: models/README.md.
 */
#include "model/model.h"

#include "formats/convert.h"
#include "base/error.h"
#include "formats/gguf.h"
#include "formats/hf_config.h"
#include "formats/mapped_file.h"
#include "formats/st_config.h"
#include "formats/tensor_map.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_DIM (1 << 24)
#define MAX_LAYERS 1024

/* ==== Metadata ==== */

typedef struct {
    const rf_gguf *g;
    const char *what;
    rf_error *err;
} meta;

static const rf_gguf_kv *need(meta *m, const char *key, rf_gguf_type type, rf_status *st)
{
    const rf_gguf_kv *kv = rf_gguf_find_kv(m->g, key);
    if (!kv)
        *st = rf_fail(m->err, RF_ERR_FORMAT, "%s: missing key '%s'", m->what, key);
    else if (kv->type != type)
        *st = rf_fail(m->err, RF_ERR_FORMAT, "%s: key '%s' is %s, expected %s", m->what, key,
                      rf_gguf_type_name(kv->type), rf_gguf_type_name(type));
    else
        return kv;
    return NULL;
}

static rf_status get_u32(meta *m, const char *key, int32_t lo, int32_t hi, int32_t *out)
{
    rf_status st = RF_OK;
    const rf_gguf_kv *kv = need(m, key, RF_GGUF_UINT32, &st);
    if (!kv)
        return st;
    if (kv->v.u < (uint64_t)lo || kv->v.u > (uint64_t)hi)
        return rf_fail(m->err, RF_ERR_FORMAT, "%s: key '%s' = %llu is outside [%d, %d]", m->what,
                       key, (unsigned long long)kv->v.u, lo, hi);
    *out = (int32_t)kv->v.u;
    return RF_OK;
}

static rf_status get_bool(meta *m, const char *key, bool *out)
{
    rf_status st = RF_OK;
    const rf_gguf_kv *kv = need(m, key, RF_GGUF_BOOL, &st);
    if (kv)
        *out = kv->v.u != 0;
    return st;
}

/* A string key copied into buf (short names only). */
static rf_status get_name(meta *m, const char *key, char *buf, size_t size)
{
    rf_status st = RF_OK;
    const rf_gguf_kv *kv = need(m, key, RF_GGUF_STRING, &st);
    if (!kv)
        return st;
    if (kv->v.str.len >= size || memchr(kv->v.str.ptr, '\0', kv->v.str.len))
        return rf_fail(m->err, RF_ERR_FORMAT, "%s: key '%s' has an unknown value", m->what, key);
    memcpy(buf, kv->v.str.ptr, kv->v.str.len);
    buf[kv->v.str.len] = '\0';
    return RF_OK;
}

static rf_status get_activation(meta *m, const char *key, rf_activation *out)
{
    char name[32];
    rf_status st = get_name(m, key, name, sizeof name);
    if (!st && !rf_activation_from_name(name, out))
        st = rf_fail(m->err, RF_ERR_UNSUPPORTED, "%s: %s '%s' is not supported", m->what, key, name);
    return st;
}

/* A string array copied into one block of NUL-terminated strings:
 * (*out)[0] is the block, free((*out)[0]) then free(*out). */
static rf_status copy_strings(meta *m, const rf_gguf_kv *kv, char ***out, uint32_t **lens_out)
{
    uint64_t n = kv->arr_n, total = 0;
    const char **ptrs = malloc((n ? n : 1) * sizeof *ptrs);
    uint32_t *lens = malloc((n ? n : 1) * sizeof *lens);
    char **strs = NULL;
    char *block = NULL;
    rf_status st = RF_OK;
    if (!ptrs || !lens)
        goto oom;
    rf_gguf_array_strings(kv, ptrs, lens);
    for (uint64_t i = 0; i < n; i++)
        total += lens[i] + 1u;
    strs = malloc((n ? n : 1) * sizeof *strs);
    block = malloc(total ? total : 1);
    if (!strs || !block)
        goto oom;
    char *p = block;
    strs[0] = block;
    for (uint64_t i = 0; i < n; i++) {
        strs[i] = p;
        memcpy(p, ptrs[i], lens[i]);
        p[lens[i]] = '\0';
        p += lens[i] + 1;
    }
    *out = strs;
    strs = NULL;
    block = NULL;
    if (lens_out) {
        *lens_out = lens;
        lens = NULL;
    }
    goto done;
oom:
    st = rf_fail(m->err, RF_ERR_NOMEM, "%s: out of memory", m->what);
done:
    free(ptrs);
    free(lens);
    free(strs);
    free(block);
    return st;
}

static void free_strings(char **strs)
{
    if (strs)
        free(strs[0]);
    free(strs);
}

static rf_status read_hparams(meta *m, rf_hparams *hp)
{
    char name[32];
    rf_status st;
    const rf_gguf_kv *kv;
    if ((st = get_name(m, "general.architecture", name, sizeof name)))
        return st;
    if (strcmp(name, "roformer"))
        return rf_fail(m->err, RF_ERR_UNSUPPORTED, "%s: architecture '%s' is not roformer", m->what,
                       name);
    if ((st = get_u32(m, "roformer.vocab_size", 1, MAX_DIM, &hp->vocab_size)) ||
        (st = get_u32(m, "roformer.embedding_length", 1, MAX_DIM, &hp->hidden_size)) ||
        (st = get_u32(m, "roformer.token_embedding_length", 1, MAX_DIM, &hp->embedding_size)) ||
        (st = get_u32(m, "roformer.block_count", 1, MAX_LAYERS, &hp->num_layers)) ||
        (st = get_u32(m, "roformer.feed_forward_length", 1, MAX_DIM, &hp->intermediate_size)) ||
        (st = get_u32(m, "roformer.attention.head_count", 1, MAX_DIM, &hp->num_heads)) ||
        (st = get_u32(m, "roformer.context_length", 1, RF_MAX_POSITION, &hp->max_position)) ||
        (st = get_u32(m, "roformer.token_type_count", 1, MAX_DIM, &hp->type_vocab_size)) ||
        (st = get_activation(m, "roformer.hidden_act", &hp->hidden_act)) ||
        (st = get_bool(m, "roformer.rotary_value", &hp->rotary_value)) ||
        (st = get_bool(m, "roformer.pooler", &hp->has_pooler)) ||
        (st = get_bool(m, "tokenizer.do_lower_case", &hp->do_lower_case)))
        return st;
    if (hp->hidden_size % hp->num_heads || (hp->hidden_size / hp->num_heads) % 2)
        return rf_fail(m->err, RF_ERR_FORMAT, "%s: hidden size %d is not %d heads of an even size",
                       m->what, hp->hidden_size, hp->num_heads);
    if (!(kv = need(m, "roformer.attention.layer_norm_epsilon", RF_GGUF_FLOAT32, &st)))
        return st;
    if (!(kv->v.f > 0 && kv->v.f < 1))
        return rf_fail(m->err, RF_ERR_FORMAT, "%s: layer_norm_epsilon must be in (0, 1)", m->what);
    hp->layer_norm_eps = (float)kv->v.f;
    /* RoFormer-v2's two keys; files written before they existed are v1 */
    hp->norm_type = RF_NORM_LAYER;
    hp->use_bias = true;
    if (rf_gguf_find_kv(m->g, "roformer.norm_type")) {
        if ((st = get_name(m, "roformer.norm_type", name, sizeof name)))
            return st;
        if (!rf_norm_type_from_name(name, &hp->norm_type))
            return rf_fail(m->err, RF_ERR_UNSUPPORTED, "%s: norm_type '%s' is not supported",
                           m->what, name);
    }
    if (rf_gguf_find_kv(m->g, "roformer.use_bias") &&
        (st = get_bool(m, "roformer.use_bias", &hp->use_bias)))
        return st;
    if (!(kv = need(m, "roformer.rope.freq_base", RF_GGUF_FLOAT32, &st)))
        return st;
    if (kv->v.f != 10000.0)
        return rf_fail(m->err, RF_ERR_UNSUPPORTED, "%s: rope.freq_base %g is not 10000", m->what,
                       kv->v.f);
    /* the checkpoint's default rope scaling, when its config carried one */
    hp->rope_scaling = RF_ROPE_SCALING_NONE;
    hp->rope_factor = 1.0f;
    if (rf_gguf_find_kv(m->g, "roformer.rope.scaling.type")) {
        if ((st = get_name(m, "roformer.rope.scaling.type", name, sizeof name)))
            return st;
        if (!rf_rope_scaling_from_name(name, &hp->rope_scaling))
            return rf_fail(m->err, RF_ERR_UNSUPPORTED, "%s: rope.scaling.type '%s' is not supported",
                           m->what, name);
        if (!(kv = need(m, "roformer.rope.scaling.factor", RF_GGUF_FLOAT32, &st)))
            return st;
        if (!(kv->v.f > 0 && kv->v.f <= RF_MAX_ROPE_FACTOR))
            return rf_fail(m->err, RF_ERR_FORMAT, "%s: rope.scaling.factor %g is not in (0, %d]",
                           m->what, kv->v.f, RF_MAX_ROPE_FACTOR);
        hp->rope_factor = (float)kv->v.f;
    }
    if (hp->has_pooler && (st = get_activation(m, "roformer.pooler.activation", &hp->pooler_act)))
        return st;
    if ((st = get_name(m, "roformer.head", name, sizeof name)))
        return st;
    if (!rf_head_from_name(name, &hp->head))
        return rf_fail(m->err, RF_ERR_UNSUPPORTED, "%s: head '%s' is not supported", m->what, name);
    if (hp->norm_type == RF_NORM_RMS && hp->head == RF_HEAD_MLM &&
        hp->embedding_size != hp->hidden_size)
        return rf_fail(m->err, RF_ERR_FORMAT,
                       "%s: a RoFormer-v2 MLM head needs token_embedding_length %d == embedding_length %d",
                       m->what, hp->embedding_size, hp->hidden_size);
    if ((st = get_name(m, "tokenizer.roformer.mode", name, sizeof name)))
        return st;
    if (!rf_tokenizer_mode_from_name(name, &hp->tokenizer))
        return rf_fail(m->err, RF_ERR_UNSUPPORTED, "%s: tokenizer mode '%s' is not supported",
                       m->what, name);
    return RF_OK;
}

static rf_status read_labels(meta *m, rf_model *model)
{
    rf_status st = RF_OK;
    rf_hparams *hp = &model->hp;
    if (rf_gguf_find_kv(m->g, "roformer.labels")) {
        const rf_gguf_kv *kv = need(m, "roformer.labels", RF_GGUF_ARRAY, &st);
        if (!kv)
            return st;
        if (kv->arr_type != RF_GGUF_STRING || kv->arr_n < 1 || kv->arr_n > 65536)
            return rf_fail(m->err, RF_ERR_FORMAT, "%s: roformer.labels must be 1 to 65536 strings",
                           m->what);
        if ((st = copy_strings(m, kv, &model->labels, NULL)))
            return st;
        hp->num_labels = (int32_t)kv->arr_n;
    }
    if ((hp->head == RF_HEAD_SEQ_CLS || hp->head == RF_HEAD_TOKEN_CLS) && hp->num_labels == 0)
        return rf_fail(m->err, RF_ERR_FORMAT, "%s: a %s head needs roformer.labels", m->what,
                       rf_head_name(hp->head));
    return RF_OK;
}

static rf_status read_vocab(meta *m, rf_model *model)
{
    rf_status st = RF_OK;
    rf_hparams *hp = &model->hp;
    rf_tokenizer_spec *spec = &model->tokenizer_spec;
    const rf_gguf_kv *kv = need(m, "tokenizer.ggml.tokens", RF_GGUF_ARRAY, &st);
    if (!kv)
        return st;
    if (kv->arr_type != RF_GGUF_STRING || kv->arr_n < 1 || kv->arr_n > (uint64_t)hp->vocab_size)
        return rf_fail(m->err, RF_ERR_FORMAT, "%s: tokenizer.ggml.tokens must be 1 to vocab_size (%d) strings",
                       m->what, hp->vocab_size);
    if ((st = copy_strings(m, kv, &model->tokens, (uint32_t **)&spec->vocab_len)))
        return st;
    model->n_tokens = (int32_t)kv->arr_n;
    int32_t max_id = model->n_tokens - 1;
    if ((st = get_u32(m, "tokenizer.ggml.padding_token_id", 0, max_id, &hp->pad_id)) ||
        (st = get_u32(m, "tokenizer.ggml.unknown_token_id", 0, max_id, &hp->unk_id)) ||
        (st = get_u32(m, "tokenizer.ggml.cls_token_id", 0, max_id, &hp->cls_id)) ||
        (st = get_u32(m, "tokenizer.ggml.seperator_token_id", 0, max_id, &hp->sep_id)) ||
        (st = get_u32(m, "tokenizer.ggml.mask_token_id", 0, max_id, &hp->mask_id)))
        return st;
    spec->mode = hp->tokenizer;
    spec->do_lower_case = hp->do_lower_case;
    spec->vocab_size = model->n_tokens;
    spec->vocab = (const char *const *)model->tokens;
    spec->pad_id = hp->pad_id;
    spec->unk_id = hp->unk_id;
    spec->cls_id = hp->cls_id;
    spec->sep_id = hp->sep_id;
    spec->mask_id = hp->mask_id;
    if (hp->tokenizer != RF_TOKENIZER_WOBERT)
        return RF_OK;

    /* the jieba dictionary: words and frequencies, pointing into the file */
    const rf_gguf_kv *words = need(m, "tokenizer.jieba.words", RF_GGUF_ARRAY, &st);
    const rf_gguf_kv *freqs = words ? need(m, "tokenizer.jieba.freqs", RF_GGUF_ARRAY, &st) : NULL;
    if (!words || !freqs)
        return st;
    if (words->arr_type != RF_GGUF_STRING || freqs->arr_type != RF_GGUF_UINT32 ||
        words->arr_n != freqs->arr_n || words->arr_n < 1 || words->arr_n > INT32_MAX)
        return rf_fail(m->err, RF_ERR_FORMAT,
                       "%s: tokenizer.jieba.words and .freqs must be equally long string and uint32 arrays",
                       m->what);
    size_t n = (size_t)words->arr_n;
    const char **w = malloc(n * sizeof *w);
    uint32_t *wl = malloc(n * sizeof *wl), *f = malloc(n * sizeof *f);
    spec->dict_words = w;
    spec->dict_word_len = wl;
    spec->dict_freq = f;
    if (!w || !wl || !f)
        return rf_fail(m->err, RF_ERR_NOMEM, "%s: out of memory", m->what);
    rf_gguf_array_strings(words, w, wl);
    for (size_t i = 0; i < n; i++)
        f[i] = rf_gguf_array_u32(freqs, i);
    spec->dict_size = (int32_t)n;
    return RF_OK;
}

/* ==== Tensors ==== */

static void format_ne(char *buf, size_t size, uint32_t n, const uint64_t *ne)
{
    size_t k = (size_t)snprintf(buf, size, "[");
    for (uint32_t i = 0; i < n && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%llu", i ? "," : "", (unsigned long long)ne[i]);
    if (k < size)
        snprintf(buf + k, size - k, "]");
}

/* Where a tensor stored other than f32 whose f32 pointer is *slot stays as
 * stored: the layer matrices (attn_q_w, ..., ffn_down_w of some layer),
 * which bf16 and int8 compute pack from the stored form and f32 compute
 * widens when it first needs them, and the word embeddings, read a row at
 * a time, unless an MLM head may use them as its decoder. NULL for any
 * other tensor: those are widened at load. */
static rf_stored_matrix *kept_stored(rf_model *model, const float **slot)
{
    if (slot == &model->w.token_embd)
        return model->hp.head != RF_HEAD_MLM ? &model->w.token_embd_stored : NULL;
    rf_layer_weights *layers = model->w.layers;
    uintptr_t at = (uintptr_t)slot, base = (uintptr_t)layers;
    if (at < base || at >= base + (size_t)model->hp.num_layers * sizeof *layers)
        return NULL;
    rf_layer_weights *l = &layers[(at - base) / sizeof *layers];
    if (slot == &l->attn_q_w) return &l->attn_q_stored;
    if (slot == &l->attn_k_w) return &l->attn_k_stored;
    if (slot == &l->attn_v_w) return &l->attn_v_stored;
    if (slot == &l->attn_out_w) return &l->attn_out_stored;
    if (slot == &l->ffn_up_w) return &l->ffn_up_stored;
    if (slot == &l->ffn_down_w) return &l->ffn_down_stored;
    return NULL;
}

/* The f32 "X.scale" tensor of the q8 matrix "X.weight" t ([K, N] in ggml
 * order): checked to be [N] and aligned, or NULL with *st set. */
static const rf_gguf_tensor *q8_scale(meta *m, const rf_tensor_entry *e, const rf_gguf_tensor *t,
                                      rf_status *st)
{
    char name[sizeof e->gguf + 8];
    size_t stem = strlen(e->gguf);
    if (e->n_dims != 2 || stem < 7 || strcmp(e->gguf + stem - 7, ".weight")) {
        *st = rf_fail(m->err, RF_ERR_FORMAT, "%s: tensor '%s' is q8, which only matrices may be",
                      m->what, e->gguf);
        return NULL;
    }
    snprintf(name, sizeof name, "%.*s.scale", (int)(stem - 7), e->gguf);
    const rf_gguf_tensor *s = rf_gguf_find_tensor(m->g, name);
    if (!s || s->type != RF_DTYPE_F32 || s->n_dims != 1 || s->ne[0] != t->ne[1] ||
        ((uintptr_t)s->data & 3u)) {
        *st = rf_fail(m->err, RF_ERR_FORMAT,
                      "%s: q8 tensor '%s' needs '%s', f32 of shape [%llu], 4-byte aligned",
                      m->what, e->gguf, name, (unsigned long long)t->ne[1]);
        return NULL;
    }
    return s;
}

static rf_status bind_tensors(meta *m, rf_model *model)
{
    rf_hparams *hp = &model->hp;
    rf_tensor_entry *table = NULL;
    const rf_gguf_tensor **found = NULL, **scales = NULL;
    rf_status st = RF_OK;
    uint64_t widen = 0, matched = 0;
    model->w.layers = calloc((size_t)hp->num_layers, sizeof *model->w.layers);
    int n = model->w.layers ? rf_tensor_map(hp, &model->w, &table) : -1;
    if (n < 0 || !(found = calloc((size_t)n, sizeof *found)) ||
        !(scales = calloc((size_t)n, sizeof *scales))) {
        st = rf_fail(m->err, RF_ERR_NOMEM, "%s: out of memory", m->what);
        goto done;
    }
    /* pass 1: every tensor present, with its shape; count what to widen */
    for (int i = 0; i < n; i++) {
        const rf_tensor_entry *e = &table[i];
        const rf_gguf_tensor *t = rf_gguf_find_tensor(m->g, e->gguf);
        uint64_t want[2] = {(uint64_t)e->shape[e->n_dims - 1], (uint64_t)e->shape[0]};
        if (!t) {
            if (e->optional)
                continue;
            st = rf_fail(m->err, RF_ERR_SHAPE, "%s: missing tensor '%s'", m->what, e->gguf);
            goto done;
        }
        if (t->n_dims != (uint32_t)e->n_dims || t->ne[0] != want[0] ||
            (e->n_dims == 2 && t->ne[1] != want[1])) {
            char got[96], exp[96];
            format_ne(got, sizeof got, t->n_dims, t->ne);
            format_ne(exp, sizeof exp, (uint32_t)e->n_dims, want);
            st = rf_fail(m->err, RF_ERR_SHAPE, "%s: tensor '%s' has shape %s, expected %s", m->what,
                         e->gguf, got, exp);
            goto done;
        }
        if (t->type == RF_DTYPE_F32 && ((uintptr_t)t->data & 3u)) {
            st = rf_fail(m->err, RF_ERR_FORMAT, "%s: tensor '%s' is not 4-byte aligned in memory",
                         m->what, e->gguf);
            goto done;
        }
        if (t->type == RF_DTYPE_Q8) {
            if (!(scales[i] = q8_scale(m, e, t, &st)))
                goto done;
            matched++;
        }
        /* layer matrices (and word embeddings) stay as stored */
        if (t->type != RF_DTYPE_F32 && !kept_stored(model, e->slot))
            widen += t->nbytes / rf_dtype_size(t->type);
        found[i] = t;
        matched++;
    }
    if (matched != m->g->n_tensors) {
        /* name the first tensor no table entry claimed */
        bool *claimed = calloc(m->g->n_tensors, sizeof *claimed);
        if (!claimed) {
            st = rf_fail(m->err, RF_ERR_NOMEM, "%s: out of memory", m->what);
            goto done;
        }
        for (int i = 0; i < n; i++) {
            if (found[i])
                claimed[found[i] - m->g->tensors] = true;
            if (scales[i])
                claimed[scales[i] - m->g->tensors] = true;
        }
        for (uint64_t j = 0; j < m->g->n_tensors && !st; j++)
            if (!claimed[j])
                st = rf_fail(m->err, RF_ERR_SHAPE, "%s: unexpected tensor '%.*s' for a %s head",
                             m->what, (int)m->g->tensors[j].name.len, m->g->tensors[j].name.ptr,
                             rf_head_name(hp->head));
        free(claimed);
        goto done;
    }
    /* pass 2: point at f32 data, widen the rest into one block */
    if (widen && !(model->owned_f32 = malloc(widen * sizeof(float)))) {
        st = rf_fail(m->err, RF_ERR_NOMEM, "%s: out of memory for %llu widened weights", m->what,
                     (unsigned long long)widen);
        goto done;
    }
    float *next = model->owned_f32;
    for (int i = 0; i < n; i++) {
        const rf_gguf_tensor *t = found[i];
        if (!t)
            continue;
        if (t->type == RF_DTYPE_F32) {
            *table[i].slot = (const float *)(const void *)t->data;
            continue;
        }
        const float *scale = scales[i] ? (const float *)(const void *)scales[i]->data : NULL;
        rf_stored_matrix *kept = kept_stored(model, table[i].slot);
        if (kept) {
            *kept = (rf_stored_matrix){t->type, t->data, scale};
            continue;
        }
        uint64_t count = t->nbytes / rf_dtype_size(t->type);
        rf_stored_matrix_widen(&(rf_stored_matrix){t->type, t->data, scale}, 0,
                               (size_t)(count / t->ne[0]), (size_t)t->ne[0], next);
        /* the f32 copy is what the model reads from now on */
        rf_mapped_file_release(&(rf_mapped_file){model->map, model->map_size}, t->data, t->nbytes);
        *table[i].slot = next;
        next += count;
    }
    if (hp->head == RF_HEAD_MLM && !model->w.mlm_decoder_w)
        model->w.mlm_decoder_w = model->w.token_embd; /* tied */
    hp->dtype = rf_gguf_find_tensor(m->g, "token_embd.weight")->type;
    model->n_tensors = (int32_t)m->g->n_tensors;
done:
    free(table);
    free(found);
    free(scales);
    return st;
}

rf_status rf_model_stack_qkv(rf_model *model, const char *what, rf_error *err)
{
    const rf_hparams *hp = &model->hp;
    size_t D = (size_t)hp->hidden_size, n_bias = hp->use_bias ? 3 * D : 0;
    size_t block = 3 * D * D + n_bias, copies = 0;
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0 counts the layers to copy, pass 1 stacks */
        if (pass == 1 && copies && !(model->owned_qkv = malloc(copies * block * sizeof(float))))
            return rf_fail(err, RF_ERR_NOMEM, "%s: out of memory for %zu stacked Q/K/V blocks",
                           what, copies);
        float *next = model->owned_qkv;
        for (int i = 0; i < hp->num_layers; i++) {
            rf_layer_weights *l = &model->w.layers[i];
            const float *w[3] = {l->attn_q_w, l->attn_k_w, l->attn_v_w};
            const float *b[3] = {l->attn_q_b, l->attn_k_b, l->attn_v_b};
            /* stored (not f32) matrices are stacked when packed or widened
               (packed_weights.c): here only their biases */
            const rf_stored_matrix *sq = &l->attn_q_stored;
            int q8 = !!sq->data + !!l->attn_k_stored.data + !!l->attn_v_stored.data;
            if ((q8 != 0 && q8 != 3) ||
                (q8 && (l->attn_k_stored.type != sq->type || l->attn_v_stored.type != sq->type)))
                return rf_fail(err, RF_ERR_FORMAT,
                               "%s: layer %d stores Q, K and V in different types", what, i);
            bool adjacent = (q8 || (w[1] == w[0] + D * D && w[2] == w[1] + D * D)) &&
                            (!hp->use_bias || (b[1] == b[0] + D && b[2] == b[1] + D));
            if (pass == 0) {
                copies += !adjacent;
                continue;
            }
            if (adjacent) {
                l->attn_qkv_w = w[0];
                l->attn_qkv_b = b[0]; /* NULL without biases */
                continue;
            }
            l->attn_qkv_w = q8 ? NULL : next;
            for (int p = 0; p < 3; p++, next += D * D)
                if (!q8)
                    memcpy(next, w[p], D * D * sizeof(float));
            if (!hp->use_bias)
                continue;
            l->attn_qkv_b = next;
            for (int p = 0; p < 3; p++, next += D)
                memcpy(next, b[p], D * sizeof(float));
        }
    }
    return RF_OK;
}

/* ==== Loading ==== */

static rf_status load_image(rf_model *model, const void *data, size_t size, const char *what,
                            rf_error *err)
{
    rf_gguf *g = NULL;
    rf_status st = rf_gguf_parse(data, size, what, &g, err);
    meta m = {g, what, err};
    if (st || (st = read_hparams(&m, &model->hp)) || (st = read_labels(&m, model)) ||
        (st = rf_st_config_read(g, what, model->hp.max_position, &model->sentence, err)) ||
        (st = read_vocab(&m, model)) || (st = bind_tensors(&m, model)) ||
        (st = rf_model_stack_qkv(model, what, err)))
        goto done;
    st = rf_tokenizer_create(&model->tokenizer_spec, &model->tokenizer, err);
done:
    rf_gguf_free(g);
    return st;
}

rf_status rf_model_load(const char *path, rf_model **out, rf_error *err)
{
    char pulled[4096];
    struct stat sb;
    rf_status st;
    *out = NULL;
    if (!strncmp(path, "hf:", 3)) {
        if ((st = rf_hub_pull(path, NULL, pulled, sizeof pulled, err)))
            return st;
        path = pulled;
    }
    rf_model *model = calloc(1, sizeof *model);
    if (!model)
        return rf_fail(err, RF_ERR_NOMEM, "%s: out of memory", path);
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        rf_convert_params params = rf_convert_default_params();
        st = rf_convert_to_buffer(path, &params, &model->owned_bytes, &model->map_size, err);
        if (!st)
            st = load_image(model, model->owned_bytes, model->map_size, path, err);
    } else {
        rf_mapped_file f;
        st = rf_map_file(path, &f, err);
        model->map = f.data;
        model->map_size = f.size;
        if (!st)
            st = load_image(model, f.data, f.size, path, err);
    }
    if (st)
        rf_model_free(model);
    else
        *out = model;
    return st;
}

rf_status rf_model_load_buffer(const void *data, size_t size, const char *what, rf_model **out,
                               rf_error *err)
{
    rf_model *model = calloc(1, sizeof *model);
    rf_status st;
    *out = NULL;
    if (!model)
        return rf_fail(err, RF_ERR_NOMEM, "%s: out of memory", what);
    st = load_image(model, data, size, what, err);
    if (st)
        rf_model_free(model);
    else
        *out = model;
    return st;
}

void rf_model_free(rf_model *model)
{
    if (!model)
        return;
    rf_tokenizer_free(model->tokenizer);
    free_strings(model->labels);
    rf_st_config_free(&model->sentence);
    free_strings(model->tokens);
    free((void *)model->tokenizer_spec.vocab_len);
    free((void *)model->tokenizer_spec.dict_words);
    free((void *)model->tokenizer_spec.dict_word_len);
    free((void *)model->tokenizer_spec.dict_freq);
    free(model->w.layers);
    free(model->owned_f32);
    free(model->owned_qkv);
    rf_packed_weights_free(&model->packed);
    if (model->map) {
        rf_mapped_file f = {model->map, model->map_size};
        rf_unmap_file(&f);
    }
    free(model->owned_bytes);
    free(model);
}

rf_status rf_model_pack(rf_model *model, rf_compute_type compute, rf_error *err)
{
    rf_mapped_file file = {model->map, model->map_size};
    return rf_pack_weights(&model->packed, &model->hp, &model->w, &file, compute, err);
}

/* The public tokenize calls: the model's tokenizer (text/tokenizer.c). */
rf_status rf_tokenize(const rf_model *model, const char *text, size_t text_len, const char *pair,
                      size_t pair_len, int32_t max_length, rf_encoding *out, rf_error *err)
{
    if (!model || !model->tokenizer)
        return rf_fail(err, RF_ERR_INPUT, "tokenize: the model has no tokenizer");
    return rf_tokenizer_encode(model->tokenizer, text, text_len, pair, pair_len, max_length, out, err);
}

rf_status rf_tokenize_truncated(const rf_model *model, const char *text, size_t text_len,
                                const char *pair, size_t pair_len, int32_t max_length,
                                rf_truncation_side side, rf_encoding *out, rf_error *err)
{
    if (!model || !model->tokenizer)
        return rf_fail(err, RF_ERR_INPUT, "tokenize: the model has no tokenizer");
    return rf_tokenizer_encode_side(model->tokenizer, text, text_len, pair, pair_len, max_length,
                                    side, out, err);
}

const rf_hparams *rf_model_hparams(const rf_model *model)
{
    return &model->hp;
}

const char *rf_model_label(const rf_model *model, int32_t i)
{
    return i >= 0 && i < model->hp.num_labels ? model->labels[i] : NULL;
}

const char *rf_model_token(const rf_model *model, int32_t id)
{
    return id >= 0 && id < model->n_tokens ? model->tokens[id] : NULL;
}

int32_t rf_model_tensor_count(const rf_model *model)
{
    return model->n_tensors;
}

const rf_sentence_config *rf_model_sentence_config(const rf_model *model)
{
    return &model->sentence;
}

const char *rf_model_prompt(const rf_model *model, const char *name)
{
    return rf_st_config_prompt(&model->sentence, name);
}
