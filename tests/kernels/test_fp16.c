/*
 * test_fp16.c — f16 / bf16 conversions: known bit patterns, round-to-nearest-
 * even ties, subnormals, overflow, NaN, and every finite half / bfloat16
 * value surviving a widen + narrow round trip.
 */
#include "../check.h"
#include "kernels/backend.h"
#include "kernels/fp16.h"
#include "kernels/widen.h"

#include <math.h>

static float f(uint32_t bits)
{
    return rf_f32_from_bits(bits);
}

int main(void)
{
    /* f16: known values */
    static const struct {
        float in;
        uint16_t out;
    } f16[] = {
        {0.0f, 0x0000},       {-0.0f, 0x8000},      {1.0f, 0x3c00},       {-2.0f, 0xc000},
        {65504.0f, 0x7bff},   {65519.99f, 0x7bff},  {65520.0f, 0x7c00},   {1e9f, 0x7c00},
        {-1e9f, 0xfc00},      {0.5f, 0x3800},       {6.103515625e-05f, 0x0400}, /* 2^-14 */
        {5.960464477539063e-08f, 0x0001},           /* 2^-24, smallest subnormal */
        {2.98023223876953125e-08f, 0x0000},         /* 2^-25: tie, rounds to even 0 */
        {8.940696716308594e-08f, 0x0002},           /* 3 * 2^-25: tie, rounds to even 2 */
        {1.00048828125f, 0x3c00},                   /* 1 + 2^-11: tie, to even 1.0 */
        {1.00146484375f, 0x3c02},                   /* 1 + 3 * 2^-11: tie, to even */
        {1.0009765625f, 0x3c01},                    /* 1 + 2^-10 exact */
        {6.097555160522461e-05f, 0x03ff},           /* largest subnormal */
        {6.1005353927612305e-05f, 0x0400},          /* rounds up into the normals */
    };
    for (size_t i = 0; i < sizeof f16 / sizeof f16[0]; i++)
        CHECK(rf_f32_to_f16(f16[i].in) == f16[i].out, "f32 %.10g -> f16 0x%04x, expected 0x%04x",
              f16[i].in, rf_f32_to_f16(f16[i].in), f16[i].out);
    CHECK((rf_f32_to_f16(NAN) & 0x7c00) == 0x7c00 && (rf_f32_to_f16(NAN) & 0x3ff),
          "NaN stays NaN in f16");
    CHECK(isnan(rf_f16_to_f32(0x7e00)) && isinf(rf_f16_to_f32(0x7c00)), "f16 NaN/inf widen");
    CHECK(rf_f16_to_f32(0x0001) == 5.960464477539063e-08f, "f16 subnormal widens exactly");

    /* widening: every finite f16 value, against sign * mantissa * 2^exponent */
    int wrong = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        int e = (h >> 10) & 0x1f, m = h & 0x3ff;
        if (e == 0x1f)
            continue;
        double want = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
        if (h & 0x8000)
            want = -want;
        float got = rf_f16_to_f32((uint16_t)h);
        if (got != (float)want || !!signbit(got) != !!(h & 0x8000))
            wrong++;
    }
    CHECK(wrong == 0, "%d f16 values widen wrongly", wrong);

    /* every finite f16 value round-trips; ordering is preserved */
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00)
            continue;
        if (rf_f32_to_f16(rf_f16_to_f32((uint16_t)h)) != h)
            bad++;
    }
    CHECK(bad == 0, "%d f16 values do not round-trip", bad);
    bad = 0;
    for (uint32_t h = 0; h < 0x7bff; h++) /* midpoint between neighbours rounds to the even one */
        if (rf_f32_to_f16((rf_f16_to_f32((uint16_t)h) + rf_f16_to_f32((uint16_t)(h + 1))) / 2) !=
            ((h & 1) ? h + 1 : h))
            bad++;
    CHECK(bad == 0, "%d f16 midpoints not rounded to even", bad);

    /* bf16 */
    CHECK(rf_f32_to_bf16(1.0f) == 0x3f80, "bf16 1.0");
    CHECK(rf_f32_to_bf16(f(0x3f808000)) == 0x3f80, "bf16 tie to even (down)");
    CHECK(rf_f32_to_bf16(f(0x3f818000)) == 0x3f82, "bf16 tie to even (up)");
    CHECK(rf_f32_to_bf16(f(0x3f808001)) == 0x3f81, "bf16 above the tie rounds up");
    CHECK(rf_f32_to_bf16(f(0x7f7fffff)) == 0x7f80, "bf16 overflow to inf");
    CHECK((rf_f32_to_bf16(NAN) & 0x7f80) == 0x7f80 && (rf_f32_to_bf16(NAN) & 0x7f),
          "bf16 NaN stays NaN");
    CHECK((rf_f32_to_bf16(f(0x7f800001)) & 0x7f) != 0, "bf16 signalling NaN with low payload stays NaN");
    bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7f80) == 0x7f80)
            continue;
        if (rf_f32_to_bf16(rf_bf16_to_f32((uint16_t)h)) != h)
            bad++;
    }
    CHECK(bad == 0, "%d bf16 values do not round-trip", bad);
    /* the whole-tensor widening of every element-wise build this CPU runs
     * against the scalar conversion, for every bit pattern, at every
     * misalignment */
    uint8_t *raw = malloc(2 * 65536 + 2);
    float *out = malloc(sizeof(float) * 65536);
    const rf_backend *best = rf_backend_get(RF_OP_ELEMENTWISE);
    for (int i = 0; i < rf_backend_count; i++) {
        const rf_backend *b = &rf_backends[i];
        if (b->op != RF_OP_ELEMENTWISE)
            continue;
        if (!rf_backend_set(b)) {
            SKIP("widening on the %s build: this CPU does not run it", b->name);
            continue;
        }
        for (int shift = 0; shift < 2; shift++) {
            for (uint32_t h = 0; h < 65536; h++) {
                raw[shift + 2 * h] = (uint8_t)h;
                raw[shift + 2 * h + 1] = (uint8_t)(h >> 8);
            }
            int f16_bad = 0, bf16_bad = 0;
            rf_widen_f16(raw + shift, out, 65536 - 3); /* a length that leaves a scalar tail */
            for (uint32_t h = 0; h < 65536 - 3; h++) {
                float want = rf_f16_to_f32((uint16_t)h);
                if (memcmp(&want, &out[h], 4) && !(isnan(want) && isnan(out[h])))
                    f16_bad++;
            }
            rf_widen_bf16(raw + shift, out, 65536 - 3);
            for (uint32_t h = 0; h < 65536 - 3; h++) {
                float want = rf_bf16_to_f32((uint16_t)h);
                if (memcmp(&want, &out[h], 4))
                    bf16_bad++;
            }
            CHECK(f16_bad == 0, "rf_widen_f16 (%s): %d values differ (offset %d)", b->name,
                  f16_bad, shift);
            CHECK(bf16_bad == 0, "rf_widen_bf16 (%s): %d values differ (offset %d)", b->name,
                  bf16_bad, shift);
        }
    }
    rf_backend_set(best);
    free(raw);
    free(out);
    return check_done();
}
