/*
 * batcher.h — the queue between the HTTP threads and the engine. Request
 * threads submit jobs and wait; a batcher thread (one per replica) takes the oldest job
 * and every other waiting job that can share its call (the same kind; for
 * QA the same arguments: serve_jobs_share_call) while their real tokens fit
 * in max_batch_tokens and their inputs in max_batch_inputs (the oldest is
 * always taken, however long), runs
 * them as one call (runner.h) and wakes their threads. While it runs, new
 * jobs gather for the next batch: 32 clients sending a sentence each share
 * forward passes without any waiting on purpose.
 */
#ifndef RF_SERVE_BATCHER_H
#define RF_SERVE_BATCHER_H

#include "serve/job.h"
#include "serve/runner.h"

typedef struct serve_batcher serve_batcher;

/* Called by the batcher thread after each batch (for metrics). */
typedef void (*serve_batch_fn)(void *arg, int jobs, int32_t inputs, int32_t tokens,
                               double forward_seconds);

/* Starts one batcher thread per runner (a replica: its own context on its
 * own threads), all taking batches from the one queue; it owns nothing it
 * is given. max_batch_inputs <= 0: no cap on the inputs of a batch. */
int serve_batcher_start(serve_runner *const *runners, int n_runners, int32_t max_batch_tokens,
                        int32_t max_batch_inputs, serve_batch_fn on_batch, void *on_batch_arg,
                        serve_batcher **out);
/* Queues `job` and waits until it has run. */
void serve_batcher_run(serve_batcher *b, serve_job *job);
/* Jobs waiting (not yet taken into a batch). */
int serve_batcher_queued(serve_batcher *b);
/* Jobs in the batches the engine is running now; 0 when idle. */
int serve_batcher_running(serve_batcher *b);
/* Runs whatever is still queued, then stops and joins the thread. */
void serve_batcher_stop(serve_batcher *b);

#endif
