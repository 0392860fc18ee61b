/*
 * widen_vec.h — the body of the f16 and bf16 widening (widen.h's
 * rf_widen_f16 / rf_widen_bf16) on the vector type of vecmath.h, compiled
 * once per element-wise build (elementwise_build.h). The vector form of
 * fp16.h's scalar conversions, bit for bit the same; the scalar ones take
 * the tail past the last whole vector.
 */
#ifndef RF_WIDEN_VEC_H
#define RF_WIDEN_VEC_H

#include "kernels/fp16.h"
#include "kernels/vecmath.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint16_t rf_vh __attribute__((vector_size(RF_VLEN * 2)));

/* A little-endian 16-bit value at p (any alignment). */
static inline uint16_t rf_load_u16_le(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* RF_VLEN little-endian 16-bit values at p, widened to 32-bit lanes. */
RF_VINLINE rf_vu widen_load_u16(const uint8_t *p)
{
    rf_vh h;
    memcpy(&h, p, sizeof h);
    return __builtin_convertvector(h, rf_vu);
}

/* The vector loops read memory as little-endian lanes; elsewhere the
 * scalar loop does it all. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define RF_WIDEN_VECTORS 1
#else
#define RF_WIDEN_VECTORS 0
#endif

RF_VINLINE void widen_bf16_values(const void *src, float *dst, size_t n)
{
    const uint8_t *s = src;
    size_t k = 0;
    for (; RF_WIDEN_VECTORS && k + RF_VLEN <= n; k += RF_VLEN) {
        rf_vu w = widen_load_u16(s + 2 * k) << 16;
        memcpy(dst + k, &w, sizeof w);
    }
    for (; k < n; k++)
        dst[k] = rf_bf16_to_f32(rf_load_u16_le(s + 2 * k));
}

/* rf_f16_to_f32 on a vector: exponent and mantissa placed in a float's
 * low bits and scaled by 2^112, infinities and NaNs rebuilt. */
RF_VINLINE void widen_f16_values(const void *src, float *dst, size_t n)
{
    const uint8_t *s = src;
    size_t k = 0;
    for (; RF_WIDEN_VECTORS && k + RF_VLEN <= n; k += RF_VLEN) {
        rf_vu h = widen_load_u16(s + 2 * k);
        rf_vu sign = (h & 0x8000u) << 16, em = h & 0x7fffu;
        rf_vu low = em << 13;
        rf_vf mag;
        memcpy(&mag, &low, sizeof mag);
        mag *= 0x1p112f;
        rf_vu bits;
        memcpy(&bits, &mag, sizeof bits);
        rf_vu special = (rf_vu)(em >= 0x7c00u); /* all ones: infinity or NaN */
        bits = (bits & ~special) | ((0x7f800000u | low) & special);
        bits |= sign;
        memcpy(dst + k, &bits, sizeof bits);
    }
    for (; k < n; k++)
        dst[k] = rf_f16_to_f32(rf_load_u16_le(s + 2 * k));
}

#endif
