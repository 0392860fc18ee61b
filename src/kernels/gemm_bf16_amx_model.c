/*
 * gemm_bf16_amx_model.c — gemm_bf16_amx_body.h's loops on amx_model.h's C
 * model of the tile instructions: the AMX kernel's tile walk, edges,
 * tails and epilogue, testable on any x86-64 CPU with AVX2. A kernel of
 * gemm_bf16_kernels.h that only tests select (RF_BF16_AMX_MODEL); slow.
 */
#define RF_AMX_MODEL

#include "kernels/gemm_bf16_kernels.h"
#include "kernels/simd.h"

#if RF_SIMD_X86
#include "kernels/gemm_bf16_amx_body.h"

RF_TARGET_AMX void rf_bf16_gemm_amx_model(const uint16_t *Xb, int K, int m0, int m1,
                                          const uint16_t *Wp, int n0, int n1, const float *b,
                                          rf_activation act, float *Y, int ldy)
{
    amx_gemm(Xb, K, m0, m1, Wp, n0, n1, b, act, Y, ldy);
}
#endif
