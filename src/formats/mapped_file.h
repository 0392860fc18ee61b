/*
 * mapped_file.h — a whole file mapped read-only into memory.
 *
 * Model files and checkpoints are read through one mmap: nothing is copied,
 * and the pages are shared between processes loading the same model.
 */
#ifndef RF_MAPPED_FILE_H
#define RF_MAPPED_FILE_H

#include "roformer.h"

typedef struct {
    void *data;  /* NULL for an empty file */
    size_t size;
} rf_mapped_file;

/* Maps `path` read-only. A directory or unreadable file is RF_ERR_IO. */
rf_status rf_map_file(const char *path, rf_mapped_file *out, rf_error *err);
void rf_unmap_file(rf_mapped_file *m);

#endif
