/*
 * partition.h — how a product Y (M x N) = X (M x K) . W^T is shared out
 * among T threads: a pure function of (M, N, K, panel, row grain, T).
 *
 * The output is cut into units of `row_grain` rows by `panel` columns (the
 * last row of units and the last panel may be narrower). The units are
 * ordered panel by panel, rows inside a panel:
 *
 *            panel 0   panel 1   panel 2
 *   rows 0   u0        u3        u6
 *   rows 1   u1        u4        u7        a thread's block is a run of
 *   rows 2   u2        u5        u8        consecutive units, e.g. u2..u6
 *
 * and each block is one contiguous run, cut where the multiply-adds so far
 * reach b / n_blocks of the whole. So a block is at most three rectangles:
 * the lower rows of one panel, some whole panels, the upper rows of the
 * next. A thread streams only the weights of its panels: a panel is read
 * by one thread, or by the two whose runs meet in it, while there are at
 * least as many panels as threads; with fewer, a panel's rows are shared
 * by several threads, each of which reads the panel. Rows are split only
 * when the panels alone cannot feed the threads.
 *
 * Balance: every block is within one unit of M N K / n_blocks, so with one
 * block per thread and at least U units per thread the busiest thread has
 * at most (U + 1) / U of the mean: mean/max >= 0.8 from 4 units per
 * thread, >= 0.9 from 9. With fewer units than that, blocks are whole
 * units and some threads get one more than others (or none: never more
 * blocks than units), so mean/max falls to about units / (T * ceil(units /
 * T)).
 *
 * The pool's threads take blocks from a shared queue (model/threadpool.h),
 * so a thread the host stops for a while leaves its blocks to the others;
 * with one block per thread it has none to leave. rf_partition_plan_shared
 * makes R blocks per thread (R <= per_thread <= RF_PARTITION_MAX_PER_THREAD)
 * where each block still has
 * at least 8 units: blocks then differ by less than 2 units in 8, so
 * threads of equal speed each take exactly R of them, the busiest at most
 * R units above the mean (mean/max >= U / (U + R)), and a thread held for
 * a while costs the others at most its last block instead of its whole
 * share. The blocks are runs of the same units: a row's output is the same
 * whatever the blocks.
 *
 * The unit grid does not depend on T: the f32 product computes each small
 * unit as its own sgemm call, and merges only units large enough that
 * OpenBLAS sums them as one call would, so every output element is summed
 * the same way whatever the number of threads (linalg.c).
 */
#ifndef RF_PARTITION_H
#define RF_PARTITION_H

#include <stdint.h>

typedef struct {
    int M, N, K;
    int panel, row_grain; /* the unit: row_grain rows x panel columns */
    int row_units;        /* ceil(M / row_grain) */
    int panels;           /* ceil(N / panel) */
    int n_threads;        /* the T planned for */
    int n_blocks;         /* blocks made: 1 to min(T, units), or a multiple of T */
} rf_partition;

/* A rectangle of the output: rows [m0, m1), columns [n0, n1). */
typedef struct {
    int m0, m1, n0, n1;
} rf_rect;

/* The plan for T >= 1 threads, at most one block per thread. Products too
 * small to be worth a wake (RF_PARTITION_MIN_MACS in all, or per block)
 * get fewer blocks. */
rf_partition rf_partition_plan(int M, int N, int K, int panel, int row_grain, int n_threads);
/* The same with up to per_thread blocks per thread (above). */
#define RF_PARTITION_MAX_PER_THREAD 4
rf_partition rf_partition_plan_shared(int M, int N, int K, int panel, int row_grain, int n_threads,
                                      int per_thread);

/* Block `block` (0 <= block < n_blocks) as at most 3 rectangles in out[];
 * returns how many (0: an empty block). */
int rf_partition_block(const rf_partition *p, int block, rf_rect out[3]);

/* Mean over the n_threads planned for / max over the threads of the
 * multiply-adds per thread: 1 is a perfect split. */
double rf_partition_efficiency(const rf_partition *p);
/* The busiest thread's multiply-adds when threads of equal speed take the
 * blocks in order, each block the thread free first (with one block per
 * thread: the busiest block's). */
int64_t rf_partition_max_macs(const rf_partition *p);

#endif
