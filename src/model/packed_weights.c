/*
 * packed_weights.c — the layers' weight matrices packed for bf16 or int8
 * compute, once per model (see packed_weights.h), and the f32 form of a
 * q8 file's layer matrices for f32 / bf16 compute. Packing reads the f32
 * weights (the int8 copy: quantized per output channel first), or, for
 * int8 from a file stored as q8, the file's int8 rows and scales as they
 * are. It does not choose the compute type or check the CPU: the context
 * does.
 */
#include "model/packed_weights.h"
#include "error.h"
#include "kernels/gemm_bf16.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Packing is rare (once per model and type): one lock for every model. */
static pthread_mutex_t pack_lock = PTHREAD_MUTEX_INITIALIZER;

/* ==== f32 from q8 ==== */

/* One matrix's f32 form from its q8 parts (n_parts of N / n_parts rows),
 * at *next. */
static const float *widen_matrix(const rf_q8_matrix *q8, int n_parts, int N, int K, float **next)
{
    float *out = *next;
    int part = N / n_parts;
    for (int p = 0; p < n_parts; p++)
        rf_int8_dequantize_rows(q8[p].rows, q8[p].scale, (size_t)part, (size_t)K,
                                out + (size_t)p * part * K);
    *next += (size_t)N * K;
    return out;
}

/* The f32 weights of a model loaded from a q8 file: every q8 layer
 * matrix widened once, Q, K and V stacked. */
static rf_status widen_q8_layers(rf_model *model, rf_error *err)
{
    const rf_hparams *hp = &model->hp;
    size_t D = (size_t)hp->hidden_size, F = (size_t)hp->intermediate_size, floats = 0;
    for (int i = 0; i < hp->num_layers; i++) {
        const rf_layer_weights *lw = &model->w.layers[i];
        floats += (lw->attn_q_q8.rows ? 3 * D * D : 0) + (lw->attn_out_q8.rows ? D * D : 0) +
                  (lw->ffn_up_q8.rows ? F * D : 0) + (lw->ffn_down_q8.rows ? D * F : 0);
    }
    if (floats == 0 || model->widened_q8)
        return RF_OK;
    float *next = model->widened_q8 = malloc(floats * sizeof(float));
    if (!next)
        return rf_fail(err, RF_ERR_NOMEM, "model: out of memory for %zu MiB of widened q8 weights",
                       floats * sizeof(float) >> 20);
    int d = (int)D, f = (int)F;
    for (int i = 0; i < hp->num_layers; i++) {
        rf_layer_weights *lw = &model->w.layers[i];
        if (lw->attn_q_q8.rows) {
            const rf_q8_matrix qkv[3] = {lw->attn_q_q8, lw->attn_k_q8, lw->attn_v_q8};
            lw->attn_qkv_w = widen_matrix(qkv, 3, 3 * d, d, &next);
            lw->attn_q_w = lw->attn_qkv_w;
            lw->attn_k_w = lw->attn_qkv_w + D * D;
            lw->attn_v_w = lw->attn_qkv_w + 2 * D * D;
        }
        if (lw->attn_out_q8.rows)
            lw->attn_out_w = widen_matrix(&lw->attn_out_q8, 1, d, d, &next);
        if (lw->ffn_up_q8.rows)
            lw->ffn_up_w = widen_matrix(&lw->ffn_up_q8, 1, f, d, &next);
        if (lw->ffn_down_q8.rows)
            lw->ffn_down_w = widen_matrix(&lw->ffn_down_q8, 1, d, f, &next);
    }
    return RF_OK;
}

/* ==== bf16 ==== */

static rf_status pack_bf16(rf_model *model, rf_error *err)
{
    const rf_hparams *hp = &model->hp;
    int D = hp->hidden_size, F = hp->intermediate_size, n = hp->num_layers;
    size_t qkv = rf_bf16_packed_size(3 * D, D), out = rf_bf16_packed_size(D, D);
    size_t up = rf_bf16_packed_size(F, D), down = rf_bf16_packed_size(D, F);
    size_t bytes = (qkv + out + up + down) * (size_t)n * sizeof(uint16_t);
    rf_bf16_layer *layers = calloc((size_t)(n > 0 ? n : 1), sizeof *layers);
    /* aligned_alloc wants a multiple of the alignment, and never 0 here */
    uint16_t *weights = aligned_alloc(64, (bytes / 64 + 1) * 64);
    if (!layers || !weights) {
        free(layers);
        free(weights);
        return rf_fail(err, RF_ERR_NOMEM, "model: out of memory for %zu MiB of bf16 weights",
                       bytes >> 20);
    }
    uint16_t *next = weights;
    for (int i = 0; i < n; i++) {
        const rf_layer_weights *lw = &model->w.layers[i];
        rf_bf16_layer *bl = &layers[i];
        rf_bf16_pack(lw->attn_qkv_w, 3 * D, D, next);
        bl->attn_qkv = next;
        next += qkv;
        rf_bf16_pack(lw->attn_out_w, D, D, next);
        bl->attn_out = next;
        next += out;
        rf_bf16_pack(lw->ffn_up_w, F, D, next);
        bl->ffn_up = next;
        next += up;
        rf_bf16_pack(lw->ffn_down_w, D, F, next);
        bl->ffn_down = next;
        next += down;
    }
    model->bf16_weights = weights;
    model->bf16_layers = layers;
    return RF_OK;
}

/* ==== int8 ==== */

/* Where the next matrix's panels and scales go in the one allocation. */
struct int8_cursor {
    int8_t *panels;
    float *scales;
    int8_t *rows; /* [max N x K] f32 weights quantized, before packing */
};

/* One (N x K) matrix from the f32 weights W, or, when q8[0].rows is not
 * NULL, from rows already quantized: n_parts q8 matrices of N / n_parts
 * rows each, stacked (Q, K and V). */
static rf_int8_matrix pack_int8_matrix(struct int8_cursor *c, const float *W,
                                       const rf_q8_matrix *q8, int n_parts, int N, int K)
{
    rf_int8_matrix m = {c->panels, c->scales};
    if (q8[0].rows) {
        int part = N / n_parts;
        for (int p = 0; p < n_parts; p++) {
            memcpy(c->scales + p * part, q8[p].scale, (size_t)part * sizeof(float));
            rf_int8_pack_rows(q8[p].rows, p * part, part, K, (size_t)K, c->panels);
        }
    } else {
        rf_int8_quantize_rows(W, N, K, (size_t)K, c->rows, c->scales);
        rf_int8_pack_rows(c->rows, 0, N, K, (size_t)K, c->panels);
    }
    c->panels += rf_int8_packed_size(N, K);
    c->scales += N;
    return m;
}

static rf_status pack_int8(rf_model *model, rf_error *err)
{
    const rf_hparams *hp = &model->hp;
    int D = hp->hidden_size, F = hp->intermediate_size, n = hp->num_layers;
    size_t panels = rf_int8_packed_size(3 * D, D) + rf_int8_packed_size(D, D) +
                    rf_int8_packed_size(F, D) + rf_int8_packed_size(D, F);
    size_t panel_bytes = panels * (size_t)n;
    size_t scale_count = (size_t)(3 * D + D + F + D) * (size_t)n;
    size_t bytes = panel_bytes + scale_count * sizeof(float);
    rf_int8_layer *layers = calloc((size_t)(n > 0 ? n : 1), sizeof *layers);
    int8_t *weights = aligned_alloc(64, (bytes / 64 + 1) * 64);
    int8_t *rows = malloc((size_t)3 * D * D > (size_t)F * D ? (size_t)3 * D * D : (size_t)F * D);
    if (!layers || !weights || !rows) {
        free(layers);
        free(weights);
        free(rows);
        return rf_fail(err, RF_ERR_NOMEM, "model: out of memory for %zu MiB of int8 weights",
                       bytes >> 20);
    }
    /* padding channels and inputs must read as zero */
    memset(weights, 0, panel_bytes);
    struct int8_cursor c = {weights, (float *)(void *)(weights + panel_bytes), rows};
    for (int i = 0; i < n; i++) {
        const rf_layer_weights *lw = &model->w.layers[i];
        rf_int8_layer *il = &layers[i];
        const rf_q8_matrix qkv[3] = {lw->attn_q_q8, lw->attn_k_q8, lw->attn_v_q8};
        il->attn_qkv = pack_int8_matrix(&c, lw->attn_qkv_w, qkv, 3, 3 * D, D);
        il->attn_out = pack_int8_matrix(&c, lw->attn_out_w, &lw->attn_out_q8, 1, D, D);
        il->ffn_up = pack_int8_matrix(&c, lw->ffn_up_w, &lw->ffn_up_q8, 1, F, D);
        il->ffn_down = pack_int8_matrix(&c, lw->ffn_down_w, &lw->ffn_down_q8, 1, D, F);
    }
    free(rows);
    model->int8_weights = weights;
    model->int8_layers = layers;
    return RF_OK;
}

/* ==== Once per model ==== */

rf_status rf_model_pack(rf_model *model, rf_compute_type compute, rf_error *err)
{
    rf_status st = RF_OK;
    pthread_mutex_lock(&pack_lock);
    if (compute != RF_COMPUTE_INT8)
        st = widen_q8_layers(model, err);
    if (st == RF_OK && compute == RF_COMPUTE_BF16 && !model->bf16_layers)
        st = pack_bf16(model, err);
    else if (compute == RF_COMPUTE_INT8 && !model->int8_layers)
        st = pack_int8(model, err);
    pthread_mutex_unlock(&pack_lock);
    return st;
}

void rf_model_free_packed(rf_model *model)
{
    free(model->widened_q8);
    free(model->bf16_layers);
    free(model->bf16_weights);
    free(model->int8_layers);
    free(model->int8_weights);
}
