/*
 * fp16.h — IEEE half (f16) and bfloat16 (bf16) <-> float32 conversions.
 *
 * Narrowing rounds to nearest, ties to even, as PyTorch's `.half()` and
 * `.bfloat16()` do; NaN stays NaN (quiet), overflow becomes infinity.
 * Widening is exact. Bit patterns are handled through memcpy, never through
 * pointer casts, so these are safe on any buffer.
 */
#ifndef RF_FP16_H
#define RF_FP16_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t rf_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float rf_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float rf_bf16_to_f32(uint16_t h)
{
    return rf_f32_from_bits((uint32_t)h << 16);
}

static inline uint16_t rf_f32_to_bf16(float f)
{
    uint32_t u = rf_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep the sign, force quiet */
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even on the dropped 16 bits */
    return (uint16_t)(u >> 16);
}

/* Branch-light so that loops over whole tensors vectorize: placing the
 * half's exponent and mantissa in a float's low bits and scaling by 2^112
 * rebiases normals and turns subnormals into normals exactly (the scale is
 * a power of two). */
static inline float rf_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t em = h & 0x7fffu;
    float mag = rf_f32_from_bits(em << 13) * 0x1p112f;
    if (em >= 0x7c00u) /* inf / NaN */
        mag = rf_f32_from_bits(0x7f800000u | (em << 13));
    return rf_f32_from_bits(rf_f32_bits(mag) | sign);
}

static inline uint16_t rf_f32_to_f16(float f)
{
    uint32_t u = rf_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN */
        return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) /* >= 65520 rounds to infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (a < 0x38800000u) {
        /* below the smallest normal half (2^-14): a subnormal or zero.
         * Shift the full mantissa (with its implicit bit) into place and
         * round the bits shifted out to nearest even. */
        if (a < 0x33000000u) /* < 2^-25: rounds to zero */
            return sign;
        uint32_t e = a >> 23;
        uint32_t m = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e; /* 14..24 */
        uint32_t out = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (out & 1u)))
            out++;
        return (uint16_t)(sign | out);
    }
    /* normal: rebias the exponent, round the 13 dropped mantissa bits;
     * a carry out of the mantissa correctly bumps the exponent */
    a -= 0x38000000u; /* (127 - 15) << 23 */
    a += 0xfffu + ((a >> 13) & 1u);
    return (uint16_t)(sign | (a >> 13));
}

#endif
