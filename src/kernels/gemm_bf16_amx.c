/*
 * gemm_bf16_amx.c — the bf16 product on AMX tiles (TDPBF16PS), a kernel
 * of gemm_bf16_kernels.h: gemm_bf16_amx_body.h's loops on the tile
 * instructions. The driver runs it only where rf_amx_usable(RF_AMX_BF16).
 */
#include "kernels/gemm_bf16_kernels.h"
#include "kernels/simd.h"

#if RF_SIMD_X86
#include "kernels/gemm_bf16_amx_body.h"

RF_TARGET_AMX void rf_bf16_gemm_amx(const uint16_t *Xb, int K, int m0, int m1, const uint16_t *Wp,
                                    int n0, int n1, const float *b, rf_activation act, float *Y,
                                    int ldy)
{
    amx_gemm(Xb, K, m0, m1, Wp, n0, n1, b, act, Y, ldy);
}
#endif
