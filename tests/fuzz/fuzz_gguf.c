/*
 * fuzz_gguf.c — the GGUF reader (gguf.c) on arbitrary bytes. A parsed file
 * must describe only bytes inside the input: every key, string, array
 * element and tensor is read back in full.
 */
#include "fuzz.h"
#include "formats/gguf.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rf_gguf *g;
    rf_error err;
    if (rf_gguf_parse(data, size, "fuzz.gguf", &g, &err) != RF_OK) {
        FUZZ_ASSERT(memchr(err.message, '\0', sizeof err.message) && err.message[0]);
        return 0;
    }
    for (uint64_t i = 0; i < g->n_kv; i++) {
        const rf_gguf_kv *kv = &g->kv[i];
        fuzz_touch(kv->key.ptr, kv->key.len);
        if (kv->type == RF_GGUF_STRING)
            fuzz_touch(kv->v.str.ptr, kv->v.str.len);
        if (kv->type != RF_GGUF_ARRAY)
            continue;
        if (kv->arr_type == RF_GGUF_STRING) {
            const char **ptrs = malloc((kv->arr_n + 1) * sizeof *ptrs);
            uint32_t *lens = malloc((kv->arr_n + 1) * sizeof *lens);
            FUZZ_ASSERT(ptrs && lens);
            rf_gguf_array_strings(kv, ptrs, lens);
            for (uint64_t j = 0; j < kv->arr_n; j++)
                fuzz_touch(ptrs[j], lens[j]);
            free(ptrs);
            free(lens);
        } else if (kv->arr_type == RF_GGUF_UINT32) {
            for (uint64_t j = 0; j < kv->arr_n; j++)
                (void)rf_gguf_array_u32(kv, j);
        }
    }
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const rf_gguf_tensor *t = &g->tensors[i];
        fuzz_touch(t->name.ptr, t->name.len);
        FUZZ_ASSERT(t->data >= data && t->nbytes <= size &&
                    (size_t)(t->data - data) <= size - t->nbytes);
        fuzz_touch(t->data, t->nbytes);
        char name[64];
        size_t n = t->name.len < sizeof name - 1 ? t->name.len : sizeof name - 1;
        memcpy(name, t->name.ptr, n);
        name[n] = '\0';
        (void)rf_gguf_find_tensor(g, name);
    }
    (void)rf_gguf_find_kv(g, "general.architecture");
    rf_gguf_free(g);
    return 0;
}
