/*
 * test_page_faults.c — a steady-state rf_forward touches no new page: the
 * process's minor page faults (getrusage ru_minflt, every thread) do not
 * grow across a second forward pass of the same shape, nor across one of
 * a smaller shape, in f32, int8 and bf16 compute (each where the CPU has
 * it), padded and packed (skip_padding). The first pass may fault: it
 * touches the context's buffers, packs int8/bf16 weights and lets
 * OpenBLAS set up. A page fault in a later pass would mean a buffer
 * allocated or first touched per call, which costs a kernel page clear on
 * every batch.
 *
 * Sanitizer builds map shadow memory lazily, which faults on its own:
 * there the test only reports a skip.
 */
#include "kernels/gemm_bf16.h"
#include "kernels/gemm_int8.h"
#include "roformer.h"

#include "check.h"
#include "reference_cases.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#if defined(__SANITIZE_ADDRESS__)
#define SHADOW_MEMORY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHADOW_MEMORY 1
#endif
#endif

#ifndef SHADOW_MEMORY
enum { B = 2, L = 512 };

static long minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/* A forward pass of `batch` rows of `len` real tokens (the rest padding). */
static rf_status forward(rf_context *ctx, int vocab, int batch, int len, float *out,
                         rf_error *err)
{
    static int32_t ids[B * L], mask[B * L];
    for (int i = 0; i < batch * L; i++) {
        ids[i] = i % L < len ? 5 + (i * 13) % (vocab - 5) : 0;
        mask[i] = i % L < len;
    }
    rf_batch b = {.batch = batch, .seq_len = L, .input_ids = ids, .attention_mask = mask};
    rf_outputs o = {.last_hidden_state = out};
    return rf_forward(ctx, &b, &o, err);
}

int main(void)
{
    REFERENCE_OR_SKIP(ref, "steady-state page faults");
    rf_model *m = load_reference_model(ref, "small-fp16");
    if (!m)
        return check_done();
    rf_error err;
    const rf_hparams *hp = rf_model_hparams(m);
    float *out = malloc((size_t)B * L * hp->hidden_size * sizeof *out);
    const rf_compute_type compute[] = {RF_COMPUTE_F32, RF_COMPUTE_INT8, RF_COMPUTE_BF16};
    const char *names[] = {"f32", "int8", "bf16"};
    const bool have[] = {true, rf_int8_supported(), rf_bf16_supported()};
    for (int c = 0; c < 3; c++) {
        if (!have[c]) {
            SKIP("%s compute: this CPU does not have it", names[c]);
            continue;
        }
        for (int skip = 0; skip < 2; skip++) {
            rf_context_params cp = rf_context_default_params();
            cp.max_batch = B;
            cp.max_seq_len = L;
            cp.n_threads = 2;
            cp.compute = compute[c];
            cp.skip_padding = skip;
            rf_context *ctx;
            if (rf_context_create(m, &cp, &ctx, &err) != RF_OK) {
                CHECK(0, "%s context: %s", names[c], err.message);
                continue;
            }
            /* the first pass at the largest shape touches everything once */
            rf_status st = forward(ctx, hp->vocab_size, B, L, out, &err);
            long before = minor_faults();
            if (st == RF_OK)
                st = forward(ctx, hp->vocab_size, B, L, out, &err);
            long same = minor_faults() - before;
            before = minor_faults();
            if (st == RF_OK)
                st = forward(ctx, hp->vocab_size, 1, 100, out, &err);
            long smaller = minor_faults() - before;
            CHECK(st == RF_OK, "%s forward: %s", names[c], err.message);
            CHECK(same == 0 && smaller == 0,
                  "%s, skip_padding %d: %ld minor page faults in a second %dx%d forward, %ld in "
                  "a 1x100 one",
                  names[c], skip, same, B, L, smaller);
            rf_context_free(ctx);
        }
    }
    /* the counter itself counts: fresh pages fault when first written */
    size_t fresh_size = (size_t)8 << 20;
    volatile char *fresh = mmap(NULL, fresh_size, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    long before = minor_faults();
    for (size_t i = 0; fresh != MAP_FAILED && i < fresh_size; i += 4096)
        fresh[i] = 1; /* volatile: the stores stay, though nothing reads them */
    CHECK(fresh != MAP_FAILED && minor_faults() > before,
          "writing 8 MB of fresh memory counts page faults");
    if (fresh != MAP_FAILED)
        munmap((void *)fresh, fresh_size);
    free(out);
    rf_model_free(m);
    return check_done();
}
#else
int main(void)
{
    SKIP("a sanitizer maps shadow memory on first touch: page faults are counted in the plain "
         "build");
    return check_done();
}
#endif
