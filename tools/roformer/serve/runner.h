/*
 * runner.h — runs a batch of jobs of one kind as one library call on one
 * pipeline: the jobs' texts are joined, the pipeline sorts them by length
 * and runs them padding-free (its context skips padding), and each job gets
 * its own slice of the results. A job's numbers do not depend on what it
 * was batched with. A runner is used by its replica's batcher thread only.
 *
 * Equal inputs of a batch (equal keys: units.h) run once; with a cache,
 * inputs it holds do not run, and what runs is put in it.
 */
#ifndef RF_SERVE_RUNNER_H
#define RF_SERVE_RUNNER_H

#include "serve/cache.h"
#include "serve/job.h"

typedef struct serve_runner serve_runner;

/* The pipeline truncates at max_length (inputs the client did not allow
 * to be truncated were checked to fit before they were queued), runs
 * batch_size sequences of similar length per forward pass on n_threads
 * threads with `compute` arithmetic; embeddings use `pooling`. */
rf_status serve_runner_create(const rf_model *model, const rf_pipeline_params *params,
                              rf_pooling pooling, serve_runner **out, rf_error *err);
void serve_runner_free(serve_runner *r);
/* Keeps results in `cache` from now on, as model `owner`'s, computed on its
 * load number `load`, named `load_id` in the keys (kept by pointer): the
 * file's sha256, or an id no other load has. */
void serve_runner_set_cache(serve_runner *r, serve_cache *cache, int owner, int load,
                            const char *load_id);

/* Answers `job` from the cache when it holds every one of its inputs:
 * fills the job's results, status and ran_tokens (0) and returns true;
 * otherwise leaves the job to be queued (and counts nothing). Any thread
 * may call it: it reads only what r was created with. */
bool serve_runner_answer_cached(const serve_runner *r, serve_job *job);

/* Runs jobs[0..n), all sharing jobs[0]'s call (serve_jobs_share_call),
 * filling each job's results, status and ran_tokens. Returns the
 * forward-pass seconds spent. */
double serve_runner_run(serve_runner *r, serve_job **jobs, int n);

#endif
