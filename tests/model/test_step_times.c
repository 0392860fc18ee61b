/*
 * test_step_times.c — rf_context_time_steps / rf_context_step_times on a
 * small reference model (tiny-char-proj: embeddings_project, 2 layers):
 * off by default and after being turned off (all zero, no pass counted);
 * on, it counts every pass, each kind is >= 0, the products take time,
 * and the kinds add up to no more than the passes' wall time and to at
 * least 80% of it; timing changes no output bit; in f32 nothing is
 * quantized, in int8 the inputs' quantizing and in bf16 their rounding are
 * counted apart. The timer alone: a products step whose quantizing region
 * ran wholly on another thread (threads take tasks from a shared queue, so
 * thread 0 may take none) still counts it as quantizing, not as waits.
 *
 * Why 80%: the kinds cover every step of the encoder; what rf_forward does
 * outside them is checking the batch (a compare per token), touching
 * RF_STACK_RESERVE bytes of stack and the heads, which this test does not
 * ask for: microseconds against the milliseconds of a pass of 256 tokens.
 * A step left untimed (a product, attention) would take far more than 20%.
 */
#include "roformer.h"
#include "model/step_times.h"

#include "../check.h"

#include <string.h>
#include <time.h>

enum { B = 2, L = 128, RUNS = 3 };

static double kinds_ms(const rf_step_times *s)
{
    return s->products_ms + s->attention_ms + s->norms_ms + s->quantize_ms + s->elementwise_ms +
           s->waits_ms;
}

static bool all_zero(const rf_step_times *s)
{
    return kinds_ms(s) == 0.0 && s->forward_ms == 0.0 && s->forwards == 0;
}

static void fill(const rf_model *model, int32_t *ids, int32_t *mask)
{
    const rf_hparams *hp = rf_model_hparams(model);
    for (int i = 0; i < B * L; i++) {
        ids[i] = (int32_t)((i * 7919u) % (uint32_t)hp->vocab_size);
        mask[i] = i % L < L - 9 * (i / L); /* the second sequence padded */
    }
}

/* Runs RUNS passes on a context of `compute` with timing on and checks
 * the totals; returns the quantize time, or -1 when the CPU lacks it. */
static double check_timed(const rf_model *model, rf_compute_type compute, const char *name)
{
    static int32_t ids[B * L], mask[B * L];
    static float plain[B * L * 64], timed[B * L * 64];
    fill(model, ids, mask);
    rf_context_params cp = rf_context_default_params();
    cp.max_batch = B;
    cp.max_seq_len = L;
    cp.n_threads = 2;
    cp.compute = compute;
    rf_context *ctx = NULL;
    rf_error err;
    rf_status st = rf_context_create(model, &cp, &ctx, &err);
    if (st == RF_ERR_UNSUPPORTED) {
        SKIP("%s: %s", name, err.message);
        return -1;
    }
    CHECK(st == RF_OK, "%s: context: %s", name, err.message);
    if (st != RF_OK)
        return -1;
    rf_batch in = {.batch = B, .seq_len = L, .input_ids = ids, .attention_mask = mask};
    rf_step_times s;

    rf_outputs out = {.last_hidden_state = plain};
    CHECK(rf_forward(ctx, &in, &out, &err) == RF_OK, "%s: forward: %s", name, err.message);
    rf_context_step_times(ctx, &s);
    CHECK(all_zero(&s), "%s: timing is off by default, yet %lld passes, %g ms", name,
          (long long)s.forwards, s.forward_ms);

    rf_context_time_steps(ctx, true);
    out.last_hidden_state = timed;
    for (int r = 0; r < RUNS; r++)
        CHECK(rf_forward(ctx, &in, &out, &err) == RF_OK, "%s: timed forward: %s", name,
              err.message);
    CHECK(memcmp(plain, timed, sizeof plain) == 0, "%s: timing changed the outputs", name);
    rf_context_step_times(ctx, &s);
    CHECK(s.forwards == RUNS, "%s: %lld passes counted, %d ran", name, (long long)s.forwards, RUNS);
    CHECK(s.products_ms >= 0 && s.attention_ms >= 0 && s.norms_ms >= 0 && s.quantize_ms >= 0 &&
              s.elementwise_ms >= 0 && s.waits_ms >= 0,
          "%s: a negative time: products %g, attention %g, norms %g, quantize %g, "
          "element-wise %g, waits %g", name, s.products_ms, s.attention_ms, s.norms_ms,
          s.quantize_ms, s.elementwise_ms, s.waits_ms);
    CHECK(s.products_ms > 0 && s.attention_ms > 0 && s.norms_ms > 0 && s.elementwise_ms > 0,
          "%s: a step not timed: products %g, attention %g, norms %g, element-wise %g", name,
          s.products_ms, s.attention_ms, s.norms_ms, s.elementwise_ms);
    /* the steps are disjoint stretches of the passes, read on one clock:
       their sum exceeds the passes' only by rounding of the subtractions */
    double sum = kinds_ms(&s);
    CHECK(sum <= s.forward_ms * (1 + 1e-9), "%s: steps add up to %g ms, more than the passes' %g",
          name, sum, s.forward_ms);
    CHECK(sum >= 0.8 * s.forward_ms, "%s: steps add up to %g ms, under 80%% of the passes' %g",
          name, sum, s.forward_ms);
    double quantize = s.quantize_ms;

    rf_context_time_steps(ctx, false);
    rf_context_step_times(ctx, &s);
    CHECK(all_zero(&s), "%s: turned off, the totals start again at zero", name);
    CHECK(rf_forward(ctx, &in, &out, &err) == RF_OK, "%s: forward: %s", name, err.message);
    rf_context_step_times(ctx, &s);
    CHECK(all_zero(&s), "%s: turned off, a pass is not counted", name);
    rf_context_free(ctx);
    return quantize;
}

/* An rf_parallel whose every task runs as thread 1, the calling thread
   (thread 0) idle: what a shared queue may give a region. */
static void all_on_thread_1(void *runner, int n_tasks, rf_task_fn fn, void *arg)
{
    (void)runner;
    for (int t = 0; t < n_tasks; t++)
        fn(arg, t, 1);
}

static void pause_1ms(void *arg, int task, int thread)
{
    (void)arg, (void)task, (void)thread;
    struct timespec ms = {0, 1000000L};
    nanosleep(&ms, NULL);
}

static void check_quantize_on_another_thread(void)
{
    rf_step_timer t;
    rf_step_timer_init(&t, (rf_parallel){all_on_thread_1, NULL, 2});
    rf_step_timer_reset(&t, true);
    rf_step_begin(&t, RF_STEP_PRODUCTS);
    rf_parallel_run(rf_step_parallel(&t), 2, pause_1ms, NULL); /* the input quantized */
    rf_parallel_run(rf_step_parallel(&t), 2, pause_1ms, NULL); /* the product */
    rf_step_end(&t);
    rf_step_times s;
    rf_step_timer_read(&t, &s);
    /* nanosleep sleeps at least what it is asked: 2 ms in each region */
    CHECK(s.quantize_ms >= 2.0, "timer: a quantizing region on thread 1 alone counts %g ms, "
          "not its 2 ms or more", s.quantize_ms);
    CHECK(s.waits_ms >= 2.0 && s.products_ms < 2.0, "timer: the product's region on thread 1 "
          "alone is waits (%g ms), not products (%g ms)", s.waits_ms, s.products_ms);
}

int main(void)
{
    check_quantize_on_another_thread();
    REFERENCE_OR_SKIP(ref, "step timing");
    char path[1024];
    snprintf(path, sizeof path, "%s/models/tiny-char-proj", ref);
    rf_model *model = NULL;
    rf_error err;
    CHECK(rf_model_load(path, &model, &err) == RF_OK, "load: %s", err.message);
    if (!model)
        return check_done();
    CHECK(rf_model_hparams(model)->hidden_size <= 64, "the buffers hold a hidden size of 64");

    double q = check_timed(model, RF_COMPUTE_F32, "f32");
    CHECK(q == 0.0, "f32: %g ms of quantizing counted, f32 quantizes nothing", q);
    q = check_timed(model, RF_COMPUTE_INT8, "int8");
    CHECK(q != 0.0, "int8: the inputs' quantizing is not counted apart");
    q = check_timed(model, RF_COMPUTE_BF16, "bf16");
    CHECK(q != 0.0, "bf16: the inputs' rounding is not counted apart");
    rf_model_free(model);
    return check_done();
}
