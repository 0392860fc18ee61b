/*
 * torch_zip.h — the zip archive torch.save writes (pytorch_model.bin):
 *
 *   <archive>/data.pkl      the pickled state dict (pickle.c)
 *   <archive>/data/<key>    one raw little-endian storage per key, stored
 *                           uncompressed (torch pads entries to 64 bytes)
 *   <archive>/version, <archive>/byteorder, ...
 *
 * The zip reader handles what such archives use: stored (uncompressed)
 * entries, the central directory, zip64 sizes and offsets. Every offset and
 * size is checked against the buffer. Compressed entries are refused.
 */
#ifndef RF_TORCH_ZIP_H
#define RF_TORCH_ZIP_H

#include "formats/checkpoint.h"

#define RF_ZIP_MAX_ENTRIES (1u << 20)

typedef struct {
    const char *name;     /* not NUL-terminated */
    size_t name_len;
    const uint8_t *data;  /* NULL for a compressed entry */
    uint64_t size;
    uint16_t method;      /* 0 = stored */
} rf_zip_entry;

typedef struct {
    rf_zip_entry *entries;
    uint64_t n;
} rf_zip;

rf_status rf_zip_open(const void *data, size_t size, const char *what, rf_zip *out, rf_error *err);
void rf_zip_free(rf_zip *zip);
const rf_zip_entry *rf_zip_find(const rf_zip *zip, const char *name, size_t name_len);

/* Reads a torch.save archive's state dict into `ck` (tensors point into
 * `data`, which must outlive `ck`). */
rf_status rf_torch_read(const void *data, size_t size, const char *what, rf_checkpoint *ck,
                        rf_error *err);

#endif
