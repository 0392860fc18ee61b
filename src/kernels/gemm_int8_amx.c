/*
 * gemm_int8_amx.c — the int8 product on AMX-INT8 tiles (RF_INT8_AMX): the
 * loops of gemm_int8_amx_body.h on the TDPBSSD instructions.
 */
#include "kernels/simd.h"

#if RF_SIMD_X86
#define AMX_BLOCK block
#include "kernels/gemm_int8_amx_body.h"

static bool cpu_runs(void)
{
    return rf_amx_usable(RF_AMX_INT8) && rf_cpu_has_avx512_vnni();
}

const rf_int8_backend rf_int8_backend_amx = {"amx", cpu_runs, block, rf_int8_quantize_rows_avx2,
                                             rf_int8_row_sum_avx2, false};
#endif
