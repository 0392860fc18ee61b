/*
 * gemm_int8_amx_emulated.c — the loops of x86/amx/gemm_int8_amx_body.h on the C
 * emulator of the tiles (emulated/amx_emulator.h, RF_AMX_EMULATED): slow, never
 * chosen by the CPU or a user, there so that the tests check the AMX
 * backend's walk, edges, K tails and epilogue on every CPU with AVX2
 * (below one A tile of rows, the AVX2 backend runs).
 */
#include "kernels/simd.h"

#if RF_SIMD_X86
#define RF_AMX_EMULATED
/* blocks of panels of 32 KiB instead of 1 MiB, so that the tests' small
   products walk several of them */
#define AMX_B_BLOCK (32 * 1024)
#define AMX_BLOCK block
#define AMX_STORE_TILE rf_int8_store_tile_avx2
#include "kernels/x86/amx/gemm_int8_amx_body.h"

const rf_int8_ops rf_int8_ops_amx_emulated = {
    .operands = &rf_int8_operands_avx2,
    .block = block,
    .min_rows = 16,
    .small = &rf_int8_ops_avx2,
};
#endif
