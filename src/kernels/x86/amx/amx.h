/*
 * amx.h — Intel AMX (Advanced Matrix Extensions) tile units: the one tile
 * configuration every AMX kernel of the engine runs with.
 *
 * AMX needs three things: the CPU (CPUID leaf 7: AMX-TILE with AMX-INT8 or
 * AMX-BF16), the kernel enabling the tile state (XCR0 bits 17 and 18,
 * Linux 5.16 or later), and the process asking for that state once
 * (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)); until it does, a
 * tile instruction kills the process with SIGILL. rf_cpu_has(RF_CPU_AMX_INT8
 * or RF_CPU_AMX_BF16) checks all three (cpu.h), and rf_cpu_amx_reason()
 * says why not.
 *
 * The tile configuration is loaded by each kernel call on the thread that
 * runs it (LDTILECFG, then TILERELEASE when the call ends), not once per
 * thread: a configuration lasts only until the next LDTILECFG on that
 * thread, and other code in the same process (a framework loading this
 * library from Python) may use the tiles between two of our calls. One
 * LDTILECFG per block of thousands of tile products costs nothing
 * measurable.
 */
#ifndef RF_AMX_H
#define RF_AMX_H

#include <stdint.h>

/* The 64-byte operand of LDTILECFG (palette 1). */
typedef struct {
    uint8_t palette;
    uint8_t start_row;
    uint8_t reserved[14];
    uint16_t colsb[16]; /* bytes per row of tile t */
    uint8_t rows[16];   /* rows of tile t */
} __attribute__((aligned(64))) rf_amx_config;

/* The configuration of every AMX kernel: tiles 0-7 all 16 rows of 64
 * bytes, the largest palette 1 allows. A tile is then 16 x 16 int32 or
 * f32 sums (C), 16 rows of 64 int8 or 32 bf16 inputs (A), or 16 rows of
 * 4 int8 (2 bf16) inputs for 16 columns (B: one row per quad of inputs,
 * which is a 64-byte line of the int8 and bf16 packed panels). */
const rf_amx_config *rf_amx_config_16x64(void);

#endif
