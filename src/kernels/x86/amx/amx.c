/*
 * amx.c — the one tile configuration of the AMX kernels (x86/amx/amx.h). Whether
 * the tiles may run is the CPU module's question (cpu.h).
 */
#include "kernels/x86/amx/amx.h"

const rf_amx_config *rf_amx_config_16x64(void)
{
    static const rf_amx_config config = {
        .palette = 1,
        .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
        .rows = {16, 16, 16, 16, 16, 16, 16, 16},
    };
    return &config;
}
