/*
 * threadpool.h — a small persistent pool of compute threads owned by a
 * context, so the engine (not OpenBLAS) decides how work is split across
 * cores.
 *
 * rf_pool_run(pool, n_tasks, fn, arg) calls fn(arg, task, thread) once for
 * every task in [0, n_tasks) and returns when all are done. The threads
 * take the tasks in order from a shared counter, so which thread runs a
 * task, and how many tasks a thread runs, change from run to run: a task
 * must give the same result on any thread, and `thread` only picks the
 * scratch the task may use while it runs. The calling thread is thread 0
 * and works too. A NULL pool, or a pool of one thread, runs every task on
 * the caller, in order.
 *
 * A pool is driven by one thread at a time (the one that owns the context).
 */
#ifndef RF_THREADPOOL_H
#define RF_THREADPOOL_H

#include "roformer.h"
#include "kernels/parallel.h"

typedef struct rf_pool rf_pool;

/* n_threads >= 1 threads in all, i.e. n_threads - 1 workers are started. */
rf_status rf_pool_create(int n_threads, rf_pool **out, rf_error *err);
void rf_pool_free(rf_pool *pool);
int rf_pool_threads(const rf_pool *pool);
/* CPU time the pool's workers (not the calling thread) have used, in
 * seconds: how a test sees that an idle pool's threads sleep. */
double rf_pool_workers_cpu_seconds(const rf_pool *pool);
void rf_pool_run(rf_pool *pool, int n_tasks, rf_task_fn fn, void *arg);
/* The regions rf_pool_run has run on more than one thread since the pool
 * was made: each a wake of the workers and a wait for the last of them. */
int64_t rf_pool_regions(const rf_pool *pool);
/* For tests: `thread` sleeps pause_ns before each task it takes (0: no
 * pause), as a thread the host stops now and then; results must not
 * change. */
void rf_pool_slow_thread_for_test(rf_pool *pool, int thread, long pause_ns);
/* Touches RF_STACK_RESERVE bytes of the calling thread's stack below its
 * current frame, so that the kernels' stack buffers (tile tails, partial
 * sums: tens of KiB, some only on a shorter input's edge path) are never
 * a page fault in a forward pass. Workers do it when they start; a
 * forward pass does it on its calling thread. */
#define RF_STACK_RESERVE (128 * 1024)
void rf_pool_reserve_stack(void);
/* The pool as the kernels take it (kernels/parallel.h); NULL: the
 * calling thread alone. */
rf_parallel rf_pool_parallel(rf_pool *pool);

#endif
