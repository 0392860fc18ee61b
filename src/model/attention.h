/*
 * attention.h — multi-head scaled dot-product attention with the padding
 * mask (HF RoFormerSelfAttention after the projections and RoPE):
 *
 *   per sequence b and head h:  ctx_bh = softmax(Q_bh K_bh^T / sqrt(Dh) + mask_b) V_bh
 *
 * B sequences of L tokens are packed back to back: q, k and v are [B*L][ld]
 * (ld >= H*Dh: they may be column blocks of one stacked Q|K|V buffer), out
 * is [B*L][out_ld], head h in columns [h*Dh, (h+1)*Dh) of each. Both products go
 * through sgemm. Queries go in blocks of RF_ATTN_QUERY_BLOCK rows, so the
 * scores of one block (block x L floats) stay in cache (L2 or L3) at long
 * lengths;
 * one (sequence, head, query block) is one task of the pool.
 *
 * bf16 (bf16_scratch not NULL, RF_COMPUTE_BF16): both products through the
 * bf16 kernel of gemm_bf16.h, Q (scaled), K, the probabilities and V
 * rounded to bf16; softmax stays f32. One (sequence, head) is one task, so
 * that its K and V are packed once for all its query blocks.
 */
#ifndef RF_ATTENTION_H
#define RF_ATTENTION_H

#include "model/threadpool.h"

#include <stddef.h>
#include <stdint.h>

/* Query rows per block: a long sequence cut into fewer blocks re-packs K
 * and V fewer times; a block's scores are RF_ATTN_QUERY_BLOCK x L floats
 * (1.5 MiB at 1536 keys). Timings of the block sizes: docs/performance.md. */
#define RF_ATTN_QUERY_BLOCK 256

/* Floats of score scratch one thread needs for sequences of length L. */
static inline long rf_attention_scratch(int L)
{
    return (long)(L < RF_ATTN_QUERY_BLOCK ? L : RF_ATTN_QUERY_BLOCK) * L;
}

/* uint16 elements of bf16 scratch one thread needs for sequences of
 * length up to L and heads of Dh. */
size_t rf_attention_bf16_scratch(int L, int Dh);

/* mask_bias: [B][L], 0 for a real key and RF_MASK_NEG for padding.
 * scores: scratch of rf_pool_threads(pool) * rf_attention_scratch(L) floats.
 * bf16_scratch: NULL for f32, else rf_pool_threads(pool) *
 * rf_attention_bf16_scratch(L, Dh) elements (needs rf_bf16_supported()). */
void rf_attention(rf_pool *pool, const float *q, const float *k, const float *v, int ld,
                  const float *mask_bias, int B, int L, int H, int Dh, float *scores,
                  uint16_t *bf16_scratch, float *out, int out_ld);
/* Sequences of different lengths packed back to back without padding:
 * sequence b is rows [seq_off[b], seq_off[b+1]) of q, k, v and out, and
 * attends over exactly those rows (no mask). scores: scratch of
 * rf_pool_threads(pool) * rf_attention_scratch(longest sequence) floats.
 * Each sequence gives what rf_attention gives for it alone. */
void rf_attention_packed(rf_pool *pool, const float *q, const float *k, const float *v, int ld,
                         const int32_t *seq_off, int B, int H, int Dh, float *scores,
                         uint16_t *bf16_scratch, float *out, int out_ld);
/* Naive twin: loops in double, scratch of L floats. */
void rf_attention_naive(const float *q, const float *k, const float *v, int ld,
                        const float *mask_bias, int B, int L, int H, int Dh, float *scratch,
                        float *out, int out_ld);

#endif
