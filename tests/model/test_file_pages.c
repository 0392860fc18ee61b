/*
 * test_file_pages.c — a model read from a file mapping gives the file's
 * pages of a layer matrix back once it holds its own form of that matrix
 * (packed for int8, or widened to f32), so that they leave the process's
 * resident memory; reading the matrix again still gives the file's bytes.
 *
 *   rf_mapped_file_release   on a file of known bytes: the whole pages
 *                            inside the range leave, the partial pages at
 *                            its ends and every page outside it stay, the
 *                            bytes read back unchanged; a range outside the
 *                            mapping (memory the caller owns) is untouched
 *   rf_model_pack            on small-fp16 converted to q8, f16 and f32:
 *                            every page inside the stored layer matrices is
 *                            resident once they have been read; after int8
 *                            packing or f32 widening at most a quarter are
 *                            (reading a neighbouring bias or scale may map a
 *                            few pages back: the kernel maps up to 64 KiB
 *                            around a fault), and the resident set grows
 *                            by at most the copy's size less half the
 *                            bytes it was made from; f32 compute on an f32 file
 *                            computes from the mapping and keeps it all
 *
 * Residency per page comes from /proc/self/pagemap (bit 63: present), the
 * resident set from /proc/self/statm; without them the test skips. Under
 * AddressSanitizer (make asan) the resident set also holds the shadow of
 * every byte the copy and its scratch touch, their redzones, and freed
 * blocks held in quarantine, none of it the engine's: that build checks
 * the pages of the file, and skips the resident set's growth, naming why.
 */
#include "formats/mapped_file.h"
#include "kernels/gemm_int8.h"
#include "model/model.h"
#include "model/packed_weights.h"

#include "../check.h"
#include "../convert_temp.h"

#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define SHADOW_MEMORY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHADOW_MEMORY 1
#endif
#endif
#ifndef SHADOW_MEMORY
#define SHADOW_MEMORY 0
#endif

static size_t page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

/* Pages of [start, start + bytes) present in this process, counting only
 * the whole pages inside it (*pages gets their number); -1 if pagemap
 * cannot be read. */
static long resident_pages(const void *start, size_t bytes, long *pages)
{
    size_t page = page_size();
    uintptr_t first = ((uintptr_t)start + page - 1) / page, end = ((uintptr_t)start + bytes) / page;
    *pages = end > first ? (long)(end - first) : 0;
    int fd = open("/proc/self/pagemap", O_RDONLY);
    if (fd < 0)
        return -1;
    long present = 0;
    for (uintptr_t p = first; p < end; p++) {
        uint64_t entry;
        if (pread(fd, &entry, sizeof entry, (off_t)(p * sizeof entry)) != (ssize_t)sizeof entry) {
            present = -1;
            break;
        }
        present += (long)(entry >> 63);
    }
    close(fd);
    return present;
}

/* The resident set, in bytes, from /proc/self/statm; -1 if unreadable. */
static long resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size, resident;
    int n = f ? fscanf(f, "%ld %ld", &size, &resident) : 0;
    if (f)
        fclose(f);
    return n == 2 ? resident * (long)page_size() : -1;
}

/* Reads one byte of every page of the range, so that each is mapped. */
static unsigned touch(const void *start, size_t bytes)
{
    const volatile unsigned char *p = start;
    unsigned sum = 0;
    for (size_t i = 0; i < bytes; i += page_size())
        sum += p[i];
    return sum + (bytes ? p[bytes - 1] : 0);
}

/* ==== rf_mapped_file_release ==== */

static void test_release(void)
{
    enum { PAGES = 64 };
    size_t page = page_size(), size = PAGES * page;
    char path[] = "/tmp/rf_pages_XXXXXX";
    int fd = mkstemp(path);
    unsigned char *bytes = malloc(size);
    CHECK(fd >= 0 && bytes, "temporary file");
    if (fd < 0 || !bytes) {
        free(bytes);
        return;
    }
    for (size_t i = 0; i < size; i++)
        bytes[i] = (unsigned char)(i * 7 + i / page);
    CHECK(write(fd, bytes, size) == (ssize_t)size, "write %s", path);
    close(fd);
    rf_mapped_file m;
    rf_error err;
    if (rf_map_file(path, &m, &err) != RF_OK) {
        CHECK(0, "map %s: %s", path, err.message);
        goto done;
    }
    const unsigned char *data = m.data;
    long n, before = resident_pages(data, size, &n);
    touch(data, size);
    long after_touch = resident_pages(data, size, &n);
    if (before < 0) {
        SKIP("/proc/self/pagemap cannot be read: residency not checked");
    } else {
        CHECK(after_touch == PAGES, "every page mapped after reading: %ld of %d", after_touch,
              PAGES);
        /* pages 4..42 lie wholly inside; 3 and 43 only partly */
        rf_mapped_file_release(&m, data + 3 * page + 100, 40 * page);
        long inside = resident_pages(data + 4 * page, 39 * page, &n);
        long ends = resident_pages(data + 3 * page, page, &n) +
                    resident_pages(data + 43 * page, page, &n);
        long outside = resident_pages(data, 3 * page, &n) +
                       resident_pages(data + 44 * page, 20 * page, &n);
        CHECK(inside == 0 && ends == 2 && outside == 23,
              "released: %ld of 39 inner pages still mapped (0 expected), %ld of 2 partial end "
              "pages and %ld of 23 pages outside kept", inside, ends, outside);
    }
    CHECK(!memcmp(data, bytes, size), "the file's bytes read back after the release");

    /* memory outside the mapping is never released (it would read back zero) */
    unsigned char *own = malloc(8 * page);
    if (own) {
        memset(own, 0xAB, 8 * page);
        rf_mapped_file_release(&m, own, 8 * page);
        rf_mapped_file_release(&m, data + size - page, 2 * page); /* runs past the end */
        size_t kept = 0;
        for (size_t i = 0; i < 8 * page; i++)
            kept += own[i] == 0xAB;
        CHECK(kept == 8 * page, "a buffer outside the mapping keeps its bytes: %zu of %zu",
              kept, 8 * page);
        if (before >= 0)
            CHECK(resident_pages(data + size - page, page, &n) == 1,
                  "a range running past the mapping's end releases nothing");
    }
    free(own);
    rf_unmap_file(&m);
done:
    unlink(path);
    free(bytes);
}

/* ==== rf_model_pack ==== */

/* One stored layer matrix: where the file holds it. */
struct span {
    const void *data;
    size_t bytes;
};

/* The layer matrices as the file stores them: 4 per layer for an f32 file
 * (Q|K|V stacked), else 6 (Q, K, V apart). Returns how many. */
static int layer_spans(const rf_model *model, struct span *out, int max)
{
    const rf_hparams *hp = &model->hp;
    size_t D = (size_t)hp->hidden_size, F = (size_t)hp->intermediate_size;
    int n = 0;
    for (int i = 0; i < hp->num_layers; i++) {
        const rf_layer_weights *l = &model->w.layers[i];
        if (hp->dtype == RF_DTYPE_F32) {
            struct span f32[4] = {{l->attn_qkv_w, 3 * D * D * 4}, {l->attn_out_w, D * D * 4},
                                  {l->ffn_up_w, F * D * 4}, {l->ffn_down_w, D * F * 4}};
            for (int k = 0; k < 4 && n < max; k++)
                out[n++] = f32[k];
            continue;
        }
        size_t elem = hp->dtype == RF_DTYPE_Q8 ? 1 : 2;
        struct span stored[6] = {{l->attn_q_stored.data, D * D * elem},
                                 {l->attn_k_stored.data, D * D * elem},
                                 {l->attn_v_stored.data, D * D * elem},
                                 {l->attn_out_stored.data, D * D * elem},
                                 {l->ffn_up_stored.data, F * D * elem},
                                 {l->ffn_down_stored.data, D * F * elem}};
        for (int k = 0; k < 6 && n < max; k++)
            out[n++] = stored[k];
    }
    return n;
}

/* Resident pages inside the spans (*pages: how many there are); -1 if
 * pagemap cannot be read. */
static long spans_resident(const struct span *s, int n, long *pages)
{
    long present = 0;
    *pages = 0;
    for (int i = 0; i < n; i++) {
        long count, r = resident_pages(s[i].data, s[i].bytes, &count);
        if (r < 0)
            return -1;
        present += r;
        *pages += count;
    }
    return present;
}

/* Bytes of the int8 copy rf_model_pack makes (packed_weights.c). */
static size_t int8_copy_bytes(const rf_hparams *hp)
{
    int D = hp->hidden_size, F = hp->intermediate_size;
    int N[4] = {3 * D, D, F, D}, K[4] = {D, D, D, F};
    size_t bytes = 0;
    for (int k = 0; k < 4; k++)
        bytes += rf_int8_packed_size(N[k], K[k]) + (size_t)N[k] * sizeof(float) +
                 rf_int8_colsum_count(N[k]) * sizeof(int32_t);
    return bytes * (size_t)hp->num_layers;
}

/* Loads `path`, reads every stored layer matrix, packs for `compute`, and
 * checks what stays resident: everything when `kept`, else at most a
 * quarter, with the resident set down by at least half the released bytes
 * less the int8 copy (f32 widening: less the f32 copy). */
static void check_pack(const char *path, const char *label, rf_compute_type compute, bool kept)
{
    rf_model *model;
    rf_error err;
    if (rf_model_load(path, &model, &err) != RF_OK) {
        CHECK(0, "%s: load: %s", label, err.message);
        return;
    }
    struct span spans[64];
    int n = layer_spans(model, spans, 64);
    if (n < 1 || !spans[0].data) {
        CHECK(0, "%s: no stored layer matrices", label);
        rf_model_free(model);
        return;
    }
    unsigned char first[64];
    memcpy(first, spans[0].data, sizeof first);
    for (int i = 0; i < n; i++)
        touch(spans[i].data, spans[i].bytes);
    long pages, before = spans_resident(spans, n, &pages);
    long rss_before = resident_bytes();
    rf_status st = rf_model_pack(model, compute, &err);
    CHECK(st == RF_OK, "%s: pack: %s", label, st == RF_OK ? "" : err.message);
    long after = spans_resident(spans, n, &pages), rss_after = resident_bytes();
    if (before < 0 || rss_before < 0 || rss_after < 0) {
        SKIP("%s: /proc/self/pagemap or statm cannot be read: residency not checked", label);
    } else if (kept) {
        CHECK(before == pages && after == pages,
              "%s: the mapping is what it computes from: %ld of %ld pages resident before, %ld "
              "after", label, before, pages, after);
    } else {
        const rf_hparams *hp = &model->hp;
        size_t D = (size_t)hp->hidden_size, F = (size_t)hp->intermediate_size;
        long copy = compute == RF_COMPUTE_INT8
                        ? (long)int8_copy_bytes(hp)
                        : (long)((4 * D * D + 2 * F * D) * sizeof(float) * (size_t)hp->num_layers);
        long stored = pages * (long)page_size();
        CHECK(before == pages && after * 4 <= pages,
              "%s: %ld of %ld layer-matrix pages resident before packing, %ld after (at most "
              "a quarter expected)", label, before, pages, after);
        if (SHADOW_MEMORY)
            SKIP("%s: the resident set's growth over packing not checked: AddressSanitizer's "
                 "shadow memory, redzones and quarantine count in it (the plain build checks it)",
                 label);
        else
            CHECK(rss_after - rss_before <= copy - stored / 2,
                  "%s: resident set grew by %ld bytes over packing, a copy of %ld bytes made "
                  "from %ld bytes of the file (at most the copy less half those expected)", label,
                  rss_after - rss_before, copy, stored);
    }
    CHECK(!memcmp(first, spans[0].data, sizeof first), "%s: the file's bytes read back", label);
    rf_model_free(model);
}

static void test_pack(const char *ref)
{
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/models/small-fp16", ref);
    char *q8 = convert_temp(dir, RF_DTYPE_Q8), *f16 = convert_temp(dir, RF_DTYPE_F16);
    char *f32 = convert_temp(dir, RF_DTYPE_F32);
    if (q8 && rf_int8_supported())
        check_pack(q8, "q8 file, int8 compute", RF_COMPUTE_INT8, false);
    if (f16 && rf_int8_supported())
        check_pack(f16, "f16 file, int8 compute", RF_COMPUTE_INT8, false);
    if (f32 && rf_int8_supported())
        check_pack(f32, "f32 file, int8 compute", RF_COMPUTE_INT8, false);
    if (!rf_int8_supported())
        SKIP("int8 compute: this CPU has no AVX2: int8 packing not checked");
    if (q8)
        check_pack(q8, "q8 file, f32 compute", RF_COMPUTE_F32, false);
    if (f16)
        check_pack(f16, "f16 file, f32 compute", RF_COMPUTE_F32, false);
    if (f32)
        check_pack(f32, "f32 file, f32 compute", RF_COMPUTE_F32, true);
    char *paths[3] = {q8, f16, f32};
    for (int i = 0; i < 3; i++) {
        if (paths[i])
            unlink(paths[i]);
        free(paths[i]);
    }
}

int main(void)
{
    test_release();
    const char *ref = check_reference();
    if (ref)
        test_pack(ref);
    else
        SKIP("no reference fixtures (../shared/reference or $ROFORMER_REFERENCE): packing not checked");
    return check_done();
}
