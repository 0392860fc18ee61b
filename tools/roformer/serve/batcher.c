/*
 * batcher.c — the job queue and the batcher threads (see batcher.h). One
 * mutex guards the queue, which every replica's thread takes batches from;
 * a job's submitter hears back through the job's on_done, called by the
 * thread that ran its batch (or dropped it), outside the lock. Before each
 * batch the thread sweeps the queue: a job abandoned, whose client has hung
 * up, or older than the queue timeout leaves it unrun.
 */
#include "serve/batcher.h"

#include "cli.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/* Most jobs taken into one batch (a bound on the batch's pointer array). */
#define MAX_BATCH_JOBS 1024

/* One replica: a thread with its own runner (context) and batch. */
typedef struct {
    serve_batcher *b;
    serve_runner *runner;
    pthread_t thread;
    serve_job *batch[MAX_BATCH_JOBS]; /* the batch being run */
} replica;

struct serve_batcher {
    int32_t max_batch_tokens;
    int32_t max_batch_inputs; /* <= 0: no cap */
    double queue_timeout;     /* seconds; 0: none */
    serve_batch_fn on_batch;
    void *on_batch_arg;

    pthread_mutex_t lock;
    pthread_cond_t work;  /* a job was queued, or stop was asked */
    serve_job *head, *tail;
    int queued;
    int running;          /* jobs in the batches being run; 0: idle */
    bool stopping;
    int n_replicas;
    replica *replicas;    /* [n_replicas] */
};

/* Takes the oldest job and the later ones that can share its library call
 * and fit the token budget, in queue order. Called with the lock held. */
static int take_batch(serve_batcher *b, serve_job **batch)
{
    serve_job *first = b->head, **link = &b->head, *prev = NULL;
    int n = 0;
    int32_t tokens = 0, inputs = 0;
    for (serve_job *j = b->head; j && n < MAX_BATCH_JOBS;) {
        serve_job *next = j->next;
        bool take = j == first || (serve_jobs_share_call(j, first) &&
                                   tokens + j->tokens <= b->max_batch_tokens &&
                                   (b->max_batch_inputs <= 0 ||
                                    inputs + j->n <= b->max_batch_inputs));
        if (take) {
            batch[n++] = j;
            tokens += j->tokens;
            inputs += j->n;
            *link = next;
            if (b->tail == j)
                b->tail = prev;
        } else {
            prev = j;
            link = &j->next;
        }
        j = next;
    }
    b->queued -= n;
    return n;
}

/* Takes out of the queue every job nobody waits for (abandoned, or its
 * client gone) and every job older than the queue timeout, each with its
 * outcome set, chained through `next` into the list returned. Called with
 * the lock held. */
static serve_job *sweep(serve_batcher *b)
{
    serve_job *dropped = NULL, **link = &b->head, *prev = NULL;
    double now = cli_now_seconds();
    for (serve_job *j = b->head; j;) {
        serve_job *next = j->next;
        bool gone = atomic_load(&j->abandoned) || (j->client_gone && j->client_gone(j->waiter));
        bool late = b->queue_timeout > 0 && now - j->queued_at > b->queue_timeout;
        if (gone || late) {
            j->outcome = gone ? SERVE_JOB_CLIENT_GONE : SERVE_JOB_QUEUE_TIMEOUT;
            *link = next;
            if (b->tail == j)
                b->tail = prev;
            b->queued--;
            j->next = dropped;
            dropped = j;
        } else {
            prev = j;
            link = &j->next;
        }
        j = next;
    }
    return dropped;
}

/* Tells the submitters of the dropped jobs; outside the lock, as on_done
 * may free the job. */
static void report_dropped(serve_job *dropped)
{
    while (dropped) {
        serve_job *next = dropped->next;
        dropped->on_done(dropped, dropped->waiter);
        dropped = next;
    }
}

/* How long a batcher thread waits idle before it gives the memory freed
 * since its last batch back to the system. */
#define IDLE_TRIM_SECONDS 0.1

/* The allocator keeps what a burst of requests freed (their bodies,
 * encodings and results, freed on several threads, stay in each thread's
 * arena): without giving it back, the process's RSS would follow its
 * largest burst, not what it holds. Called once per idle spell, with the
 * lock released; nothing on the path of a request waits for it. */
static void release_freed_memory(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

/* Waits for work with the lock held; after a batch, once the queue has been
 * empty for IDLE_TRIM_SECONDS, gives freed memory back first. */
static void wait_for_work(serve_batcher *b, bool *trimmed)
{
    while (!b->head && !b->stopping) {
        if (*trimmed) {
            pthread_cond_wait(&b->work, &b->lock);
            continue;
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        long ns = until.tv_nsec + (long)(IDLE_TRIM_SECONDS * 1e9);
        until.tv_sec += ns / 1000000000L;
        until.tv_nsec = ns % 1000000000L;
        if (pthread_cond_timedwait(&b->work, &b->lock, &until) == ETIMEDOUT && !b->head &&
            !b->stopping) {
            pthread_mutex_unlock(&b->lock);
            release_freed_memory();
            pthread_mutex_lock(&b->lock);
            *trimmed = true;
        }
    }
}

static void *batcher_main(void *arg)
{
    replica *rp = arg;
    serve_batcher *b = rp->b;
    serve_job **batch = rp->batch;
    bool trimmed = true; /* nothing freed before the first batch */
    pthread_mutex_lock(&b->lock);
    for (;;) {
        wait_for_work(b, &trimmed);
        if (!b->head)
            break; /* stopping, and nothing left */
        serve_job *dropped = sweep(b);
        int n = b->head ? take_batch(b, batch) : 0;
        b->running += n;
        /* another replica may take what is left */
        if (b->head)
            pthread_cond_signal(&b->work);
        pthread_mutex_unlock(&b->lock);
        report_dropped(dropped);
        if (n == 0) {
            pthread_mutex_lock(&b->lock);
            continue;
        }

        int32_t inputs = 0, tokens = 0;
        double started = cli_now_seconds();
        for (int j = 0; j < n; j++) {
            batch[j]->started_at = started;
            inputs += batch[j]->n;
            tokens += batch[j]->tokens;
        }
        double seconds = serve_runner_run(rp->runner, batch, n);
        trimmed = false;
        if (b->on_batch)
            b->on_batch(b->on_batch_arg, n, inputs, tokens, seconds);

        /* counted out before anyone hears back: a client that has its
           answer does not see its batch running */
        pthread_mutex_lock(&b->lock);
        b->running -= n;
        pthread_mutex_unlock(&b->lock);
        for (int j = 0; j < n; j++) {
            batch[j]->forward_seconds = seconds;
            batch[j]->outcome = SERVE_JOB_RAN;
            batch[j]->on_done(batch[j], batch[j]->waiter);
        }
        pthread_mutex_lock(&b->lock);
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

int serve_batcher_start(serve_runner *const *runners, int n_runners, int32_t max_batch_tokens,
                        int32_t max_batch_inputs, serve_batch_fn on_batch, void *on_batch_arg,
                        serve_batcher **out)
{
    serve_batcher *b = calloc(1, sizeof *b);
    replica *replicas = calloc((size_t)n_runners, sizeof *replicas);
    if (!b || !replicas) {
        free(b);
        free(replicas);
        return -1;
    }
    *b = (serve_batcher){.max_batch_tokens = max_batch_tokens,
                         .max_batch_inputs = max_batch_inputs, .on_batch = on_batch,
                         .on_batch_arg = on_batch_arg, .replicas = replicas};
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->work, NULL);
    for (int r = 0; r < n_runners; r++) {
        replicas[r] = (replica){.b = b, .runner = runners[r]};
        if (pthread_create(&replicas[r].thread, NULL, batcher_main, &replicas[r]) != 0) {
            serve_batcher_stop(b);
            return -1;
        }
        b->n_replicas++;
    }
    *out = b;
    return 0;
}

void serve_batcher_set_queue_timeout(serve_batcher *b, double seconds)
{
    pthread_mutex_lock(&b->lock);
    b->queue_timeout = seconds;
    pthread_mutex_unlock(&b->lock);
}

void serve_batcher_submit(serve_batcher *b, serve_job *job, serve_job_done_fn on_done, void *arg)
{
    job->on_done = on_done;
    job->waiter = arg;
    job->queued_at = cli_now_seconds();
    job->next = NULL;
    pthread_mutex_lock(&b->lock);
    if (b->tail)
        b->tail->next = job;
    else
        b->head = job;
    b->tail = job;
    b->queued++;
    pthread_cond_signal(&b->work);
    pthread_mutex_unlock(&b->lock);
}

int serve_batcher_queued(serve_batcher *b)
{
    pthread_mutex_lock(&b->lock);
    int n = b->queued;
    pthread_mutex_unlock(&b->lock);
    return n;
}

int serve_batcher_running(serve_batcher *b)
{
    pthread_mutex_lock(&b->lock);
    int n = b->running;
    pthread_mutex_unlock(&b->lock);
    return n;
}

bool serve_batcher_is_own_thread(serve_batcher *b)
{
    for (int r = 0; r < b->n_replicas; r++)
        if (pthread_equal(b->replicas[r].thread, pthread_self()))
            return true;
    return false;
}

void serve_batcher_stop(serve_batcher *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->lock);
    b->stopping = true;
    pthread_cond_broadcast(&b->work);
    pthread_mutex_unlock(&b->lock);
    for (int r = 0; r < b->n_replicas; r++)
        pthread_join(b->replicas[r].thread, NULL);
    pthread_mutex_destroy(&b->lock);
    pthread_cond_destroy(&b->work);
    free(b->replicas);
    free(b);
}
