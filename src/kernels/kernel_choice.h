/*
 * kernel_choice.h — which build of each operation this process runs,
 * decided once: from the CPU by the rules of docs/compute.md, unless the
 * environment variable ROFORMER_KERNEL or rf_kernels_select (roformer.h)
 * names one. The kernels' table (backend.h) keeps the choice; this file
 * reads the user's words into it and reports the result.
 */
#ifndef RF_KERNEL_CHOICE_H
#define RF_KERNEL_CHOICE_H

#include "roformer.h"

#include <stdbool.h>

/* Applies ROFORMER_KERNEL once per process (later calls return the first
 * call's status and message). */
rf_status rf_kernels_from_env(rf_error *err);

/* True when bf16 and int8 compute run attention's two products in bf16:
 * rf_bf16_attention_fast's rule unless chosen. */
bool rf_attention_in_bf16(void);

#endif
