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
 * To read a file use rf_checkpoint_open (checkpoint_open.h), which maps it and
 * calls this reader.
 */
#ifndef RF_SAFETENSORS_H
#define RF_SAFETENSORS_H

#include "formats/checkpoint.h"

/* The format allows 100 MB, but cJSON builds a tree of up to ~32 times its
 * text (a 64-byte node per "0," of a list), and real headers are small:
 * ~200 bytes a tensor, under 1 MiB even for thousands of tensors. */
#define RF_SAFETENSORS_MAX_HEADER (16u << 20)

/* Adds every tensor of the safetensors image `data` to `ck`. The tensors
 * point into `data`, which must outlive `ck`; `what` names it in messages. */
rf_status rf_safetensors_read(const void *data, size_t size, const char *what, rf_checkpoint *ck,
                              rf_error *err);

#endif
