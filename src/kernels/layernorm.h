/*
 * layernorm.h — LayerNorm over the last dimension (torch.nn.LayerNorm with
 * elementwise affine), alone and fused with the residual add that precedes
 * every LayerNorm inside a RoFormer layer (post-LN, BERT style).
 */
#ifndef RF_LAYERNORM_H
#define RF_LAYERNORM_H

/* x[r] = LN(x[r]) * gamma + beta for rows x n, contiguous rows. */
void rf_layernorm(float *x, int rows, int n, const float *gamma, const float *beta, float eps);
/* x[r] = LN(x[r] + y[r]) * gamma + beta: x holds the residual on entry. */
void rf_add_layernorm(float *x, const float *y, int rows, int n, const float *gamma,
                      const float *beta, float eps);

/* Naive twins: two passes in double, y may be NULL. */
void rf_add_layernorm_naive(float *x, const float *y, int rows, int n, const float *gamma,
                            const float *beta, float eps);

#endif
