/*
 * safetensors.h — reading the safetensors format (huggingface/safetensors
 * README: "Format").
 *
 *   OFFSET  SIZE  DESCRIPTION
 *   0       8     N, little-endian u64: header size
 *   8       N     JSON object: name -> {"dtype", "shape", "data_offsets": [begin, end]},
 *                 plus an optional "__metadata__" object
 *   8 + N   ...   tensor bytes; offsets are relative to this point
 *
 * To read a file use rf_checkpoint_open (checkpoint.h), which maps it and
 * calls this reader.
 */
#ifndef RF_SAFETENSORS_H
#define RF_SAFETENSORS_H

#include "checkpoint.h"

#define RF_SAFETENSORS_MAX_HEADER (100u << 20) /* the format's own limit */

/* Adds every tensor of the safetensors image `data` to `ck`. The tensors
 * point into `data`, which must outlive `ck`; `what` names it in messages. */
rf_status rf_safetensors_read(const void *data, size_t size, const char *what, rf_checkpoint *ck,
                              rf_error *err);

#endif
