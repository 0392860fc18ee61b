/*
 * peak_probe.h — the multiply-add peak of one core for the instruction a
 * product kernel is built on, measured in a few milliseconds: what
 * `roformer bench` reads its peak_share against.
 */
#ifndef ROFORMER_PEAK_PROBE_H
#define ROFORMER_PEAK_PROBE_H

typedef enum {
    PEAK_F32_FMA,    /* f32 FMA, 512-bit where the CPU has AVX-512F, else 256-bit */
    PEAK_INT8_AVX2,  /* the AVX2 int8 build's sequence per 4 inputs x 8 channels */
    PEAK_INT8_VNNI,  /* 512-bit VPDPBUSD */
    PEAK_BF16_AVX512 /* 512-bit VDPBF16PS */
} peak_instruction;

/* Multiply-adds per second of one core, the best of a few runs of
 * independent chains of the instruction; 0 where this CPU or build cannot
 * run it. */
double peak_probe(peak_instruction which);

/* The instruction name, for reports. */
const char *peak_instruction_name(peak_instruction which);

#endif
