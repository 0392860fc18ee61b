/*
 * test_kernels.c — every fast kernel of the forward pass against its naive
 * twin on random inputs of odd sizes, with 1, 2 and 3 threads where the
 * kernel is threaded (the int8 product exactly: integer sums), plus a few
 * exact values (GELU, RoPE at position 0, masked softmax weights); and that
 * each product's epilogue post (block_post.h) sees every output element
 * once, with its final value.
 */
#include "kernels/fp16.h"
#include "kernels/activations.h"
#include "kernels/emulated/amx_emulator.h"
#include "kernels/cpu.h"
#include "kernels/gemm_bf16.h"
#include "kernels/gemm_bf16_backend.h"
#include "kernels/gemm_int8.h"
#include "kernels/gemm_int8_backend.h"
#include "kernels/layernorm.h"
#include "kernels/rmsnorm.h"
#include "kernels/linalg.h"
#include "kernels/rope.h"
#include "kernels/elementwise.h"
#include "kernels/simd.h"
#include "kernels/softmax.h"
#include "model/threadpool.h"
#include "kernels/vecmath.h"

#include "../check.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <strings.h>
#include <stdint.h>

/* n values uniform in [-scale, scale) (check_rnd). */
static float *rnd_array(size_t n, float scale)
{
    float *a = malloc(n * sizeof *a);
    for (size_t i = 0; i < n; i++)
        a[i] = check_rnd(scale);
    return a;
}

static float *copy_array(const float *src, size_t n)
{
    float *a = malloc(n * sizeof *a);
    memcpy(a, src, n * sizeof *a);
    return a;
}

/* ==== error bounds ====
 *
 * Every tolerance below is a bound on the float32 rounding of the
 * operation, so that each build (naive baseline, AVX2 on 8 lanes, AVX-512
 * on 16, NEON on 4, with or without FMA) passes for the same reason. u =
 * FLT_EPSILON / 2 is float32's unit roundoff. A sum of K float32 terms in
 * any order (sequential, in vector lanes, blocked, pairwise) is within
 * (K - 1) u sum|term| of the exact sum (Higham, Accuracy and Stability of
 * Numerical Algorithms, 2nd ed., 3.1 and 4.2); each product's own rounding
 * adds u |term|, and the naive twins, which sum in double, round once at
 * the end: so a fast sum and its naive twin differ by at most
 * (K + 1) u sum|term|.
 */
#define U_F32 (FLT_EPSILON / 2.0)
/* bf16 keeps 8 significant bits: rounding to nearest moves a value by at
 * most 2^-8 of itself, a product of two rounded values by 2^-7 + 2^-16. */
#define BF16_PRODUCT_REL (0x1p-7 + 0x1p-16)
/* |d/dz GELU(z)| = |Phi(z) + z phi(z)| <= 1.129 (at z = sqrt 2); ReLU's and
 * the identity's slope is 1: an error in z moves the output by at most
 * 1.13 times itself. */
#define ACT_SLOPE 1.13

static double sum_bound(int K, double abs_sum)
{
    return (K + 1) * U_F32 * abs_sum;
}

/* How much of its bound a difference uses, for the worst-ratio loops:
 * equal values use none (also when the bound is 0), NaN fails. */
static double bound_ratio(double diff, double bound, double worst)
{
    double r = diff == 0.0 ? 0.0 : diff / bound;
    return r <= worst ? worst : isnan(r) ? INFINITY : r;
}

/* How far an activation's vector build may be from the double-precision
 * naive one at the same input z, y the naive output: GELU's vector erf is
 * within 8 ulp of erf (test_vecmath), at most 8 * 2^-24 = 4.8e-7, which
 * moves 0.5 z (1 + erf) by at most 2.4e-7 |z|; the vector exp within 3e-7
 * relatively moves SiLU, gelu_new and tanh = 1 - 2 / (exp(2z) + 1) by at
 * most 3e-7 (|y| + 2); and each build rounds a handful of operations on
 * values at most max(|y|, 1). 8 eps (|y| + 1) covers the last two. ReLU
 * and identity: exact. */
static double act_bound(rf_activation act, double z, double y)
{
    if (act == RF_ACT_RELU || act == RF_ACT_LINEAR)
        return 0.0;
    return 2.4e-7 * fabs(z) + 8.0 * FLT_EPSILON * (fabs(y) + 1.0);
}

/* The worst ratio |got - want| / bound over a Linear layer's M x N
 * outputs (got's rows ld_got apart), where want is the naive twin's.
 * bound = ACT_SLOPE * (the K-term sum and the bias add: sum_bound(K + 1,
 * (1 + rel) (sum_k |x_k w_k| + |b|)), plus, when the two sides round the
 * operands differently (!same_operands), rel sum_k |x_k w_k|) + act_bound.
 * rel is how much rounding the operands moves one product (0 for f32,
 * BF16_PRODUCT_REL for bf16). Above 1 fails; NaN gives infinity. */
static double linear_ratio(const float *X, const float *W, const float *b, int M, int N, int K,
                           rf_activation act, double rel, bool same_operands, const float *got,
                           int ld_got, const float *want)
{
    double worst = 0.0;
    for (int i = 0; i < M; i++)
        for (int n = 0; n < N; n++) {
            double dot = b ? b[n] : 0.0, mag = b ? fabs(b[n]) : 0.0;
            for (int k = 0; k < K; k++) {
                double p = (double)X[(size_t)i * K + k] * W[(size_t)n * K + k];
                dot += p;
                mag += fabs(p);
            }
            double y = want[(size_t)i * N + n];
            double bound = sum_bound(K + 1, (1.0 + rel) * mag) + (same_operands ? 0.0 : rel * mag);
            bound = (act == RF_ACT_LINEAR ? 1.0 : ACT_SLOPE) * bound + act_bound(act, dot, y);
            worst = bound_ratio(fabs(got[(size_t)i * ld_got + n] - y), bound, worst);
        }
    return worst;
}

/* ==== GEMM and Linear ==== */

static void test_gemm(void)
{
    const int sizes[][3] = {{1, 1, 1}, {7, 13, 5}, {33, 17, 65}, {64, 130, 31}, {3, 257, 48}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int trans = 0; trans < 2; trans++) {
            int M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
            int lda = K + 3, ldb = (trans ? K : N) + 2, ldc = N + 1;
            float *A = rnd_array((size_t)M * lda, 1.0f);
            float *B = rnd_array((size_t)(trans ? N : K) * ldb, 1.0f);
            float *C = rnd_array((size_t)M * ldc, 1.0f);
            float *C2 = copy_array(C, (size_t)M * ldc), *C0 = copy_array(C, (size_t)M * ldc);
            rf_gemm(trans, M, N, K, 0.75f, A, lda, B, ldb, 0.5f, C, ldc);
            rf_gemm_naive(trans, M, N, K, 0.75f, A, lda, B, ldb, 0.5f, C2, ldc);
            /* each C[i][j] within sum_bound(K + 1, |alpha| sum_k |a_ik b_kj| + |beta c_ij|) */
            double worst = 0.0;
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double mag = 0.5 * fabs(C0[(size_t)i * ldc + j]);
                    for (int k = 0; k < K; k++)
                        mag += 0.75 * fabs((double)A[(size_t)i * lda + k] *
                                           (trans ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j]));
                    worst = bound_ratio(fabs(C[(size_t)i * ldc + j] - C2[(size_t)i * ldc + j]),
                                        sum_bound(K + 1, mag), worst);
                }
            CHECK(worst <= 1.0, "gemm %dx%dx%d trans=%d: max |diff| %g, %.3g of its bound", M, N,
                  K, trans, check_max_abs_diff(C, C2, (size_t)M * ldc), worst);
            free(A);
            free(B);
            free(C);
            free(C2);
            free(C0);
        }
}

/* A post (block_post.h) that records the blocks it is given: how often
 * each element of the M x N output was visited, its value then, and how
 * many blocks broke the contract (outside the output, ldy not N, an odd
 * n0, an odd n1 short of N). */
struct post_record {
    int M, N;
    unsigned char *count;
    float *seen;
    atomic_int bad;
};

static void record_block(const void *arg, float *Y, int ldy, int m0, int m1, int n0, int n1)
{
    struct post_record *r = (struct post_record *)arg;
    if (ldy != r->N || m0 < 0 || m1 > r->M || m0 >= m1 || n0 < 0 || n1 > r->N || n0 >= n1 ||
        n0 % 2 || (n1 % 2 && n1 != r->N)) {
        atomic_fetch_add(&r->bad, 1);
        return;
    }
    for (int m = m0; m < m1; m++)
        for (int n = n0; n < n1; n++) {
            r->count[(size_t)m * r->N + n]++;
            r->seen[(size_t)m * r->N + n] = Y[(size_t)m * ldy + n];
        }
}

static struct post_record *post_record_new(int M, int N)
{
    struct post_record *r = calloc(1, sizeof *r);
    r->M = M;
    r->N = N;
    r->count = calloc((size_t)M * N, 1);
    r->seen = calloc((size_t)M * N, sizeof *r->seen);
    return r;
}

/* The product that ran with the recording post visited every element of
 * Y once, each with its final value (Y: the same product without post). */
static void check_post_record(struct post_record *r, const float *Y, const char *what)
{
    size_t n = (size_t)r->M * r->N, once = 0;
    for (size_t i = 0; i < n; i++)
        once += r->count[i] == 1;
    CHECK(atomic_load(&r->bad) == 0 && once == n && !memcmp(r->seen, Y, n * sizeof *Y),
          "%s %dx%d: post on every element once (%zu of %zu), with its final value, %d bad blocks",
          what, r->M, r->N, once, n, atomic_load(&r->bad));
    free(r->count);
    free(r->seen);
    free(r);
}

static void test_linear(void)
{
    /* M large (split along rows) and M small with N large (split along columns) */
    /* and a product whose whole-grain units run as one call (linalg.c) */
    const int sizes[][3] = {{1, 5, 3},  {97, 61, 45}, {400, 33, 70},
                            {3, 1001, 37}, {5, 2, 48}, {300, 200, 600}};
    const rf_activation acts[] = {RF_ACT_LINEAR, RF_ACT_GELU, RF_ACT_RELU};
    for (int n_threads = 1; n_threads <= 3; n_threads++) {
        rf_pool *pool;
        rf_pool_create(n_threads, &pool, NULL);
        rf_parallel par = rf_pool_parallel(pool);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            int M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
            rf_activation act = acts[s % 3];
            float *X = rnd_array((size_t)M * K, 1.0f), *W = rnd_array((size_t)N * K, 0.3f);
            float *b = s % 2 ? rnd_array((size_t)N, 0.5f) : NULL;
            float *Y = malloc((size_t)M * N * sizeof *Y), *Y2 = malloc((size_t)M * N * sizeof *Y);
            rf_linear(&par, X, M, K, W, b, N, act, NULL, NULL, Y);
            struct post_record *rec = post_record_new(M, N);
            rf_linear(&par, X, M, K, W, b, N, act, &(rf_block_post){record_block, rec}, NULL, Y2);
            check_post_record(rec, Y, "f32 linear");
            rf_linear_naive(X, M, K, W, b, N, act, Y2);
            float d = check_max_abs_diff(Y, Y2, (size_t)M * N);
            double worst = linear_ratio(X, W, b, M, N, K, act, 0.0, true, Y, N, Y2);
            CHECK(worst <= 1.0, "linear %dx%dx%d act %d, %d threads: max |diff| %g, %.3g of its bound",
                  M, N, K, act, n_threads, d, worst);
            free(X);
            free(W);
            free(b);
            free(Y);
            free(Y2);
        }
        rf_pool_free(pool);
    }
}

/* The bf16 kernel against its naive twin (operands rounded the same way,
 * sums in double): only the order of the f32 sums differs (and, on ARM64,
 * their rounding: BFDOT / BFMMLA round each step to odd, at most one ulp
 * of the partial sum where nearest gives half, within the same bound for
 * sums of random signs). Sizes cover
 * partial tiles (M % 12), partial panels (N % 32), odd K and K over one
 * chunk (384), with both thread splits. */
static void test_linear_bf16(void)
{
    const int sizes[][3] = {{1, 5, 3}, {97, 61, 45}, {400, 33, 70}, {3, 1001, 37},
                            {13, 64, 767}, {300, 96, 800}, {25, 2, 48}};
    const rf_activation acts[] = {RF_ACT_LINEAR, RF_ACT_GELU, RF_ACT_RELU};
    for (int n_threads = 1; n_threads <= 3; n_threads++) {
        rf_pool *pool;
        rf_pool_create(n_threads, &pool, NULL);
        rf_parallel par = rf_pool_parallel(pool);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            int M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
            rf_activation act = acts[s % 3];
            float *X = rnd_array((size_t)M * K, 1.0f), *W = rnd_array((size_t)N * K, 0.3f);
            float *b = s % 2 ? rnd_array((size_t)N, 0.5f) : NULL;
            uint16_t *Wp = malloc(rf_bf16_packed_size(N, K) * sizeof *Wp);
            uint16_t *scratch = malloc(rf_bf16_scratch_size(M, K) * sizeof *scratch);
            float *Y = malloc((size_t)M * N * sizeof *Y), *Y2 = malloc((size_t)M * N * sizeof *Y);
            rf_bf16_pack(W, N, K, Wp);
            rf_linear_bf16(&par, X, M, K, Wp, b, N, act, NULL, Y, scratch);
            struct post_record *rec = post_record_new(M, N);
            rf_linear_bf16(&par, X, M, K, Wp, b, N, act, &(rf_block_post){record_block, rec}, Y2,
                           scratch);
            check_post_record(rec, Y, "bf16 linear");
            rf_linear_bf16_naive(X, M, K, W, b, N, act, Y2);
            float d = check_max_abs_diff(Y, Y2, (size_t)M * N);
            double worst = linear_ratio(X, W, b, M, N, K, act, BF16_PRODUCT_REL, true, Y, N, Y2);
            CHECK(worst <= 1.0, "bf16 linear %dx%dx%d act %d, %d threads: max |diff| %g, %.3g of its "
                  "bound", M, N, K, act, n_threads, d, worst);
            /* and the rounding it stands for: near the f32 product, each
               product moved by at most BF16_PRODUCT_REL of itself */
            rf_linear_naive(X, M, K, W, b, N, act, Y2);
            d = check_max_abs_diff(Y, Y2, (size_t)M * N);
            worst = linear_ratio(X, W, b, M, N, K, act, BF16_PRODUCT_REL, false, Y, N, Y2);
            CHECK(worst <= 1.0, "bf16 linear %dx%dx%d near f32: max |diff| %g, %.3g of its bound", M,
                  N, K, d, worst);
            free(X);
            free(W);
            free(b);
            free(Wp);
            free(scratch);
            free(Y);
            free(Y2);
        }
        rf_pool_free(pool);
    }
}

/* Random int8 in [-127, 127], or all `fill` when fill != 0. */
static int8_t *rnd_int8(size_t n, int fill)
{
    int8_t *a = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
        a[i] = (int8_t)(fill ? fill : (int)lrintf(check_rnd(127.0f)));
    return a;
}

/* The int8 product's integer sums against a naive int64 dot product:
 * equal exactly. Sizes cover partial tiles (M % 4, M % 12, and the AMX
 * build's 16- and 32-row blocks: 16, 17, 31, 33, 70, 100 rows), partial
 * panels and a lone last panel (N % 16, N % 32), K not a multiple of 4
 * nor of the tiles' 64, K = 3072, and the extremes (every pair -127 x 127
 * and -127 x -127, where VPMADDUBSW would saturate if the scheme let it);
 * W is packed in two pieces as Q|K|V are. */
#if RF_SIMD_X86
/* The x86 builds' row quantizing (AVX2, or AVX-512 at that level) against
 * rf_int8_quantize_row_naive: the same bytes, scales and centers, on rows
 * with tails (K % 16, K % 32), one-signed rows and a constant row. */
static void test_quantize_rows_int8(const char *level_name)
{
    const int Ks[] = {1, 15, 16, 33, 70, 768, 1001};
    for (size_t i = 0; i < sizeof Ks / sizeof Ks[0]; i++) {
        int K = Ks[i], kb = rf_int8_row_bytes(K), M = 4;
        float *X = rnd_array((size_t)M * K, 3.0f);
        for (int k = 0; k < K; k++) {
            X[(size_t)K + k] = fabsf(X[(size_t)K + k]); /* row 1: one-signed */
            X[(size_t)2 * K + k] = 0.25f;               /* row 2: constant */
        }
        int8_t *q = malloc((size_t)M * kb), *want = malloc((size_t)kb);
        float sx[4], cx[4];
        rf_int8_quantize_rows_avx2(X, K, 0, M, q, sx, cx);
        int wrong = 0;
        for (int r = 0; r < M; r++) {
            float c, s2 = rf_int8_quantize_row_naive(X + (size_t)r * K, K, want, &c);
            wrong += memcmp(q + (size_t)r * kb, want, (size_t)kb) != 0 || s2 != sx[r] || c != cx[r];
        }
        CHECK(wrong == 0, "int8 row quantizing (%s), K %d: %d of %d rows differ from the naive ones",
              level_name, K, wrong, M);
        free(X);
        free(q);
        free(want);
    }
}
#endif

static void test_gemm_int8(const char *kernel_name)
{
    const int sizes[][5] = {{1, 5, 3, 0, 0},        {9, 61, 45, 0, 0},   {7, 33, 70, 0, 0},
                            {4, 16, 3072, 0, 0},     {6, 40, 767, -127, 127}, {5, 18, 768, -127, -127},
                            {70, 130, 1000, 0, 0},   {16, 16, 64, 0, 0},  {17, 48, 128, 0, 0},
                            {31, 47, 200, 0, 0},     {33, 64, 3, 0, 0},   {100, 80, 768, 0, 0},
                            {40, 33, 256, -127, 127}, {32, 32, 1536, -127, -127}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int M = sizes[s][0], N = sizes[s][1], K = sizes[s][2], kb = rf_int8_row_bytes(K);
        int8_t *X = rnd_int8((size_t)M * kb, sizes[s][3]), *W = rnd_int8((size_t)N * K, sizes[s][4]);
        for (int i = 0; i < M; i++)
            memset(X + (size_t)i * kb + K, 0, (size_t)(kb - K));
        size_t packed = rf_int8_packed_size(N, K);
        int8_t *Wp = aligned_alloc(64, (packed + 63) / 64 * 64);
        int32_t *colsum = calloc(rf_int8_colsum_count(N), sizeof *colsum);
        int32_t *C = malloc((size_t)M * N * sizeof *C);
        memset(Wp, 0, packed);
        int first = N / 3;
        rf_int8_pack_rows(W, 0, first, K, (size_t)K, Wp, colsum);
        rf_int8_pack_rows(W + (size_t)first * K, first, N - first, K, (size_t)K, Wp, colsum);
        rf_int8_matrix Wm = {Wp, NULL, colsum};
        CHECK(rf_gemm_int8_s32(X, M, K, &Wm, N, C), "int8 gemm (%s): out of memory", kernel_name);
        int wrong = 0;
        for (int i = 0; i < M; i++)
            for (int n = 0; n < N; n++) {
                int64_t sum = 0;
                for (int k = 0; k < K; k++)
                    sum += (int64_t)X[(size_t)i * kb + k] * W[(size_t)n * K + k];
                wrong += C[(size_t)i * N + n] != sum;
            }
        CHECK(wrong == 0, "int8 gemm (%s) %dx%dx%d: %d sums differ from the naive ones",
              kernel_name, M, N, K, wrong);
        free(X);
        free(W);
        free(Wp);
        free(colsum);
        free(C);
    }
}

/* The int8 Linear's bounds, as ratios (above 1 fails) of got to
 * want_int8 (the naive twin) and to want_f32 (the f32 naive product).
 *
 * Against the naive twin: the same integer sums s of the same quantized
 * rows (xq from rf_int8_quantize_row_naive, Wq given), so only the
 * epilogue y = s (sx sw) + (cx (sw colsum) + b) differs: float(s) and five
 * operations, each side in its own order, with or without FMA, each
 * rounding by at most u of a value at most E = |s| sx sw + |cx sw colsum|
 * + |b|: 8 u E, through the activation.
 *
 * Against f32: x_k is represented as cx + sx xq_k and w_k as sw wq_k,
 * each within half a step (plus the rounding of (x - c) * (127 / half) to
 * a value of at most 127: 256 u steps), so a product moves by at most
 * ex |w_k| + |x_k| ew + ex ew; summed over k, plus both sides' rounding. */
static void int8_ratios(const float *X, const float *W, const int8_t *Wq, const float *sw,
                        const float *b, int M, int N, int K, rf_activation act, const float *got,
                        const float *want_int8, const float *want_f32, double *r_int8,
                        double *r_f32)
{
    int kb = rf_int8_row_bytes(K);
    int8_t *xq = malloc((size_t)kb);
    double slope = act == RF_ACT_LINEAR ? 1.0 : ACT_SLOPE, step_part = 0.5 + 256.0 * U_F32;
    *r_int8 = *r_f32 = 0.0;
    for (int i = 0; i < M; i++) {
        const float *x = X + (size_t)i * K;
        float cx, sx = rf_int8_quantize_row_naive(x, K, xq, &cx);
        double ex = step_part * sx;
        for (int n = 0; n < N; n++) {
            const float *w = W + (size_t)n * K;
            const int8_t *wq = Wq + (size_t)n * K;
            double ew = step_part * sw[n], bias = b ? fabs(b[n]) : 0.0;
            int64_t sum = 0, colsum = 0;
            double dot = b ? b[n] : 0.0, mag = bias, moved = 0.0;
            for (int k = 0; k < K; k++) {
                sum += (int64_t)xq[k] * wq[k];
                colsum += wq[k];
                dot += (double)x[k] * w[k];
                mag += fabs((double)x[k] * w[k]);
                moved += ex * fabs(w[k]) + fabs(x[k]) * ew + ex * ew;
            }
            double e = fabs((double)sum * sx * sw[n]) + fabs((double)cx * sw[n] * colsum) + bias;
            size_t o = (size_t)i * N + n;
            double bound = slope * 8.0 * U_F32 * e + act_bound(act, dot, want_int8[o]);
            *r_int8 = bound_ratio(fabs(got[o] - want_int8[o]), bound, *r_int8);
            bound = slope * (moved + 8.0 * U_F32 * e + sum_bound(K + 1, mag)) +
                    act_bound(act, dot, want_f32[o]);
            *r_f32 = bound_ratio(fabs(got[o] - want_f32[o]), bound, *r_f32);
        }
    }
    free(xq);
}

/* The int8 Linear (row quantization, product, scaling, bias, activation)
 * against its naive twin, with both thread splits: the same integers, so
 * only the epilogue's float rounding differs. And the quantization it
 * stands for: near the f32 product. */
static void test_linear_int8(void)
{
    const int sizes[][3] = {{1, 5, 3}, {97, 61, 45}, {400, 33, 70}, {3, 1001, 37},
                            {13, 64, 767}, {300, 96, 800}, {25, 2, 48}};
    const rf_activation acts[] = {RF_ACT_LINEAR, RF_ACT_GELU, RF_ACT_RELU};
    for (int n_threads = 1; n_threads <= 3; n_threads++) {
        rf_pool *pool;
        rf_pool_create(n_threads, &pool, NULL);
        rf_parallel par = rf_pool_parallel(pool);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            int M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
            rf_activation act = acts[s % 3];
            float *X = rnd_array((size_t)M * K, 1.0f), *W = rnd_array((size_t)N * K, 0.3f);
            float *b = s % 2 ? rnd_array((size_t)N, 0.5f) : NULL;
            if (s == 2)
                memset(X, 0, (size_t)K * sizeof *X); /* a zero row: scale 0 */
            int8_t *Wq = malloc((size_t)N * K);
            float *sw = malloc((size_t)N * sizeof *sw);
            size_t packed = rf_int8_packed_size(N, K), scratch_size = rf_int8_scratch_size(M, K);
            int8_t *Wp = aligned_alloc(64, (packed + 63) / 64 * 64);
            int32_t *colsum = calloc(rf_int8_colsum_count(N), sizeof *colsum);
            void *scratch = aligned_alloc(64, (scratch_size + 63) / 64 * 64);
            float *Y = malloc((size_t)M * N * sizeof *Y), *Y2 = malloc((size_t)M * N * sizeof *Y);
            float *Y3 = malloc((size_t)M * N * sizeof *Y3);
            memset(Wp, 0, packed);
            rf_int8_quantize_rows(W, N, K, (size_t)K, Wq, sw);
            rf_int8_pack_rows(Wq, 0, N, K, (size_t)K, Wp, colsum);
            rf_int8_matrix Wm = {Wp, sw, colsum};
            rf_linear_int8(&par, X, M, K, &Wm, b, N, act, NULL, Y, scratch);
            struct post_record *rec = post_record_new(M, N);
            rf_linear_int8(&par, X, M, K, &Wm, b, N, act, &(rf_block_post){record_block, rec}, Y2,
                           scratch);
            check_post_record(rec, Y, "int8 linear");
            rf_linear_int8_naive(X, M, K, W, b, N, act, Y2);
            rf_linear_naive(X, M, K, W, b, N, act, Y3);
            double r_int8, r_f32;
            int8_ratios(X, W, Wq, sw, b, M, N, K, act, Y, Y2, Y3, &r_int8, &r_f32);
            CHECK(r_int8 <= 1.0, "int8 linear %dx%dx%d act %d, %d threads: max |diff| %g, %.3g of "
                  "its bound", M, N, K, act, n_threads, check_max_abs_diff(Y, Y2, (size_t)M * N), r_int8);
            CHECK(r_f32 <= 1.0, "int8 linear %dx%dx%d near f32: max |diff| %g, %.3g of its bound",
                  M, N, K, check_max_abs_diff(Y, Y3, (size_t)M * N), r_f32);
            free(X);
            free(W);
            free(b);
            free(Wq);
            free(sw);
            free(Wp);
            free(colsum);
            free(scratch);
            free(Y);
            free(Y2);
            free(Y3);
        }
        rf_pool_free(pool);
    }
}

/* The single-thread pieces attention uses: scale * X (rows ldx apart)
 * times V (K x N, rows ldv apart) through rf_bf16_round,
 * rf_bf16_pack_transposed and rf_gemm_bf16, output rows ldy apart; and
 * X . W^T with W packed from rows ldw apart. Against the naive twin on the
 * same rounded operands. */
static void test_bf16_pieces(void)
{
    const int sizes[][3] = {{1, 64, 40}, {128, 64, 300}, {37, 17, 33}, {128, 300, 64}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
        size_t ldx = (size_t)K + 5, ldv = (size_t)N + 3, ldw = (size_t)K + 7, ldy = (size_t)N + 2;
        float scale = 0.125f;
        float *X = rnd_array((size_t)M * ldx, 1.0f), *V = rnd_array((size_t)K * ldv, 1.0f);
        float *Xs = malloc((size_t)M * K * sizeof *Xs), *Vt = malloc((size_t)N * K * sizeof *Vt);
        for (int i = 0; i < M; i++)
            for (int k = 0; k < K; k++)
                Xs[(size_t)i * K + k] = scale * X[(size_t)i * ldx + k];
        for (int k = 0; k < K; k++)
            for (int n = 0; n < N; n++)
                Vt[(size_t)n * K + k] = V[(size_t)k * ldv + n];
        uint16_t *Xb = malloc(rf_bf16_scratch_size(M, K) * sizeof *Xb);
        uint16_t *Wp = malloc(rf_bf16_packed_size(N, K) * sizeof *Wp);
        float *Y = malloc((size_t)M * ldy * sizeof *Y), *Y2 = malloc((size_t)M * N * sizeof *Y2);
        rf_bf16_round(X, M, K, ldx, scale, Xb);
        rf_bf16_pack_transposed(V, K, N, ldv, Wp);
        rf_gemm_bf16(Xb, M, K, Wp, N, Y, (int)ldy);
        rf_linear_bf16_naive(Xs, M, K, Vt, NULL, N, RF_ACT_LINEAR, Y2);
        float d = 0.0f;
        for (int i = 0; i < M; i++)
            d = check_max_nan(d, check_max_abs_diff(Y + (size_t)i * ldy, Y2 + (size_t)i * N, (size_t)N));
        double worst = linear_ratio(Xs, Vt, NULL, M, N, K, RF_ACT_LINEAR, BF16_PRODUCT_REL, true,
                                    Y, (int)ldy, Y2);
        CHECK(worst <= 1.0, "bf16 X V %dx%dx%d (round, pack_transposed): max |diff| %g, %.3g of "
              "its bound", M, N, K, d, worst);
        /* the same product with W = Vt given as rows ldw apart */
        float *W = malloc((size_t)N * ldw * sizeof *W);
        for (int n = 0; n < N; n++)
            memcpy(W + (size_t)n * ldw, Vt + (size_t)n * K, (size_t)K * sizeof *W);
        rf_bf16_pack_rows(W, N, K, ldw, Wp);
        rf_gemm_bf16(Xb, M, K, Wp, N, Y, (int)ldy);
        d = 0.0f;
        for (int i = 0; i < M; i++)
            d = check_max_nan(d, check_max_abs_diff(Y + (size_t)i * ldy, Y2 + (size_t)i * N, (size_t)N));
        worst = linear_ratio(Xs, Vt, NULL, M, N, K, RF_ACT_LINEAR, BF16_PRODUCT_REL, true, Y,
                             (int)ldy, Y2);
        CHECK(worst <= 1.0, "bf16 X W^T %dx%dx%d (pack_rows, ldw %zu): max |diff| %g, %.3g of its "
              "bound", M, N, K, ldw, d, worst);
        free(X);
        free(V);
        free(Xs);
        free(Vt);
        free(Xb);
        free(Wp);
        free(Y);
        free(Y2);
        free(W);
    }
}

/* A bf16 kernel's edges against the naive twin: rows around the AMX
 * kernel's 16-row tiles and 32-row blocks (1, 15, 16, 17, 31, 33, 64, 100),
 * columns around its 16-column tiles, inputs around its 32-input tiles
 * and 384-input chunks (odd K, K not a multiple of 32, one and two
 * chunks), with bias and activations, through rf_linear_bf16 on the
 * calling thread; and attention's pieces (rf_gemm_bf16 into rows ldy
 * apart, W packed by rf_bf16_pack_transposed).
 *
 * The bound, from the arithmetic: both sides multiply the same rounded
 * operands x^, w^ (each product exact in f32 and double). The kernel adds
 * the K products (and the bias) in f32 in its own order, each add within
 * one ulp of its result (rounded to nearest: half an ulp; TDPBF16PS's
 * order inside an instruction is the hardware's, BFDOT's rounding is to
 * odd: one), so its sum is within (K + 1) 2u sum_k |x^_k w^_k| (+ |b|) of
 * the exact one, u = 2^-24; the naive twin's double sum rounds once, u
 * |y|. Then the activation's slope and its vector error (act_bound). */
static double bf16_edge_ratio(const float *X, const float *W, const float *b, int M, int N, int K,
                              rf_activation act, const float *got, int ld_got, const float *want)
{
    double worst = 0.0;
    for (int i = 0; i < M; i++)
        for (int n = 0; n < N; n++) {
            double dot = b ? b[n] : 0.0, mag = b ? fabs(b[n]) : 0.0;
            for (int k = 0; k < K; k++) {
                double p = (double)rf_bf16_to_f32(rf_f32_to_bf16(X[(size_t)i * K + k])) *
                           rf_bf16_to_f32(rf_f32_to_bf16(W[(size_t)n * K + k]));
                dot += p;
                mag += fabs(p);
            }
            double y = want[(size_t)i * N + n];
            double bound = (K + 1) * 2.0 * U_F32 * mag + U_F32 * fabs(dot);
            bound = (act == RF_ACT_LINEAR ? 1.0 : ACT_SLOPE) * bound + act_bound(act, dot, y);
            worst = bound_ratio(fabs(got[(size_t)i * ld_got + n] - y), bound, worst);
        }
    return worst;
}

static void test_bf16_kernel_edges(const char *kernel)
{
    const int ms[] = {1, 15, 16, 17, 31, 33, 64, 100};
    const int nks[][2] = {{1, 1}, {16, 31}, {17, 32}, {33, 33}, {64, 100}, {100, 385}, {48, 800}};
    const rf_activation acts[] = {RF_ACT_LINEAR, RF_ACT_GELU, RF_ACT_RELU};
    double worst_all = 0.0;
    for (size_t a = 0; a < sizeof ms / sizeof ms[0]; a++)
        for (size_t c = 0; c < sizeof nks / sizeof nks[0]; c++) {
            int M = ms[a], N = nks[c][0], K = nks[c][1];
            rf_activation act = acts[(a + c) % 3];
            float *X = rnd_array((size_t)M * K, 1.0f), *W = rnd_array((size_t)N * K, 0.3f);
            float *b = (a + c) % 2 ? rnd_array((size_t)N, 0.5f) : NULL;
            uint16_t *Wp = malloc(rf_bf16_packed_size(N, K) * sizeof *Wp);
            uint16_t *Xb = malloc(rf_bf16_scratch_size(M, K) * sizeof *Xb);
            size_t ldy = (size_t)N + 3;
            float *Y = malloc((size_t)M * ldy * sizeof *Y), *Y2 = malloc((size_t)M * N * sizeof *Y);
            float *V = malloc((size_t)K * N * sizeof *V);
            rf_bf16_pack(W, N, K, Wp);
            rf_linear_bf16(NULL, X, M, K, Wp, b, N, act, NULL, Y, Xb);
            rf_linear_bf16_naive(X, M, K, W, b, N, act, Y2);
            double worst = bf16_edge_ratio(X, W, b, M, N, K, act, Y, N, Y2);
            CHECK(worst <= 1.0, "bf16 %s linear %dx%dx%d act %d bias %d: %.3g of its bound",
                  kernel, M, N, K, act, b != NULL, worst);
            worst_all = check_max_nan(worst_all, worst);
            /* attention's pieces: W given as V = W^T (K x N), Y rows ldy
               apart, the columns past N untouched */
            for (int k = 0; k < K; k++)
                for (int n = 0; n < N; n++)
                    V[(size_t)k * N + n] = W[(size_t)n * K + k];
            for (size_t i = 0; i < (size_t)M * ldy; i++)
                Y[i] = -7.0f;
            rf_bf16_pack_transposed(V, K, N, (size_t)N, Wp);
            rf_bf16_round(X, M, K, (size_t)K, 1.0f, Xb);
            rf_gemm_bf16(Xb, M, K, Wp, N, Y, (int)ldy);
            rf_linear_bf16_naive(X, M, K, W, NULL, N, RF_ACT_LINEAR, Y2);
            worst = bf16_edge_ratio(X, W, NULL, M, N, K, RF_ACT_LINEAR, Y, (int)ldy, Y2);
            bool kept = true;
            for (int i = 0; i < M; i++)
                for (size_t c2 = (size_t)N; c2 < ldy; c2++)
                    kept = kept && Y[(size_t)i * ldy + c2] == -7.0f;
            CHECK(worst <= 1.0 && kept, "bf16 %s X V %dx%dx%d, ldy %zu: %.3g of its bound, %s",
                  kernel, M, N, K, ldy, worst, kept ? "padding kept" : "wrote past N");
            worst_all = check_max_nan(worst_all, worst);
            free(X);
            free(W);
            free(b);
            free(Wp);
            free(Xb);
            free(Y);
            free(Y2);
            free(V);
        }
    printf("bf16 %s kernel edges: worst %.3g of the bound\n", kernel, worst_all);
}

/* ==== element-wise kernels ==== */

/* The vector exp/erf against libm in double over their whole range. */
static void test_vecmath(void)
{
    double worst_exp = 0.0, worst_erf_ulps = 0.0;
    for (int i = 0; i < 400000; i += RF_VLEN) {
        float x[RF_VLEN], y[RF_VLEN];
        for (int k = 0; k < RF_VLEN; k++)
            x[k] = -87.0f + 175.0f * (float)(i + k) / 400000.0f;
        rf_v_store(y, rf_v_exp(rf_v_load(x)));
        for (int k = 0; k < RF_VLEN; k++) {
            double rel = fabs(y[k] - exp((double)x[k])) / exp((double)x[k]);
            worst_exp = check_max_nan(worst_exp, rel);
            x[k] = -5.0f + 10.0f * (float)(i + k) / 400000.0f; /* erf on [-5, 5) */
        }
        rf_v_store(y, rf_v_erf(rf_v_load(x)));
        for (int k = 0; k < RF_VLEN; k++) {
            double want = erf((double)x[k]);
            /* one ulp of the float nearest erf(z), the spacing below it: at
               most 2^-24, also where erf(z) rounds to 1 */
            float f = (float)fabs(want);
            double ulp = f > 0.0f ? f - nextafterf(f, 0.0f) : 0x1p-149;
            double ulps = fabs(y[k] - want) / ulp;
            worst_erf_ulps = check_max_nan(worst_erf_ulps, ulps);
        }
    }
    CHECK(worst_exp < 3e-7, "vector exp relative error %g (2 ulp is 2.4e-7)", worst_exp);
    /* the exp under bf16 weights, on x <= 0: the fit's 9.7e-8 plus six
       roundings of values near 1 (3.6e-7), 5e-7; exactly 1 at 0 */
    double worst_bf16_exp = 0.0;
    for (int i = 0; i < 400000; i += RF_VLEN) {
        float x[RF_VLEN], y[RF_VLEN];
        for (int k = 0; k < RF_VLEN; k++)
            x[k] = -87.0f * (float)(i + k) / 400000.0f;
        rf_v_store(y, rf_v_exp_for_bf16(rf_v_load(x)));
        for (int k = 0; k < RF_VLEN; k++)
            worst_bf16_exp = check_max_nan(worst_bf16_exp,
                                           fabs(y[k] - exp((double)x[k])) / exp((double)x[k]));
    }
    CHECK(worst_bf16_exp < 5e-7, "exp for bf16 relative error %g on [-87, 0]", worst_bf16_exp);
    float zero[RF_VLEN] = {0}, one[RF_VLEN];
    rf_v_store(one, rf_v_exp_for_bf16(rf_v_load(zero)));
    CHECK(one[0] == 1.0f && one[RF_VLEN - 1] == 1.0f, "exp for bf16 of 0 is exactly 1: %g",
          one[0]);
    /* the fit's 1.9e-8 (0.3 ulp) plus the rounding of two five-step Horner
       sums of positive terms (at most 2.5 ulp each, without FMA), of z P
       and of the division: 8 ulp */
    CHECK(worst_erf_ulps <= 8.0, "vector erf error %g ulp on [-5, 5)", worst_erf_ulps);
    /* exactly 0 and +-1 where erf rounds to them */
    float edge[8] = {0.0f, -0.0f, 4.0f, 10.0f, -10.0f, INFINITY, -INFINITY, -4.0f};
    for (int k = 0; k + RF_VLEN <= 8; k += RF_VLEN) {
        float e[RF_VLEN];
        rf_v_store(e, rf_v_erf(rf_v_load(edge + k)));
        for (int i = 0; i < RF_VLEN; i++)
            CHECK(e[i] == (float)erf((double)edge[k + i]), "erf(%g) = %g", edge[k + i], e[i]);
    }
    float nan_in[RF_VLEN], nan_out[RF_VLEN];
    for (int i = 0; i < RF_VLEN; i++)
        nan_in[i] = NAN;
    rf_v_store(nan_out, rf_v_erf(rf_v_load(nan_in)));
    CHECK(isnan(nan_out[0]) && isnan(nan_out[RF_VLEN - 1]), "erf(NaN) is NaN");
    float under[8] = {-87.4f, -1e30f, -3.4e38f, -INFINITY, -87.4f, -1e30f, -3.4e38f, -INFINITY};
    float y[8];
    for (int k = 0; k + RF_VLEN <= 8; k += RF_VLEN) {
        rf_v_store(y, rf_v_exp(rf_v_load(under + k)));
        CHECK(y[0] == 0.0f && y[RF_VLEN - 1] == 0.0f, "exp of very negative x is exactly 0");
        rf_v_store(y, rf_v_exp_for_bf16(rf_v_load(under + k)));
        CHECK(y[0] == 0.0f && y[RF_VLEN - 1] == 0.0f,
              "exp for bf16 of very negative x is exactly 0");
    }
}

/* Large inputs: no NaN or overflow, and the limits of each function. At
 * |x| >= 20 each function is 0, x or +-1 to float precision, which both
 * sides reach within a rounding or two; at -0 and 1e-30 each is linear in
 * x. So 1e-6 of max(1, |y|), 8 ulps, bounds every build. */
static void test_activation_extremes(void)
{
    const float x[8] = {-1e4f, -100.0f, -20.0f, -0.0f, 1e-30f, 20.0f, 100.0f, 1e4f};
    const rf_activation acts[] = {RF_ACT_GELU, RF_ACT_GELU_NEW, RF_ACT_SILU, RF_ACT_TANH};
    for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
        float y[8];
        memcpy(y, x, sizeof y);
        rf_bias_act(y, 1, 8, 8, NULL, acts[a]);
        int ok = 1;
        for (int i = 0; i < 8; i++) {
            float want = rf_act_naive(acts[a], x[i]);
            ok &= fabsf(y[i] - want) <= 1e-6 * check_max_nan(1.0, fabsf(want));
        }
        CHECK(ok, "activation %d at extreme inputs equals the naive twin", acts[a]);
    }
}

static void test_activations(void)
{
    /* exact values: torch.nn.functional.gelu(1.0) and NewGELUActivation()(1.0) */
    CHECK(fabsf(rf_act_naive(RF_ACT_GELU, 1.0f) - 0.8413447f) < 1e-6f, "gelu(1)");
    CHECK(fabsf(rf_act_naive(RF_ACT_GELU_NEW, 1.0f) - 0.8411920f) < 1e-6f, "gelu_new(1)");
    CHECK(fabsf(rf_act_naive(RF_ACT_SILU, 2.0f) - 1.7615942f) < 1e-6f, "silu(2)");
    CHECK(rf_act_naive(RF_ACT_RELU, -0.5f) == 0.0f && rf_act_naive(RF_ACT_RELU, 0.5f) == 0.5f,
          "relu");
    const rf_activation acts[] = {RF_ACT_GELU, RF_ACT_GELU_NEW, RF_ACT_RELU,
                                  RF_ACT_SILU, RF_ACT_TANH, RF_ACT_LINEAR};
    for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
        int rows = 13, cols = 37, ld = 41;
        float *y = rnd_array((size_t)rows * ld, 6.0f), *bias = rnd_array((size_t)cols, 1.0f);
        float *y2 = copy_array(y, (size_t)rows * ld), *z = copy_array(y, (size_t)rows * ld);
        rf_bias_act(y, rows, cols, ld, bias, acts[a]);
        rf_bias_act_naive(y2, rows, cols, ld, bias, acts[a]);
        /* both sides add the bias in float: the same z, then act_bound */
        double worst = 0.0;
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++) {
                size_t i = (size_t)r * ld + c;
                worst = bound_ratio(fabs(y[i] - y2[i]), act_bound(acts[a], z[i] + bias[c], y2[i]),
                                    worst);
            }
        CHECK(worst <= 1.0, "bias+act %d: max |diff| %g, %.3g of its bound", acts[a],
              check_max_abs_diff(y, y2, (size_t)rows * ld), worst);
        free(z);
        free(y);
        free(y2);
        free(bias);
    }
}

/* The worst ratio of |got - want| to LayerNorm's bound over rows of n,
 * v = x + y the rows it normalises (y may be NULL), in double.
 *
 * With mu and s = sqrt(var + eps) the row's exact mean and spread, xh =
 * (v - mu) / s and m the kernel's first estimate of the mean (|m - mu| <=
 * n u |mu|, so the deviations' root mean square is at most r s, r = 1 +
 * n u |mu| / s): the sum of the n deviations is within (n + 1) u of n r s,
 * which moves xh by (n + 1) u r; their squares' sum, the eps add, the
 * square root and 1 / s by ((n + 3) / 2 + 5) u r^2 of xh; the input's own
 * rounding to float (v = x + y) by 2 u max|v| / s; and the last multiply-
 * add by 3 u (|xh g| + |b|). Whatever the mean, for every vector width. */
static double layernorm_ratio(const float *x, const float *y, int rows, int n, const float *g,
                              const float *b, float eps, const float *got, const float *want)
{
    double worst = 0.0;
    for (int r = 0; r < rows; r++) {
        double mu = 0.0, var = 0.0, vmax = 0.0;
        for (int i = 0; i < n; i++) {
            double v = (double)x[(size_t)r * n + i] + (y ? y[(size_t)r * n + i] : 0.0f);
            mu += v;
            vmax = check_max_nan(vmax, fabs(v));
        }
        mu /= n;
        for (int i = 0; i < n; i++) {
            double v = (double)x[(size_t)r * n + i] + (y ? y[(size_t)r * n + i] : 0.0f);
            var += (v - mu) * (v - mu);
        }
        double sd = sqrt(var / n + eps), rr = 1.0 + n * U_F32 * fabs(mu) / sd;
        for (int i = 0; i < n; i++) {
            double v = (double)x[(size_t)r * n + i] + (y ? y[(size_t)r * n + i] : 0.0f);
            double xh = (v - mu) / sd;
            double bound = fabs(g[i]) * ((n + 1) * U_F32 * rr +
                                         fabs(xh) * ((n + 3) / 2.0 + 5.0) * U_F32 * rr * rr +
                                         2.0 * U_F32 * vmax / sd) +
                           3.0 * U_F32 * (fabs(xh * g[i]) + fabs(b[i]));
            size_t o = (size_t)r * n + i;
            worst = bound_ratio(fabs(got[o] - want[o]), bound, worst);
        }
    }
    return worst;
}

static void test_layernorm(void)
{
    int rows = 9, n = 77;
    float *g = rnd_array((size_t)n, 1.0f), *b = rnd_array((size_t)n, 1.0f);
    float *x = rnd_array((size_t)rows * n, 3.0f), *y = rnd_array((size_t)rows * n, 3.0f);
    for (int i = 0; i < n; i++) {
        x[i] += 100.0f;                /* rows far from zero mean */
        x[n + i] += 10000.0f;          /* ulp(10^4) is 1e-3: a sum's error n eps |mean| would show */
        x[2 * n + i] = -50.0f + 1e-3f * (float)(i % 7); /* spread far below the mean */
    }
    float *x_in = copy_array(x, (size_t)rows * n), *x2 = copy_array(x, (size_t)rows * n);
    rf_layernorm(x, rows, n, g, b, 1e-12f);
    rf_add_layernorm_naive(x2, NULL, rows, n, g, b, 1e-12f);
    double worst = layernorm_ratio(x_in, NULL, rows, n, g, b, 1e-12f, x, x2);
    CHECK(worst <= 1.0, "layernorm: max |diff| %g, %.3g of its bound",
          check_max_abs_diff(x, x2, (size_t)rows * n), worst);
    float *x3 = copy_array(x, (size_t)rows * n);
    memcpy(x_in, x, (size_t)rows * n * sizeof *x);
    rf_add_layernorm(x, y, rows, n, g, b, 1e-5f);
    rf_add_layernorm_naive(x3, y, rows, n, g, b, 1e-5f);
    worst = layernorm_ratio(x_in, y, rows, n, g, b, 1e-5f, x, x3);
    CHECK(worst <= 1.0, "residual + layernorm: max |diff| %g, %.3g of its bound",
          check_max_abs_diff(x, x3, (size_t)rows * n), worst);
    free(g);
    free(b);
    free(x);
    free(y);
    free(x_in);
    free(x2);
    free(x3);
}

/* RMS norm's bound over outputs `want` of rows of n: the sum of n squares
 * within (n + 1) u of itself, the eps add, the square root (halving it)
 * and 1 / rms add 3 u, the input's rounding (x + y) and the last multiply
 * 2 u more: every output within ((n + 1) / 2 + 7) u of its own size. The
 * largest output gives the bound over all. */
static float rmsnorm_bound(int n, const float *want, size_t count)
{
    float m = 0.0f;
    for (size_t i = 0; i < count; i++)
        m = check_max_nan(m, fabsf(want[i]));
    return (float)(((n + 1) / 2.0 + 7.0) * U_F32 * m);
}

/* RoFormer-v2's parameter-free RMS norm against its naive twin, alone and
 * after the residual add; rows of n = 77 leave a tail in every build. */
static void test_rmsnorm(void)
{
    int rows = 9, n = 77;
    float *x = rnd_array((size_t)rows * n, 3.0f), *y = rnd_array((size_t)rows * n, 3.0f);
    for (int i = 0; i < n; i++)
        x[i] += 100.0f; /* a row far from zero mean: RMS, unlike LN, keeps the offset */
    for (int i = 0; i < n; i++)
        x[(size_t)(rows - 1) * n + i] = 0.0f; /* an all-zero row stays zero, not NaN */
    float *x2 = copy_array(x, (size_t)rows * n);
    rf_rmsnorm(x, rows, n, 1e-12f);
    rf_add_rmsnorm_naive(x2, NULL, rows, n, 1e-12f);
    float d = check_max_abs_diff(x, x2, (size_t)rows * n);
    CHECK(d <= rmsnorm_bound(n, x2, (size_t)rows * n), "rmsnorm: max |diff| %g", d);
    /* each output within (n + 15) / 2 u of itself: the mean square within
       (n + 15) u of 1 */
    double sq = 0.0;
    for (int i = 0; i < n; i++)
        sq += (double)x[i] * x[i];
    CHECK(fabs(sq / n - 1.0) <= (n + 15) * U_F32 && x[0] > 0.9f,
          "rmsnorm: mean square of a row %g, x[0] %g", sq / n, x[0]);
    float last = 0.0f;
    for (int i = 0; i < n; i++)
        last = check_max_nan(last, fabsf(x[(size_t)(rows - 1) * n + i]));
    CHECK(last == 0.0f, "rmsnorm: a zero row gives %g", last);
    float *x3 = copy_array(x, (size_t)rows * n);
    rf_add_rmsnorm(x, y, rows, n, 1e-5f);
    rf_add_rmsnorm_naive(x3, y, rows, n, 1e-5f);
    d = check_max_abs_diff(x, x3, (size_t)rows * n);
    CHECK(d <= rmsnorm_bound(n, x3, (size_t)rows * n), "residual + rmsnorm: max |diff| %g", d);
    free(x);
    free(y);
    free(x2);
    free(x3);
}

static void test_rope(void)
{
    int n_pos = 1536, Dh = 64, half = Dh / 2;
    float *s = malloc((size_t)n_pos * half * sizeof *s), *c = malloc((size_t)n_pos * half * sizeof *c);
    rf_rope_table(s, c, n_pos, Dh, 10000.0, 1.0);
    /* entries from the formula, and the double-precision angle matters at high positions */
    int ok = 1, float_angle_differs = 0;
    for (int p = 0; p < n_pos; p += 97)
        for (int i = 0; i < half; i++) {
            double angle = p / pow(10000.0, 2.0 * i / Dh);
            ok &= s[p * half + i] == (float)sin(angle) && c[p * half + i] == (float)cos(angle);
            float fa = (float)p / powf(10000.0f, 2.0f * i / Dh);
            float_angle_differs |= sinf(fa) != s[p * half + i];
        }
    CHECK(ok, "rope table equals (float)sin/cos of the float64 angle");
    CHECK(float_angle_differs, "rope table differs from float32 angles somewhere (it is float64)");
    CHECK(s[0] == 0.0f && c[0] == 1.0f && s[half - 1] == 0.0f, "rope position 0 is the identity");
    /* --rope-scaling linear F rotates position p as p / F (F = 4: position
       8 as 2, exactly); ntk F keeps the positions and raises the base to
       10000 F^(Dh / (Dh - 2)); none changes neither */
    double base, divisor;
    float s4[9 * 32], c4[9 * 32];
    rf_rope_scaled(RF_ROPE_SCALING_LINEAR, 4.0, Dh, &base, &divisor);
    rf_rope_table(s4, c4, 9, Dh, base, divisor);
    CHECK(!memcmp(s4 + 8 * half, s + 2 * half, sizeof(float) * half) &&
              !memcmp(c4 + 8 * half, c + 2 * half, sizeof(float) * half),
          "linear scaling by 4: position 8 is rotated as position 2 (base %g, divisor %g)", base,
          divisor);
    rf_rope_scaled(RF_ROPE_SCALING_NTK, 4.0, Dh, &base, &divisor);
    CHECK(divisor == 1.0 && fabs(base / (10000.0 * pow(4.0, 64.0 / 62.0)) - 1.0) < 1e-12,
          "ntk scaling by 4: base %g (want 10000 * 4^(64/62)), divisor %g", base, divisor);
    rf_rope_scaled(RF_ROPE_SCALING_NONE, 4.0, Dh, &base, &divisor);
    CHECK(base == 10000.0 && divisor == 1.0, "no scaling: base %g, divisor %g", base, divisor);

    int L = 11, H = 3, T = 2 * L, ld = H * Dh + 5;
    /* whole rows of one sequence at a time */
    float *x = rnd_array((size_t)T * ld, 2.0f), *x2 = copy_array(x, (size_t)T * ld);
    for (int seq = 0; seq < T / L; seq++)
        rf_rope_block(x, ld, seq * L, L, 0, 0, H * Dh, Dh, s, c);
    rf_rope_naive(x2, T, ld, L, H, Dh, s, c);
    float d = check_max_abs_diff(x, x2, (size_t)T * ld);
    CHECK(d == 0.0f, "rope on whole sequences vs naive: max |diff| %g", d);
    /* a product's epilogue: blocks of 16 and 32 columns across the heads'
       edges, rows split inside a sequence; the columns past the heads
       (ld > H Dh) untouched */
    float *x3 = rnd_array((size_t)T * ld, 2.0f), *x4 = copy_array(x3, (size_t)T * ld);
    const int row_cuts[] = {0, 3, 11, 12, 22}, col_cuts[] = {0, 16, 48, 64, 96, 112, 144, 192};
    for (int r = 0; r + 1 < (int)(sizeof row_cuts / sizeof *row_cuts); r++)
        for (int k = 0; k + 1 < (int)(sizeof col_cuts / sizeof *col_cuts); k++) {
            int m0 = row_cuts[r], m1 = row_cuts[r + 1];
            int seq = m0 / L; /* no cut straddles a sequence here */
            rf_rope_block(x3, ld, m0, m1 - m0, m0 - seq * L, col_cuts[k], col_cuts[k + 1], Dh, s,
                          c);
        }
    rf_rope_naive(x4, T, ld, L, H, Dh, s, c);
    d = check_max_abs_diff(x3, x4, (size_t)T * ld);
    CHECK(d == 0.0f, "rope on blocks vs naive: max |diff| %g", d);
    free(x);
    free(x2);
    free(x3);
    free(x4);
    free(s);
    free(c);
}

/* The whole softmax from the engine's online pieces, as attention uses
 * them: the keys in `blocks` blocks, the weights of the blocks before
 * each multiplied by its rescale, then every weight by 1 / the sum. */
static void softmax_online(float *x, int rows, int n, int ld, const float *mask, int blocks)
{
    float row_max[16], row_sum[16], rescale[16];
    for (int r = 0; r < rows; r++)
        row_max[r] = -INFINITY, row_sum[r] = 0.0f;
    for (int b = 0; b < blocks; b++) {
        int j0 = n * b / blocks, j1 = n * (b + 1) / blocks;
        rf_softmax_rows_online(x + j0, rows, j1 - j0, ld, mask ? mask + j0 : NULL, row_max,
                               row_sum, rescale, false);
        for (int r = 0; r < rows; r++)
            for (int j = 0; j < j0; j++)
                x[(size_t)r * ld + j] *= rescale[r];
    }
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < n; j++)
            x[(size_t)r * ld + j] *= 1.0f / row_sum[r];
}

static void test_softmax(void)
{
    int rows = 6, n = 29, ld = 31;
    float *x = rnd_array((size_t)rows * ld, 8.0f), *mask = malloc((size_t)n * sizeof *mask);
    for (int j = 0; j < n; j++)
        mask[j] = j % 4 == 3 ? RF_MASK_NEG : 0.0f;
    float *x2 = copy_array(x, (size_t)rows * ld);
    softmax_online(x, rows, n, ld, mask, 1);
    rf_softmax_rows_naive(x2, rows, n, ld, mask);
    /* each weight p within p (2 * 3e-7 + (n + 3) u) of the naive one: the
       vector exp within 3e-7 relatively (test_vecmath) in its numerator and
       in each term of the sum, the n-term sum (n + 1) u, the 1 / sum and
       the product 2 u more; weights are at most 1 */
    const float softmax_tol = (float)(6e-7 + (n + 3) * U_F32);
    float d = check_max_abs_diff(x, x2, (size_t)rows * ld);
    CHECK(d <= softmax_tol, "softmax vs naive: max |diff| %g", d);
    /* the keys in 3 blocks, on fresh scores: each later block multiplies
       the weights before it and the running sum by a rescale, expf within
       1 ulp and the product 1 u, so 2 u a block more on each */
    float *x3 = copy_array(x2, (size_t)rows * ld);
    for (size_t i = 0; i < (size_t)rows * ld; i++)
        x3[i] = x2[i] == 0.0f ? -1.0f : logf(x2[i]) + 0.25f * (float)(i % 5);
    float *x4 = copy_array(x3, (size_t)rows * ld);
    softmax_online(x3, rows, n, ld, mask, 3);
    rf_softmax_rows_naive(x4, rows, n, ld, mask);
    float d_blocks = 0.0f;
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < n; j++)
            d_blocks = check_max_nan(d_blocks, fabsf(x3[r * ld + j] - x4[r * ld + j]));
    CHECK(d_blocks <= softmax_tol + 2 * 2 * 2 * U_F32,
          "softmax online over 3 blocks vs naive: max |diff| %g", d_blocks);
    free(x3);
    free(x4);
    int zeros = 1;
    for (int r = 0; r < rows; r++)
        for (int j = 3; j < n; j += 4)
            zeros &= x[r * ld + j] == 0.0f;
    CHECK(zeros, "masked keys get exactly zero weight");
    /* every key masked: HF's finfo.min mask gives a uniform row */
    for (int j = 0; j < n; j++)
        mask[j] = RF_MASK_NEG;
    softmax_online(x, 1, n, ld, mask, 1);
    /* exp(0) is 1 exactly, n ones sum exactly: one rounding of 1 / n */
    CHECK(fabsf(x[0] - 1.0f / n) <= U_F32 / n && fabsf(x[n - 1] - 1.0f / n) <= U_F32 / n,
          "fully masked row is uniform");
    free(x);
    free(x2);
    free(mask);
}

/* The kernels' one table (its names are ROFORMER_KERNEL's words, info's
 * and bench's): every row complete with its op's operations and no
 * other's, every name unique within its op (a word names one build),
 * every CPU need and rule one the CPU module knows, the tests' own builds
 * never the CPU's choice, a small-product build needing no more than its
 * big one, each name found again, and the CPU's choice of each op the
 * first row whose rule the CPU has. */
static void test_backend_table(void)
{
    for (int i = 0; i < rf_backend_count; i++) {
        const rf_backend *b = &rf_backends[i];
        const char *op = rf_op_name(b->op);
        CHECK(op && b->name && b->name[0] && b->why && b->why[0],
              "row %d (%s): an op, a name and a reason", i, b->name ? b->name : "?");
        if (!op)
            continue;
        bool int8 = b->int8 && b->int8->operands && b->int8->operands->quantize_rows &&
                    b->int8->operands->row_sum && b->int8->block;
        bool bf16 = b->bf16 && b->bf16->packing && b->bf16->packing->round_rows &&
                    b->bf16->packing->pack_rows && b->bf16->packing->pack_transposed &&
                    b->bf16->gemm;
        const rf_elementwise_ops *e = b->elementwise;
        bool elementwise = e && e->bias_act && e->softmax_rows_online && e->add_layernorm &&
                           e->add_rmsnorm && e->widen_f16 && e->widen_bf16;
        CHECK(b->op == RF_OP_INT8 ? int8 && !b->bf16 && !e
              : b->op == RF_OP_BF16 ? bf16 && !b->int8 && !e
                                     : elementwise && !b->int8 && !b->bf16,
              "%s %s: its op's operations, every member set, and no other op's", op, b->name);
        CHECK(!(b->needs & ~RF_CPU_ALL_KNOWN) &&
                  (b->rule == RF_RULE_NEVER || !(b->rule & ~RF_CPU_ALL_KNOWN)),
              "%s %s: needs and rule in known CPU features", op, b->name);
        CHECK(!b->tests_only || b->rule == RF_RULE_NEVER, "%s %s: a test build is never the rule's",
              op, b->name);
        CHECK(rf_backend_find(b->op, b->name) == b, "%s %s: found by its name", op, b->name);
        if (b->op == RF_OP_INT8) {
            const rf_backend *small = NULL;
            for (int j = 0; j < rf_backend_count; j++)
                if (b->int8->small && rf_backends[j].int8 == b->int8->small)
                    small = &rf_backends[j];
            CHECK(!b->int8->min_rows == !b->int8->small &&
                      (!b->int8->small || (small && !(small->needs & ~b->needs))),
                  "int8 %s: a small-product build with a row floor, needing no more of the CPU",
                  b->name);
        }
        for (int j = i + 1; j < rf_backend_count; j++)
            CHECK(rf_backends[j].op != b->op || strcmp(rf_backends[j].name, b->name),
                  "%s build name '%s' used twice", op, b->name);
    }
    for (int op = 0; op < RF_OP_COUNT; op++) {
        const rf_backend *first = NULL;
        for (int i = 0; i < rf_backend_count && !first; i++) {
            const rf_backend *b = &rf_backends[i];
            if ((int)b->op == op && !b->tests_only && rf_cpu_has_all(b->rule) && rf_backend_runs(b))
                first = b;
        }
        CHECK(rf_backend_supported((rf_op)op) == (first != NULL) &&
                  (!first || rf_backend_get((rf_op)op) == first),
              "%s: the CPU's choice is the first row whose rule it has (%s)", rf_op_name((rf_op)op),
              first ? first->name : "none");
        CHECK((int)rf_op_find(rf_op_name((rf_op)op)) == op, "op %d found by its name", op);
    }
    CHECK(rf_backend_supported(RF_OP_ELEMENTWISE), "an element-wise build runs everywhere");
    CHECK(rf_op_find("gpu") == RF_OP_COUNT, "no op named gpu");
    for (int f = 0; f < RF_CPU_FEATURE_COUNT; f++)
        CHECK(rf_cpu_feature_name((rf_cpu_feature)f) != NULL, "CPU feature %d has a name", f);
}

#if RF_SIMD_ARM64
/* The builds chosen by default on the CPU model the test runs on, when
 * the runner names what that model has (tests/run_arm64.sh, from qemu's
 * CPU models: cortex-a72 has neither the dot product nor BF16,
 * neoverse-n1 the dot product only, max everything):
 * RF_EXPECT_INT8=NEON|SDOT|I8MM, RF_EXPECT_BF16=yes|no. A build the CPU
 * lacks is refused. */
static void check_expected_kernels(void)
{
    const char *int8 = getenv("RF_EXPECT_INT8"), *bf16 = getenv("RF_EXPECT_BF16");
    if (!int8 || !bf16) {
        SKIP("default ARM64 builds: RF_EXPECT_INT8 / RF_EXPECT_BF16 not set");
        return;
    }
    const char *k = rf_backend_get(RF_OP_INT8)->name;
    CHECK(!strcasecmp(k, int8), "default int8 product %s, expected %s", k, int8);
    bool want_bf16 = !strcmp(bf16, "yes");
    CHECK(rf_bf16_supported() == want_bf16, "bf16 product %s, expected %s",
          rf_bf16_supported() ? "available" : "refused", bf16);
    if (strcmp(int8, "I8MM"))
        CHECK(!rf_backend_set(rf_backend_find(RF_OP_INT8, "i8mm")),
              "int8 I8MM product refused on a CPU without I8MM");
    if (!strcmp(int8, "NEON"))
        CHECK(!rf_backend_set(rf_backend_find(RF_OP_INT8, "sdot")),
              "int8 SDOT product refused on a CPU without it");
    if (!want_bf16)
        CHECK(!rf_backend_set(rf_backend_find(RF_OP_BF16, "bfdot")),
              "bf16 BFDOT product refused without BF16");
}
#endif

int main(void)
{
    check_rng_state = 0x9E3779B97F4A7C15ull;
#if RF_SIMD_ARM64
    /* RF_TEST_PRODUCTS_ONLY (tests/run_arm64.sh, on the CPU models without
     * I8MM or BF16): only what depends on those features, the int8 and bf16
     * products' builds and which one is chosen */
    bool all = !getenv("RF_TEST_PRODUCTS_ONLY");
#else
    bool all = true;
#endif
    /* RF_TEST_SKIP_EMULATED (tests/run_x86.sh, under qemu): the tests-only
     * backends (the AMX loops on the tile emulator) are portable C over the
     * AVX2 build, with no choice by CPU model; the native run tests them,
     * and under emulation they are most of this test's time */
    bool emulated = !getenv("RF_TEST_SKIP_EMULATED");
    if (all) {
        test_gemm();
        test_linear();
    }
#if RF_SIMD_ARM64
    check_expected_kernels();
#endif
    test_backend_table();
    /* the products on each build of the table this CPU runs (on x86-64
     * amx-model: the AMX loops on the C emulator of the tiles, on any CPU
     * with AVX2) */
    const rf_backend *bf16_best = rf_backend_get(RF_OP_BF16),
                     *int8_best = rf_backend_get(RF_OP_INT8);
    for (int k = 0; k < rf_backend_count; k++) {
        const rf_backend *b = &rf_backends[k];
        const char *op = rf_op_name(b->op);
        if (b->op == RF_OP_ELEMENTWISE)
            continue;
        if (b->tests_only && !emulated) {
            SKIP("%s %s product: tests-only, run natively (RF_TEST_SKIP_EMULATED)", op, b->name);
            continue;
        }
        if (!rf_backend_set(b)) {
            SKIP("%s %s product: this CPU does not run it", op, b->name);
            continue;
        }
        CHECK(rf_backend_get(b->op) == b, "%s %s product selected", op, b->name);
        if (b->op == RF_OP_INT8) {
            test_gemm_int8(b->name);
            test_linear_int8();
            continue;
        }
        long faults = rf_amx_emu_faults();
        test_linear_bf16();
        test_bf16_pieces();
        test_bf16_kernel_edges(b->name);
        /* the tile emulator counts instructions the hardware would refuse
           (on this thread: the edges ran here) */
        CHECK(rf_amx_emu_faults() == faults, "bf16 %s: %ld tile emulator faults", b->name,
              rf_amx_emu_faults() - faults);
    }
    rf_backend_set(bf16_best); /* refused where no bf16 build runs: none is used then */
    rf_backend_set(int8_best);
#if RF_SIMD_X86
    CHECK(rf_amx_emu_faults() == 0, "the tile emulator saw %ld faults (unconfigured tiles or shapes "
          "that disagree)", rf_amx_emu_faults());
#endif
    if (!all)
        return check_done();
    test_vecmath();
    /* the element-wise kernels in each build of the table this CPU runs
     * (ARM64: the one NEON build, elementwise.h) */
    const rf_backend *elementwise_best = rf_backend_get(RF_OP_ELEMENTWISE);
    for (int k = 0; k < rf_backend_count; k++) {
        const rf_backend *b = &rf_backends[k];
        if (b->op != RF_OP_ELEMENTWISE)
            continue;
        if (!rf_backend_set(b)) {
            SKIP("%s element-wise kernels: this CPU does not have them", b->name);
            continue;
        }
        /* the entry points call the row's build */
        CHECK(rf_elementwise() == b->elementwise, "%s element-wise kernels selected", b->name);
#if RF_SIMD_X86
        if (strcmp(b->name, "baseline"))
            test_quantize_rows_int8(b->name);
#endif
        test_activations();
        test_activation_extremes();
        test_softmax();
        test_layernorm();
        test_rmsnorm();
    }
    rf_backend_set(elementwise_best);
    test_rope();
    return check_done();
}
