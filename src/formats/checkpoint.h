/*
 * checkpoint.h — a set of named tensors read from a checkpoint file:
 * safetensors (safetensors.c) or a torch.save zip archive (torch_zip.c,
 * pickle.c), opened by rf_checkpoint_open (checkpoint_open.h). The converter
 * reads HF weights through it; tests read the reference outputs
 * (expected.safetensors) through it.
 *
 *     rf_checkpoint *ck;
 *     if (rf_checkpoint_open("expected.safetensors", &ck, &err) != RF_OK) ...
 *     const rf_ck_tensor *t = rf_checkpoint_find(ck, "m00.logits");
 *     // t->dtype == RF_CK_F32, t->shape[0..n_dims), t->data (little-endian, contiguous)
 *     rf_checkpoint_free(ck);
 *
 * Tensor data is contiguous, row-major (C order, PyTorch shape order), and
 * lives as long as the checkpoint. It points into the mapped file where the
 * file is already laid out that way, and into a private copy otherwise
 * (strided torch tensors). Data may be unaligned: read it with memcpy.
 */
#ifndef RF_CHECKPOINT_H
#define RF_CHECKPOINT_H

#include "formats/mapped_file.h"
#include "roformer.h"

#include <stdint.h>

#define RF_CK_MAX_DIMS 8
#define RF_CK_MAX_TENSORS 65536

typedef enum {
    RF_CK_F64,
    RF_CK_F32,
    RF_CK_F16,
    RF_CK_BF16,
    RF_CK_I64,
    RF_CK_I32,
    RF_CK_I16,
    RF_CK_I8,
    RF_CK_U8,
    RF_CK_BOOL,
} rf_ck_dtype;

typedef struct {
    char *name;
    rf_ck_dtype dtype;
    int n_dims;                      /* 0 for a scalar */
    int64_t shape[RF_CK_MAX_DIMS];
    int64_t count;                   /* product of shape */
    const void *data;                /* count * rf_ck_dtype_size(dtype) bytes */
    size_t nbytes;
} rf_ck_tensor;

typedef struct {
    rf_ck_tensor *tensors;
    int32_t n, cap;
    void **owned;            /* private copies and buffers to free */
    int32_t n_owned, cap_owned;
    rf_mapped_file map;      /* the file, when opened by rf_checkpoint_open */
    int32_t *order;          /* tensor indices sorted by name, for lookups */
} rf_checkpoint;

void rf_checkpoint_free(rf_checkpoint *ck);
const rf_ck_tensor *rf_checkpoint_find(const rf_checkpoint *ck, const char *name);

size_t rf_ck_dtype_size(rf_ck_dtype t);
const char *rf_ck_dtype_name(rf_ck_dtype t);

/* For the readers: appends a tensor (name copied); takes ownership of
 * `owned` (may be NULL) to free with the checkpoint. */
rf_status rf_checkpoint_add(rf_checkpoint *ck, const char *name, size_t name_len,
                            const rf_ck_tensor *t, rf_error *err);
rf_status rf_checkpoint_own(rf_checkpoint *ck, void *p, rf_error *err);
/* For the readers, once all tensors are added: sorts the names for lookups
 * and refuses duplicates. */
rf_status rf_checkpoint_index(rf_checkpoint *ck, const char *what, rf_error *err);

#endif
