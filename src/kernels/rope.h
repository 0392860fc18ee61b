/*
 * rope.h — rotary position embedding (RoFormer, Su et al. 2021, eq. 34), in
 * the "normal" adjacent-pair layout of HF RoFormer (not GPT-NeoX halves):
 *
 *   head vector  x0 x1 | x2 x3 | ... | x(Dh-2) x(Dh-1)
 *   pair i       (x[2i], x[2i+1]) rotated by angle pos * theta_i,
 *                theta_i = 10000^(-2i/Dh), i = 0 .. Dh/2-1
 *   x'[2i]   = x[2i]   cos - x[2i+1] sin
 *   x'[2i+1] = x[2i+1] cos + x[2i]   sin
 *
 * HF RoFormerSinusoidalPositionalEmbedding builds the table in float64
 * (numpy) and rounds it to float32; float32 angles drift measurably at
 * positions near 1536, so the table here is computed the same way.
 */
#ifndef RF_ROPE_H
#define RF_ROPE_H

/* sin_t, cos_t: [n_pos][Dh/2] each, row p = angles (p / pos_divisor) *
 * theta_i with theta_i = base^(-2i/Dh). Dh even. base 10000 and
 * pos_divisor 1 are the trained angles; linear scaling by F is pos_divisor
 * F, NTK-aware scaling by F is base 10000 * F^(Dh/(Dh-2))
 * (rf_rope_scaled). Any n_pos: the formula has no table size in it. */
void rf_rope_table(float *sin_t, float *cos_t, int n_pos, int Dh, double base, double pos_divisor);

/* The base and position divisor of rf_rope_table for a scaling
 * (RF_ROPE_SCALING_NONE, _LINEAR or _NTK; rf_rope_scaling of roformer.h)
 * by `factor` on heads of Dh. */
void rf_rope_scaled(int scaling, double factor, int Dh, double *base, double *pos_divisor);

/* Rotates columns [n0, n1) (n0 and n1 even) of rows [row0, row0 + rows)
 * of x (rows ld apart, heads of Dh floats side by side from column 0),
 * row row0 + r at position pos0 + r: a block of a product's output, as
 * its epilogue (block_post.h) finishes it. */
void rf_rope_block(float *x, int ld, int row0, int rows, int pos0, int n0, int n1, int Dh,
                   const float *sin_t, const float *cos_t);

/* Naive twin: the HF formula (x * cos_pos + rotate_half(x) * sin_pos) on
 * a whole [T][ld] buffer. */
void rf_rope_naive(float *x, int T, int ld, int L, int H, int Dh, const float *sin_t,
                   const float *cos_t);

#endif
