/*
 * threadpool.c — persistent pthread workers woken per parallel region
 * (see threadpool.h).
 *
 * Each rf_pool_run publishes (fn, arg, n_tasks) and bumps a generation
 * counter; workers see the new generation, take tasks from a shared
 * counter until none is left and count themselves done. Workers live until
 * rf_pool_free, so a forward pass never creates threads.
 *
 * Tasks are taken, not dealt: on a shared machine the host may stop any
 * thread for a while, and a thread given a fixed share would hold the
 * whole region until it ran again. Taken one at a time from a counter,
 * the held thread delays only the task it is in; the others take the rest.
 *
 * A layer runs several short regions in a row (the Linear products,
 * attention, the FFN's blocks) with a little serial work between them. A
 * thread that slept on a condition variable after each would pay a futex
 * wake and a reschedule per region, which at short sequences is a large
 * part of the region itself. So a waiting thread first spins, watching
 * the counter it waits on, and only then sleeps: a worker between the
 * regions of one forward pass does not sleep, and an idle pool stops
 * spinning at most SPIN_NS after its last region, so no thread keeps a
 * core busy between batches. Sleeping uses the mutex and condition
 * variables; the counters are atomics, so a spinning thread takes no lock.
 *
 * Spinning only pays while the other threads are running: on a machine
 * with more runnable threads than cores, the thread waited for may not be
 * scheduled, and a spin then takes the core from it. So each waiter keeps
 * its own spin budget: halved after every wait that ended in sleep,
 * doubled (up to SPIN_NS) after every wait the spin covered. On cores of
 * its own the pool spins; on a crowded machine it sleeps as a plain
 * condition-variable pool does.
 */
#include "model/threadpool.h"
#include "base/error.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() ((void)0)
#endif

/* The longest a waiting thread spins before it sleeps: longer than the
 * serial work between two regions of a layer, short enough that an idle
 * pool costs nothing measurable. */
#define SPIN_NS 200000L
/* What a budget grows by besides doubling, so that one at 0 recovers. */
#define SPIN_GROW_NS 1000L
/* Spins between two reads of the clock. */
#define SPINS_PER_CHECK 64

struct rf_pool {
    int n_threads;
    pthread_t *workers;        /* [n_threads - 1] */
    int n_started;
    pthread_mutex_t lock;
    pthread_cond_t wake;       /* a new region (or shutdown) was published */
    pthread_cond_t done;       /* the last worker found no task left */
    unsigned long generation;  /* bumped once per region (atomic) */
    int n_done;                /* workers finished in this region (atomic) */
    int next_task;             /* the region's next task to take (atomic) */
    int slow_thread;           /* rf_pool_slow_thread_for_test: its thread, */
    long slow_ns;              /* and the pause before each of its tasks (0: none) */
    long caller_spin_ns;       /* the calling thread's spin budget */
    int64_t regions;           /* regions that woke the workers (the caller's own) */
    int shutdown;              /* (atomic) */
    rf_task_fn fn;             /* the region: written before generation is bumped */
    void *arg;
    int n_tasks;
};

struct worker_start {
    rf_pool *pool;
    int thread;
};

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* The next budget after a wait the spin covered (or not). */
static long next_budget(long budget, int covered)
{
    if (!covered)
        return budget / 2;
    budget = budget * 2 + SPIN_GROW_NS;
    return budget < SPIN_NS ? budget : SPIN_NS;
}

/* Spins until *counter != value, for about *budget ns; true if it changed.
 * Updates the budget. */
static int spin_while_equal(const unsigned long *counter, unsigned long value, long *budget)
{
    long start = now_ns();
    for (;;) {
        for (int i = 0; i < SPINS_PER_CHECK; i++) {
            if (__atomic_load_n(counter, __ATOMIC_ACQUIRE) != value) {
                *budget = next_budget(*budget, 1);
                return 1;
            }
            cpu_relax();
        }
        if (now_ns() - start > *budget) {
            *budget = next_budget(*budget, 0);
            return 0;
        }
    }
}

/* Spins until *counter reaches target, likewise. */
static int spin_until(const int *counter, int target, long *budget)
{
    long start = now_ns();
    for (;;) {
        for (int i = 0; i < SPINS_PER_CHECK; i++) {
            if (__atomic_load_n(counter, __ATOMIC_ACQUIRE) >= target) {
                *budget = next_budget(*budget, 1);
                return 1;
            }
            cpu_relax();
        }
        if (now_ns() - start > *budget) {
            *budget = next_budget(*budget, 0);
            return 0;
        }
    }
}

/* Takes the region's tasks one at a time until none is left. */
static void run_tasks(rf_pool *pool, rf_task_fn fn, void *arg, int n_tasks, int thread)
{
    for (;;) {
        int task = __atomic_fetch_add(&pool->next_task, 1, __ATOMIC_RELAXED);
        if (task >= n_tasks)
            return;
        if (pool->slow_ns && thread == pool->slow_thread) {
            struct timespec pause = {pool->slow_ns / 1000000000L, pool->slow_ns % 1000000000L};
            nanosleep(&pause, NULL);
        }
        fn(arg, task, thread);
    }
}

/* noinline: the buffer lies below the caller's frame, where the kernels'
   frames will be */
__attribute__((noinline)) void rf_pool_reserve_stack(void)
{
    volatile char stack[RF_STACK_RESERVE];
    for (size_t i = 0; i < sizeof stack; i += 4096)
        stack[i] = 0;
}

static void *worker_main(void *p)
{
    rf_pool_reserve_stack();
    struct worker_start *start = p;
    rf_pool *pool = start->pool;
    int thread = start->thread;
    free(start);

    unsigned long seen = 0;
    long budget = SPIN_NS;
    for (;;) {
        if (!spin_while_equal(&pool->generation, seen, &budget)) {
            pthread_mutex_lock(&pool->lock);
            while (!__atomic_load_n(&pool->shutdown, __ATOMIC_ACQUIRE) &&
                   __atomic_load_n(&pool->generation, __ATOMIC_ACQUIRE) == seen)
                pthread_cond_wait(&pool->wake, &pool->lock);
            pthread_mutex_unlock(&pool->lock);
        }
        if (__atomic_load_n(&pool->shutdown, __ATOMIC_ACQUIRE))
            break;
        seen = __atomic_load_n(&pool->generation, __ATOMIC_ACQUIRE);
        run_tasks(pool, pool->fn, pool->arg, pool->n_tasks, thread);
        if (__atomic_add_fetch(&pool->n_done, 1, __ATOMIC_ACQ_REL) == pool->n_threads - 1) {
            /* under the lock, so a caller about to sleep is already waiting */
            pthread_mutex_lock(&pool->lock);
            pthread_cond_signal(&pool->done);
            pthread_mutex_unlock(&pool->lock);
        }
    }
    return NULL;
}

rf_status rf_pool_create(int n_threads, rf_pool **out, rf_error *err)
{
    *out = NULL;
    if (n_threads < 1)
        return rf_fail(err, RF_ERR_INPUT, "thread pool: %d threads requested, need at least 1",
                       n_threads);
    rf_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return rf_fail(err, RF_ERR_NOMEM, "thread pool: out of memory");
    pool->n_threads = n_threads;
    pool->caller_spin_ns = SPIN_NS;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    if (n_threads > 1) {
        pool->workers = calloc((size_t)n_threads - 1, sizeof *pool->workers);
        if (!pool->workers) {
            rf_pool_free(pool);
            return rf_fail(err, RF_ERR_NOMEM, "thread pool: out of memory");
        }
    }
    for (int i = 1; i < n_threads; i++) {
        struct worker_start *start = malloc(sizeof *start);
        if (!start) {
            rf_pool_free(pool);
            return rf_fail(err, RF_ERR_NOMEM, "thread pool: out of memory");
        }
        start->pool = pool;
        start->thread = i;
        if (pthread_create(&pool->workers[i - 1], NULL, worker_main, start) != 0) {
            free(start);
            rf_pool_free(pool);
            return rf_fail(err, RF_ERR_NOMEM, "thread pool: cannot start thread %d of %d", i + 1,
                           n_threads);
        }
        pool->n_started++;
    }
    *out = pool;
    return RF_OK;
}

void rf_pool_free(rf_pool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    __atomic_store_n(&pool->shutdown, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->n_started; i++)
        pthread_join(pool->workers[i], NULL);
    pthread_cond_destroy(&pool->done);
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->lock);
    free(pool->workers);
    free(pool);
}

int rf_pool_threads(const rf_pool *pool)
{
    return pool ? pool->n_threads : 1;
}

double rf_pool_workers_cpu_seconds(const rf_pool *pool)
{
    double seconds = 0.0;
    for (int i = 0; pool && i < pool->n_started; i++) {
        clockid_t clock;
        struct timespec ts;
        if (pthread_getcpuclockid(pool->workers[i], &clock) == 0 &&
            clock_gettime(clock, &ts) == 0)
            seconds += ts.tv_sec + ts.tv_nsec * 1e-9;
    }
    return seconds;
}

void rf_pool_slow_thread_for_test(rf_pool *pool, int thread, long pause_ns)
{
    pool->slow_thread = thread;
    pool->slow_ns = pause_ns;
}

int64_t rf_pool_regions(const rf_pool *pool)
{
    return pool ? pool->regions : 0;
}

void rf_pool_run(rf_pool *pool, int n_tasks, rf_task_fn fn, void *arg)
{
    if (!pool || pool->n_threads == 1 || n_tasks <= 1) {
        for (int t = 0; t < n_tasks; t++)
            fn(arg, t, 0);
        return;
    }
    pool->regions++;
    /* every worker has counted itself done in the last region, so none
       reads these until the generation moves */
    pool->fn = fn;
    pool->arg = arg;
    pool->n_tasks = n_tasks;
    __atomic_store_n(&pool->n_done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pool->next_task, 0, __ATOMIC_RELAXED);
    pthread_mutex_lock(&pool->lock);
    __atomic_add_fetch(&pool->generation, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);

    run_tasks(pool, fn, arg, n_tasks, 0);

    int workers = pool->n_threads - 1;
    if (!spin_until(&pool->n_done, workers, &pool->caller_spin_ns)) {
        pthread_mutex_lock(&pool->lock);
        while (__atomic_load_n(&pool->n_done, __ATOMIC_ACQUIRE) < workers)
            pthread_cond_wait(&pool->done, &pool->lock);
        pthread_mutex_unlock(&pool->lock);
    }
}

static void run_on_pool(void *pool, int n_tasks, rf_task_fn fn, void *arg)
{
    rf_pool_run(pool, n_tasks, fn, arg);
}

rf_parallel rf_pool_parallel(rf_pool *pool)
{
    return (rf_parallel){run_on_pool, pool, rf_pool_threads(pool)};
}
