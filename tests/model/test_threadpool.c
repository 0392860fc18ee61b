/*
 * test_threadpool.c — the thread pool (src/model/threadpool.c) on counted
 * tasks: pools of 1 to 3 threads run every task of 50 regions exactly
 * once, each on one of the pool's threads; an idle pool's workers block
 * instead of spinning (their CPU time over 250 ms); a pool of 0 threads is
 * refused; and a worker held back before each task takes few of a
 * region's tasks, the others taking the rest (tasks are taken, not dealt).
 */
#include "model/threadpool.h"

#include "../check.h"

#include <time.h>

struct count_job {
    int hits[100];
    int ran_on[100]; /* the thread of each task */
    int bad_thread;
    int n_threads;
};

static void count_task(void *arg, int task, int thread)
{
    struct count_job *j = arg;
    __atomic_add_fetch(&j->hits[task], 1, __ATOMIC_RELAXED);
    j->ran_on[task] = thread;
    if (thread < 0 || thread >= j->n_threads)
        __atomic_store_n(&j->bad_thread, 1, __ATOMIC_RELAXED);
}

/* Tasks are taken, not dealt: a worker that pauses 20 ms before each task
 * takes few of 100 tasks of microseconds (a dealt share would be 50), the
 * others take the rest, and each still runs once. */
static void test_pool_slow_thread(void)
{
    rf_pool *pool;
    CHECK(rf_pool_create(2, &pool, NULL) == RF_OK, "pool of 2");
    rf_pool_slow_thread_for_test(pool, 1, 20000000L);
    struct count_job job = {.n_threads = 2};
    rf_pool_run(pool, 100, count_task, &job);
    int once = !job.bad_thread, slow = 0;
    for (int t = 0; t < 100; t++) {
        once &= job.hits[t] == 1;
        slow += job.ran_on[t] == 1;
    }
    CHECK(once, "slow worker: each of 100 tasks exactly once");
    CHECK(slow < 25, "slow worker: took %d of 100 tasks, a dealt share is 50", slow);
    rf_pool_free(pool);
}

static double monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

static void test_pool(void)
{
    for (int n = 1; n <= 3; n++) {
        rf_pool *pool;
        rf_error err;
        CHECK(rf_pool_create(n, &pool, &err) == RF_OK, "pool of %d", n);
        CHECK(rf_pool_threads(pool) == n, "pool reports %d threads", n);
        int round = 0, n_tasks = 0;
        for (; round < 50; round++) {
            struct count_job job = {.n_threads = n};
            n_tasks = round % 100;
            rf_pool_run(pool, n_tasks, count_task, &job);
            int ok = !job.bad_thread;
            for (int t = 0; t < 100; t++)
                ok &= job.hits[t] == (t < n_tasks ? 1 : 0);
            if (!ok)
                break;
        }
        CHECK(round == 50, "pool of %d, 50 regions: each task exactly once, on one of its threads "
              "(region %d of %d tasks failed)", n, round, n_tasks);
        if (n > 1) {
            /* idle: each worker spins at most 0.2 ms of wall time after a
               region, then blocks with no timeout, so over any window the
               n - 1 workers use at most 0.4 ms of CPU, wake-ups included
               well under the 2 ms allowed. A worker left spinning uses its
               share of the window: 2 ms of 250 ms or more is 0.8% of one
               core, a share a runnable thread gets even on a crowded
               machine. The window starts right after the last region: no
               settling, the spin is inside the bound. */
            struct timespec nap = {0, 50000000L};
            double cpu0 = rf_pool_workers_cpu_seconds(pool), t0 = monotonic_ms(), wall_ms = 0.0;
            for (int naps = 0; wall_ms < 250.0 && naps < 100; naps++) {
                nanosleep(&nap, NULL);
                wall_ms = monotonic_ms() - t0;
            }
            double used_ms = 1e3 * (rf_pool_workers_cpu_seconds(pool) - cpu0);
            CHECK(cpu0 > 0.0 && wall_ms >= 250.0 && used_ms < 2.0,
                  "pool of %d idle for %.0f ms: its workers used %.2f ms of CPU", n, wall_ms, used_ms);
        }
        rf_pool_free(pool);
    }
    rf_pool *pool;
    CHECK(rf_pool_create(0, &pool, NULL) == RF_ERR_INPUT && pool == NULL, "pool of 0 refused");
    rf_pool_free(NULL);
    test_pool_slow_thread();
}

int main(void)
{
    test_pool();
    return check_done();
}
