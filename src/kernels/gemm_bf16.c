/*
 * gemm_bf16.c — the bf16 product's driver (see gemm_bf16.h for the packed
 * weight layout and the rule that picks a kernel): the table of kernels
 * (gemm_bf16_backend.h) and the choice among them, rounding inputs and
 * packing weights, the split over threads, the single-thread pieces
 * attention uses, and the naive twin. Rounding and packing have an
 * AVX512_BF16 build (VCVTNE2PS2BF16) and a plain C one (ARM64, and the
 * test-only tile emulator on CPUs without AVX512_BF16); both round to
 * nearest even.
 */
#include "kernels/gemm_bf16.h"
#include "kernels/activations.h"
#include "formats/fp16.h"
#include "kernels/cpu.h"
#include "kernels/gemm_bf16_backend.h"
#include "kernels/linalg.h"
#include "kernels/simd.h"

#include <string.h>

#define PANEL 16 /* output columns per panel */
#define NR 32    /* the kernels' column blocks: N is padded to a multiple */

static int padded_n(int N)
{
    return (N + NR - 1) / NR * NR;
}

size_t rf_bf16_packed_size(int N, int K)
{
    return (size_t)padded_n(N) * (size_t)rf_bf16_k_pairs(K) * 2;
}

size_t rf_bf16_scratch_size(int M, int K)
{
    return (size_t)M * (size_t)rf_bf16_k_pairs(K) * 2;
}

/* ==== The backends and the rule ==== */

const rf_bf16_backend *const rf_bf16_backends[] = {
#if RF_SIMD_X86
    &rf_bf16_backend_amx, &rf_bf16_backend_avx512bf16, &rf_bf16_backend_f32fma,
    &rf_bf16_backend_amx_emulated,
#elif RF_SIMD_ARM64
    &rf_bf16_backend_bfmmla, &rf_bf16_backend_bfdot,
#endif
    NULL,
};
const int rf_bf16_backend_count = (int)(sizeof rf_bf16_backends / sizeof rf_bf16_backends[0]) - 1;

bool rf_bf16_backend_runs(const rf_bf16_backend *b)
{
    return b && rf_cpu_has_all(b->needs);
}

/* The rule of gemm_bf16.h: the first backend whose rule set the CPU has
 * (and the OS grants: AMX), the same answer every time on a given CPU;
 * NULL where none does. */
static const rf_bf16_backend *rule(void)
{
    for (int i = 0; i < rf_bf16_backend_count; i++)
        if (rf_bf16_backends[i]->rule && rf_cpu_has_all(rf_bf16_backends[i]->rule))
            return rf_bf16_backends[i];
    return NULL;
}

bool rf_bf16_supported(void)
{
    return rule() != NULL;
}

/* NULL: not chosen yet (pointers read and written whole, as in simd.c) */
static const rf_bf16_backend *chosen;
static const char *chosen_why = "";

const rf_bf16_backend *rf_bf16_backend_get(void)
{
    const rf_bf16_backend *b = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
    if (!b) {
        /* without bf16 support it still names one, which is not used */
        b = rule();
        const char *why = b ? b->why : "no " RF_BF16_CPU_NEEDS ": bf16 compute unavailable";
        if (!b)
            b = rf_bf16_backends[0];
        __atomic_store_n(&chosen_why, why, __ATOMIC_RELAXED);
        __atomic_store_n(&chosen, b, __ATOMIC_RELAXED);
    }
    return b;
}

bool rf_bf16_backend_set(const rf_bf16_backend *b)
{
    if (!rf_bf16_backend_runs(b))
        return false;
    __atomic_store_n(&chosen_why, "set by the caller", __ATOMIC_RELAXED);
    __atomic_store_n(&chosen, b, __ATOMIC_RELAXED);
    return true;
}

const char *rf_bf16_backend_reason(void)
{
    rf_bf16_backend_get();
    return __atomic_load_n(&chosen_why, __ATOMIC_RELAXED);
}

const rf_bf16_backend *rf_bf16_backend_find(const char *name)
{
    for (int i = 0; i < rf_bf16_backend_count; i++)
        if (!strcmp(name, rf_bf16_backends[i]->name))
            return rf_bf16_backends[i];
    return NULL;
}

const char *rf_bf16_backend_name(void)
{
    return rf_bf16_backend_get()->name;
}

bool rf_bf16_attention_fast(void)
{
    return rf_bf16_supported() && rf_bf16_backend_get()->attention_fast;
}

static rf_bf16_gemm_fn *gemm_kernel(void)
{
    return rf_bf16_backend_get()->gemm;
}

/* ==== Rounding and packing ==== */

/* Plain C: rounds scale * rows [m0, m1) of X (rows ldx apart) to bf16
 * pairs, as the AVX512_BF16 build below. */
static void round_rows_c(const float *X, size_t ldx, int K, float scale, int m0, int m1,
                         uint16_t *out)
{
    int kp = rf_bf16_k_pairs(K);
    for (int r = m0; r < m1; r++) {
        const float *x = X + (size_t)r * ldx;
        uint16_t *o = out + (size_t)r * kp * 2;
        for (int k = 0; k < K; k++)
            o[k] = rf_f32_to_bf16(scale * x[k]);
        if (K & 1)
            o[K] = 0;
    }
}

/* Plain C: packs the N x K matrix whose element (n, k) is W[n * n_step + k
 * * k_step]: pair i of column n at uint32 (n / 16) * kp * 16 + i * 16 + n
 * % 16, low half input 2i; columns up to the padded count and the odd K's
 * last input are zero. */
static void pack_strided_c(const float *W, int N, int K, size_t n_step, size_t k_step,
                           uint16_t *dst)
{
    int kp = rf_bf16_k_pairs(K), n_pad = padded_n(N);
    for (int n = 0; n < n_pad; n++) {
        uint16_t *col = dst + ((size_t)(n / PANEL) * kp * PANEL + n % PANEL) * 2;
        for (int k = 0; k < 2 * kp; k++)
            col[(size_t)(k / 2) * PANEL * 2 + k % 2] =
                n < N && k < K ? rf_f32_to_bf16(W[(size_t)n * n_step + (size_t)k * k_step]) : 0;
    }
}

#if RF_SIMD_X86
#include "kernels/gemm_bf16_avx512_nest.h"

#define RF_TARGET_BF16 __attribute__((target("avx512f,avx512bw,avx512bf16")))

/* Rounds scale * rows [m0, m1) of X (rows ldx apart, K used) to bf16
 * pairs: row r of `out` is kp = ceil(K / 2) uint32, the odd K padded with
 * a zero. */
RF_TARGET_BF16 static void round_rows_avx512(const float *X, size_t ldx, int K, float scale, int m0,
                                      int m1, uint16_t *out)
{
    int kp = rf_bf16_k_pairs(K);
    __m512 s = _mm512_set1_ps(scale);
    for (int r = m0; r < m1; r++) {
        const float *x = X + (size_t)r * ldx;
        uint16_t *o = out + (size_t)r * kp * 2;
        int k = 0;
        for (; k + 32 <= K; k += 32) {
            __m512 lo = _mm512_mul_ps(s, _mm512_loadu_ps(x + k));
            __m512 hi = _mm512_mul_ps(s, _mm512_loadu_ps(x + k + 16));
            _mm512_storeu_si512((void *)(o + k), (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
        }
        for (; k < K; k++)
            o[k] = rf_f32_to_bf16(scale * x[k]);
        if (K & 1)
            o[K] = 0;
    }
}

/* 16 floats rounded to bf16, each in the low half of a 32-bit lane. */
RF_TARGET_BF16 static inline __m512i bf16_lanes(__m512 x)
{
    return _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(x));
}

/* Packs W = V^T (N x K) where V is K x N, rows ldv apart: the pair of
 * inputs i of panel p is rows 2i and 2i + 1 of V at columns 16p..16p+15,
 * interleaved, one 64-byte store. */
RF_TARGET_BF16 static void pack_transposed_avx512(const float *V, int K, int N, size_t ldv, uint16_t *dst)
{
    int kp = rf_bf16_k_pairs(K), np = padded_n(N) / PANEL;
    for (int i = 0; i < kp; i++) {
        const float *r0 = V + (size_t)(2 * i) * ldv, *r1 = r0 + ldv;
        bool has_r1 = 2 * i + 1 < K;
        for (int p = 0; p < np; p++) {
            __mmask16 m = rf_bf16_col_mask(N - p * PANEL);
            __m512i lo = bf16_lanes(_mm512_maskz_loadu_ps(m, r0 + p * PANEL));
            __m512i hi = has_r1 ? bf16_lanes(_mm512_maskz_loadu_ps(m, r1 + p * PANEL))
                                : _mm512_setzero_si512();
            __m512i pairs = _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16));
            _mm512_storeu_si512((void *)(dst + ((size_t)p * kp + i) * 2 * PANEL), pairs);
        }
    }
}

/* Packs W (N x K, rows ldw apart): each row rounded 32 inputs at a time,
 * its 16 pairs then stored 16 pairs apart (one per input pair of the
 * row's panel); rows past N are zero. */
RF_TARGET_BF16 static void pack_rows_avx512(const float *W, int N, int K, size_t ldw, uint16_t *dst)
{
    int kp = rf_bf16_k_pairs(K), n_pad = padded_n(N);
    uint32_t *out = (uint32_t *)(void *)dst;
    for (int n = 0; n < n_pad; n++) {
        uint32_t *col = out + (size_t)(n / PANEL) * kp * PANEL + n % PANEL;
        for (int k = 0; k < 2 * kp; k += 32) {
            uint32_t pairs[16];
            if (n < N) {
                __mmask16 m0 = rf_bf16_col_mask(K - k), m1 = rf_bf16_col_mask(K - k - PANEL);
                __m512 lo = _mm512_maskz_loadu_ps(m0, W + (size_t)n * ldw + k);
                __m512 hi = _mm512_maskz_loadu_ps(m1, W + (size_t)n * ldw + k + PANEL);
                _mm512_storeu_si512((void *)pairs, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
            } else {
                memset(pairs, 0, sizeof pairs);
            }
            for (int q = 0; q < 16 && k / 2 + q < kp; q++)
                col[(size_t)(k / 2 + q) * PANEL] = pairs[q];
        }
    }
}
#endif /* RF_SIMD_X86 */

static void round_rows(const float *X, size_t ldx, int K, float scale, int m0, int m1,
                       uint16_t *out)
{
#if RF_SIMD_X86
    if (rf_cpu_has(RF_CPU_AVX512_BF16)) {
        round_rows_avx512(X, ldx, K, scale, m0, m1, out);
        return;
    }
#endif
    round_rows_c(X, ldx, K, scale, m0, m1, out);
}

struct bf16_job {
    const float *X;
    const uint16_t *W;
    const float *b;
    int M, K, N, n_blocks;
    rf_activation act;
    float *Y;
    uint16_t *Xb;
    bool split_rows;
    rf_bf16_gemm_fn *gemm;
};

/* ==== Threads ==== */

static void round_task(void *arg, int block, int thread)
{
    (void)thread;
    const struct bf16_job *j = arg;
    int s, n;
    rf_block_range(j->M, j->n_blocks, block, 1, &s, &n);
    round_rows(j->X, (size_t)j->K, j->K, 1.0f, s, s + n, j->Xb);
}

static void gemm_task(void *arg, int block, int thread)
{
    (void)thread;
    const struct bf16_job *j = arg;
    int s, n;
    if (j->split_rows) {
        rf_block_range(j->M, j->n_blocks, block, 1, &s, &n);
        if (n > 0)
            j->gemm(j->Xb, j->K, s, s + n, j->W, 0, j->N, j->b, j->act, j->Y, j->N);
    } else {
        rf_block_range(j->N, j->n_blocks, block, NR, &s, &n);
        if (n > 0)
            j->gemm(j->Xb, j->K, 0, j->M, j->W, s, s + n, j->b, j->act, j->Y, j->N);
    }
}

void rf_linear_bf16(const rf_parallel *pool, const float *X, int M, int K, const uint16_t *W_packed,
                    const float *b, int N, rf_activation act, float *Y, uint16_t *scratch)
{
    struct bf16_job job = {X, W_packed, b, M, K, N, 1, act, Y, scratch, true, gemm_kernel()};
    job.n_blocks = rf_linear_blocks(pool, M, N, K, &job.split_rows);
    int n_threads = rf_parallel_threads(pool);
    /* every thread reads all rows when columns are split: round them first */
    int round_blocks = n_threads < M ? n_threads : 1;
    struct bf16_job round = job;
    round.n_blocks = round_blocks;
    rf_parallel_run(pool, round_blocks, round_task, &round);
    rf_parallel_run(pool, job.n_blocks, gemm_task, &job);
}

void rf_bf16_round(const float *X, int M, int K, size_t ldx, float scale, uint16_t *out)
{
    round_rows(X, ldx, K, scale, 0, M, out);
}

void rf_bf16_pack(const float *W, int N, int K, uint16_t *dst)
{
    rf_bf16_pack_rows(W, N, K, (size_t)K, dst);
}

void rf_bf16_pack_rows(const float *W, int N, int K, size_t ldw, uint16_t *dst)
{
#if RF_SIMD_X86
    if (rf_cpu_has(RF_CPU_AVX512_BF16)) {
        pack_rows_avx512(W, N, K, ldw, dst);
        return;
    }
#endif
    pack_strided_c(W, N, K, ldw, 1, dst);
}

void rf_bf16_pack_transposed(const float *V, int K, int N, size_t ldv, uint16_t *dst)
{
#if RF_SIMD_X86
    if (rf_cpu_has(RF_CPU_AVX512_BF16)) {
        pack_transposed_avx512(V, K, N, ldv, dst);
        return;
    }
#endif
    pack_strided_c(V, N, K, 1, ldv, dst);
}

void rf_gemm_bf16(const uint16_t *Xb, int M, int K, const uint16_t *W_packed, int N, float *Y,
                  int ldy)
{
    gemm_kernel()(Xb, K, 0, M, W_packed, 0, N, NULL, RF_ACT_LINEAR, Y, ldy);
}

void rf_linear_bf16_naive(const float *X, int M, int K, const float *W, const float *b, int N,
                          rf_activation act, float *Y)
{
    for (int i = 0; i < M; i++)
        for (int n = 0; n < N; n++) {
            double sum = 0.0;
            for (int k = 0; k < K; k++)
                sum += (double)rf_bf16_to_f32(rf_f32_to_bf16(X[(size_t)i * K + k])) *
                       (double)rf_bf16_to_f32(rf_f32_to_bf16(W[(size_t)n * K + k]));
            Y[(size_t)i * N + n] = (float)sum;
        }
    rf_bias_act_naive(Y, M, N, N, b, act);
}
