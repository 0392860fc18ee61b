/*
 * test_partition.c — the product planner (kernels/partition.h) on every
 * product of a base-size layer (hidden 768, intermediate 3072, Q|K|V fused
 * into one 2304-wide product, encoder.c) at 1x16, 1x128, 8x128 and 32x512
 * tokens, for 1 to 128 threads, as the bf16 and int8 drivers plan it (the
 * f32 product's calls are fixed by the rows alone, linalg.c; its balance is
 * checked last).
 *
 * First, from the blocks' rectangles alone (not from the planner's own
 * figures): every output element belongs to exactly one block, columns
 * start on the type's panel and rows on its row grain, there are never
 * more blocks than threads, or (bf16 and int8, whose threads take their
 * blocks from a queue) a whole number of blocks per thread, at most
 * RF_PARTITION_MAX_PER_THREAD, none of fewer than 8 units.
 *
 * Then the balance, mean / max multiply-adds per thread over the T
 * threads, a thread's being the blocks it takes when threads of equal
 * speed take them in order, each the thread free first. A unit is the
 * planner's smallest piece (row grain x panel). bf16 and int8 cut rows one
 * at a time, so a shape with at least 4 panels (of all M rows) per thread
 * has at least 4 M units per thread (64 at M = 16), within R <= 4 units of
 * the mean with R blocks per thread, and must reach 0.9 up to 16 threads
 * and 0.8 up to 64.
 *
 * f32's calls are fixed by the rows (linalg.c), and its tasks are taken
 * from a shared queue, each by the first thread free: the busiest thread
 * then ends at most one task after the mean (Graham's bound for list
 * scheduling), which is checked for every product and thread count above.
 *
 * Last, the f32 and bf16 Linear layers on short and long inputs give
 * bit-identical outputs on 1, 2, 3, 5, 16 and 64 threads (f32 went
 * through OpenBLAS calls cut per thread, whose kernel depends on the
 * call's shape). `test_partition --threads-only` runs that last part
 * alone (tests/kernels/test_blas_cores.sh, under each of OpenBLAS's cores).
 */
#include "../check.h"
#include "kernels/gemm_bf16.h"
#include "kernels/gemm_int8.h"
#include "kernels/linalg.h"
#include "kernels/partition.h"
#include "model/context.h"
#include "model/threadpool.h"

#include <string.h>

enum { D = 768, F = 3072 };

typedef rf_partition (*plan_fn)(int M, int N, int K, int n_threads);

static const struct {
    const char *name;
    plan_fn plan;
    int ffn_rows; /* the FFN runs on blocks of this many rows (context.c) */
    bool rows_of_one;
} types[] = {
    {"bf16", rf_linear_bf16_partition, RF_FFN_ROWS, true},
    {"int8", rf_linear_int8_partition, RF_FFN_ROWS, true},
};

/* The tiling checks; returns the busiest thread's multiply-adds, computed
 * from the rectangles: each block, in order, to the thread with the least
 * work so far (the lowest-numbered of those with as little). */
static int64_t check_tiling(const rf_partition *p, const char *what, unsigned char *seen)
{
    memset(seen, 0, (size_t)p->M * p->N);
    static int64_t busy[256];
    memset(busy, 0, sizeof busy);
    int64_t max = 0, least_units = INT64_MAX;
    bool aligned = true, once = true;
    for (int b = 0; b < p->n_blocks; b++) {
        rf_rect r[3];
        int n = rf_partition_block(p, b, r);
        int64_t macs = 0;
        for (int i = 0; i < n; i++) {
            aligned = aligned && r[i].n0 % p->panel == 0 && r[i].m0 % p->row_grain == 0 &&
                      r[i].m0 < r[i].m1 && r[i].n0 < r[i].n1 && r[i].m1 <= p->M &&
                      r[i].n1 <= p->N;
            for (int m = r[i].m0; m < r[i].m1 && aligned; m++)
                for (int c = r[i].n0; c < r[i].n1; c++)
                    once = once && seen[(size_t)m * p->N + c]++ == 0;
            macs += (int64_t)(r[i].m1 - r[i].m0) * (r[i].n1 - r[i].n0) * p->K;
        }
        int64_t unit_macs = (int64_t)p->row_grain * p->panel * p->K;
        least_units = macs / unit_macs < least_units ? macs / unit_macs : least_units;
        int t = 0;
        for (int u = 1; u < p->n_threads && u < 256; u++)
            t = busy[u] < busy[t] ? u : t;
        busy[t] += macs;
        max = busy[t] > max ? busy[t] : max;
    }
    for (size_t i = 0; i < (size_t)p->M * p->N && once; i++)
        once = seen[i] == 1;
    CHECK(aligned, "%s: a rectangle off the panel / row grain or outside the output", what);
    CHECK(once, "%s: an output element in no block or in two", what);
    bool shared = p->n_blocks > p->n_threads && p->n_blocks % p->n_threads == 0 &&
                  p->n_blocks <= RF_PARTITION_MAX_PER_THREAD * p->n_threads && least_units >= 8;
    CHECK(p->n_blocks >= 1 && (p->n_blocks <= p->n_threads || shared),
          "%s: %d blocks for %d threads (the smallest of %lld units)", what, p->n_blocks,
          p->n_threads, (long long)least_units);
    return max;
}

/* Y of rf_linear (bf16: rf_linear_bf16) on n threads. */
static void linear_on(int n, bool bf16, const float *X, int M, int K, const float *W,
                      const uint16_t *Wp, const float *b, int N, float *Y, uint16_t *scratch)
{
    rf_pool *pool = NULL;
    rf_pool_create(n, &pool, NULL);
    rf_parallel par = rf_pool_parallel(pool);
    if (bf16)
        rf_linear_bf16(&par, X, M, K, Wp, b, N, RF_ACT_GELU, NULL, Y, scratch);
    else
        rf_linear(&par, X, M, K, W, b, N, RF_ACT_GELU, NULL, NULL, Y);
    rf_pool_free(pool);
}

static void check_same_on_any_threads(void)
{
    static const int shapes[][3] = {{2, 768, 768}, {4, 2304, 768}, {7, 3072, 768},
                                    {9, 768, 3072}, {130, 768, 768}, {300, 2304, 768},
                                    {512, 3072, 768}, {1030, 768, 3072}};
    static const int threads[] = {2, 3, 5, 16, 64};
    for (int bf16 = 0; bf16 < 2; bf16++) {
        if (bf16 && !rf_bf16_supported()) {
            SKIP("bf16: this CPU has no " RF_BF16_CPU_NEEDS);
            continue;
        }
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
            float *X = malloc((size_t)M * K * sizeof *X), *W = malloc((size_t)N * K * sizeof *W);
            float *b = malloc((size_t)N * sizeof *b), *Y1 = malloc((size_t)M * N * sizeof *Y1);
            float *Yn = malloc((size_t)M * N * sizeof *Yn);
            uint16_t *Wp = malloc(rf_bf16_packed_size(N, K) * sizeof *Wp);
            uint16_t *scratch = malloc(rf_bf16_scratch_size(M, K) * sizeof *scratch);
            for (size_t i = 0; i < (size_t)M * K; i++)
                X[i] = check_rnd(1.0f);
            for (size_t i = 0; i < (size_t)N * K; i++)
                W[i] = check_rnd(0.05f);
            for (int i = 0; i < N; i++)
                b[i] = check_rnd(0.5f);
            if (bf16)
                rf_bf16_pack(W, N, K, Wp);
            linear_on(1, bf16, X, M, K, W, Wp, b, N, Y1, scratch);
            for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
                linear_on(threads[t], bf16, X, M, K, W, Wp, b, N, Yn, scratch);
                CHECK(check_same_finite(Y1, Yn, (size_t)M * N),
                      "%s linear %dx%dx%d: %d threads differ from 1 (max |diff| %g)",
                      bf16 ? "bf16" : "f32", M, N, K, threads[t],
                      (double)check_max_abs_diff(Y1, Yn, (size_t)M * N));
            }
            free(X), free(W), free(b), free(Y1), free(Yn), free(Wp), free(scratch);
        }
    }
}

/* f32: max <= mean + the largest task: 128 rows by 128 columns, or a
 * shorter product's rows by 64 columns (under 32 rows) or 512. */
static void check_f32_balance(const int *tokens, size_t n_tokens)
{
    int checked = 0;
    for (size_t i = 0; i < n_tokens; i++) {
        int T = tokens[i];
        const int products[][3] = {{T, 3 * D, D}, {T, D, D}, {T, F, D}, {T, D, F}};
        for (int k = 0; k < 4; k++)
            for (int n = 1; n <= 128; n++) {
                int M = products[k][0], N = products[k][1], K = products[k][2];
                double mean = (double)M * N * K / n;
                int rows = M < 128 ? M : 128;
                double task = (double)rows * (rows < 32 ? 64 : rows < 128 ? 512 : 128) * K;
                int64_t max = rf_linear_max_macs(M, N, K, n);
                checked++;
                CHECK(max >= mean - 1 && max <= mean + task,
                      "f32 %dx%dx%d on %d threads: busiest %lld, mean %.0f, largest task %.0f", M,
                      N, K, n, (long long)max, mean, task);
            }
    }
    printf("f32 balance within one task of the mean on %d shapes x threads\n", checked);
}

int main(int argc, char **argv)
{
    /* test_blas_cores.sh, under each OpenBLAS core: only what the core
       computes, the layers' bits on any number of threads */
    if (argc == 2 && strcmp(argv[1], "--threads-only") == 0) {
        check_same_on_any_threads();
        return check_done();
    }
    static const int tokens[] = {16, 128, 8 * 128, 32 * 512};
    unsigned char *seen = malloc((size_t)32 * 512 * F);
    int checked_09 = 0, checked_08 = 0;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; i++) {
            int T = tokens[i], ffn = T < types[t].ffn_rows ? T : types[t].ffn_rows;
            const struct {
                const char *name;
                int M, N, K;
            } products[] = {
                {"qkv", T, 3 * D, D}, {"out", T, D, D}, {"up", ffn, F, D}, {"down", ffn, D, F}};
            for (int k = 0; k < 4; k++)
                for (int n = 1; n <= 128; n++) {
                    rf_partition p = types[t].plan(products[k].M, products[k].N, products[k].K, n);
                    char what[96];
                    snprintf(what, sizeof what, "%s %s M=%d, %d threads", types[t].name,
                             products[k].name, products[k].M, n);
                    /* the whole tiling of the largest shapes is slow to walk:
                       every 7th thread count */
                    int64_t max;
                    if (products[k].M <= 1024 || n % 7 == 0 || n <= 2)
                        max = check_tiling(&p, what, seen);
                    else
                        max = rf_partition_max_macs(&p);
                    double eff = (double)products[k].M * products[k].N * products[k].K / n / max;
                    CHECK(fabs(eff - rf_partition_efficiency(&p)) < 1e-12,
                          "%s: efficiency %.6f, the planner says %.6f", what, eff,
                          rf_partition_efficiency(&p));
                    double panels = (double)products[k].N / p.panel;
                    double units = (double)p.row_units * p.panels;
                    bool enough_4 = types[t].rows_of_one ? panels >= 4.0 * n : units >= 4.0 * n;
                    bool enough_9 = types[t].rows_of_one ? panels >= 4.0 * n : units >= 9.0 * n;
                    if (n <= 16 && enough_9) {
                        checked_09++;
                        CHECK(eff >= 0.9, "%s: mean/max %.3f < 0.9", what, eff);
                    }
                    if (n <= 64 && enough_4) {
                        checked_08++;
                        CHECK(eff >= 0.8, "%s: mean/max %.3f < 0.8", what, eff);
                    }
                }
        }
    printf("balance held on %d shapes x threads at 0.9 and %d at 0.8\n", checked_09, checked_08);
    /* 1x128 on 64 threads, the shape one block per thread left short of a
       panel each: bf16 and int8 keep every thread busy */
    rf_partition p = rf_linear_int8_partition(128, D, D, 64);
    CHECK(p.n_blocks % 64 == 0 && rf_partition_efficiency(&p) >= 0.95,
          "int8 1x128 on 64 threads: %d blocks, mean/max %.3f", p.n_blocks,
          rf_partition_efficiency(&p));
    free(seen);
    check_f32_balance(tokens, sizeof tokens / sizeof tokens[0]);
    check_same_on_any_threads();
    return check_done();
}
