/*
 * amx_emulator.h — a C emulator of the AMX tile instructions the engine
 * uses, so that the AMX kernels' loop structure (tile walk, edges, K tails,
 * packing, epilogue) is compiled and tested on every CPU: the same kernel
 * source built against x86/amx/amx_tiles.h with RF_AMX_EMULATED defined calls these
 * functions instead of the instructions.
 *
 * The emulator follows the instruction set reference, per thread:
 *   LDTILECFG   palette 1 only; rows and bytes per row of tiles 0-7;
 *   TILELOADD   rows x colsb bytes, rows `stride` bytes apart;
 *   TILESTORED  the same, stored;
 *   TILEZERO    all bytes 0;
 *   TDPBSSD     C[m][n] += sum over the K/4 quads k of
 *               A[m][4k+e] * B[k][4n+e] (e = 0..3), s8 x s8, in int32
 *               that wraps (no saturation);
 *   TDPBF16PS   for each quad k: C[m][n] += a0 * b0, then += a1 * b1,
 *               the pair (a0, a1) at A[m][2k..2k+1] and (b0, b1) at
 *               B[k][2n..2n+1], each product exact in f32 and each add
 *               rounded to nearest even, input bf16 denormals read as 0
 *               and f32 denormal results flushed to 0 (MXCSR ignored).
 *               The reference leaves the order and width of the adds
 *               inside one instruction to the hardware, and a Sapphire
 *               Rapids core differs from this order in the last bits
 *               (about 1 sum in 3 bit-equal), so bf16 results are
 *               checked against a bound, never bit for bit;
 *   TILERELEASE the tiles back to unconfigured.
 * The shapes must agree as the hardware requires (A rows = C rows, A
 * bytes per row = 4 x B rows, B bytes per row = C bytes per row, 64 bytes
 * and 16 rows at most); an instruction on an unconfigured tile or with
 * shapes that disagree raises SIGILL on the hardware, and in the emulator
 * counts a fault (rf_amx_emu_faults) and does nothing.
 */
#ifndef RF_AMX_EMULATOR_H
#define RF_AMX_EMULATOR_H

#include "kernels/x86/amx/amx.h"

#include <stddef.h>

void rf_amx_emu_loadconfig(const rf_amx_config *config);
void rf_amx_emu_release(void);
void rf_amx_emu_zero(int t);
void rf_amx_emu_load(int t, const void *base, size_t stride);
void rf_amx_emu_store(int t, void *base, size_t stride);
void rf_amx_emu_dpbssd(int c, int a, int b);
void rf_amx_emu_dpbf16ps(int c, int a, int b);

/* Faults counted on this thread since it started. */
long rf_amx_emu_faults(void);

#endif
