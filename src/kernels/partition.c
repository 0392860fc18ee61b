/*
 * partition.c — the planner of partition.h: units of row_grain rows x panel
 * columns in panel-major order, cut into runs of equal work.
 */
#include "kernels/partition.h"
#include "roformer.h"

/* A product below this many multiply-adds runs as one block, and no block
 * is made smaller than RF_PARTITION_MIN_BLOCK_MACS: a wake and a barrier
 * cost about as much as that much arithmetic. */
#define RF_PARTITION_MIN_MACS (1L << 18)
#define RF_PARTITION_MIN_BLOCK_MACS (1L << 16)

/* More blocks than threads are made only of at least this many units,
 * so that no block is much more than another (see the header). */
#define RF_PARTITION_MIN_SHARED_UNITS 8

rf_partition rf_partition_plan(int M, int N, int K, int panel, int row_grain, int n_threads)
{
    return rf_partition_plan_shared(M, N, K, panel, row_grain, n_threads, 1);
}

rf_partition rf_partition_plan_shared(int M, int N, int K, int panel, int row_grain, int n_threads,
                                      int per_thread)
{
    rf_partition p = {.M = M, .N = N, .K = K, .panel = panel, .row_grain = row_grain,
                      .row_units = (M + row_grain - 1) / row_grain,
                      .panels = (N + panel - 1) / panel, .n_threads = n_threads, .n_blocks = 1};
    int64_t macs = (int64_t)M * N * K, units = (int64_t)p.row_units * p.panels;
    if (n_threads < 2 || macs < RF_PARTITION_MIN_MACS)
        return p;
    int64_t blocks = n_threads;
    if (blocks > units)
        blocks = units;
    if (blocks > macs / RF_PARTITION_MIN_BLOCK_MACS)
        blocks = macs / RF_PARTITION_MIN_BLOCK_MACS;
    p.n_blocks = blocks > 1 ? (int)blocks : 1;
    if (p.n_blocks < n_threads)
        return p;
    /* a whole number of blocks per thread, each of enough units and
       multiply-adds */
    int64_t rounds = per_thread < RF_PARTITION_MAX_PER_THREAD ? per_thread
                                                              : RF_PARTITION_MAX_PER_THREAD;
    if (rounds > units / RF_PARTITION_MIN_SHARED_UNITS / n_threads)
        rounds = units / RF_PARTITION_MIN_SHARED_UNITS / n_threads;
    if (rounds > macs / RF_PARTITION_MIN_BLOCK_MACS / n_threads)
        rounds = macs / RF_PARTITION_MIN_BLOCK_MACS / n_threads;
    if (rounds > 1)
        p.n_blocks = (int)(rounds * n_threads);
    return p;
}

/* Output elements (rows x columns) of the first u units in panel-major
 * order. */
static int64_t work_before(const rf_partition *p, int64_t u)
{
    int64_t whole = u / p->row_units, rest = u % p->row_units;
    int64_t cols = whole * p->panel < p->N ? whole * p->panel : p->N;
    int64_t next = p->N - cols < p->panel ? p->N - cols : p->panel;
    int64_t rows = rest * p->row_grain < p->M ? rest * p->row_grain : p->M;
    return cols * p->M + next * rows;
}

/* The first unit of block b: the least u whose work before reaches
 * b / n_blocks of the whole. */
static int64_t first_unit(const rf_partition *p, int b)
{
    int64_t units = (int64_t)p->row_units * p->panels;
    int64_t goal = (int64_t)p->M * p->N * b, lo = 0, hi = units;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (work_before(p, mid) * p->n_blocks >= goal)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

int rf_partition_block(const rf_partition *p, int block, rf_rect out[3])
{
    int64_t u = first_unit(p, block), end = first_unit(p, block + 1);
    int n = 0;
    while (u < end) {
        int64_t panel = u / p->row_units, row_unit = u % p->row_units;
        int64_t panel_end = (panel + 1) * p->row_units;
        int64_t stop = end < panel_end ? end : panel_end;
        int64_t last_panel = panel;
        /* whole panels in a row are one rectangle */
        if (row_unit == 0 && stop == panel_end) {
            last_panel = end / p->row_units - 1;
            stop = (last_panel + 1) * p->row_units;
        }
        int m1 = (int)((stop - panel * p->row_units) * p->row_grain);
        int n1 = (int)((last_panel + 1) * p->panel);
        out[n++] = (rf_rect){(int)(row_unit * p->row_grain), m1 < p->M ? m1 : p->M,
                             (int)(panel * p->panel), n1 < p->N ? n1 : p->N};
        u = stop;
    }
    return n;
}

int64_t rf_partition_max_macs(const rf_partition *p)
{
    /* threads of equal speed: each block goes, in order, to the thread
       that is free first (the lowest-numbered of those free together) */
    int threads = p->n_blocks < p->n_threads ? p->n_blocks : p->n_threads;
    threads = threads < RF_MAX_THREADS ? threads : RF_MAX_THREADS;
    int64_t busy[RF_MAX_THREADS] = {0}, max = 0;
    for (int b = 0; b < p->n_blocks; b++) {
        int free = 0;
        for (int t = 1; t < threads; t++)
            free = busy[t] < busy[free] ? t : free;
        busy[free] += work_before(p, first_unit(p, b + 1)) - work_before(p, first_unit(p, b));
        max = busy[free] > max ? busy[free] : max;
    }
    return max * p->K;
}

double rf_partition_efficiency(const rf_partition *p)
{
    int64_t max = rf_partition_max_macs(p);
    if (max == 0)
        return 1.0;
    return (double)p->M * p->N * p->K / p->n_threads / (double)max;
}
