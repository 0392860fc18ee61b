/*
 * gemm_bf16_amx_emulated.c — x86/amx/gemm_bf16_amx_body.h's loops on
 * emulated/amx_emulator.h's C emulator of the tile instructions (RF_AMX_EMULATED):
 * the AMX kernel's tile walk, edges,
 * tails and epilogue, testable on any x86-64 CPU with AVX2. A kernel of
 * gemm_bf16_backend.h that only tests select ("amx-model"); slow.
 */
#define RF_AMX_EMULATED

#include "kernels/gemm_bf16_backend.h"
#include "kernels/simd.h"

#if RF_SIMD_X86
/* blocks of panels of 32 KiB instead of 1 MiB, so that the tests' small
   products walk several of them */
#define AMX_B_BLOCK (32 * 1024)
#include "kernels/x86/amx/gemm_bf16_amx_body.h"

RF_TARGET_AMX static void gemm(const uint16_t *Xb, int K, int m0, int m1, const uint16_t *Wp,
                               int n0, int n1, const float *b, rf_activation act,
                               const rf_block_post *post, float *Y, int ldy)
{
    amx_gemm(Xb, K, m0, m1, Wp, n0, n1, b, act, post, Y, ldy);
}

const rf_bf16_ops rf_bf16_ops_amx_emulated = {
    .packing = &rf_bf16_packing_c,
    .gemm = gemm,
};
#endif
