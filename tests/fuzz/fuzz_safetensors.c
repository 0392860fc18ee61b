/*
 * fuzz_safetensors.c — the safetensors reader (header JSON, dtypes,
 * shapes, data offsets) on arbitrary bytes. Every tensor it accepts must
 * lie inside the input, with nbytes = count * dtype size.
 */
#include "formats/checkpoint.h"
#include "fuzz.h"
#include "formats/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rf_checkpoint *ck = calloc(1, sizeof *ck);
    rf_error err;
    FUZZ_ASSERT(ck);
    if (rf_safetensors_read(data, size, "fuzz.safetensors", ck, &err) == RF_OK) {
        for (int32_t i = 0; i < ck->n; i++) {
            const rf_ck_tensor *t = &ck->tensors[i];
            FUZZ_ASSERT(t->n_dims >= 0 && t->n_dims <= RF_CK_MAX_DIMS);
            FUZZ_ASSERT(t->nbytes == (size_t)t->count * rf_ck_dtype_size(t->dtype));
            const uint8_t *p = t->data;
            FUZZ_ASSERT(t->nbytes == 0 || (p >= data && p + t->nbytes <= data + size));
            fuzz_touch(p, t->nbytes);
        }
    } else {
        FUZZ_ASSERT(err.message[0]);
    }
    rf_checkpoint_free(ck);
    return 0;
}
