/*
 * kernels_avx512.c — the AVX-512 builds of the element-wise kernels
 * (rf_bias_act, rf_softmax_rows_online, rf_add_layernorm, rf_add_rmsnorm):
 * their bodies from activations_vec.h, softmax_vec.h, layernorm_vec.h and
 * rmsnorm_vec.h on
 * 16-float vectors, one zmm register each. A file of its own because the
 * vector width is fixed per translation unit (vecmath.h); activations.c,
 * softmax.c, layernorm.c and rmsnorm.c hold the 8-float builds and the
 * dispatch.
 */
#define RF_VLEN 16

#include "kernels/activations_vec.h"
#include "kernels/layernorm_vec.h"
#include "kernels/rmsnorm_vec.h"
#include "kernels/simd.h"
#include "kernels/softmax_vec.h"

#if RF_SIMD_X86
RF_TARGET_AVX512 void rf_bias_act_avx512(float *y, int rows, int cols, int ld, const float *bias,
                                         rf_activation act)
{
    bias_act_rows(y, rows, cols, ld, bias, act);
}

RF_TARGET_AVX512 void rf_softmax_rows_online_avx512(float *x, int rows, int n, int ld,
                                                    const float *mask_bias, float *row_max,
                                                    float *row_sum, float *rescale, bool bf16)
{
    softmax_rows_online(x, rows, n, ld, mask_bias, row_max, row_sum, rescale, bf16);
}

RF_TARGET_AVX512 void rf_add_layernorm_avx512(float *x, const float *y, int rows, int n,
                                              const float *gamma, const float *beta, float eps)
{
    add_layernorm_rows(x, y, rows, n, gamma, beta, eps);
}

RF_TARGET_AVX512 void rf_add_rmsnorm_avx512(float *x, const float *y, int rows, int n, float eps)
{
    add_rmsnorm_rows(x, y, rows, n, eps);
}
#endif
