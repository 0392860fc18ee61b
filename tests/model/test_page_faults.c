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
 * Two sources of faults are not the engine's and are kept out of the
 * count, each where it is set up below: code run for the first time
 * (map_code) and OpenBLAS's shared packing buffers (cblas_sgemm).
 *
 * Sanitizer builds map shadow memory lazily, which faults on its own:
 * there the test only reports a skip.
 */
#include "kernels/gemm_bf16.h"
#include "kernels/gemm_int8.h"
#include "roformer.h"

#include "../check.h"
#include "../reference_cases.h"

#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define SHADOW_MEMORY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHADOW_MEMORY 1
#endif
#endif

#ifndef SHADOW_MEMORY
enum { B = 2, L = 512 };

/* OpenBLAS (0.3.x, built without thread-local buffers) keeps its packing
 * buffers in one process-wide pool and hands each sgemm the first free
 * one. When two engine threads call sgemm at once, which buffer each gets
 * depends on which asks first; a thread handed the buffer that the other
 * one packed less deeply touches the rest of it once (up to 240 pages of
 * a 2x512 pass, seen with `perf record -e page-faults -d`). That stops
 * once every buffer has been packed at its deepest, so it is not a cost
 * per call, but when it stops is up to the scheduler. The engine's calls
 * go through this definition instead, which runs OpenBLAS's one call at
 * a time: each then gets the same buffer, packed at its deepest in the
 * first pass. */
typedef void sgemm_fn(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint,
                      blasint, blasint, float, const float *, blasint, const float *, blasint,
                      float, float *, blasint);
static sgemm_fn *openblas_sgemm;
static pthread_mutex_t sgemm_lock = PTHREAD_MUTEX_INITIALIZER;

void cblas_sgemm(const enum CBLAS_ORDER order, const enum CBLAS_TRANSPOSE ta,
                 const enum CBLAS_TRANSPOSE tb, const blasint M, const blasint N, const blasint K,
                 const float alpha, const float *A, const blasint lda, const float *Bm,
                 const blasint ldb, const float beta, float *C, const blasint ldc)
{
    pthread_mutex_lock(&sgemm_lock);
    openblas_sgemm(order, ta, tb, M, N, K, alpha, A, lda, Bm, ldb, beta, C, ldc);
    pthread_mutex_unlock(&sgemm_lock);
}

/* A code page runs for the first time in a later pass when that pass takes
 * a path the first did not: the 1x100 pass is the first to run OpenBLAS's
 * small-matrix kernels (sgemm_small_kernel_*), and their page faults in
 * then, unless Linux mapped it earlier with a neighbour (fault-around maps
 * the cached pages of a file in a 64 KiB window of addresses around the
 * one that faulted), which depends on where the library was loaded: 0 to
 * 3 faults, by run. Reading one byte of every page of
 * every executable mapping first maps all the code, so the count sees
 * data pages only. */
static void map_code(void)
{
    unsigned long page_size = (unsigned long)sysconf(_SC_PAGESIZE);
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    while (maps && fgets(line, sizeof line, maps)) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && perms[0] == 'r' &&
            perms[2] == 'x')
            for (unsigned long page = lo; page < hi; page += page_size)
                (void)*(volatile const char *)page;
    }
    if (maps)
        fclose(maps);
}

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
    openblas_sgemm = (sgemm_fn *)dlsym(RTLD_NEXT, "cblas_sgemm");
    if (!openblas_sgemm) {
        CHECK(0, "no shared library's cblas_sgemm behind this test's: %s", dlerror());
        return check_done();
    }
    rf_model *m = load_reference_model(ref, "small-fp16");
    if (!m)
        return check_done();
    map_code();
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
            /* the first passes touch everything once: the largest shape the
               context's buffers, a 100-token one OpenBLAS's work buffer as
               deep as its widest calls (f32 chunks of 32 to 127 rows take
               512-column panels, linalg.c) */
            rf_status st = forward(ctx, hp->vocab_size, B, L, out, &err);
            if (st == RF_OK)
                st = forward(ctx, hp->vocab_size, 1, 100, out, &err);
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
