/*
 * tensor_map.c — GGUF <-> HF tensor names and shapes (see tensor_map.h).
 *
 * HF names follow transformers v4.40 modeling_roformer.py: RoFormerEmbeddings,
 * RoFormerLayer, RoFormerOnlyMLMHead (cls.predictions), RoFormerClassificationHead
 * (classifier.dense / classifier.out_proj), token classification
 * (classifier), QA (qa_outputs), and the extra pooler of RoFormer-Sim style
 * checkpoints (roformer.pooler.dense). RoFormer-v2 (RF_NORM_RMS, the
 * `roformer` package's modeling_roformer.py) has no norm tensors at all,
 * no encoder biases when use_bias is false, and an MLM head of the decoder
 * weight alone (RoFormerV2LMPredictionHead).
 */
#include "formats/tensor_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    rf_tensor_entry *e;
    int n, cap;
    bool oom;
} table;

static void add(table *t, const char *gguf, const char *hf, bool base, const float **slot,
                int64_t d0, int64_t d1)
{
    if (t->oom)
        return;
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        rf_tensor_entry *e = realloc(t->e, (size_t)cap * sizeof *e);
        if (!e) {
            t->oom = true;
            return;
        }
        t->e = e;
        t->cap = cap;
    }
    rf_tensor_entry *x = &t->e[t->n++];
    memset(x, 0, sizeof *x);
    snprintf(x->gguf, sizeof x->gguf, "%s", gguf);
    snprintf(x->hf, sizeof x->hf, "%s", hf);
    x->base = base;
    x->slot = slot;
    x->n_dims = d1 ? 2 : 1;
    x->shape[0] = d0;
    x->shape[1] = d1;
}

/* One tensor "<gguf><suffix>" <- "<hf><suffix>". */
static void add_named(table *t, const char *gguf, const char *hf, const char *suffix, bool base,
                      const float **slot, int64_t d0, int64_t d1)
{
    char g[64], h[128];
    snprintf(g, sizeof g, "%s%s", gguf, suffix);
    snprintf(h, sizeof h, "%s%s", hf, suffix);
    add(t, g, h, base, slot, d0, d1);
}

/* A Linear or LayerNorm pair: "<gguf>.weight"/"<gguf>.bias" <- "<hf>.weight"/"<hf>.bias".
 * out x in for a Linear (in == 0 for a LayerNorm: weight and bias are both (out)). */
static void add_pair(table *t, const char *gguf, const char *hf, bool base, const float **w,
                     const float **b, int64_t out, int64_t in)
{
    add_named(t, gguf, hf, ".weight", base, w, out, in);
    add_named(t, gguf, hf, ".bias", base, b, out, 0);
}

/* A Linear of the encoder: its bias only when the model has them. */
static void add_linear(table *t, const rf_hparams *hp, const char *gguf, const char *hf,
                       const float **w, const float **b, int64_t out, int64_t in)
{
    if (hp->use_bias)
        add_pair(t, gguf, hf, true, w, b, out, in);
    else
        add_named(t, gguf, hf, ".weight", true, w, out, in);
}

#define SLOT(field) (w ? &w->field : NULL)

int rf_tensor_map(const rf_hparams *hp, rf_weights *w, rf_tensor_entry **out)
{
    table t = {0};
    const int64_t V = hp->vocab_size, E = hp->embedding_size, D = hp->hidden_size,
                  F = hp->intermediate_size, T = hp->type_vocab_size, N = hp->num_labels;

    /* embeddings */
    add(&t, "token_embd.weight", "embeddings.word_embeddings.weight", true, SLOT(token_embd), V, E);
    add(&t, "token_types.weight", "embeddings.token_type_embeddings.weight", true,
        SLOT(token_types), T, E);
    if (hp->norm_type == RF_NORM_LAYER)
        add_pair(&t, "token_embd_norm", "embeddings.LayerNorm", true, SLOT(embd_norm_w),
                 SLOT(embd_norm_b), E, 0);
    if (E != D) /* a plain nn.Linear in v2 too: always a bias */
        add_pair(&t, "embd_proj", "embeddings_project", true, SLOT(embd_proj_w), SLOT(embd_proj_b),
                 D, E);

    /* encoder layers */
    for (int i = 0; i < hp->num_layers; i++) {
        rf_layer_weights *l = w ? &w->layers[i] : NULL;
        static const struct {
            const char *gguf, *hf;
            size_t w_off, b_off;
            int rows, cols; /* 'D' or 'F'; cols 0 for a LayerNorm */
        } parts[] = {
            {"attn_q", "attention.self.query", offsetof(rf_layer_weights, attn_q_w),
             offsetof(rf_layer_weights, attn_q_b), 'D', 'D'},
            {"attn_k", "attention.self.key", offsetof(rf_layer_weights, attn_k_w),
             offsetof(rf_layer_weights, attn_k_b), 'D', 'D'},
            {"attn_v", "attention.self.value", offsetof(rf_layer_weights, attn_v_w),
             offsetof(rf_layer_weights, attn_v_b), 'D', 'D'},
            {"attn_output", "attention.output.dense", offsetof(rf_layer_weights, attn_out_w),
             offsetof(rf_layer_weights, attn_out_b), 'D', 'D'},
            {"attn_output_norm", "attention.output.LayerNorm",
             offsetof(rf_layer_weights, attn_norm_w), offsetof(rf_layer_weights, attn_norm_b), 'D', 0},
            {"ffn_up", "intermediate.dense", offsetof(rf_layer_weights, ffn_up_w),
             offsetof(rf_layer_weights, ffn_up_b), 'F', 'D'},
            {"ffn_down", "output.dense", offsetof(rf_layer_weights, ffn_down_w),
             offsetof(rf_layer_weights, ffn_down_b), 'D', 'F'},
            {"layer_output_norm", "output.LayerNorm", offsetof(rf_layer_weights, out_norm_w),
             offsetof(rf_layer_weights, out_norm_b), 'D', 0},
        };
        char g[48], h[96];
        /* Q, K and V (parts 0-2): the three weights, then the three biases,
           so that the file holds the stacked (3D, D) matrix and (3D) bias
           the encoder multiplies by in one product (rf_model_stack_qkv) */
        for (int bias = 0; bias < (hp->use_bias ? 2 : 1); bias++)
            for (size_t p = 0; p < 3; p++) {
                snprintf(g, sizeof g, "blk.%d.%s", i, parts[p].gguf);
                snprintf(h, sizeof h, "encoder.layer.%d.%s", i, parts[p].hf);
                size_t off = bias ? parts[p].b_off : parts[p].w_off;
                add_named(&t, g, h, bias ? ".bias" : ".weight", true,
                          l ? (const float **)((char *)l + off) : NULL, D, bias ? 0 : D);
            }
        for (size_t p = 3; p < sizeof parts / sizeof parts[0]; p++) {
            snprintf(g, sizeof g, "blk.%d.%s", i, parts[p].gguf);
            snprintf(h, sizeof h, "encoder.layer.%d.%s", i, parts[p].hf);
            int64_t rows = parts[p].rows == 'F' ? F : D;
            int64_t cols = parts[p].cols == 'F' ? F : parts[p].cols == 'D' ? D : 0;
            const float **ws = l ? (const float **)((char *)l + parts[p].w_off) : NULL;
            const float **bs = l ? (const float **)((char *)l + parts[p].b_off) : NULL;
            if (cols)
                add_linear(&t, hp, g, h, ws, bs, rows, cols);
            else if (hp->norm_type == RF_NORM_LAYER)
                add_pair(&t, g, h, true, ws, bs, rows, 0);
        }
    }

    if (hp->has_pooler)
        add_pair(&t, "pooler", "pooler.dense", true, SLOT(pooler_w), SLOT(pooler_b), D, D);

    /* heads */
    switch (hp->head) {
    case RF_HEAD_NONE:
        break;
    case RF_HEAD_MLM:
        /* v2: the decoder alone, applied to the hidden states (E == D) */
        if (hp->norm_type == RF_NORM_LAYER) {
            add_pair(&t, "mlm.dense", "cls.predictions.transform.dense", false,
                     SLOT(mlm_dense_w), SLOT(mlm_dense_b), E, D);
            add_pair(&t, "mlm.norm", "cls.predictions.transform.LayerNorm", false,
                     SLOT(mlm_norm_w), SLOT(mlm_norm_b), E, 0);
            add(&t, "mlm.decoder.bias", "cls.predictions.bias", false, SLOT(mlm_decoder_b), V, 0);
        }
        add(&t, "mlm.decoder.weight", "cls.predictions.decoder.weight", false, SLOT(mlm_decoder_w),
            V, E);
        if (!t.oom)
            t.e[t.n - 1].optional = true;
        break;
    case RF_HEAD_SEQ_CLS:
        add_pair(&t, "cls.dense", "classifier.dense", false, SLOT(cls_dense_w), SLOT(cls_dense_b),
                 D, D);
        add_pair(&t, "cls.out_proj", "classifier.out_proj", false, SLOT(cls_out_w),
                 SLOT(cls_out_b), N, D);
        break;
    case RF_HEAD_TOKEN_CLS:
        add_pair(&t, "token_cls", "classifier", false, SLOT(token_cls_w), SLOT(token_cls_b), N, D);
        break;
    case RF_HEAD_QA:
        add_pair(&t, "qa", "qa_outputs", false, SLOT(qa_w), SLOT(qa_b), 2, D);
        break;
    }
    if (t.oom) {
        free(t.e);
        return -1;
    }
    *out = t.e;
    return t.n;
}
