/*
 * widen.h — whole f16 / bf16 tensors widened to f32 (the formats' stored
 * matrices and the converter), on the element-wise build in use
 * (widen.c). Apart from fp16.h's scalar conversions, which the builds
 * themselves use: the builds are below the table that picks one, these
 * entry points above it.
 */
#ifndef RF_WIDEN_H
#define RF_WIDEN_H

#include <stddef.h>

/* Widens n little-endian f16 / bf16 values (src may be unaligned) to f32,
 * exactly. */
void rf_widen_f16(const void *src, float *dst, size_t n);
void rf_widen_bf16(const void *src, float *dst, size_t n);

#endif
