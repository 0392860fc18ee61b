/*
 * test_attention.c — the fused attention (rf_attention, rf_attention_packed:
 * blocks of queries over blocks of keys with an online softmax) against
 * its naive twin rf_attention_naive, which stores every score of a row and
 * sums in double: lengths on both sides of the query and key blocks,
 * padding masks that cover a whole key block or the whole sequence,
 * sequences packed without padding, f32 at every SIMD level the CPU has and
 * bf16 where the CPU has it; three sequences of one length with 0, 90 and
 * 180 keys padded at 1, 2 and 3 threads at every SIMD level; and the
 * scratch, which no longer grows with L.
 *
 * The tolerances come from bounds, with u = 2^-24 (f32 rounding),
 * gamma(n) = n u / (1 - n u), and |q|, |k|, |v| <= A:
 *   - a score is a Dh-term dot product times scale: |s| <= S = scale Dh A^2,
 *     off by at most gamma(Dh) S (the twin: u S, one rounding to float);
 *   - a weight exp(s - max) is then off by a relative 2 gamma(Dh) S (the
 *     score and the maximum) + 2 u S (s - max rounded) + 2 ulp (the
 *     polynomial exp) + 2 u per key block (the rescale's expf and product);
 *   - the output sum_j p_j v_j / sum_j p_j is a mean of values of at most
 *     A: relative weight errors e move it by at most 2 e A, and the two
 *     L-term sums in f32 by at most 2 gamma(L) A (+ u A, its rounding).
 * bf16 rounds Q (scaled), K, V and P to bf16: the twin is run on Q, K and V
 * rounded the same way, so what remains is P's rounding, p~_j = p_j (1 +
 * d_j) with |d_j| <= 2^-9, the sum taken of the rounded weights: the
 * output moves by sum_j p_j d_j (v_j - o) / sum_j p~_j, at most
 * 2^-9 2A / (1 - 2^-9), on top of the f32 bound (and u S for the rounding
 * of Q / scale given to the twin). P comes from the exp of bf16 weights
 * (rf_v_exp_for_bf16, within 5e-7 where the f32 one is within 2 ulp):
 * 2 (5e-7) A more.
 */
#include "kernels/fp16.h"
#include "kernels/gemm_bf16.h"
#include "kernels/elementwise.h"
#include "kernels/softmax.h"
#include "model/attention.h"
#include "model/threadpool.h"

#include "../check.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#define A 2.0f /* inputs uniform in [-A, A) */
#define H 2
#define DH 32
#define D (H * DH)
#define LD (3 * D) /* Q|K|V stacked, as the encoder has them */
#define B 4

static const double U = 1.0 / (1 << 24);

/* The largest |fused - twin| / bound seen, f32 and bf16, for the record. */
static double worst_f32, worst_bf16;

static void note(double d, double bound, bool bf16)
{
    double *worst = bf16 ? &worst_bf16 : &worst_f32;
    *worst = d / bound > *worst ? d / bound : *worst;
}

static double gamma_n(int n)
{
    return n * U / (1.0 - n * U);
}

/* The bound of the header on |fused - twin| for L keys. */
static double f32_bound(int L)
{
    double S = DH * (double)A * A / sqrt((double)DH);
    int key_blocks = (L + RF_ATTN_KEY_BLOCK - 1) / RF_ATTN_KEY_BLOCK;
    double weight = 2 * gamma_n(DH) * S + U * S + 2 * U * S + 4 * U + 2 * U * key_blocks;
    return (2 * weight + 2 * gamma_n(L) + U) * A;
}

/* What bf16 adds to the bound of the header: P's rounding, and Q / scale
 * given to the twin in f32. */
static double bf16_extra(void)
{
    double p = 1.0 / 512;
    return p * 2 * A / (1 - p) + 2 * U * DH * (double)A * A / sqrt((double)DH) * A +
           2 * 5e-7 * A;
}

/* Q, K and V of T rows rounded as the bf16 kernel reads them: Q as scale *
 * q rounded, unscaled again for the twin, which scales (off by one f32
 * rounding); K and V rounded. */
static void round_qkv_as_kernel(float *qkv, size_t T)
{
    float scale = (float)(1.0 / sqrt((double)DH));
    for (size_t t = 0; t < T; t++)
        for (int c = 0; c < D; c++) {
            float *x = qkv + t * LD + c;
            x[0] = rf_bf16_to_f32(rf_f32_to_bf16(scale * x[0])) / scale;
            x[D] = rf_bf16_to_f32(rf_f32_to_bf16(x[D]));
            x[2 * D] = rf_bf16_to_f32(rf_f32_to_bf16(x[2 * D]));
        }
}

/* Sequence b's key mask for length L: 0 no padding, 1 a third padded at the
 * end, 2 the first keys padded (a whole key block from 300 on), 3 all
 * padded (HF gives every key the same weight). */
static void fill_mask(float *mask, int L)
{
    int lead = L - 1 < RF_ATTN_KEY_BLOCK + 4 ? L - 1 : RF_ATTN_KEY_BLOCK + 4;
    for (int t = 0; t < L; t++) {
        mask[0 * L + t] = 0.0f;
        mask[1 * L + t] = t < L - L / 3 ? 0.0f : RF_MASK_NEG;
        mask[2 * L + t] = t < lead ? RF_MASK_NEG : 0.0f;
        mask[3 * L + t] = RF_MASK_NEG;
    }
}

/* Padded batch of B sequences of L: fused against the twin at every query
 * row, padded ones included; then bf16 against the twin on rounded inputs. */
static void check_padded(rf_pool *pool, int L, const char *level)
{
    size_t n_in = (size_t)B * L * LD, n_out = (size_t)B * L * D;
    float *qkv = malloc(n_in * sizeof *qkv), *mask = malloc((size_t)B * L * sizeof *mask);
    for (size_t i = 0; i < n_in; i++)
        qkv[i] = check_rnd(A);
    fill_mask(mask, L);
    float *ref = malloc(n_out * sizeof *ref), *out = malloc(n_out * sizeof *out);
    float *row = malloc((size_t)L * sizeof *row);
    int threads = rf_pool_threads(pool);
    rf_parallel par = rf_pool_parallel(pool);
    float *scores = malloc((size_t)threads * rf_attention_scratch(L) * sizeof *scores);
    rf_attention_naive(qkv, qkv + D, qkv + 2 * D, LD, mask, B, L, H, DH, row, ref, D);
    rf_attention(&par, qkv, qkv + D, qkv + 2 * D, LD, mask, B, L, H, DH, scores, NULL, out, D);
    double d = check_max_abs_diff(out, ref, n_out), bound = f32_bound(L);
    note(d, bound, false);
    CHECK(d <= bound, "%s f32 L=%d, %d threads: max |fused - naive| %g, bound %g", level, L,
          threads, d, bound);
    if (rf_bf16_supported() && !strcmp(level, "best")) {
        uint16_t *bs = malloc((rf_attention_bf16_kv_size(B, L, H, DH) +
                               (size_t)threads * rf_attention_bf16_scratch(L, DH)) * sizeof *bs);
        rf_attention(&par, qkv, qkv + D, qkv + 2 * D, LD, mask, B, L, H, DH, scores, bs, out, D);
        round_qkv_as_kernel(qkv, (size_t)B * L);
        rf_attention_naive(qkv, qkv + D, qkv + 2 * D, LD, mask, B, L, H, DH, row, ref, D);
        d = check_max_abs_diff(out, ref, n_out);
        double bf16_bound = bound + bf16_extra();
        note(d, bf16_bound, true);
        CHECK(d <= bf16_bound, "bf16 L=%d, %d threads: max |fused - naive on bf16 inputs| %g, "
              "bound %g", L, threads, d, bf16_bound);
        free(bs);
    }
    free(qkv);
    free(mask);
    free(ref);
    free(out);
    free(row);
    free(scores);
}

/* Sequences of L, (L + 1) / 2 and 1 tokens packed back to back, each
 * against the twin on its own rows. */
static void check_packed(rf_pool *pool, int L, bool bf16)
{
    int32_t seq_off[4] = {0, L, L + (L + 1) / 2, L + (L + 1) / 2 + 1};
    int T = seq_off[3];
    float *qkv = malloc((size_t)T * LD * sizeof *qkv), *zero = calloc((size_t)L, sizeof *zero);
    for (size_t i = 0; i < (size_t)T * LD; i++)
        qkv[i] = check_rnd(A);
    float *ref = malloc((size_t)T * D * sizeof *ref), *out = malloc((size_t)T * D * sizeof *out);
    float *row = malloc((size_t)L * sizeof *row);
    int threads = rf_pool_threads(pool);
    rf_parallel par = rf_pool_parallel(pool);
    float *scores = malloc((size_t)threads * rf_attention_scratch(L) * sizeof *scores);
    uint16_t *bs = bf16 ? malloc((rf_attention_bf16_kv_size(3, L, H, DH) +
                                  (size_t)threads * rf_attention_bf16_scratch(L, DH)) * sizeof *bs)
                        : NULL;
    rf_attention_packed(&par, qkv, qkv + D, qkv + 2 * D, LD, seq_off, 3, H, DH, scores, bs, out, D);
    if (bf16)
        round_qkv_as_kernel(qkv, (size_t)T);
    for (int b = 0; b < 3; b++) {
        const float *x = qkv + (size_t)seq_off[b] * LD;
        rf_attention_naive(x, x + D, x + 2 * D, LD, zero, 1, seq_off[b + 1] - seq_off[b], H, DH,
                           row, ref + (size_t)seq_off[b] * D, D);
    }
    double d = check_max_abs_diff(out, ref, (size_t)T * D);
    double bound = f32_bound(L) + (bf16 ? bf16_extra() : 0.0);
    note(d, bound, bf16);
    CHECK(d <= bound, "packed %s L=%d, %d threads: max |fused - naive| %g, bound %g",
          bf16 ? "bf16" : "f32", L, threads, d, bound);
    free(qkv);
    free(zero);
    free(ref);
    free(out);
    free(row);
    free(scores);
    free(bs);
}

/* The scratch of one thread: one block, whatever the length. */
static void check_scratch(void)
{
    long block = (long)RF_ATTN_QUERY_BLOCK * RF_ATTN_KEY_BLOCK;
    CHECK(rf_attention_scratch(65536) == block && rf_attention_scratch(1000) == block,
          "f32 scratch at 1000 and 65536 tokens: %ld and %ld floats, one %ld-float block",
          rf_attention_scratch(1000), rf_attention_scratch(65536), block);
    CHECK(rf_attention_scratch(7) == 49, "f32 scratch at 7 tokens: %ld floats, 49 expected",
          rf_attention_scratch(7));
    CHECK(rf_attention_bf16_scratch(65536, 64) == rf_attention_bf16_scratch(1000, 64),
          "bf16 scratch at 1000 and 65536 tokens: %zu and %zu elements",
          rf_attention_bf16_scratch(1000, 64), rf_attention_bf16_scratch(65536, 64));
}

/* The case the kernels' tests have run since the fused attention came: a
 * batch of 3 sequences of 2 query blocks and 37 rows, 90 b of sequence b's
 * keys padded, 3 heads of 24; at 1, 2 and 3 threads, padded and packed
 * (and in bf16 where the CPU has it) against the twin, at one SIMD level. */
static void check_three_sequences(const char *level)
{
    /* L spans three query blocks, the last one partial. Q, K and V are the
       column blocks of one stacked [T][3D] buffer, as the encoder has them;
       the output is [T][dim]. */
    int n_seq = 3, L = 2 * RF_ATTN_QUERY_BLOCK + 37, n_heads = 3, head_dim = 24;
    int dim = n_heads * head_dim, ld = 3 * dim;
    size_t n_in = (size_t)n_seq * L * ld, n = (size_t)n_seq * L * dim;
    float *qkv = malloc(n_in * sizeof *qkv), *q = qkv, *k = qkv + dim, *v = qkv + 2 * dim;
    for (size_t i = 0; i < n_in; i++)
        qkv[i] = check_rnd(2.0f);
    float *mask = malloc((size_t)n_seq * L * sizeof *mask);
    for (int b = 0; b < n_seq; b++)
        for (int t = 0; t < L; t++)
            mask[b * L + t] = t < L - 90 * b ? 0.0f : RF_MASK_NEG; /* sequence b has 90b pads */
    float *ref = malloc(n * sizeof *ref), *scratch = malloc((size_t)L * sizeof *scratch);
    rf_attention_naive(q, k, v, ld, mask, n_seq, L, n_heads, head_dim, scratch, ref, dim);
    for (int n_threads = 1; n_threads <= 3; n_threads++) {
        rf_pool *pool;
        rf_pool_create(n_threads, &pool, NULL);
        rf_parallel par = rf_pool_parallel(pool);
        float *scores = malloc((size_t)n_threads * rf_attention_scratch(L) * sizeof *scores);
        float *out = malloc(n * sizeof *out);
        rf_attention(&par, q, k, v, ld, mask, n_seq, L, n_heads, head_dim, scores, NULL, out, dim);
        float d = check_max_abs_diff(out, ref, n);
        CHECK(d < 2e-6f, "%s attention vs naive, %d threads: max |diff| %g", level, n_threads, d);
        /* the same sequences packed without their padding */
        int32_t seq_off[4] = {0};
        float *packed = malloc(n_in * sizeof *packed);
        for (int b = 0; b < n_seq; b++) {
            int len = L - 90 * b;
            seq_off[b + 1] = seq_off[b] + len;
            memcpy(packed + (size_t)seq_off[b] * ld, qkv + (size_t)b * L * ld,
                   (size_t)len * ld * sizeof *packed);
        }
        rf_attention_packed(&par, packed, packed + dim, packed + 2 * dim, ld, seq_off, n_seq, n_heads, head_dim,
                            scores, NULL, out, dim);
        d = 0.0f;
        for (int b = 0; b < n_seq; b++)
            d = check_max_nan(d, check_max_abs_diff(out + (size_t)seq_off[b] * dim, ref + (size_t)b * L * dim,
                                                    (size_t)(seq_off[b + 1] - seq_off[b]) * dim));
        CHECK(d < 2e-6f, "%s packed attention vs naive, %d threads: max |diff| %g", level, n_threads,
              d);
        if (rf_bf16_supported()) {
            /* bf16: within bf16 rounding of the exact result, padded and
               packed giving the same numbers at real rows */
            uint16_t *bs = malloc((rf_attention_bf16_kv_size(n_seq, L, n_heads, head_dim) +
                                   (size_t)n_threads * rf_attention_bf16_scratch(L, head_dim)) * sizeof *bs);
            float *out_b = malloc(n * sizeof *out_b);
            rf_attention(&par, q, k, v, ld, mask, n_seq, L, n_heads, head_dim, scores, bs, out_b, dim);
            rf_attention_packed(&par, packed, packed + dim, packed + 2 * dim, ld, seq_off, n_seq, n_heads, head_dim,
                                scores, bs, out, dim);
            float d_ref = 0.0f, d_packed = 0.0f;
            for (int b = 0; b < n_seq; b++) {
                size_t real = (size_t)(seq_off[b + 1] - seq_off[b]) * dim;
                d_ref = check_max_nan(d_ref, check_max_abs_diff(out_b + (size_t)b * L * dim,
                                                                ref + (size_t)b * L * dim, real));
                d_packed = check_max_nan(d_packed, check_max_abs_diff(out + (size_t)seq_off[b] * dim,
                                                                      out_b + (size_t)b * L * dim, real));
            }
            CHECK(d_ref < 0.015f, "%s bf16 attention vs naive, %d threads: max |diff| %g", level,
                  n_threads, d_ref);
            CHECK(d_packed < 1e-5f, "%s bf16 attention packed vs padded, %d threads: max |diff| %g",
                  level, n_threads, d_packed);
            printf("%s bf16 attention, %d threads: max |diff| %g to exact, %g packed vs padded\n",
                   level, n_threads, d_ref, d_packed);
            free(bs);
            free(out_b);
        }
        free(packed);
        free(scores);
        free(out);
        rf_pool_free(pool);
    }
    free(qkv);
    free(mask);
    free(ref);
    free(scratch);
}

int main(void)
{
    /* RF_TEST_SHORT (tests/run_arm64.sh, under qemu, where the long ones
       take minutes each): the lengths around one block's edges only */
    static const int all_lengths[] = {1, 7, 64, 65, 255, 256, 257, 300, 513, 1000};
    static const int short_lengths[] = {1, 7, 64, 65, 257};
    bool short_run = getenv("RF_TEST_SHORT") != NULL;
    const int *lengths = short_run ? short_lengths : all_lengths;
    size_t n_lengths = short_run ? sizeof short_lengths / sizeof short_lengths[0]
                                 : sizeof all_lengths / sizeof all_lengths[0];
    check_scratch();
    const rf_backend *best = rf_backend_get(RF_OP_ELEMENTWISE);
    for (int threads = 1; threads <= 3; threads += 2) {
        rf_pool *pool;
        if (rf_pool_create(threads, &pool, NULL) != RF_OK) {
            CHECK(0, "pool of %d threads", threads);
            continue;
        }
        for (size_t i = 0; i < n_lengths; i++) {
            check_padded(pool, lengths[i], "best");
            check_packed(pool, lengths[i], false);
            if (rf_bf16_supported())
                check_packed(pool, lengths[i], true);
        }
        /* the other builds of the online softmax, on lengths across blocks */
        for (int l = 0; threads == 1 && l < rf_backend_count; l++) {
            const rf_backend *b = &rf_backends[l];
            if (b->op != RF_OP_ELEMENTWISE || b == best || !rf_backend_set(b))
                continue;
            check_padded(pool, 300, b->name);
            check_padded(pool, 7, b->name);
        }
        rf_backend_set(best);
        rf_pool_free(pool);
    }
    for (int l = 0; l < rf_backend_count; l++) {
        const rf_backend *b = &rf_backends[l];
        if (b->op == RF_OP_ELEMENTWISE && rf_backend_set(b))
            check_three_sequences(b->name);
    }
    rf_backend_set(best);
    printf("largest |fused - naive| / bound: f32 %.3g, bf16 %.3g\n", worst_f32, worst_bf16);
    if (!rf_bf16_supported())
        SKIP("bf16 attention: this CPU lacks %s", RF_BF16_CPU_NEEDS);
    return check_done();
}
