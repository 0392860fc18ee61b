/*
 * gemm_int8_avx2.c — the int8 product on AVX2 (RF_INT8_AVX2;
 * gemm_int8_backend.h). AVX2 has no int8 dot product: VPMADDUBSW
 * multiplies unsigned by signed bytes and adds pairs in saturating int16,
 * so the tile gives it |x| and the weights with x's sign (VPSIGNB on both),
 * which keeps every pair sum within int16 (2 x 127^2 < 32767) and the
 * sums exact (gemm_int8.h). A tile of MR rows x 16 int32 sums lives in
 * 2 x MR registers for the whole of K.
 */
#include "kernels/gemm_int8_backend.h"
#include "kernels/simd.h"

#include <string.h>

#if RF_SIMD_X86
#include <immintrin.h>

#define PANEL RF_INT8_PANEL
#define MR 4 /* rows per register tile: 2 * MR int32 accumulators */

/* One tile: rows [0, mr) of A (rows lda bytes apart) times one packed
 * panel over kq quads, into C (mr x 16 int32). mr is a constant at every
 * call, so the loops unroll and the sums stay in registers. */
RF_TARGET_AVX2 static inline __attribute__((always_inline)) void
tile(const int mr, const int8_t *A, size_t lda, const int8_t *W, int kq, const int32_t *colsum,
     int32_t *C)
{
    (void)colsum; /* signed sums: nothing to take off */
    __m256i acc[MR][2];
    const __m256i ones = _mm256_set1_epi16(1);
#pragma GCC unroll 4
    for (int r = 0; r < mr; r++)
        acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (int i = 0; i < kq; i++) {
        __m256i w0 = _mm256_load_si256((const __m256i *)(const void *)(W + (size_t)i * 64));
        __m256i w1 = _mm256_load_si256((const __m256i *)(const void *)(W + (size_t)i * 64 + 32));
#pragma GCC unroll 4
        for (int r = 0; r < mr; r++) {
            int32_t quad;
            memcpy(&quad, A + (size_t)r * lda + (size_t)i * 4, 4);
            __m256i a = _mm256_set1_epi32(quad);
            __m256i a_abs = _mm256_sign_epi8(a, a);
            __m256i p0 = _mm256_maddubs_epi16(a_abs, _mm256_sign_epi8(w0, a));
            __m256i p1 = _mm256_maddubs_epi16(a_abs, _mm256_sign_epi8(w1, a));
            acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(p0, ones));
            acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(p1, ones));
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < mr; r++) {
        _mm256_storeu_si256((__m256i *)(void *)(C + r * PANEL), acc[r][0]);
        _mm256_storeu_si256((__m256i *)(void *)(C + r * PANEL + 8), acc[r][1]);
    }
}

RF_INT8_TILE_BLOCK(block, RF_TARGET_AVX2, tile, MR, rf_int8_store_tile_avx2)

const rf_int8_ops rf_int8_ops_avx2 = {
    .operands = &rf_int8_operands_avx2,
    .block = block,
};
#endif
