/*
 * parallel.h — how the kernels run their work on several threads without
 * knowing whose threads: the caller hands them an rf_parallel, a function
 * that runs N tasks and returns when all are done (the context's thread
 * pool, model/threadpool.h, gives one), and its number of threads.
 */
#ifndef RF_PARALLEL_H
#define RF_PARALLEL_H

/* One task of a parallel region: `task` in [0, n_tasks), run by thread
 * `thread` in [0, n_threads) (which picks per-thread scratch). */
typedef void (*rf_task_fn)(void *arg, int task, int thread);

typedef struct {
    /* calls fn(arg, task, thread) once for every task, returns when all are done */
    void (*run)(void *runner, int n_tasks, rf_task_fn fn, void *arg);
    void *runner;
    int n_threads;
} rf_parallel;

/* par NULL: every task on the caller, in order, as thread 0. */
static inline void rf_parallel_run(const rf_parallel *par, int n_tasks, rf_task_fn fn, void *arg)
{
    if (!par) {
        for (int t = 0; t < n_tasks; t++)
            fn(arg, t, 0);
        return;
    }
    par->run(par->runner, n_tasks, fn, arg);
}

static inline int rf_parallel_threads(const rf_parallel *par)
{
    return par ? par->n_threads : 1;
}

#endif
