/*
 * gemm_int8_vnni.c — the int8 product on AVX512-VNNI (RF_INT8_VNNI;
 * gemm_int8_backend.h): VPDPBUSD, u8 x s8 summed straight into int32, 16
 * channels per instruction from the same packed panels as AVX2. Its first
 * operand is unsigned, so the inputs go in as Xq + 128 (a sign-bit flip)
 * and 128 x colsum[n] comes off the sums afterwards: the same exact
 * integers. The inputs are stored flipped when quantized (this backend's
 * rows in), so the step per row is one broadcast load and one VPDPBUSD
 * (docs/performance.md has its port count). A tile is MR_VNNI rows of one
 * panel, one accumulator per row.
 */
#include "kernels/gemm_int8_backend.h"
#include "kernels/simd.h"

#include <string.h>

#if RF_SIMD_X86
#include <immintrin.h>

#define PANEL RF_INT8_PANEL
#define MR_VNNI RF_INT8_MAX_TILE_ROWS /* rows per tile: MR_VNNI accumulators of 16 int32 */
#define RF_TARGET_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

/* The VNNI tile: rows [0, mr) of A (inputs stored as Xq + 128, unsigned)
 * times one panel, into C (mr x 16 int32), less 128 * colsum[n]. The
 * product is written as inline assembly: GCC 12 ties VPDPBUSD's
 * accumulator badly and copies each one twice per step (two moves per
 * product on the same two ports; docs/performance.md). */
RF_TARGET_VNNI static inline __attribute__((always_inline)) void
vnni_tile(const int mr, const int8_t *A, size_t lda, const int8_t *W, int kq,
          const int32_t *colsum, int32_t *C)
{
    __m512i acc[MR_VNNI];
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++)
        acc[r] = _mm512_setzero_si512();
    for (int i = 0; i < kq; i++) {
        __m512i w = _mm512_load_si512((const void *)(W + (size_t)i * 64));
#pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            int32_t quad;
            memcpy(&quad, A + (size_t)r * lda + (size_t)i * 4, 4);
            __m512i a = _mm512_set1_epi32(quad);
            __asm__("vpdpbusd %2, %1, %0" : "+v"(acc[r]) : "v"(a), "v"(w));
        }
    }
    __m512i offset = _mm512_slli_epi32(_mm512_loadu_si512((const void *)colsum), 7);
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++)
        _mm512_storeu_si512((void *)(C + r * PANEL), _mm512_sub_epi32(acc[r], offset));
}

RF_INT8_TILE_BLOCK(block, RF_TARGET_VNNI, vnni_tile, MR_VNNI, rf_int8_store_tile_avx512)

/* The rows are quantized as for every backend, and stored as Xq + 128:
 * VPDPBUSD's unsigned operand. */
const rf_int8_ops rf_int8_ops_vnni = {
    .operands = &rf_int8_operands_avx512_u8,
    .block = block,
};
#endif
