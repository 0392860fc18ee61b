/*
 * rope.c — rotary position embedding (see rope.h for the layout). HF
 * reference: RoFormerSinusoidalPositionalEmbedding._init_weight and
 * RoFormerSelfAttention.apply_rotary_position_embeddings.
 */
#include "kernels/rope.h"
#include "roformer.h"

#include <math.h>
#include <stddef.h>

void rf_rope_table(float *sin_t, float *cos_t, int n_pos, int Dh, double base, double pos_divisor)
{
    int half = Dh / 2;
    for (int p = 0; p < n_pos; p++)
        for (int i = 0; i < half; i++) {
            /* numpy: pos / np.power(10000, 2 * (j // 2) / dim), in float64;
               p / 1.0 is p exactly, so the unscaled table is HF's */
            double angle = ((double)p / pos_divisor) / pow(base, 2.0 * i / Dh);
            sin_t[(size_t)p * half + i] = (float)sin(angle);
            cos_t[(size_t)p * half + i] = (float)cos(angle);
        }
}

/* Pairs [i0, i1) of the head at v rotated by the angles s, c of its
 * position. */
static inline void rotate_pairs(float *restrict v, int i0, int i1, const float *restrict s,
                                const float *restrict c)
{
    for (int i = i0; i < i1; i++) {
        float a = v[2 * i], b = v[2 * i + 1];
        v[2 * i] = a * c[i] - b * s[i];
        v[2 * i + 1] = b * c[i] + a * s[i];
    }
}

void rf_rope_block(float *x, int ld, int row0, int rows, int pos0, int n0, int n1, int Dh,
                   const float *sin_t, const float *cos_t)
{
    int half = Dh / 2;
    for (int r = 0; r < rows; r++) {
        const float *s = sin_t + (size_t)(pos0 + r) * half;
        const float *c = cos_t + (size_t)(pos0 + r) * half;
        float *row = x + (size_t)(row0 + r) * ld;
        /* head by head: the part of each head within [n0, n1) */
        for (int col = n0; col < n1;) {
            int head = col - col % Dh, end = head + Dh < n1 ? head + Dh : n1;
            rotate_pairs(row + head, (col - head) / 2, (end - head) / 2, s, c);
            col = end;
        }
    }
}

void rf_rope_naive(float *x, int T, int ld, int L, int H, int Dh, const float *sin_t,
                   const float *cos_t)
{
    int half = Dh / 2;
    for (int t = 0; t < T; t++)
        for (int h = 0; h < H; h++) {
            float *v = x + (size_t)t * ld + (size_t)h * Dh;
            float rotated[Dh], out[Dh];
            for (int j = 0; j < Dh; j++) {
                /* rotate_half: [-x1, x0, -x3, x2, ...] */
                rotated[j] = j % 2 == 0 ? -v[j + 1] : v[j - 1];
                /* sin_pos / cos_pos repeat each table entry twice */
                float sp = sin_t[(size_t)(t % L) * half + j / 2];
                float cp = cos_t[(size_t)(t % L) * half + j / 2];
                out[j] = v[j] * cp + rotated[j] * sp;
            }
            for (int j = 0; j < Dh; j++)
                v[j] = out[j];
        }
}

void rf_rope_scaled(int scaling, double factor, int Dh, double *base, double *pos_divisor)
{
    *base = 10000.0;
    *pos_divisor = 1.0;
    if (scaling == RF_ROPE_SCALING_LINEAR)
        *pos_divisor = factor;
    else if (scaling == RF_ROPE_SCALING_NTK && Dh > 2) /* NTK-aware base: s^(d/(d-2)) */
        *base = 10000.0 * pow(factor, (double)Dh / (Dh - 2));
}
