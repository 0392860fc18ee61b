/*
 * gemm_bf16_avx512_nest.h — what the two AVX-512 bf16 backends share
 * (x86/gemm_bf16_avx512.c on VDPBF16PS, x86/gemm_bf16_f32fma.c on f32 FMA): the
 * mask of a panel's valid columns, and the blocking nest around their
 * register tiles. The backends differ in the operand their tiles read (the
 * bf16 pairs as they are, or a chunk widened to f32 first) and in their
 * block sizes; the nest takes both as arguments and, being inlined into
 * each backend's `gemm` with constant ones, calls their tiles directly.
 *
 * Blocking, per thread: rows in blocks of mc_rows, inputs in chunks of
 * kc_pairs pairs; `chunk` makes a chunk of the row block's inputs the
 * tiles' operand, then for each pair of 16-column panels a tile of at most
 * 32 columns of Y is accumulated over the chunk. Partial sums go through Y
 * between chunks; bias enters with the first chunk and the activation
 * follows the last, on the tile still in cache.
 */
#ifndef RF_GEMM_BF16_AVX512_NEST_H
#define RF_GEMM_BF16_AVX512_NEST_H

#include "kernels/elementwise_ops.h"
#include "kernels/gemm_bf16_backend.h"

#include <immintrin.h>
#include <stddef.h>

#define RF_BF16_PANEL 16 /* output columns per panel */

/* The first `cols` lanes of a panel (all of them from 16, none below 1). */
static inline __mmask16 rf_bf16_col_mask(int cols)
{
    return cols >= RF_BF16_PANEL ? (__mmask16)0xffff
                                 : (__mmask16)((1u << (cols > 0 ? cols : 0)) - 1u);
}

/* A register tile of mr x np accumulators (acc, np a row) over np panels
 * of Y (rows ldy apart, cols valid columns): their masks, their start (the
 * bias or 0 on the first chunk, else Y's partial sums) and their store.
 * mr and np are constants at every call, so the loops unroll and the
 * accumulators stay in registers. */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) void
rf_bf16_tile_start(const int mr, const int np, __m512 *acc, __mmask16 *mask, const float *Y,
                   int ldy, int cols, const float *bias, bool first)
{
    for (int p = 0; p < np; p++)
        mask[p] = rf_bf16_col_mask(cols - p * RF_BF16_PANEL);
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++)
        for (int p = 0; p < np; p++)
            acc[r * np + p] =
                first ? (bias ? _mm512_maskz_loadu_ps(mask[p], bias + p * RF_BF16_PANEL)
                              : _mm512_setzero_ps())
                      : _mm512_maskz_loadu_ps(mask[p], Y + (size_t)r * ldy + p * RF_BF16_PANEL);
}

__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) void
rf_bf16_tile_store(const int mr, const int np, const __m512 *acc, const __mmask16 *mask, float *Y,
                   int ldy)
{
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++)
        for (int p = 0; p < np; p++)
            _mm512_mask_storeu_ps(Y + (size_t)r * ldy + p * RF_BF16_PANEL, mask[p],
                                  acc[r * np + p]);
}

/* Rows [mc, mc + rows) of Xb (kp pairs a row), pairs [kc, kc + n_pairs):
 * the operand the tiles read, in the backend's form (`buf` is its
 * scratch). */
typedef const void *rf_bf16_chunk_fn(const uint16_t *Xb, int kp, int mc, int rows, int kc,
                                     int n_pairs, void *buf);
/* One tile: rows [row, row + mr) of the chunk x (kp: the pairs of a row of
 * Xb) times pairs [0, n_pairs) of the panels from W0 (panel_stride apart),
 * into Y (cols valid columns, rows ldy apart). first: start from the bias
 * (or 0), else from Y. */
typedef void rf_bf16_tile_fn(int mr, const void *x, int row, int kp, const uint16_t *W0,
                             size_t panel_stride, int n_pairs, float *Y, int ldy, int cols,
                             const float *bias, bool first);

/* The backend's `gemm` (gemm_bf16_backend.h) over tiles of nr columns. */
static inline __attribute__((always_inline)) void
rf_bf16_blocked(const uint16_t *Xb, int K, int m0, int m1, const uint16_t *Wp, int n0, int n1,
                const float *b, rf_activation act, const rf_block_post *post, float *Y, int ldy,
                const int mc_rows, const int kc_pairs, const int mr_max, const int nr,
                rf_bf16_chunk_fn *chunk, rf_bf16_tile_fn *tile, void *buf)
{
    int kp = rf_bf16_k_pairs(K);
    size_t panel_stride = (size_t)kp * 2 * RF_BF16_PANEL;
    for (int mc = m0; mc < m1; mc += mc_rows) {
        int mc_end = mc + mc_rows < m1 ? mc + mc_rows : m1;
        for (int kc = 0; kc < kp; kc += kc_pairs) {
            int n_pairs = kp - kc < kc_pairs ? kp - kc : kc_pairs;
            bool first = kc == 0, last = kc + n_pairs == kp;
            const void *x = chunk(Xb, kp, mc, mc_end - mc, kc, n_pairs, buf);
            int post_n0 = n0; /* the first column post has not seen */
            for (int n = n0; n < n1; n += nr) {
                const uint16_t *W0 =
                    Wp + (size_t)(n / RF_BF16_PANEL) * panel_stride + (size_t)kc * 2 * RF_BF16_PANEL;
                int cols = n1 - n < nr ? n1 - n : nr;
                for (int m = mc; m < mc_end; m += mr_max) {
                    int mr = mc_end - m < mr_max ? mc_end - m : mr_max;
                    float *y = Y + (size_t)m * ldy + n;
                    tile(mr, x, m - mc, kp, W0, panel_stride, n_pairs, y, ldy, cols,
                         b ? b + n : NULL, first);
                    if (last && act != RF_ACT_LINEAR)
                        rf_elementwise_avx512.bias_act(y, mr, cols, ldy, NULL, act);
                }
                if (last)
                    rf_block_post_columns(post, Y, ldy, mc, mc_end, &post_n0, n + cols, n1);
            }
        }
    }
}

#endif
