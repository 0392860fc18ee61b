/*
 * attention.h — multi-head scaled dot-product attention with the padding
 * mask (HF RoFormerSelfAttention after the projections and RoPE):
 *
 *   per sequence b and head h:  ctx_bh = softmax(Q_bh K_bh^T / sqrt(Dh) + mask_b) V_bh
 *
 * B sequences of L tokens are packed back to back: q, k and v are [B*L][ld]
 * (ld >= H*Dh: they may be column blocks of one stacked Q|K|V buffer), out
 * is [B*L][out_ld], head h in columns [h*Dh, (h+1)*Dh) of each.
 *
 * Fused (the flash-attention form): a block of RF_ATTN_QUERY_BLOCK queries
 * runs over blocks of RF_ATTN_KEY_BLOCK keys; each key block's scores go
 * through an online softmax (rf_softmax_rows_online: running maximum and
 * sum) and straight into P V, accumulated in the output rows, which are
 * rescaled when the maximum grows and divided by the sum at the end. No
 * query x L scores are ever stored: the scratch of one thread is a query
 * block x key block of scores (and, in bf16, the operands of one key
 * block), whatever L. One (sequence, head, query block) is one task of
 * the parallel region (kernels/parallel.h).
 *
 * f32 (bf16_scratch NULL): both products through sgemm on the blocks.
 * bf16 (bf16_scratch not NULL, RF_COMPUTE_BF16, or int8 where the bf16
 * kernel is fast): both products through the bf16 kernel of gemm_bf16.h,
 * Q (scaled), K, V and the probabilities rounded to bf16; the softmax and
 * the accumulation stay f32. K and V are packed first, every key block of
 * every head once (one task each), into a region shared by the threads
 * (as large as K and V in bf16), rather than once per query block: L /
 * RF_ATTN_QUERY_BLOCK times as many packs, a large share of the time at
 * long lengths (docs/performance.md).
 */
#ifndef RF_ATTENTION_H
#define RF_ATTENTION_H

#include "kernels/parallel.h"

#include <stddef.h>
#include <stdint.h>

/* Query rows and keys per block: a block's scores are 256 x 256 floats
 * (256 KiB, in L2 with the operands of its products); fewer, larger query
 * blocks re-read (in bf16: re-pack) each key block fewer times. Timings:
 * docs/performance.md. */
#define RF_ATTN_QUERY_BLOCK 256
#define RF_ATTN_KEY_BLOCK 256

/* Floats of score scratch one thread needs for sequences of length up to
 * L: one block, no larger than L needs. */
static inline long rf_attention_scratch(int L)
{
    return (long)(L < RF_ATTN_QUERY_BLOCK ? L : RF_ATTN_QUERY_BLOCK) *
           (L < RF_ATTN_KEY_BLOCK ? L : RF_ATTN_KEY_BLOCK);
}

/* uint16 elements of bf16 scratch one thread needs for sequences of
 * length up to L and heads of Dh, and of the packed K and V of B sequences
 * up to L with H heads (both multiples of 32: 64-byte aligned pieces). */
size_t rf_attention_bf16_scratch(int L, int Dh);
size_t rf_attention_bf16_kv_size(int B, int L, int H, int Dh);

/* mask_bias: [B][L], 0 for a real key and RF_MASK_NEG for padding.
 * scores: scratch of rf_parallel_threads(par) * rf_attention_scratch(L) floats.
 * bf16_scratch: NULL for f32, else rf_attention_bf16_kv_size(B, L, H, Dh) +
 * rf_parallel_threads(par) * rf_attention_bf16_scratch(L, Dh) elements (needs
 * rf_bf16_supported()). */
void rf_attention(const rf_parallel *par, const float *q, const float *k, const float *v, int ld,
                  const float *mask_bias, int B, int L, int H, int Dh, float *scores,
                  uint16_t *bf16_scratch, float *out, int out_ld);
/* Sequences of different lengths packed back to back without padding:
 * sequence b is rows [seq_off[b], seq_off[b+1]) of q, k, v and out, and
 * attends over exactly those rows (no mask). scores and bf16_scratch as
 * for rf_attention with B sequences of the longest one's length.
 * Each sequence gives what rf_attention gives for it alone. */
void rf_attention_packed(const rf_parallel *par, const float *q, const float *k, const float *v, int ld,
                         const int32_t *seq_off, int B, int H, int Dh, float *scores,
                         uint16_t *bf16_scratch, float *out, int out_ld);
/* Naive twin: loops in double, scratch of L floats. */
void rf_attention_naive(const float *q, const float *k, const float *v, int ld,
                        const float *mask_bias, int B, int L, int H, int Dh, float *scratch,
                        float *out, int out_ld);

#endif
