/*
 * gemm_int8_amx.c — the int8 product on AMX-INT8 tiles (RF_INT8_AMX): the
 * loops of x86/amx/gemm_int8_amx_body.h on the TDPBSSD instructions, rows in and
 * epilogue on AVX-512. Products of fewer than AMX_MIN_ROWS rows run on the
 * VNNI backend (the tiles' rows come 16 at a time; docs/performance.md
 * has where AMX starts to win).
 */
#include "kernels/simd.h"

#if RF_SIMD_X86
#define AMX_BLOCK block
#define AMX_STORE_TILE rf_int8_store_tile_avx512
#include "kernels/x86/amx/gemm_int8_amx_body.h"

/* Rows below which the VNNI backend runs instead (both exact; at least
 * 16, one A tile). */
#ifndef AMX_MIN_ROWS
#define AMX_MIN_ROWS 16
#endif

const rf_int8_ops rf_int8_ops_amx = {
    .operands = &rf_int8_operands_avx512,
    .block = block,
    .min_rows = AMX_MIN_ROWS,
    .small = &rf_int8_ops_vnni,
};
#endif
