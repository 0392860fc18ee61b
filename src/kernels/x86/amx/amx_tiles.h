/*
 * amx_tiles.h — the tile operations the AMX kernels are written on: the
 * instructions themselves, or with RF_AMX_EMULATED defined before this
 * header, the C emulator of emulated/amx_emulator.h. A kernel's loop structure
 * lives in one body file that both builds include, so the emulated build tests the
 * very walk, edges and tails that the instructions run.
 *
 * Tile numbers are constants (the instructions encode them).
 * RF_TARGET_AMX marks a function of a kernel body: the AMX instructions
 * and the AVX-512 and AVX2 epilogues in the real build; the AVX2
 * epilogue alone in the emulated build, which runs on any CPU with AVX2.
 */
#ifndef RF_AMX_TILES_H
#define RF_AMX_TILES_H

#include "kernels/x86/amx/amx.h"

#ifdef RF_AMX_EMULATED
#include "kernels/emulated/amx_emulator.h"
#define RF_TARGET_AMX __attribute__((target("avx2,fma")))
#define RF_TILE_CONFIG(cfg) rf_amx_emu_loadconfig(cfg)
#define RF_TILE_RELEASE() rf_amx_emu_release()
#define RF_TILE_ZERO(t) rf_amx_emu_zero(t)
#define RF_TILE_LOAD(t, base, stride) rf_amx_emu_load(t, base, stride)
#define RF_TILE_STORE(t, base, stride) rf_amx_emu_store(t, base, stride)
#define RF_TILE_DPBSSD(c, a, b) rf_amx_emu_dpbssd(c, a, b)
#define RF_TILE_DPBF16PS(c, a, b) rf_amx_emu_dpbf16ps(c, a, b)
#else
#include <immintrin.h>
#define RF_TARGET_AMX \
    __attribute__((target("amx-tile,amx-int8,amx-bf16,avx512f,avx512bw,avx512vl,avx2,fma")))
#define RF_TILE_CONFIG(cfg) _tile_loadconfig(cfg)
#define RF_TILE_RELEASE() _tile_release()
#define RF_TILE_ZERO(t) _tile_zero(t)
#define RF_TILE_LOAD(t, base, stride) _tile_loadd(t, base, (long)(stride))
#define RF_TILE_STORE(t, base, stride) _tile_stored(t, base, (long)(stride))
#define RF_TILE_DPBSSD(c, a, b) _tile_dpbssd(c, a, b)
#define RF_TILE_DPBF16PS(c, a, b) _tile_dpbf16ps(c, a, b)
#endif

#endif
