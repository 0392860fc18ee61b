/*
 * gemm_int8_amx_model.c — the loops of gemm_int8_amx_body.h on the C model
 * of the tiles (amx_model.h), RF_INT8_AMX_MODEL: slow, never chosen by
 * default, there so that the tests check the AMX build's walk, edges, K
 * tails and epilogue on every CPU with AVX2.
 */
#include "kernels/simd.h"

#if RF_SIMD_X86
#define RF_AMX_MODEL
#define AMX_BLOCK block
#include "kernels/gemm_int8_amx_body.h"

const rf_int8_backend rf_int8_backend_amx_model = {"amx-model", rf_cpu_has_avx2_fma, block,
                                                   rf_int8_quantize_rows_avx2,
                                                   rf_int8_row_sum_avx2, false};
#endif
