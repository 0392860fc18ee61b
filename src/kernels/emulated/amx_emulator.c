/*
 * amx_emulator.c — the C emulator of the AMX tile instructions (see
 * emulated/amx_emulator.h). Eight tiles of at most 16 rows of 64 bytes and their
 * configuration, per thread, as the hardware keeps them per thread.
 */
#include "kernels/emulated/amx_emulator.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

static _Thread_local struct {
    bool configured;
    int rows[8], colsb[8];
    uint8_t data[8][16][64];
} state;
static _Thread_local long faults;

long rf_amx_emu_faults(void)
{
    return faults;
}

static bool valid(int t)
{
    return state.configured && t >= 0 && t < 8 && state.rows[t] > 0 && state.colsb[t] > 0;
}

void rf_amx_emu_loadconfig(const rf_amx_config *config)
{
    memset(&state, 0, sizeof state);
    if (config->palette != 1) {
        faults++;
        return;
    }
    for (int t = 0; t < 8; t++) {
        if (config->rows[t] > 16 || config->colsb[t] > 64 || (config->rows[t] == 0) != (config->colsb[t] == 0)) {
            faults++;
            memset(&state, 0, sizeof state);
            return;
        }
        state.rows[t] = config->rows[t];
        state.colsb[t] = config->colsb[t];
    }
    state.configured = true;
}

void rf_amx_emu_release(void)
{
    memset(&state, 0, sizeof state);
}

void rf_amx_emu_zero(int t)
{
    if (!valid(t)) {
        faults++;
        return;
    }
    memset(state.data[t], 0, sizeof state.data[t]);
}

void rf_amx_emu_load(int t, const void *base, size_t stride)
{
    if (!valid(t)) {
        faults++;
        return;
    }
    memset(state.data[t], 0, sizeof state.data[t]);
    for (int r = 0; r < state.rows[t]; r++)
        memcpy(state.data[t][r], (const uint8_t *)base + (size_t)r * stride, (size_t)state.colsb[t]);
}

void rf_amx_emu_store(int t, void *base, size_t stride)
{
    if (!valid(t)) {
        faults++;
        return;
    }
    for (int r = 0; r < state.rows[t]; r++)
        memcpy((uint8_t *)base + (size_t)r * stride, state.data[t][r], (size_t)state.colsb[t]);
}

/* The shapes of C += A . B: A is M x 4K bytes, B is K x 4N, C is M x 4N. */
static bool shapes_agree(int c, int a, int b)
{
    if (!valid(c) || !valid(a) || !valid(b) || c == a || c == b || a == b)
        return false;
    return state.rows[a] == state.rows[c] && state.colsb[a] == 4 * state.rows[b] &&
           state.colsb[b] == state.colsb[c];
}

/* The dimensions of C += A . B when the shapes agree (C is M x N 32-bit
 * values, A M x K quads, B K x N quads); otherwise a fault, and false. */
static bool product_shape(int c, int a, int b, int *M, int *N, int *K)
{
    if (!shapes_agree(c, a, b)) {
        faults++;
        return false;
    }
    *M = state.rows[c];
    *N = state.colsb[c] / 4;
    *K = state.rows[b];
    return true;
}

static int32_t get32(int t, int r, int i)
{
    int32_t v;
    memcpy(&v, &state.data[t][r][4 * i], 4);
    return v;
}

static void put32(int t, int r, int i, int32_t v)
{
    memcpy(&state.data[t][r][4 * i], &v, 4);
}

/* TDPBSSD, the int8 product (signed by signed). The sum wraps in 32
 * bits, done in uint32 so that C reads it as the hardware does. */
void rf_amx_emu_dpbssd(int c, int a, int b)
{
    int M, N, K;
    if (!product_shape(c, a, b, &M, &N, &K))
        return;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            uint32_t sum = (uint32_t)get32(c, m, n);
            for (int k = 0; k < K; k++)
                for (int e = 0; e < 4; e++) {
                    int32_t xa = (int8_t)state.data[a][m][4 * k + e];
                    int32_t w = (int8_t)state.data[b][k][4 * n + e];
                    sum += (uint32_t)(xa * w);
                }
            put32(c, m, n, (int32_t)sum);
        }
}

/* A bf16 input as f32, its denormals as 0 (DAZ). */
static float bf16_daz(const uint8_t *p)
{
    uint32_t bits = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 24;
    if ((bits & 0x7f800000u) == 0)
        bits &= 0x80000000u;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* An f32 result with its denormals flushed to 0 (FTZ), sign kept. */
static float ftz(float f)
{
    return fpclassify(f) == FP_SUBNORMAL ? copysignf(0.0f, f) : f;
}

void rf_amx_emu_dpbf16ps(int c, int a, int b)
{
    int M, N, K;
    if (!product_shape(c, a, b, &M, &N, &K))
        return;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            float sum;
            memcpy(&sum, &state.data[c][m][4 * n], 4);
            for (int k = 0; k < K; k++)
                for (int e = 0; e < 2; e++) {
                    /* bf16 x bf16 has at most 16 significant bits: exact
                       in f32 (its exponent range is f32's) */
                    volatile float p = bf16_daz(&state.data[a][m][4 * k + 2 * e]) *
                                       bf16_daz(&state.data[b][k][4 * n + 2 * e]);
                    sum = ftz(sum + p);
                }
            memcpy(&state.data[c][m][4 * n], &sum, 4);
        }
}
