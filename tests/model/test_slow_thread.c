/*
 * test_slow_thread.c — a thread the host stops now and then changes no
 * output bit. The pool's threads take tasks from a shared counter, so a
 * thread that pauses before each task runs fewer of them and the others
 * run the rest: which thread runs which task, and so which per-thread
 * scratch a task uses, differ from an unhindered pass. Every task must
 * still give the same bytes.
 *
 * On small-fp16 (the reference model whose products are split into
 * several blocks), a batch of three sequences of different lengths, with
 * and without skip_padding (padded and packed attention), in f32, bf16 and
 * int8 where the CPU runs them: at 2, 3 and 7 threads, the hidden states
 * with the caller (thread 0) or the last worker pausing 0.3 ms before each
 * of its tasks equal, byte for byte, those of the same context unhindered.
 */
#include "roformer.h"
#include "model/context.h"
#include "model/threadpool.h"

#include "../check.h"

#include <string.h>

enum { B = 3, L = 48, PAUSE_NS = 300000 };

static const int lengths[B] = {48, 17, 33};

/* Hidden states of one pass; false if it failed. */
static bool forward(rf_context *ctx, const int32_t *ids, const int32_t *mask, float *hidden)
{
    rf_batch in = {.batch = B, .seq_len = L, .input_ids = ids, .attention_mask = mask};
    rf_outputs out = {.last_hidden_state = hidden};
    rf_error err;
    return rf_forward(ctx, &in, &out, &err) == RF_OK;
}

static void check_compute(const rf_model *model, rf_compute_type compute, const char *name)
{
    const rf_hparams *hp = rf_model_hparams(model);
    size_t n = (size_t)B * L * hp->hidden_size;
    static int32_t ids[B * L], mask[B * L];
    for (int i = 0; i < B * L; i++) {
        ids[i] = (int32_t)(((unsigned)i * 7919u + 11u) % (unsigned)hp->vocab_size);
        mask[i] = i % L < lengths[i / L];
    }
    float *plain = malloc(n * sizeof *plain), *hindered = malloc(n * sizeof *hindered);
    static const int threads[] = {2, 3, 7};
    for (int skip = 0; skip < 2; skip++)
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
            rf_context_params cp = rf_context_default_params();
            cp.max_batch = B;
            cp.max_seq_len = L;
            cp.n_threads = threads[t];
            cp.compute = compute;
            cp.skip_padding = skip;
            rf_context *ctx = NULL;
            rf_error err;
            rf_status st = rf_context_create(model, &cp, &ctx, &err);
            if (st == RF_ERR_UNSUPPORTED) {
                SKIP("%s: %s", name, err.message);
                free(plain), free(hindered);
                return;
            }
            CHECK(st == RF_OK, "%s: context of %d threads: %s", name, threads[t], err.message);
            if (st != RF_OK)
                continue;
            CHECK(forward(ctx, ids, mask, plain), "%s: forward", name);
            int slow[2] = {0, threads[t] - 1};
            for (int s = 0; s < 2; s++) {
                memset(hindered, 0xff, n * sizeof *hindered);
                rf_pool_slow_thread_for_test(ctx->pool, slow[s], PAUSE_NS);
                bool ok = forward(ctx, ids, mask, hindered);
                rf_pool_slow_thread_for_test(ctx->pool, 0, 0);
                CHECK(ok && memcmp(plain, hindered, n * sizeof *plain) == 0,
                      "%s, skip_padding %d, %d threads, thread %d paused: outputs differ (max "
                      "|diff| %g)", name, skip, threads[t], slow[s],
                      (double)check_max_abs_diff(plain, hindered, n));
            }
            rf_context_free(ctx);
        }
    free(plain), free(hindered);
}

int main(void)
{
    REFERENCE_OR_SKIP(ref, "outputs under a slow thread");
    char path[1024];
    snprintf(path, sizeof path, "%s/models/small-fp16", ref);
    rf_model *model = NULL;
    rf_error err;
    CHECK(rf_model_load(path, &model, &err) == RF_OK, "load: %s", err.message);
    if (!model)
        return check_done();
    check_compute(model, RF_COMPUTE_F32, "f32");
    check_compute(model, RF_COMPUTE_BF16, "bf16");
    check_compute(model, RF_COMPUTE_INT8, "int8");
    rf_model_free(model);
    return check_done();
}
