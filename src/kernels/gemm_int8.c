/*
 * gemm_int8.c — the int8 Linear layer (see gemm_int8.h for the scheme and
 * the packed layout): quantizing rows, packing, the AVX2 product and its
 * AVX-512 VNNI build, and the naive twins.
 *
 * Blocking, per thread: rows in blocks of MC (the MC x K block of
 * quantized inputs stays in L2), then one 16-channel panel at a time (K x
 * 16 bytes: 12 KiB at K = 768, in L1; 48 KiB at K = 3072, in L2) against
 * every MR-row tile of the block. A tile of MR x 16 int32 sums lives in
 * 2 * MR registers for the whole of K, so no partial sums leave them; the
 * epilogue scales, adds the bias and applies the activation on the tile.
 * The VNNI build (MR_VNNI rows of one panel per tile, one VPDPBUSD per row
 * and 4 inputs) shares everything but the tile.
 */
#include "kernels/gemm_int8.h"
#include "kernels/activations.h"
#include "kernels/activations_vec.h"
#include "kernels/gemm_neon.h"
#include "kernels/linalg.h"
#include "kernels/simd.h"

#include <math.h>
#include <string.h>

#define PANEL 16        /* output channels per panel */
#define MR 4            /* rows per register tile: 2 * MR int32 accumulators */
#define MR_VNNI 12      /* rows per VNNI tile: MR_VNNI accumulators of 16 int32 */
#define L2_BLOCK (256 * 1024) /* bytes of quantized inputs per row block */

static int padded_n(int N)
{
    return (N + PANEL - 1) / PANEL * PANEL;
}

size_t rf_int8_colsum_count(int N)
{
    return (size_t)padded_n(N);
}

size_t rf_int8_packed_size(int N, int K)
{
    return (size_t)padded_n(N) * (size_t)rf_int8_row_bytes(K);
}

/* The scratch: M rows of quantized inputs, then M scales, then M centers. */
size_t rf_int8_scratch_size(int M, int K)
{
    return (size_t)M * (size_t)rf_int8_row_bytes(K) + 2 * (size_t)M * sizeof(float);
}

bool rf_int8_supported(void)
{
#if RF_SIMD_X86
    return __builtin_cpu_supports("avx2");
#else
    return RF_SIMD_ARM64;
#endif
}

static bool cpu_runs(rf_int8_kernel kernel)
{
    switch (kernel) {
    case RF_INT8_AVX2: return RF_SIMD_X86 && rf_int8_supported();
    case RF_INT8_VNNI: return rf_cpu_has_avx512_vnni();
    case RF_INT8_NEON: return RF_SIMD_ARM64;
    case RF_INT8_SDOT: return rf_cpu_has_arm_dotprod();
    case RF_INT8_I8MM: return rf_cpu_has_arm_i8mm();
    }
    return false;
}

/* -1: not chosen yet (a plain int read and written whole, as in simd.c) */
static int kernel_chosen = -1;

rf_int8_kernel rf_int8_kernel_get(void)
{
    int k = __atomic_load_n(&kernel_chosen, __ATOMIC_RELAXED);
    if (k < 0) {
        /* best first */
        const rf_int8_kernel order[] = {RF_INT8_VNNI, RF_INT8_AVX2, RF_INT8_I8MM, RF_INT8_SDOT,
                                        RF_INT8_NEON};
        k = RF_INT8_AVX2;
        for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
            if (cpu_runs(order[i])) {
                k = order[i];
                break;
            }
        __atomic_store_n(&kernel_chosen, k, __ATOMIC_RELAXED);
    }
    return (rf_int8_kernel)k;
}

bool rf_int8_kernel_set(rf_int8_kernel kernel)
{
    if (!cpu_runs(kernel))
        return false;
    __atomic_store_n(&kernel_chosen, (int)kernel, __ATOMIC_RELAXED);
    return true;
}

/* ==== Quantizing and packing ==== */

/* One row of K values: q[k] = round(x[k] / scale); returns the scale. */
static float quantize_row(const float *x, int K, int8_t *q)
{
    float max = 0.0f;
    for (int k = 0; k < K; k++)
        if (fabsf(x[k]) > max)
            max = fabsf(x[k]);
    float inv = max > 0.0f ? 127.0f / max : 0.0f;
    for (int k = 0; k < K; k++)
        q[k] = (int8_t)nearbyintf(x[k] * inv);
    return max / 127.0f;
}

float rf_int8_quantize_row_naive(const float *x, int K, int8_t *q, float *center)
{
    float min = x[0], max = x[0];
    for (int k = 1; k < K; k++) {
        min = x[k] < min ? x[k] : min;
        max = x[k] > max ? x[k] : max;
    }
    float c = 0.5f * (max + min), half = 0.5f * (max - min);
    float inv = half > 0.0f ? 127.0f / half : 0.0f;
    for (int k = 0; k < K; k++)
        q[k] = (int8_t)nearbyintf((x[k] - c) * inv);
    for (int k = K; k < rf_int8_row_bytes(K); k++)
        q[k] = 0;
    *center = c;
    return half / 127.0f;
}

void rf_int8_quantize_rows(const float *W, int N, int K, size_t ldw, int8_t *Wq, float *scale)
{
    for (int n = 0; n < N; n++)
        scale[n] = quantize_row(W + (size_t)n * ldw, K, Wq + (size_t)n * K);
}

void rf_int8_dequantize_rows(const int8_t *Wq, const float *scale, size_t N, size_t K, float *out)
{
    for (size_t n = 0; n < N; n++)
        for (size_t k = 0; k < K; k++)
            out[n * K + k] = (float)Wq[n * K + k] * scale[n];
}

static int32_t row_sum(const int8_t *w, int K);

void rf_int8_pack_rows(const int8_t *Wq, int n0, int n, int K, size_t ldw, int8_t *dst,
                       int32_t *colsum)
{
    size_t panel_bytes = (size_t)rf_int8_row_bytes(K) * PANEL;
    int whole = K / 4 * 4;
    /* one panel's rows at a time, in the panel's order: each 4 inputs of
       PANEL channels are one 64-byte line of the panel, written whole */
    for (int c0 = n0; c0 < n0 + n;) {
        int c1 = (c0 / PANEL + 1) * PANEL < n0 + n ? (c0 / PANEL + 1) * PANEL : n0 + n;
        int8_t *panel = dst + (size_t)(c0 / PANEL) * panel_bytes;
        const int8_t *rows[PANEL];
        int first = c0 % PANEL, count = c1 - c0;
        for (int j = 0; j < count; j++)
            rows[j] = Wq + (size_t)(c0 + j - n0) * ldw;
        for (int k = 0; k < whole; k += 4) {
            int8_t *line = panel + (size_t)k * PANEL + (size_t)first * 4;
            for (int j = 0; j < count; j++)
                memcpy(line + j * 4, rows[j] + k, 4);
        }
        for (int col = c0; col < c1; col++) {
            const int8_t *w = Wq + (size_t)(col - n0) * ldw;
            for (int k = whole; k < K; k++)
                panel[(size_t)whole * PANEL + (size_t)(col % PANEL) * 4 + k - whole] = w[k];
            colsum[col] = row_sum(w, K);
        }
        c0 = c1;
    }
}

#if RF_SIMD_X86
#include <immintrin.h>

/* The sum of K int8 values, 32 at a time: VPMADDUBSW by ones sums pairs
 * (at most 2 * 128 in magnitude: no saturation), VPMADDWD by ones sums
 * those pairs into int32 lanes. */
RF_TARGET_AVX2 static int32_t row_sum_avx2(const int8_t *w, int K)
{
    const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
    __m256i acc = _mm256_setzero_si256();
    int k = 0;
    for (; k + 32 <= K; k += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(w + k));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, v), ones16));
    }
    int32_t lanes[8], sum = 0;
    _mm256_storeu_si256((__m256i *)(void *)lanes, acc);
    for (int i = 0; i < 8; i++)
        sum += lanes[i];
    for (; k < K; k++)
        sum += w[k];
    return sum;
}

/* Quantizes rows [m0, m1) of X (K used, rows K apart) into Xq (rows of
 * rf_int8_row_bytes(K)), their scales and centers, as
 * rf_int8_quantize_row_naive (the same operations, so the same bytes). */
RF_TARGET_AVX2 static void int8_quantize_rows(const float *X, int K, int m0, int m1, int8_t *Xq,
                                              float *scale, float *center)
{
    int kb = rf_int8_row_bytes(K);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int r = m0; r < m1; r++) {
        const float *x = X + (size_t)r * K;
        int8_t *q = Xq + (size_t)r * kb;
        /* pass 1: min and max */
        __m256 vmin = _mm256_set1_ps(x[0]), vmax = vmin;
        int k = 0;
        for (; k + 8 <= K; k += 8) {
            __m256 v = _mm256_loadu_ps(x + k);
            vmin = _mm256_min_ps(vmin, v);
            vmax = _mm256_max_ps(vmax, v);
        }
        float lo[8], hi[8];
        _mm256_storeu_ps(lo, vmin);
        _mm256_storeu_ps(hi, vmax);
        float min = lo[0], max = hi[0];
        for (int i = 1; i < 8; i++) {
            min = lo[i] < min ? lo[i] : min;
            max = hi[i] > max ? hi[i] : max;
        }
        for (; k < K; k++) {
            min = x[k] < min ? x[k] : min;
            max = x[k] > max ? x[k] : max;
        }
        float c = 0.5f * (max + min), half = 0.5f * (max - min);
        float inv = half > 0.0f ? 127.0f / half : 0.0f;
        scale[r] = half / 127.0f;
        center[r] = c;
        /* pass 2: 32 values at a time centered, rounded (nearest even) and
           narrowed; the packs interleave 128-bit lanes, the permute undoes
           it */
        __m256 vinv = _mm256_set1_ps(inv), vc = _mm256_set1_ps(c);
#define Q8(off) _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + k + (off)), vc), vinv))
        for (k = 0; k + 32 <= K; k += 32) {
            __m256i a = Q8(0), b = Q8(8), cc = Q8(16), d = Q8(24);
            __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(cc, d));
            _mm256_storeu_si256((__m256i *)(void *)(q + k), _mm256_permutevar8x32_epi32(bytes, order));
        }
#undef Q8
        for (; k < K; k++)
            q[k] = (int8_t)nearbyintf((x[k] - c) * inv);
        for (; k < kb; k++)
            q[k] = 0;
    }
}

/* One tile: rows [0, mr) of A (rows lda bytes apart) times one packed
 * panel over kq quads, into C (mr x 16 int32). mr is a constant at every
 * call, so the loops unroll and the sums stay in registers. */
RF_TARGET_AVX2 static inline __attribute__((always_inline)) void
tile(const int mr, const int8_t *A, size_t lda, const int8_t *W, int kq, int32_t *C)
{
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

RF_TARGET_AVX2 static void int8_tile_any(int mr, const int8_t *A, size_t lda, const int8_t *W, int kq,
                                    int32_t *C)
{
    switch (mr) {
    case 1: tile(1, A, lda, W, kq, C); break;
    case 2: tile(2, A, lda, W, kq, C); break;
    case 3: tile(3, A, lda, W, kq, C); break;
    default: tile(MR, A, lda, W, kq, C); break; /* mr == MR == 4 */
    }
}

#define RF_TARGET_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

/* The VNNI tile: rows [0, mr) of A times one panel, into C (mr x 16
 * int32), as int8_tile. VPDPBUSD takes unsigned inputs: Xq + 128 (the
 * sign bit flipped), whose extra 128 * colsum[n] is taken off at the end. */
RF_TARGET_VNNI static inline __attribute__((always_inline)) void
vnni_tile(const int mr, const int8_t *A, size_t lda, const int8_t *W, int kq,
          const int32_t *colsum, int32_t *C)
{
    __m512i acc[MR_VNNI];
    const __m512i flip = _mm512_set1_epi8((char)0x80);
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++)
        acc[r] = _mm512_setzero_si512();
    for (int i = 0; i < kq; i++) {
        __m512i w = _mm512_load_si512((const void *)(W + (size_t)i * 64));
#pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            int32_t quad;
            memcpy(&quad, A + (size_t)r * lda + (size_t)i * 4, 4);
            __m512i a = _mm512_xor_si512(_mm512_set1_epi32(quad), flip);
            acc[r] = _mm512_dpbusd_epi32(acc[r], a, w);
        }
    }
    __m512i offset = _mm512_slli_epi32(_mm512_loadu_si512((const void *)colsum), 7);
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++)
        _mm512_storeu_si512((void *)(C + r * PANEL), _mm512_sub_epi32(acc[r], offset));
}

RF_TARGET_VNNI static void vnni_tile_any(int mr, const int8_t *A, size_t lda, const int8_t *W,
                                         int kq, const int32_t *colsum, int32_t *C)
{
    switch (mr) {
#define VNNI_CASE(n) \
    case n: vnni_tile(n, A, lda, W, kq, colsum, C); break;
        VNNI_CASE(1) VNNI_CASE(2) VNNI_CASE(3) VNNI_CASE(4) VNNI_CASE(5) VNNI_CASE(6)
        VNNI_CASE(7) VNNI_CASE(8) VNNI_CASE(9) VNNI_CASE(10) VNNI_CASE(11)
#undef VNNI_CASE
    default: vnni_tile(MR_VNNI, A, lda, W, kq, colsum, C); break;
    }
}

/* Y (rows ldy apart) for a tile, `cols` of the 16 channels from n:
 * act(s_x[r] s_w[n] C + c_x[r] s_w[n] colsum[n] + bias[n]) (the second
 * term puts back the center each input row was quantized around); the
 * activation on each vector as it is stored. */
RF_TARGET_AVX2 static void int8_dequantize_tile(const int32_t *C, int mr, int cols, const float *sx,
                                                const float *cx, const float *sw,
                                                const int32_t *colsum, const float *bias,
                                                rf_activation act, float *Y, int ldy)
{
    for (int r = 0; r < mr; r++) {
        float *y = Y + (size_t)r * ldy;
        int n = 0;
        for (; n + 8 <= cols; n += 8) {
            __m256 w = _mm256_loadu_ps(sw + n);
            __m256 s = _mm256_mul_ps(_mm256_set1_ps(sx[r]), w);
            __m256 sums = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(const void *)(colsum + n)));
            __m256 b = bias ? _mm256_loadu_ps(bias + n) : _mm256_setzero_ps();
            __m256 o = _mm256_fmadd_ps(_mm256_set1_ps(cx[r]), _mm256_mul_ps(w, sums), b);
            __m256 v = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(const void *)(C + r * PANEL + n)));
            _mm256_storeu_ps(y + n, _mm256_fmadd_ps(v, s, o));
            rf_act_at(y + n, act);
        }
        int tail = n;
        for (; n < cols; n++)
            y[n] = (float)C[r * PANEL + n] * (sx[r] * sw[n]) +
                   (cx[r] * (sw[n] * (float)colsum[n]) + (bias ? bias[n] : 0.0f));
        if (n > tail)
            rf_bias_act(y + tail, 1, n - tail, ldy, NULL, act);
    }
}

/* Y rows [m0, m1), channels [n0, n1) (n0 a multiple of 16) from rows
 * quantized with scales sx and centers cx; sx NULL: C
 * (int32, rows ldy apart) gets the raw sums instead. */
RF_TARGET_AVX2 static void int8_gemm_block(const int8_t *Xq, const float *sx, const float *cx, int K,
                                           int m0, int m1, const rf_int8_matrix *Wm, int n0, int n1,
                                           const float *b, rf_activation act, float *Y, int32_t *C,
                                           int ldy)
{
    int kb = rf_int8_row_bytes(K), kq = kb / 4;
    bool vnni = rf_int8_kernel_get() == RF_INT8_VNNI;
    int step = vnni ? MR_VNNI : MR;
    int mc_rows = L2_BLOCK / kb / step * step;
    if (mc_rows < step)
        mc_rows = step;
    const int8_t *Wp = Wm->panels;
    const float *sw = Wm->scale;
    int32_t sums[(MR_VNNI > MR ? MR_VNNI : MR) * PANEL];
    for (int mc = m0; mc < m1; mc += mc_rows) {
        int mc_end = mc + mc_rows < m1 ? mc + mc_rows : m1;
        for (int n = n0; n < n1; n += PANEL) {
            const int8_t *W = Wp + (size_t)(n / PANEL) * kb * PANEL;
            int cols = n1 - n < PANEL ? n1 - n : PANEL;
            for (int m = mc; m < mc_end; m += step) {
                int mr = mc_end - m < step ? mc_end - m : step;
                if (vnni)
                    vnni_tile_any(mr, Xq + (size_t)m * kb, (size_t)kb, W, kq, Wm->colsum + n, sums);
                else
                    int8_tile_any(mr, Xq + (size_t)m * kb, (size_t)kb, W, kq, sums);
                if (!sx) {
                    for (int r = 0; r < mr; r++)
                        memcpy(C + (size_t)(m + r) * ldy + n, sums + r * PANEL,
                               (size_t)cols * sizeof *C);
                    continue;
                }
                float *y = Y + (size_t)m * ldy + n;
                int8_dequantize_tile(sums, mr, cols, sx + m, cx + m, sw + n, Wm->colsum + n,
                                     b ? b + n : NULL, act, y, ldy);
            }
        }
    }
}
#elif RF_SIMD_ARM64
/* The NEON builds (gemm_int8_neon.c) in the x86 builds' place. */
static void int8_quantize_rows(const float *X, int K, int m0, int m1, int8_t *Xq, float *scale,
                               float *center)
{
    rf_int8_quantize_rows_neon(X, K, m0, m1, Xq, scale, center);
}

static void int8_gemm_block(const int8_t *Xq, const float *sx, const float *cx, int K, int m0,
                            int m1, const rf_int8_matrix *Wm, int n0, int n1, const float *b,
                            rf_activation act, float *Y, int32_t *C, int ldy)
{
    rf_int8_gemm_block_neon(rf_int8_kernel_get(), Xq, sx, cx, K, m0, m1, Wm, n0, n1, b, act, Y, C,
                            ldy);
}
#endif /* RF_SIMD_X86, RF_SIMD_ARM64 */

/* ==== The threaded Linear ==== */

struct int8_job {
    const float *X;
    const rf_int8_matrix *W;
    const float *b;
    int M, K, N, n_blocks;
    rf_activation act;
    float *Y;
    int8_t *Xq;
    float *sx, *cx;
    bool split_rows;
};

static void quantize_task(void *arg, int block, int thread)
{
    (void)thread;
    const struct int8_job *j = arg;
    int s, n;
    rf_block_range(j->M, j->n_blocks, block, 1, &s, &n);
#if RF_SIMD_X86 || RF_SIMD_ARM64
    int8_quantize_rows(j->X, j->K, s, s + n, j->Xq, j->sx, j->cx);
#endif
}

static void gemm_task(void *arg, int block, int thread)
{
    (void)thread;
    const struct int8_job *j = arg;
    int s, n;
#if RF_SIMD_X86 || RF_SIMD_ARM64
    if (j->split_rows) {
        rf_block_range(j->M, j->n_blocks, block, 1, &s, &n);
        if (n > 0)
            int8_gemm_block(j->Xq, j->sx, j->cx, j->K, s, s + n, j->W, 0, j->N, j->b, j->act, j->Y,
                            NULL, j->N);
    } else {
        rf_block_range(j->N, j->n_blocks, block, PANEL, &s, &n);
        if (n > 0)
            int8_gemm_block(j->Xq, j->sx, j->cx, j->K, 0, j->M, j->W, s, s + n, j->b, j->act, j->Y,
                            NULL, j->N);
    }
#else
    (void)j, (void)s, (void)n;
#endif
}

void rf_linear_int8(rf_pool *pool, const float *X, int M, int K, const rf_int8_matrix *W,
                    const float *b, int N, rf_activation act, float *Y, void *scratch)
{
    int8_t *Xq = scratch;
    float *sx = (float *)(void *)(Xq + (size_t)M * rf_int8_row_bytes(K)), *cx = sx + M;
    struct int8_job job = {X, W, b, M, K, N, 1, act, Y, Xq, sx, cx, true};
    job.n_blocks = rf_linear_blocks(pool, M, N, K, &job.split_rows);
    /* every thread reads all rows when channels are split: quantize first */
    int n_threads = rf_pool_threads(pool);
    struct int8_job quantize = job;
    quantize.n_blocks = n_threads < M ? n_threads : 1;
    rf_pool_run(pool, quantize.n_blocks, quantize_task, &quantize);
    rf_pool_run(pool, job.n_blocks, gemm_task, &job);
}

void rf_gemm_int8_s32(const int8_t *Xq, int M, int K, const rf_int8_matrix *W, int N, int32_t *C)
{
#if RF_SIMD_X86 || RF_SIMD_ARM64
    int8_gemm_block(Xq, NULL, NULL, K, 0, M, W, 0, N, NULL, RF_ACT_LINEAR, NULL, C, N);
#else
    (void)Xq, (void)M, (void)K, (void)W, (void)N, (void)C;
#endif
}

void rf_linear_int8_naive(const float *X, int M, int K, const float *W, const float *b, int N,
                          rf_activation act, float *Y)
{
    int kb = rf_int8_row_bytes(K);
    int8_t xq[kb], wq[kb];
    for (int i = 0; i < M; i++) {
        float cx, sx = rf_int8_quantize_row_naive(X + (size_t)i * K, K, xq, &cx);
        for (int n = 0; n < N; n++) {
            float sw = quantize_row(W + (size_t)n * K, K, wq);
            int64_t sum = 0, colsum = 0;
            for (int k = 0; k < K; k++) {
                sum += (int64_t)xq[k] * wq[k];
                colsum += wq[k];
            }
            Y[(size_t)i * N + n] = (float)sum * (sx * sw) +
                                   (cx * (sw * (float)colsum) + (b ? b[n] : 0.0f));
        }
    }
    rf_bias_act_naive(Y, M, N, N, NULL, act);
}

static int32_t row_sum(const int8_t *w, int K)
{
#if RF_SIMD_X86
    if (rf_int8_supported())
        return row_sum_avx2(w, K);
#endif
    int32_t sum = 0;
    for (int k = 0; k < K; k++)
        sum += w[k];
    return sum;
}
