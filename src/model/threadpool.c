/*
 * threadpool.c — persistent pthread workers woken per parallel region
 * (see threadpool.h).
 *
 * Each rf_pool_run publishes (fn, arg, n_tasks) under the mutex and bumps a
 * generation counter; workers sleeping on `wake` see the new generation,
 * run their share of tasks and count themselves done on `done`. Workers
 * live until rf_pool_free, so a forward pass never creates threads.
 */
#include "model/threadpool.h"
#include "error.h"

#include <pthread.h>
#include <stdlib.h>

struct rf_pool {
    int n_threads;
    pthread_t *workers;        /* [n_threads - 1] */
    int n_started;
    pthread_mutex_t lock;
    pthread_cond_t wake;       /* a new region (or shutdown) was published */
    pthread_cond_t done;       /* a worker finished its share */
    unsigned long generation;  /* bumped once per region */
    int n_done;                /* workers finished in this region */
    int shutdown;
    rf_task_fn fn;
    void *arg;
    int n_tasks;
};

struct worker_start {
    rf_pool *pool;
    int thread;
};

static void run_share(rf_pool *pool, rf_task_fn fn, void *arg, int n_tasks, int thread)
{
    for (int t = thread; t < n_tasks; t += pool->n_threads)
        fn(arg, t, thread);
}

static void *worker_main(void *p)
{
    struct worker_start *start = p;
    rf_pool *pool = start->pool;
    int thread = start->thread;
    free(start);

    unsigned long seen = 0;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->shutdown && pool->generation == seen)
            pthread_cond_wait(&pool->wake, &pool->lock);
        if (pool->shutdown)
            break;
        seen = pool->generation;
        rf_task_fn fn = pool->fn;
        void *arg = pool->arg;
        int n_tasks = pool->n_tasks;
        pthread_mutex_unlock(&pool->lock);

        run_share(pool, fn, arg, n_tasks, thread);

        pthread_mutex_lock(&pool->lock);
        if (++pool->n_done == pool->n_threads - 1)
            pthread_cond_signal(&pool->done);
    }
    pthread_mutex_unlock(&pool->lock);
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
    pool->shutdown = 1;
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

void rf_pool_run(rf_pool *pool, int n_tasks, rf_task_fn fn, void *arg)
{
    if (!pool || pool->n_threads == 1 || n_tasks <= 1) {
        for (int t = 0; t < n_tasks; t++)
            fn(arg, t, 0);
        return;
    }
    pthread_mutex_lock(&pool->lock);
    pool->fn = fn;
    pool->arg = arg;
    pool->n_tasks = n_tasks;
    pool->n_done = 0;
    pool->generation++;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);

    run_share(pool, fn, arg, n_tasks, 0);

    pthread_mutex_lock(&pool->lock);
    while (pool->n_done < pool->n_threads - 1)
        pthread_cond_wait(&pool->done, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}
