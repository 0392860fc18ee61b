/*
 * step_times.h — where a context's forward passes spend their wall time,
 * by kind of step, measured on the calling thread only when asked
 * (rf_context_time_steps); off, every call here is one test of a flag.
 *
 * A step is a stretch of the forward pass on the calling thread: a Linear
 * product (with the epilogue RoPE runs in), attention, a norm, the
 * embedding gather, a copy. Its wall
 * time goes to its kind, minus the waits of the parallel regions it runs
 * through the timer's rf_parallel (rf_step_parallel): in a region the
 * calling thread is thread 0, and the region's wall time less the time
 * thread 0 spent in its own tasks is time it waited (for the pool to wake,
 * for the other threads to finish): that goes to RF_STEP_WAITS. Every
 * step runs its regions so, attention's (in bf16: the packing of K and V,
 * then the attending) included.
 *
 * A Linear's step (RF_STEP_PRODUCTS) may run more than one region: in
 * bf16 and int8 compute the input is rounded or quantized first, in a
 * region of its own. Every region of a products step but the last counts
 * as RF_STEP_QUANTIZE, all its wall time (threads take tasks from a shared
 * queue, so thread 0 may have done none of it, and the product waits for it
 * all the same); the last counts as the product (with its bias and
 * activation epilogue) and its waits.
 *
 * Steps never nest and never overlap, so the kinds add up to no more than
 * the forward's wall time; what is left is the untimed work of rf_forward
 * (checking the batch, the heads).
 */
#ifndef RF_STEP_TIMES_H
#define RF_STEP_TIMES_H

#include "roformer.h"
#include "kernels/parallel.h"

#include <stdbool.h>

typedef enum {
    RF_STEP_PRODUCTS,    /* the Linear products, with their bias, activation and
                            epilogue (Q|K|V's RoPE) */
    RF_STEP_ATTENTION,   /* scores, softmax, weighted values */
    RF_STEP_NORMS,       /* LayerNorm / RMS norm, with the residual add they fold in */
    RF_STEP_QUANTIZE,    /* a bf16 / int8 product's input rounded or quantized */
    RF_STEP_ELEMENTWISE, /* embedding gather, mask, copies of hidden states */
    RF_STEP_WAITS,       /* thread 0 idle inside a region */
    RF_STEP_KINDS
} rf_step_kind;

typedef struct {
    bool on;
    rf_parallel inner; /* the context's pool */
    rf_parallel timed; /* inner, each region timed (runner: this timer) */
    /* the step in progress */
    rf_step_kind kind;
    double step_start;    /* seconds, monotonic */
    double regions_wall;  /* wall time of its regions so far */
    double pending_busy;  /* thread 0's time in its latest region */
    double pending_wall;  /* that region's wall time */
    int regions;          /* regions it has run */
    /* totals since rf_step_timer_reset */
    double seconds[RF_STEP_KINDS];
    double forward_start;
    double forward_seconds;
    int64_t forwards;
} rf_step_timer;

/* A timer over `inner`, off. The timer must not move afterwards (its
 * rf_parallel points at it). */
void rf_step_timer_init(rf_step_timer *t, rf_parallel inner);
/* Turns timing on or off; either way the totals start again at zero. */
void rf_step_timer_reset(rf_step_timer *t, bool on);

/* The rf_parallel a step's regions run through: the timed one when on. */
static inline const rf_parallel *rf_step_parallel(const rf_step_timer *t)
{
    return t->on ? &t->timed : &t->inner;
}

void rf_step_begin_on(rf_step_timer *t, rf_step_kind kind);
void rf_step_end_on(rf_step_timer *t);
void rf_forward_begin_on(rf_step_timer *t);
void rf_forward_end_on(rf_step_timer *t);

static inline void rf_step_begin(rf_step_timer *t, rf_step_kind kind)
{
    if (t->on)
        rf_step_begin_on(t, kind);
}

static inline void rf_step_end(rf_step_timer *t)
{
    if (t->on)
        rf_step_end_on(t);
}

/* Around a whole forward pass; only passes that end are counted. */
static inline void rf_forward_begin(rf_step_timer *t)
{
    if (t->on)
        rf_forward_begin_on(t);
}

static inline void rf_forward_end(rf_step_timer *t)
{
    if (t->on)
        rf_forward_end_on(t);
}

/* The totals as the public API reports them (milliseconds). */
void rf_step_timer_read(const rf_step_timer *t, rf_step_times *out);

#endif
