/*
 * rmsnorm.h — RoFormer-v2's norm over the last dimension, parameter-free:
 * y = x / sqrt(mean(x^2) + eps) (no gain, no offset, no mean subtracted;
 * the `Norm` module of JunnYu/RoFormer_pytorch's modeling_roformer.py),
 * alone and fused with the residual add before it (post-norm, as v1).
 */
#ifndef RF_RMSNORM_H
#define RF_RMSNORM_H

/* x[r] = RMS(x[r]) for rows x n, contiguous rows. */
void rf_rmsnorm(float *x, int rows, int n, float eps);
/* x[r] = RMS(x[r] + y[r]): x holds the residual on entry. */
void rf_add_rmsnorm(float *x, const float *y, int rows, int n, float eps);

/* Naive twin: sums in double, y may be NULL. */
void rf_add_rmsnorm_naive(float *x, const float *y, int rows, int n, float eps);

#endif
