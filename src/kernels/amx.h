/*
 * amx.h — Intel AMX (Advanced Matrix Extensions) tile units: whether this
 * process may use them, and the one tile configuration every AMX kernel of
 * the engine runs with.
 *
 * AMX needs three things: the CPU (CPUID leaf 7: AMX-TILE with AMX-INT8 or
 * AMX-BF16), the kernel enabling the tile state (XCR0 bits 17 and 18,
 * Linux 5.16 or later), and the process asking for that state once
 * (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)); until it does, a
 * tile instruction kills the process with SIGILL. rf_amx_usable() checks
 * all three the first time it is called (thread-safe), asks once, and
 * says why not in rf_amx_reason().
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

#include <stdbool.h>
#include <stdint.h>

/* What rf_amx_usable() asks for. */
typedef enum {
    RF_AMX_INT8, /* AMX-TILE and AMX-INT8: TDPBSSD, TDPBUSD */
    RF_AMX_BF16, /* AMX-TILE and AMX-BF16: TDPBF16PS */
} rf_amx_feature;

/* True when this process can run the feature's tile instructions now
 * (the CPU has them, the OS enables the state and granted it). */
bool rf_amx_usable(rf_amx_feature feature);

/* One line on AMX in this process: "AMX-INT8 and AMX-BF16 in use", or why
 * not ("no AMX on this CPU", "the kernel does not enable the tile state
 * (XCR0)", "arch_prctl(ARCH_REQ_XCOMP_PERM) refused: ..."). Static
 * storage. */
const char *rf_amx_reason(void);

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
