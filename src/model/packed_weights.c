/*
 * packed_weights.c — the layers' weight matrices packed for bf16 or int8
 * compute, once per model (see packed_weights.h), and the f32 form of the
 * layer matrices of an f16, bf16 or q8 file for f32 compute. Packing reads
 * the f32 weights, or the stored ones widened one matrix at a time (the
 * int8 copy: quantized per output channel), or, for int8 from a q8 file,
 * the file's int8 rows and scales as they are; then the file's pages of
 * what it read are released (release_source). It does not choose the
 * compute type or check the CPU: the context does.
 */
#include "model/packed_weights.h"
#include "base/error.h"
#include "formats/gguf.h"
#include "kernels/gemm_bf16.h"
#include "base/zeroed_pages.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Packing is rare (once per model and type): one lock for every model. */
static pthread_mutex_t pack_lock = PTHREAD_MUTEX_INITIALIZER;

/* ==== f32 from the stored form ==== */

/* out (N x K) = the f32 form of a stored matrix of n_parts parts of N /
 * n_parts rows each, stacked (Q, K and V). */
static void widen_matrix(const rf_stored_matrix *parts, int n_parts, int N, int K, float *out)
{
    size_t rows = (size_t)(N / n_parts);
    for (int p = 0; p < n_parts; p++, out += rows * (size_t)K)
        rf_stored_matrix_widen(&parts[p], 0, rows, (size_t)K, out);
}

/* One of a layer's four matrices (0 Q|K|V, 1 attention output, 2 FFN up,
 * 3 FFN down), as the packers read it. */
struct layer_matrix {
    const float *f32;           /* the f32 weights, or NULL: */
    rf_stored_matrix stored[3]; /* n_parts stored parts (Q, K, V) */
    int n_parts, N, K;
};

static struct layer_matrix layer_matrix(const rf_layer_weights *lw, int which, int D, int F)
{
    switch (which) {
    case 0:
        return (struct layer_matrix){lw->attn_qkv_w,
                                     {lw->attn_q_stored, lw->attn_k_stored, lw->attn_v_stored},
                                     3, 3 * D, D};
    case 1: return (struct layer_matrix){lw->attn_out_w, {lw->attn_out_stored}, 1, D, D};
    case 2: return (struct layer_matrix){lw->ffn_up_w, {lw->ffn_up_stored}, 1, F, D};
    default: return (struct layer_matrix){lw->ffn_down_w, {lw->ffn_down_stored}, 1, D, F};
    }
}

/* Once the model holds its own form of m (widened or packed), the pages
 * of the file m was read from leave the process's resident memory: with
 * int8 from a q8 file, they would otherwise stay counted next to the packed
 * copy although nothing reads them again. */
static void release_source(const rf_mapped_file *file, const struct layer_matrix *m)
{
    if (m->f32) {
        rf_mapped_file_release(file, m->f32, (size_t)m->N * (size_t)m->K * sizeof(float));
        return;
    }
    size_t part = (size_t)(m->N / m->n_parts) * (size_t)m->K;
    for (int p = 0; p < m->n_parts; p++)
        rf_mapped_file_release(file, m->stored[p].data, part * rf_dtype_size(m->stored[p].type));
}

/* The f32 form of m: its f32 weights, or the stored ones widened into
 * `tmp` (max N x K floats). */
static const float *f32_of(const struct layer_matrix *m, float *tmp)
{
    if (m->f32)
        return m->f32;
    widen_matrix(m->stored, m->n_parts, m->N, m->K, tmp);
    return tmp;
}

/* For f32 compute: every stored layer matrix widened once, Q, K and V
 * stacked, and the f32 pointers set. */
static rf_status widen_layers(rf_packed_weights *packed, const rf_hparams *hp, rf_weights *w,
                              const rf_mapped_file *file, rf_error *err)
{
    int D = hp->hidden_size, F = hp->intermediate_size;
    size_t floats = 0;
    for (int i = 0; i < hp->num_layers; i++)
        for (int which = 0; which < 4; which++) {
            struct layer_matrix m = layer_matrix(&w->layers[i], which, D, F);
            floats += m.f32 ? 0 : (size_t)m.N * (size_t)m.K;
        }
    if (floats == 0)
        return RF_OK;
    float *next = packed->widened_layers = malloc(floats * sizeof(float));
    if (!next)
        return rf_fail(err, RF_ERR_NOMEM, "model: out of memory for %zu MiB of widened weights",
                       floats * sizeof(float) >> 20);
    for (int i = 0; i < hp->num_layers; i++) {
        rf_layer_weights *lw = &w->layers[i];
        const float **slots[4] = {&lw->attn_qkv_w, &lw->attn_out_w, &lw->ffn_up_w, &lw->ffn_down_w};
        for (int which = 0; which < 4; which++) {
            struct layer_matrix m = layer_matrix(lw, which, D, F);
            if (m.f32)
                continue;
            widen_matrix(m.stored, m.n_parts, m.N, m.K, next);
            release_source(file, &m);
            *slots[which] = next;
            next += (size_t)m.N * m.K;
        }
        if (lw->attn_q_stored.data) {
            lw->attn_q_w = lw->attn_qkv_w;
            lw->attn_k_w = lw->attn_qkv_w + (size_t)D * D;
            lw->attn_v_w = lw->attn_qkv_w + 2 * (size_t)D * D;
        }
    }
    return RF_OK;
}

/* The largest matrix of a layer, in floats: the packers' widening buffer. */
static size_t widest_matrix(const rf_hparams *hp)
{
    size_t D = (size_t)hp->hidden_size, F = (size_t)hp->intermediate_size;
    return 3 * D * D > F * D ? 3 * D * D : F * D;
}

/* ==== bf16 ==== */

static rf_status pack_bf16(rf_packed_weights *packed, const rf_hparams *hp, const rf_weights *w,
                           const rf_mapped_file *file, rf_error *err)
{
    int D = hp->hidden_size, F = hp->intermediate_size, n = hp->num_layers;
    size_t bytes = 0;
    for (int which = 0; which < 4; which++) {
        struct layer_matrix m = layer_matrix(&w->layers[0], which, D, F);
        bytes += rf_bf16_packed_size(m.N, m.K) * (size_t)n * sizeof(uint16_t);
    }
    rf_bf16_layer *layers = calloc((size_t)(n > 0 ? n : 1), sizeof *layers);
    /* aligned_alloc wants a multiple of the alignment, and never 0 here */
    uint16_t *weights = aligned_alloc(64, (bytes / 64 + 1) * 64);
    float *tmp = malloc(widest_matrix(hp) * sizeof *tmp);
    if (!layers || !weights || !tmp) {
        free(layers);
        free(weights);
        free(tmp);
        return rf_fail(err, RF_ERR_NOMEM, "model: out of memory for %zu MiB of bf16 weights",
                       bytes >> 20);
    }
    uint16_t *next = weights;
    for (int i = 0; i < n; i++) {
        const uint16_t **slots[4] = {&layers[i].attn_qkv, &layers[i].attn_out, &layers[i].ffn_up,
                                     &layers[i].ffn_down};
        for (int which = 0; which < 4; which++) {
            struct layer_matrix m = layer_matrix(&w->layers[i], which, D, F);
            rf_bf16_pack(f32_of(&m, tmp), m.N, m.K, next);
            release_source(file, &m);
            *slots[which] = next;
            next += rf_bf16_packed_size(m.N, m.K);
        }
    }
    free(tmp);
    packed->bf16_weights = weights;
    packed->bf16_layers = layers;
    return RF_OK;
}

/* ==== int8 ==== */

/* Where the next matrix's panels, scales and sums go in the one
 * allocation. */
struct int8_cursor {
    int8_t *panels;
    float *scales;
    int32_t *colsums;
    int8_t *rows; /* [widest] f32 weights quantized, before packing */
    float *tmp;   /* [widest] f16 / bf16 weights widened, before quantizing */
};

/* One matrix: from its q8 rows as they are, else from its f32 form
 * quantized per row. */
static rf_int8_matrix pack_int8_matrix(struct int8_cursor *c, const struct layer_matrix *m)
{
    rf_int8_matrix out = {c->panels, c->scales, c->colsums};
    int N = m->N, K = m->K;
    if (!m->f32 && m->stored[0].type == RF_DTYPE_Q8) {
        int part = N / m->n_parts;
        for (int p = 0; p < m->n_parts; p++) {
            memcpy(c->scales + p * part, m->stored[p].scale, (size_t)part * sizeof(float));
            rf_int8_pack_rows(m->stored[p].data, p * part, part, K, (size_t)K, c->panels,
                              c->colsums);
        }
    } else {
        rf_int8_quantize_rows(f32_of(m, c->tmp), N, K, (size_t)K, c->rows, c->scales);
        rf_int8_pack_rows(c->rows, 0, N, K, (size_t)K, c->panels, c->colsums);
    }
    c->panels += rf_int8_packed_size(N, K);
    c->scales += N;
    c->colsums += rf_int8_colsum_count(N);
    return out;
}

static rf_status pack_int8(rf_packed_weights *packed, const rf_hparams *hp, const rf_weights *w,
                           const rf_mapped_file *file, rf_error *err)
{
    int D = hp->hidden_size, F = hp->intermediate_size, n = hp->num_layers;
    size_t panel_bytes = 0, scale_count = 0, colsum_count = 0;
    for (int which = 0; which < 4; which++) {
        struct layer_matrix m = layer_matrix(&w->layers[0], which, D, F);
        panel_bytes += rf_int8_packed_size(m.N, m.K) * (size_t)n;
        scale_count += (size_t)m.N * (size_t)n;
        colsum_count += rf_int8_colsum_count(m.N) * (size_t)n;
    }
    size_t bytes = panel_bytes + scale_count * sizeof(float) + colsum_count * sizeof(int32_t);
    rf_int8_layer *layers = calloc((size_t)(n > 0 ? n : 1), sizeof *layers);
    /* zeroed by the kernel: padding channels and inputs must read as zero,
       and no clearing pass touches the pages before packing does */
    int8_t *weights = rf_zeroed_pages(bytes);
    int8_t *rows = malloc(widest_matrix(hp));
    float *tmp = malloc(widest_matrix(hp) * sizeof *tmp);
    if (!layers || !weights || !rows || !tmp) {
        free(layers);
        rf_zeroed_pages_free(weights, bytes);
        free(rows);
        free(tmp);
        return rf_fail(err, RF_ERR_NOMEM, "model: out of memory for %zu MiB of int8 weights",
                       bytes >> 20);
    }
    float *scales = (float *)(void *)(weights + panel_bytes);
    struct int8_cursor c = {weights, scales, (int32_t *)(void *)(scales + scale_count), rows, tmp};
    for (int i = 0; i < n; i++) {
        rf_int8_matrix *slots[4] = {&layers[i].attn_qkv, &layers[i].attn_out, &layers[i].ffn_up,
                                    &layers[i].ffn_down};
        for (int which = 0; which < 4; which++) {
            struct layer_matrix m = layer_matrix(&w->layers[i], which, D, F);
            *slots[which] = pack_int8_matrix(&c, &m);
            release_source(file, &m);
        }
    }
    free(rows);
    free(tmp);
    packed->int8_weights = weights;
    packed->int8_weights_bytes = bytes;
    packed->int8_layers = layers;
    return RF_OK;
}

/* ==== Once per model ==== */

rf_status rf_pack_weights(rf_packed_weights *packed, const rf_hparams *hp, rf_weights *w,
                          const rf_mapped_file *file, rf_compute_type compute, rf_error *err)
{
    rf_status st = RF_OK;
    pthread_mutex_lock(&pack_lock);
    if (compute == RF_COMPUTE_F32 && !packed->widened_layers)
        st = widen_layers(packed, hp, w, file, err);
    else if (compute == RF_COMPUTE_BF16 && !packed->bf16_layers)
        st = pack_bf16(packed, hp, w, file, err);
    else if (compute == RF_COMPUTE_INT8 && !packed->int8_layers)
        st = pack_int8(packed, hp, w, file, err);
    pthread_mutex_unlock(&pack_lock);
    return st;
}

void rf_packed_weights_free(rf_packed_weights *packed)
{
    free(packed->widened_layers);
    free(packed->bf16_layers);
    free(packed->bf16_weights);
    free(packed->int8_layers);
    rf_zeroed_pages_free(packed->int8_weights, packed->int8_weights_bytes);
    *packed = (rf_packed_weights){0};
}
