/*
 * dot_peak_arm64.c — the ARM64 twin of fma_peak.c: per-core peaks of the
 * instructions the products run on, twelve independent chains each, in G
 * multiply-adds per second: f32 FMLA (128-bit, 4 lanes), SDOT (int8, 4
 * lanes x 4), SMMLA (int8 2 x 8 by 8 x 2, I8MM), BFDOT (bf16, 4 lanes x
 * 2). Each is built for its extension by a target attribute and run only
 * where the kernel reports it (HWCAP); a line names what is missing.
 * Built and run by scripts/sgemm_cores.sh on ARM64; not a test.
 *
 *   dot_peak_arm64 [ROUNDS]   (default 50000000 rounds a run)
 */
#include <arm_neon.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <time.h>

#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#ifndef HWCAP2_I8MM
#define HWCAP2_I8MM (1 << 13)
#endif
#ifndef HWCAP2_BF16
#define HWCAP2_BF16 (1 << 14)
#endif

#define CHAINS 12
#define FOR_EACH_CHAIN(DO) DO(0) DO(1) DO(2) DO(3) DO(4) DO(5) DO(6) DO(7) DO(8) DO(9) DO(10) DO(11)

#define DECLARE_fmla_chains(i) float32x4_t a##i = vdupq_n_f32(i);
#define STEP_fmla_chains(i) a##i = vfmaq_f32(a##i, mul, add); __asm__ volatile("" : "+w"(a##i));
#define SUM_fmla_chains(i) sum += vgetq_lane_f32(a##i, 0);
static float fmla_chains(long iters)
{
    const float32x4_t mul = vdupq_n_f32(1.0000001f), add = vdupq_n_f32(1e-7f);
    FOR_EACH_CHAIN(DECLARE_fmla_chains)
    for (long n = 0; n < iters; n++) {
        FOR_EACH_CHAIN(STEP_fmla_chains)
    }
    float sum = 0;
    FOR_EACH_CHAIN(SUM_fmla_chains)
    return sum;
}

#define DECLARE_I(i) int32x4_t a##i = vdupq_n_s32(i);
#define SUM_I(i) sum += (float)vgetq_lane_s32(a##i, 0);
#define STEP_SDOT(i) a##i = vdotq_s32(a##i, x, w); __asm__ volatile("" : "+w"(a##i));
__attribute__((target("arch=armv8.2-a+dotprod"))) static float sdot_chains(long iters)
{
    const int8x16_t x = vdupq_n_s8(3), w = vdupq_n_s8(-2);
    FOR_EACH_CHAIN(DECLARE_I)
    for (long n = 0; n < iters; n++) {
        FOR_EACH_CHAIN(STEP_SDOT)
    }
    float sum = 0;
    FOR_EACH_CHAIN(SUM_I)
    return sum;
}

#define STEP_SMMLA(i) a##i = vmmlaq_s32(a##i, x, w); __asm__ volatile("" : "+w"(a##i));
__attribute__((target("arch=armv8.6-a+i8mm"))) static float smmla_chains(long iters)
{
    const int8x16_t x = vdupq_n_s8(3), w = vdupq_n_s8(-2);
    FOR_EACH_CHAIN(DECLARE_I)
    for (long n = 0; n < iters; n++) {
        FOR_EACH_CHAIN(STEP_SMMLA)
    }
    float sum = 0;
    FOR_EACH_CHAIN(SUM_I)
    return sum;
}

#define DECLARE_F(i) float32x4_t a##i = vdupq_n_f32(i);
#define SUM_F(i) sum += vgetq_lane_f32(a##i, 0);
#define STEP_BFDOT(i) a##i = vbfdotq_f32(a##i, x, w); __asm__ volatile("" : "+w"(a##i));
__attribute__((target("arch=armv8.6-a+bf16"))) static float bfdot_chains(long iters)
{
    /* read at run time: a constant would be built by an FP16 instruction */
    static volatile uint16_t bits[2] = {0x3f80, 0x3380};
    const bfloat16x8_t x = vreinterpretq_bf16_u16(vdupq_n_u16(bits[0]));
    const bfloat16x8_t w = vreinterpretq_bf16_u16(vdupq_n_u16(bits[1]));
    FOR_EACH_CHAIN(DECLARE_F)
    for (long n = 0; n < iters; n++) {
        FOR_EACH_CHAIN(STEP_BFDOT)
    }
    float sum = 0;
    FOR_EACH_CHAIN(SUM_F)
    return sum;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Best of five runs, in G multiply-adds per second, `per_instruction`
 * multiply-adds per instruction and chain. */
static long iters = 50000000;

static double peak_rate(float (*chains)(long), int per_instruction, float *checksum)
{
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_s();
        *checksum += chains(iters);
        double rate = iters * (double)CHAINS * per_instruction / (now_s() - t0) * 1e-9;
        best = rate > best ? rate : best;
    }
    return best;
}

int main(int argc, char **argv)
{
    if (argc > 1) /* fewer rounds, e.g. to check it under an emulator */
        iters = atol(argv[1]) > 0 ? atol(argv[1]) : iters;
    unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
    float checksum = 0;
    printf("# f32 FMLA peak, one core (128-bit, %d chains): %.1f G multiply-adds/s\n", CHAINS,
           peak_rate(fmla_chains, 4, &checksum));
    if (hw & HWCAP_ASIMDDP)
        printf("# int8 SDOT peak, one core (128-bit, %d chains): %.1f G multiply-adds/s\n", CHAINS,
               peak_rate(sdot_chains, 16, &checksum));
    else
        printf("# int8 SDOT peak: not available (no dot product, asimddp)\n");
    if (hw2 & HWCAP2_I8MM)
        printf("# int8 SMMLA peak, one core (2 x 8 by 8 x 2, %d chains): %.1f G multiply-adds/s\n",
               CHAINS, peak_rate(smmla_chains, 32, &checksum));
    else
        printf("# int8 SMMLA peak: not available (no I8MM)\n");
    if (hw2 & HWCAP2_BF16)
        printf("# bf16 BFDOT peak, one core (128-bit, %d chains): %.1f G multiply-adds/s\n", CHAINS,
               peak_rate(bfdot_chains, 8, &checksum));
    else
        printf("# bf16 BFDOT peak: not available (no BF16)\n");
    printf("# (checksum %g)\n", checksum);
    return 0;
}
