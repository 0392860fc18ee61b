/*
 * fuzz_torch_zip.c — a whole torch.save archive (pytorch_model.bin): the
 * zip reader (torch_zip.c) and, behind it, the state-dict unpickler
 * (pickle.c) with storages looked up in the archive. Tensors that come
 * back are read in full.
 */
#include "formats/checkpoint.h"
#include "fuzz.h"
#include "formats/torch_zip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rf_checkpoint *ck = calloc(1, sizeof *ck);
    rf_error err;
    FUZZ_ASSERT(ck);
    if (rf_torch_read(data, size, "fuzz.bin", ck, &err) == RF_OK) {
        for (int32_t i = 0; i < ck->n; i++) {
            const rf_ck_tensor *t = &ck->tensors[i];
            FUZZ_ASSERT(t->nbytes == (size_t)t->count * rf_ck_dtype_size(t->dtype));
            fuzz_touch(t->data, t->nbytes);
        }
    } else {
        FUZZ_ASSERT(err.message[0]);
    }
    rf_checkpoint_free(ck);
    /* The zip directory alone, as any archive reader would walk it. */
    rf_zip zip;
    if (rf_zip_open(data, size, "fuzz.bin", &zip, &err) == RF_OK) {
        for (uint64_t i = 0; i < zip.n; i++) {
            fuzz_touch(zip.entries[i].name, zip.entries[i].name_len);
            if (zip.entries[i].data)
                fuzz_touch(zip.entries[i].data, zip.entries[i].size);
        }
        rf_zip_free(&zip);
    }
    return 0;
}
