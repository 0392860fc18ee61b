/*
 * context.h — what a context is inside the library: the model it runs, its
 * thread pool, and every scratch buffer of the forward pass, sized once at
 * rf_context_create from max_batch x max_seq_len and carved out of one
 * allocation, buffers that are never live together sharing memory. The
 * forward pass allocates nothing.
 *
 * T = max_batch * max_seq_len tokens, E embedding_size, D hidden,
 * F intermediate, L max_seq_len, Dh head size, n threads.
 */
#ifndef RF_CONTEXT_H
#define RF_CONTEXT_H

#include "model/model.h"
#include "model/packed_weights.h"
#include "model/step_times.h"
#include "model/threadpool.h"

#include <stdbool.h>
#include <stdint.h>

/* In bf16 and int8 compute the FFN runs on blocks of this many rows (up
 * then down per block), so that its activations take [RF_FFN_ROWS][F]
 * floats whatever the batch; at 1024 rows each block's products are still
 * large ones. Their kernels give a row the same result whatever rows come
 * with it. f32 runs the FFN on every row at once: OpenBLAS's sums depend
 * on the shape of the product, and blocks would move its results (by up
 * to 3e-6 on small-fp16 at 1536 tokens). */
#define RF_FFN_ROWS 1024

struct rf_context {
    const rf_model *model;
    int max_batch, max_seq_len;
    int ffn_rows;       /* R: rows per FFN block, RF_FFN_ROWS or (f32) T */
    bool skip_padding;  /* rf_context_params.skip_padding */
    int32_t length_limit; /* longest max_seq_len accepted (rf_context_length_limit) */
    int rope_scaling;     /* resolved: RF_ROPE_SCALING_NONE, _LINEAR or _NTK */
    double rope_factor;   /* resolved factor (1 with none) */
    rf_pool *pool;
    rf_parallel par; /* the pool as the kernels take it */
    rf_step_timer steps; /* per-step wall times, when asked (step_times.h) */
    float *arena;       /* the one allocation every buffer below points into */
    size_t arena_bytes; /* its size */
    /*
     * The forward pass runs in phases, and buffers of different phases
     * share memory: two regions besides x, each holding one phase's
     * buffers at a time (a buffer is dead once the next phase writes over
     * it, and no product reads and writes the same region). R =
     * ffn_rows:
     *
     *   phase                  wide: max(T 3D, R F, T E)      narrow: [T][max(D, E)]
     *   embeddings (E != D)    emb, read into x               -
     *   layer: Q|K|V + RoPE    qkv written                    -
     *   layer: attention       qkv read                       attn written
     *   layer: Wo              attn_proj written (qkv dead)   attn read
     *   layer: FFN, per block  ffn written, then read         ffn_proj rows written
     *                          (attn_proj dead)               (attn dead)
     *   heads                  head_in, qa                    head_mid
     *
     * x [T][D] lives throughout: the hidden state, then the heads' input.
     */
    float *x;           /* [T][D] hidden state, updated layer by layer */
    float *emb;         /* wide: [T][E] embeddings before embeddings_project
                           (E != D only, else NULL) */
    float *qkv;         /* wide: [T][3D] Q, K, V projections side by side in
                           each row, heads side by side within each */
    float *attn_proj;   /* wide: [T][D] attention output projection, before
                           residual + LayerNorm */
    float *ffn;         /* wide: [R][F] intermediate activations of one block
                           of rows */
    float *head_in;     /* wide: [T][D] rows gathered for a head (CLS rows,
                           MLM positions) */
    float *qa;          /* wide: [T][2] QA logits before splitting into start / end */
    float *attn;        /* narrow: [T][D] attention context */
    float *ffn_proj;    /* narrow: [T][D] FFN output, before residual + LayerNorm */
    float *head_mid;    /* narrow: [T][max(D, E)] a head's hidden layer */
    float *scores;      /* [n][rf_attention_scratch(L)] attention scores of one
                           query block, one per thread */
    float *mask_bias;   /* [max_batch][L] 0 or RF_MASK_NEG per key */
    float *rope_sin;    /* [L][Dh/2] */
    float *rope_cos;    /* [L][Dh/2] */
    int32_t *seq_off;   /* [max_batch + 1] first packed row of each sequence
                           (skip_padding) */
    int32_t *head_rows; /* [max(T, 2 max_batch) + 1] the heads' row segments
                           (linalg.h), in seq_off's allocation */
    rf_compute_type compute;
    /* RF_COMPUTE_BF16 only (else NULL): */
    const rf_bf16_layer *bf16_layers; /* [num_layers] the model's packed weights */
    uint16_t *x_bf16;           /* rf_bf16_scratch_size of [T][D] or [R][F],
                                   the larger: a product's input rounded to bf16 */
    /* bf16 compute, and int8 compute on CPUs with the bf16 kernel (else
       NULL, and attention runs in f32): */
    uint16_t *attn_bf16;        /* attention's packed K and V
                                   (rf_attention_bf16_kv_size), then
                                   [n][rf_attention_bf16_scratch(L, Dh)]
                                   rounded Q, P and P V per thread */
    /* RF_COMPUTE_INT8 only (else NULL): */
    const rf_int8_layer *int8_layers; /* [num_layers] the model's packed weights */
    void *x_int8;               /* rf_int8_scratch_size of [T][D] or [R][F], the
                                   larger: a product's input quantized */
};

#endif
