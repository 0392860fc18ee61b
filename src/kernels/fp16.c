/*
 * fp16.c — widening whole f16 / bf16 tensors to f32 at load time.
 *
 * A base-size model holds ~10^8 weights, so the loop is worth the CPU's
 * conversion instructions (x86 F16C for f16, AVX2 shifts for bf16; the
 * times: docs/performance.md). The instructions are chosen at run time,
 * so the build needs no -march flag; the scalar loop (fp16.h) is the
 * reference and the fallback. Both are exact.
 */
#include "kernels/fp16.h"
#include "kernels/cpu.h"
#include "kernels/simd.h"

#if RF_SIMD_X86
#include <immintrin.h>
#endif

static uint16_t load_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

#if RF_SIMD_X86
RF_TARGET_F16C static size_t widen_f16_f16c(const uint8_t *src, float *dst, size_t n)
{
    size_t k = 0;
    for (; k + 8 <= n; k += 8)
        _mm256_storeu_ps(dst + k, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + 2 * k))));
    return k;
}

RF_TARGET_AVX2 static size_t widen_bf16_avx2(const uint8_t *src, float *dst, size_t n)
{
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(src + 2 * k)));
        _mm256_storeu_si256((__m256i *)(dst + k), _mm256_slli_epi32(w, 16));
    }
    return k;
}
#endif

void rf_widen_f16(const void *src, float *dst, size_t n)
{
    const uint8_t *s = src;
    size_t k = 0;
#if RF_SIMD_X86
    if (rf_cpu_has(RF_CPU_F16C))
        k = widen_f16_f16c(s, dst, n);
#endif
    for (; k < n; k++)
        dst[k] = rf_f16_to_f32(load_u16(s + 2 * k));
}

void rf_widen_bf16(const void *src, float *dst, size_t n)
{
    const uint8_t *s = src;
    size_t k = 0;
#if RF_SIMD_X86
    if (rf_cpu_has(RF_CPU_AVX2))
        k = widen_bf16_avx2(s, dst, n);
#endif
    for (; k < n; k++)
        dst[k] = rf_bf16_to_f32(load_u16(s + 2 * k));
}
