/*
 * fuzz_pickle.c — the restricted state-dict unpickler (pickle.c) on
 * arbitrary bytes, without the zip layer in front so that mutations reach
 * the opcodes. Storage keys resolve to one 4 KiB zero-filled buffer, except
 * keys starting with 'x', which are missing. Strided copies may add up to
 * the size of the input and the storage, as for an archive.
 */
#include "formats/checkpoint.h"
#include "fuzz.h"
#include "formats/pickle.h"

static uint8_t storage[4096];

static const uint8_t *lookup(void *ctx, const char *key, size_t key_len, uint64_t *size)
{
    (void)ctx;
    fuzz_touch(key, key_len);
    if (key_len > 0 && key[0] == 'x')
        return NULL;
    *size = sizeof storage;
    return storage;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rf_checkpoint *ck = calloc(1, sizeof *ck);
    rf_error err;
    FUZZ_ASSERT(ck);
    if (rf_unpickle_state_dict(data, size, lookup, NULL, size + sizeof storage, "fuzz.pkl", ck,
                               &err) == RF_OK) {
        for (int32_t i = 0; i < ck->n; i++) {
            const rf_ck_tensor *t = &ck->tensors[i];
            FUZZ_ASSERT(t->nbytes == (size_t)t->count * rf_ck_dtype_size(t->dtype));
            fuzz_touch(t->data, t->nbytes);
        }
    } else {
        FUZZ_ASSERT(err.message[0]);
    }
    rf_checkpoint_free(ck);
    return 0;
}
