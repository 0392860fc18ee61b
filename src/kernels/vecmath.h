/*
 * vecmath.h — exp and erf on a vector of floats at a time (GCC/Clang vector
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
 *   rf_v_exp_for_bf16  exp(x) for x <= 0 (a row less its maximum, as
 *               attention's weights in bf16 are): the same reduction, a
 *               degree-5 polynomial fitted to e^r on |r| <= 0.35 (9.7e-8
 *               relatively), 2^n added to the exponent bits instead of a
 *               conversion and a product, and no clamp above; within
 *               5e-7 of exp(x). exp(0) is exactly 1, x < -87 exactly 0.
 *   rf_v_erf   z P(z^2) / Q(z^2), a rational of degrees 5 and 5 in z^2
 *               fitted to erf(z) / z to 1.9e-8 relatively on |z| <= 3.925
 *               (scripts/fit_erf.py), +-1 beyond; with float rounding in
 *               the two Horner sums (positive terms: under 5 half-ulps
 *               each) within 8 ulp of erf(z) (test_vecmath). No exp and
 *               one division: GELU's cost on the FFN's T x F values.
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
 * for AVX2 (elementwise.h), two SSE2 (or NEON) registers in the baseline build.
 * A file of AVX-512 kernels defines it as 16 (one register) before
 * including this header; a width above the target's register makes GCC
 * split every operation and runs slower than the register's own width. */
#ifndef RF_VLEN
#define RF_VLEN 8
#endif
/* Always inlined, so that each kernel build (elementwise.h) gets its own code.
 * No function taking or returning the vector type is ever called out of
 * line, so the note of GCC and Clang that 32-byte vectors are passed
 * differently with and without AVX concerns no real call: the Makefile
 * turns it off (-Wno-psabi). */
#define RF_VINLINE static inline __attribute__((always_inline))

typedef float rf_vf __attribute__((vector_size(RF_VLEN * 4)));
typedef int32_t rf_vi __attribute__((vector_size(RF_VLEN * 4)));
/* unsigned lanes, for shifts that may move bits out of the top */
typedef uint32_t rf_vu __attribute__((vector_size(RF_VLEN * 4)));

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

/* The norms' first pass over a row of n: x += y where y is not NULL, and
 * the sum of the new x (squares: of their squares) in RF_VLEN lanes, then
 * the tail past the last whole vector. */
RF_VINLINE float rf_v_add_sum(float *restrict x, const float *restrict y, int n, const int squares)
{
    int vec = n / RF_VLEN * RF_VLEN;
    rf_vf acc = rf_v_set1(0.0f);
    for (int i = 0; i < vec; i += RF_VLEN) {
        rf_vf v = rf_v_load(x + i);
        if (y) {
            v += rf_v_load(y + i);
            rf_v_store(x + i, v);
        }
        acc += squares ? v * v : v;
    }
    float sum = rf_v_sum(acc);
    for (int i = vec; i < n; i++) {
        if (y)
            x[i] += y[i];
        sum += squares ? x[i] * x[i] : x[i];
    }
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

RF_VINLINE rf_vf rf_v_exp_for_bf16(rf_vf x)
{
    rf_vi underflow = x < -87.0f;
    /* n = round(x / ln2) in the low bits of t (the 1.5 * 2^23 trick),
       r = x - n ln2 in two parts, exact for |n| <= 126 but the last */
    rf_vf t = x * 1.44269504088896341f + 12582912.0f;
    rf_vf n = t - 12582912.0f;
    rf_vf r = x - n * 0.693359375f + n * 2.12194440e-4f;
    rf_vf p = r * 8.289456367e-3f + 4.190248996e-2f;
    p = p * r + 1.666767448e-1f;
    p = p * r + 4.999911487e-1f;
    p = p * r + 9.999997020e-1f;
    p = p * r + 1.0f;
    /* times 2^n: n's low bits, shifted into the exponent (x >= -87: it
       stays a normal number); -inf and x < -87 give exactly 0 */
    rf_vu scaled = (rf_vu)p + ((rf_vu)t << 23);
    return (rf_vf)(scaled & ~(rf_vu)underflow);
}

/* erf(z): z P(z^2) / Q(z^2) for z^2 < 3.925^2 (scripts/fit_erf.py), +-1
 * from there on, where erf rounds to +-1 in float32 (so that GELU of a
 * large negative x is exactly 0); NaN stays NaN. */
RF_VINLINE rf_vf rf_v_erf(rf_vf z)
{
    rf_vf u = z * z;
    rf_vi saturated = u >= 3.925f * 3.925f;
    u = rf_v_select(saturated, rf_v_set1(3.925f * 3.925f), u);
    rf_vf p = u * 2.046023383e-06f + 2.848448057e-04f;
    p = p * u + 3.772594268e-03f;
    p = p * u + 5.276943371e-02f;
    p = p * u + 1.905947477e-01f;
    p = p * u + 1.128379107e+00f;
    rf_vf q = u * 3.804780135e-05f + 1.163869048e-03f;
    q = q * u + 1.498328522e-02f;
    q = q * u + 1.141831353e-01f;
    q = q * u + 5.022429228e-01f;
    q = q * u + 1.0f;
    rf_vf sign_one = (rf_vf)(((rf_vi)z & INT32_MIN) | 0x3f800000); /* +-1 */
    return rf_v_select(saturated, sign_one, z * p / q);
}

#endif
