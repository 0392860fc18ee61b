/*
 * gemm_bf16_amx.c — the bf16 product on AMX tiles (TDPBF16PS), a kernel
 * of gemm_bf16_backend.h: x86/amx/gemm_bf16_amx_body.h's loops on the tile
 * instructions. The driver runs it only where the CPU has its needs.
 */
#include "kernels/gemm_bf16_backend.h"
#include "kernels/simd.h"

#if RF_SIMD_X86
#include "kernels/x86/amx/gemm_bf16_amx_body.h"

RF_TARGET_AMX static void gemm(const uint16_t *Xb, int K, int m0, int m1, const uint16_t *Wp,
                               int n0, int n1, const float *b, rf_activation act,
                               const rf_block_post *post, float *Y, int ldy)
{
    amx_gemm(Xb, K, m0, m1, Wp, n0, n1, b, act, post, Y, ldy);
}

const rf_bf16_ops rf_bf16_ops_amx = {
    .attention_fast = true,
    .packing = &rf_bf16_packing_avx512,
    .gemm = gemm,
};
#endif
