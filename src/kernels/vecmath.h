/*
 * vecmath.h — exp and erfc on a vector of floats at a time (GCC/Clang vector
 * extensions), for the element-wise kernels: softmax, GELU, SiLU, tanh.
 *
 * libm's expf/erff/tanhf are scalar calls that cost more than the matrix
 * products around them once sgemm is fast (GELU runs over T x F values per
 * layer, softmax over H x L x L). These polynomial forms are branch-free, so
 * the compiler emits SIMD code for whatever vector width the target has.
 *
 *   rf_v_exp   Cephes expf: x = n ln2 + r, |r| <= ln2/2, degree-6
 *               polynomial in r, times 2^n; within 2 ulp of exp(x).
 *               x < -87.3 gives exactly 0 (so masked attention scores get
 *               exactly zero weight); x is clamped at 88.
 *   rf_v_erfc  for z >= 0, Numerical Recipes' erfcc: t = 1 / (1 + z/2),
 *               erfc(z) = t exp(-z^2 + P(t)), fractional error < 1.2e-7
 *               (plus float rounding of the exponent argument).
 *
 * Naive twins are the libm functions themselves (see the kernels' tests).
 * The polynomials are written as a * b + c: in the AVX2 and AVX-512 builds
 * the compiler fuses them into FMAs (-ffp-contract=fast in the Makefile),
 * which halves their dependency chains.
 */
#ifndef RF_VECMATH_H
#define RF_VECMATH_H

#include <stdint.h>
#include <string.h>

/* Floats per vector. 8 by default: one AVX2 register in the kernels built
 * for AVX2 (simd.h), two SSE2 (or NEON) registers in the baseline build.
 * A file of AVX-512 kernels defines it as 16 (one register) before
 * including this header; a width above the target's register makes GCC
 * split every operation and runs slower than the register's own width. */
#ifndef RF_VLEN
#define RF_VLEN 8
#endif
/* Always inlined, so that each kernel build (simd.h) gets its own code.
 * No function taking or returning the vector type is ever called out of
 * line, so the note of GCC and Clang that 32-byte vectors are passed
 * differently with and without AVX concerns no real call: the Makefile
 * turns it off (-Wno-psabi). */
#define RF_VINLINE static inline __attribute__((always_inline))

typedef float rf_vf __attribute__((vector_size(RF_VLEN * 4)));
typedef int32_t rf_vi __attribute__((vector_size(RF_VLEN * 4)));

RF_VINLINE rf_vf rf_v_load(const float *p)
{
    rf_vf v;
    memcpy(&v, p, sizeof v);
    return v;
}

RF_VINLINE void rf_v_store(float *p, rf_vf v)
{
    memcpy(p, &v, sizeof v);
}

RF_VINLINE rf_vf rf_v_set1(float x)
{
    return (rf_vf){0} + x;
}

/* Loads n < RF_VLEN floats, the other lanes `fill`. */
RF_VINLINE rf_vf rf_v_load_part(const float *p, int n, float fill)
{
    float tmp[RF_VLEN];
    for (int i = 0; i < RF_VLEN; i++)
        tmp[i] = i < n ? p[i] : fill;
    return rf_v_load(tmp);
}

RF_VINLINE void rf_v_store_part(float *p, rf_vf v, int n)
{
    float tmp[RF_VLEN];
    rf_v_store(tmp, v);
    memcpy(p, tmp, (size_t)n * sizeof(float));
}

/* Sum of the RF_VLEN lanes, in a fixed order (the norms' row sums). */
RF_VINLINE float rf_v_sum(rf_vf v)
{
    float sum = 0.0f;
    for (int i = 0; i < RF_VLEN; i++)
        sum += v[i];
    return sum;
}

/* mask ? a : b, mask lanes all ones or all zeros (a comparison result). */
RF_VINLINE rf_vf rf_v_select(rf_vi mask, rf_vf a, rf_vf b)
{
    return (rf_vf)(((rf_vi)a & mask) | ((rf_vi)b & ~mask));
}

RF_VINLINE rf_vf rf_v_exp(rf_vf x)
{
    rf_vi underflow = x < -87.33654475f;
    x = rf_v_select(x > 88.0f, rf_v_set1(88.0f), x);
    x = rf_v_select(underflow, rf_v_set1(-87.0f), x);
    /* n = round(x / ln2) by the 1.5 * 2^23 trick; r = x - n ln2 in two parts */
    rf_vf n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    rf_vf r = x - n * 0.693359375f + n * 2.12194440e-4f;
    rf_vf p = r * 1.9875691500e-4f + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    rf_vf y = p * r * r + r + 1.0f;
    rf_vi bits = (__builtin_convertvector(n, rf_vi) + 127) << 23;
    y = y * (rf_vf)bits;
    return (rf_vf)((rf_vi)y & ~underflow);
}

/* erfc(z) for z >= 0. */
RF_VINLINE rf_vf rf_v_erfc(rf_vf z)
{
    rf_vf t = 1.0f / (1.0f + 0.5f * z);
    rf_vf p = t * 0.17087277f - 0.82215223f;
    p = p * t + 1.48851587f;
    p = p * t - 1.13520398f;
    p = p * t + 0.27886807f;
    p = p * t - 0.18628806f;
    p = p * t + 0.09678418f;
    p = p * t + 0.37409196f;
    p = p * t + 1.00002368f;
    p = p * t - 1.26551223f;
    return t * rf_v_exp(p - z * z);
}

#endif
