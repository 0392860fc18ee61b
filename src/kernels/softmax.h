/*
 * softmax.h — row softmax of attention scores with the additive padding
 * mask (torch.softmax(scores + mask, dim=-1)).
 */
#ifndef RF_SOFTMAX_H
#define RF_SOFTMAX_H

#include <stdbool.h>

/* Masked keys get this added to their score, as HF adds
 * torch.finfo(float32).min: exp() of it minus the row maximum is exactly
 * 0, and a row with every key masked comes out uniform, as in HF. */
#define RF_MASK_NEG (-3.40282346638528859812e+38f)

/* One block of n keys of an online softmax (the flash-attention form),
 * for rows with stride ld and mask_bias [n] (0 or RF_MASK_NEG, or NULL for
 * no mask): row_max[r] and row_sum[r] carry the maximum and
 * the sum of exp(score - maximum) over the keys of the blocks before
 * (-INFINITY and 0 before the first). The block becomes x[r][j] =
 * exp(x[r][j] + mask_bias[j] - new maximum); rescale[r] = exp(old maximum -
 * new maximum), by which whatever was summed against the old maximum must
 * be multiplied (0 after no block); row_max and row_sum are updated.
 * bf16: each x[r][j] is rounded to bf16 (nearest, ties to even) before it
 * is stored and summed, for a product that reads it in bf16: the sum is
 * then that of the weights it multiplies, which so sum to 1 after the
 * division, and their rounding moves no output by a common offset.
 * Attention divides the rows of P V by row_sum after the last block, Dh
 * values a row instead of the keys'. */
void rf_softmax_rows_online(float *x, int rows, int n, int ld, const float *mask_bias,
                            float *row_max, float *row_sum, float *rescale, bool bf16);
/* Naive twin of the whole softmax (with the division), in double. */
void rf_softmax_rows_naive(float *x, int rows, int n, int ld, const float *mask_bias);

#endif
