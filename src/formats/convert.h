/*
 * convert.h — HF checkpoint directory -> GGUF (internal entry points; the
 * public one is rf_convert in roformer.h).
 */
#ifndef RF_CONVERT_H
#define RF_CONVERT_H

#include "formats/gguf.h"
#include "roformer.h"

/* Reads the HF directory and builds the complete GGUF image in a writer. */
rf_status rf_convert_build(const char *hf_dir, const rf_convert_params *params,
                           rf_gguf_writer **out, rf_error *err);
/* The same, serialized to one malloc'ed buffer (for loading a directory). */
rf_status rf_convert_to_buffer(const char *hf_dir, const rf_convert_params *params, void **out,
                               size_t *size, rf_error *err);

/* Debian python3-jieba's dictionary, the default for word-level models. */
#define RF_DEFAULT_JIEBA_DICT "/usr/lib/python3/dist-packages/jieba/dict.txt"

#endif
