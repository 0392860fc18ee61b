/*
 * mapped_file.h — a whole file mapped read-only into memory.
 *
 * Model files and checkpoints are read through one mmap: nothing is copied,
 * and the pages are shared between processes loading the same model. Pages
 * whose contents have been copied elsewhere (packed or widened weights) can
 * be released from the process's resident memory.
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

/* Drops the process's mapping of the whole pages inside [start, start +
 * bytes) of m, so that they leave its resident memory (they stay in the page
 * cache). A later read maps them again from the file: the contents never
 * change, so this only costs time. Partial pages at either end, shared with
 * neighbouring data, are kept. Nothing happens where the range is not inside
 * m (memory the caller owns, or another mapping). */
void rf_mapped_file_release(const rf_mapped_file *m, const void *start, size_t bytes);

#endif
