/*
 * test_no_alloc.c — rf_forward allocates nothing once its context is
 * created: malloc, calloc, realloc, posix_memalign and aligned_alloc are
 * interposed here (forwarding to glibc's own) and counted while forward
 * passes run, on every worker thread, for the padded and the packed
 * layout, every output of an MLM model with a pooler, at several lengths.
 * Sanitizer builds replace the allocator themselves, so there the test
 * only reports a skip.
 */
#include "kernels/gemm_bf16.h"
#include "roformer.h"

#include "../check.h"
#include "../reference_cases.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define ALLOCATOR_REPLACED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ALLOCATOR_REPLACED 1
#endif
#endif

#ifndef ALLOCATOR_REPLACED
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

static atomic_int counting;
static atomic_long allocations;

static void count(void)
{
    if (atomic_load(&counting))
        atomic_fetch_add(&allocations, 1);
}

void *malloc(size_t size)
{
    count();
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    count();
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
    count();
    return __libc_realloc(p, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
    count();
    void *p = __libc_memalign(align, size);
    if (!p)
        return 12; /* ENOMEM */
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t size)
{
    count();
    return __libc_memalign(align, size);
}

enum { B = 3, L = 40 };

/* One forward pass of batch rows of the given lengths, every output. */
static rf_status forward(rf_context *ctx, const rf_model *m, const int32_t *lengths, float *buf,
                         rf_error *err)
{
    static int32_t ids[B * L], types[B * L], mask[B * L];
    static const int32_t positions[] = {1, 5};
    const rf_hparams *hp = rf_model_hparams(m);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < L; t++) {
            ids[b * L + t] = t < lengths[b] ? 5 + (b * 7 + t * 13) % (hp->vocab_size - 5) : 0;
            types[b * L + t] = t >= lengths[b] / 2 && t < lengths[b];
            mask[b * L + t] = t < lengths[b];
        }
    size_t BLD = (size_t)B * L * hp->hidden_size;
    rf_batch batch = {.batch = B, .seq_len = L, .input_ids = ids, .token_type_ids = types,
                      .attention_mask = mask};
    rf_outputs out = {.last_hidden_state = buf,
                      .hidden_states = buf + BLD,
                      .pooled = buf + BLD * (size_t)(hp->num_layers + 2),
                      .logits = buf + BLD * (size_t)(hp->num_layers + 3),
                      .mlm_positions = positions,
                      .n_mlm_positions = 2};
    return rf_forward(ctx, &batch, &out, err);
}

int main(void)
{
    REFERENCE_OR_SKIP(ref, "the allocation-free forward pass");
    rf_model *m = load_reference_model(ref, "tiny-word-mlm");
    if (!m)
        return check_done();
    rf_error err;
    const rf_hparams *hp = rf_model_hparams(m);
    size_t BLD = (size_t)B * L * hp->hidden_size;
    float *buf = malloc(sizeof(float) * (BLD * (size_t)(hp->num_layers + 3) +
                                         (size_t)B * 2 * hp->vocab_size));
    const int32_t lengths[][B] = {{L, L, L}, {L, 17, 3}, {9, 30, 22}};
    /* skip_padding off and on in f32, and on in bf16 where the CPU has it */
    for (int run = 0; run < (rf_bf16_supported() ? 3 : 2); run++) {
        int skip = run > 0;
        rf_context_params cp = rf_context_default_params();
        cp.max_batch = B;
        cp.max_seq_len = L;
        cp.n_threads = 2;
        cp.skip_padding = skip;
        cp.compute = run == 2 ? RF_COMPUTE_BF16 : RF_COMPUTE_F32;
        rf_context *ctx;
        if (rf_context_create(m, &cp, &ctx, &err) != RF_OK) {
            CHECK(0, "context: %s", err.message);
            continue;
        }
        /* one pass first: OpenBLAS sets up its own buffers on first use */
        CHECK(forward(ctx, m, lengths[0], buf, &err) == RF_OK, "warm-up: %s", err.message);
        for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
            atomic_store(&allocations, 0);
            atomic_store(&counting, 1);
            rf_status st = forward(ctx, m, lengths[k], buf, &err);
            atomic_store(&counting, 0);
            CHECK(st == RF_OK, "forward: %s", err.message);
            CHECK(atomic_load(&allocations) == 0,
                  "skip_padding %d, %s, lengths %d/%d/%d: %ld allocations in rf_forward", skip,
                  cp.compute == RF_COMPUTE_BF16 ? "bf16" : "f32",
                  lengths[k][0], lengths[k][1], lengths[k][2], atomic_load(&allocations));
        }
        rf_context_free(ctx);
    }
    /* the counter itself works (called through a volatile pointer, which
     * the compiler cannot pair with free and drop) */
    void *(*volatile alloc)(size_t) = malloc;
    atomic_store(&counting, 1);
    void *p = alloc(16);
    atomic_store(&counting, 0);
    CHECK(atomic_load(&allocations) == 1, "the interposed malloc counts");
    free(p);
    free(buf);
    rf_model_free(m);
    return check_done();
}
#else
int main(void)
{
    SKIP("a sanitizer replaces the allocator: allocation counting runs in the plain build");
    return check_done();
}
#endif
