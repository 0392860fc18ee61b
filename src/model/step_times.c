/*
 * step_times.c — the step timer of a context (see step_times.h): clock
 * reads around each step on the calling thread, and an rf_parallel that
 * wraps the pool's to time each region and thread 0's own tasks in it.
 */
#include "model/step_times.h"
#include "base/clock.h"

#include <string.h>

/* One region run through the timed rf_parallel. */
struct timed_region {
    rf_task_fn fn;
    void *arg;
    double busy; /* thread 0's time in its own tasks; only thread 0 writes it */
};

static void timed_task(void *arg, int task, int thread)
{
    struct timed_region *r = arg;
    if (thread != 0) {
        r->fn(r->arg, task, thread);
        return;
    }
    double t0 = rf_clock_seconds();
    r->fn(r->arg, task, thread);
    r->busy += rf_clock_seconds() - t0;
}

/* Settles the step's latest region once it is known whether another
   followed: an earlier region of a products step prepared the input
   (step_times.h), and all its wall time is that, since the product waits for
   it whichever thread did the work; the last region's thread-0 time is the
   step's own, the rest of it waits. */
static void settle_region(rf_step_timer *t, bool last)
{
    if (t->regions == 0)
        return;
    if (!last && t->kind == RF_STEP_PRODUCTS) {
        t->seconds[RF_STEP_QUANTIZE] += t->pending_wall;
        return;
    }
    t->seconds[t->kind] += t->pending_busy;
    t->seconds[RF_STEP_WAITS] += t->pending_wall - t->pending_busy;
}

static void timed_run(void *runner, int n_tasks, rf_task_fn fn, void *arg)
{
    rf_step_timer *t = runner;
    struct timed_region r = {fn, arg, 0.0};
    double t0 = rf_clock_seconds();
    rf_parallel_run(&t->inner, n_tasks, timed_task, &r);
    double wall = rf_clock_seconds() - t0;
    settle_region(t, false);
    t->pending_busy = r.busy;
    t->pending_wall = wall;
    t->regions_wall += wall;
    t->regions++;
}

void rf_step_timer_init(rf_step_timer *t, rf_parallel inner)
{
    memset(t, 0, sizeof *t);
    t->inner = inner;
    t->timed = (rf_parallel){timed_run, t, inner.n_threads};
}

void rf_step_timer_reset(rf_step_timer *t, bool on)
{
    t->on = on;
    memset(t->seconds, 0, sizeof t->seconds);
    t->forward_seconds = 0.0;
    t->forwards = 0;
}

void rf_step_begin_on(rf_step_timer *t, rf_step_kind kind)
{
    t->kind = kind;
    t->regions = 0;
    t->regions_wall = 0.0;
    t->pending_busy = 0.0;
    t->pending_wall = 0.0;
    t->step_start = rf_clock_seconds();
}

void rf_step_end_on(rf_step_timer *t)
{
    double wall = rf_clock_seconds() - t->step_start;
    settle_region(t, true);
    /* the serial time around the regions */
    t->seconds[t->kind] += wall - t->regions_wall;
}

void rf_forward_begin_on(rf_step_timer *t)
{
    t->forward_start = rf_clock_seconds();
}

void rf_forward_end_on(rf_step_timer *t)
{
    t->forward_seconds += rf_clock_seconds() - t->forward_start;
    t->forwards++;
}

void rf_step_timer_read(const rf_step_timer *t, rf_step_times *out)
{
    memset(out, 0, sizeof *out);
    out->products_ms = 1e3 * t->seconds[RF_STEP_PRODUCTS];
    out->attention_ms = 1e3 * t->seconds[RF_STEP_ATTENTION];
    out->norms_ms = 1e3 * t->seconds[RF_STEP_NORMS];
    out->quantize_ms = 1e3 * t->seconds[RF_STEP_QUANTIZE];
    out->elementwise_ms = 1e3 * t->seconds[RF_STEP_ELEMENTWISE];
    out->waits_ms = 1e3 * t->seconds[RF_STEP_WAITS];
    out->forward_ms = 1e3 * t->forward_seconds;
    out->forwards = t->forwards;
}
