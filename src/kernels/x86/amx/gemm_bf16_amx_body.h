/*
 * gemm_bf16_amx_body.h — the loop structure of the bf16 product on AMX
 * tiles (TDPBF16PS), written once for two builds: x86/amx/gemm_bf16_amx.c with
 * the instructions, emulated/gemm_bf16_amx_emulated.c with RF_AMX_EMULATED
 * defined, on emulated/amx_emulator.h's C emulator of them (tests, on any CPU with
 * AVX2). The includer defines the kernel function (gemm_bf16_backend.h)
 * that calls amx_gemm(), and may define AMX_B_BLOCK, the bytes of a block
 * of panels (the emulated build's are small, so that tests walk several).
 *
 * Tiles (all 16 rows x 64 bytes, rf_amx_config_16x64): A (0, 1) are 16
 * rows x 16 pairs of rounded inputs, read in place from the rows of Xb (kp
 * pairs apart); B (2, 3) are 16 consecutive 64-byte lines of a packed
 * panel, 32 inputs x 16 columns, read in place; C (4-7) the 2 x 2 blocks
 * of 16 x 16 f32 sums, 32 rows x 32 columns:
 *
 *              B0 (panel p)   B1 (panel p + 1)
 *      A0      C 4            C 5
 *      A1      C 6            C 7
 *
 * Blocking, per thread: columns in blocks of panels of at most
 * AMX_B_BLOCK bytes, which stay in L2 while every row of the thread's
 * rectangle runs over them (the weights leave the L3 once per thread, not
 * once per row block); within it, rows in blocks of at most MC (their
 * partial sums, acc, MC x 32 f32, in L1), for each 32 columns (two panels)
 * inputs in chunks of KC_PAIRS pairs: the chunk of the two panels
 * (KC_PAIRS x 32 bf16, 24 KiB) stays in L1 while every 32-row block of the
 * row block runs over it, loading its C tiles from acc and storing them
 * back. After the last chunk the epilogue adds the bias to acc's rows
 * while in L1, writes them to Y and applies the activation there.
 *
 * Edges, without reading or writing outside the operands:
 *   rows: a row block is cut into 16-row A tiles; its last rows (fewer
 *     than 16, and every row when M < 16) are copied per chunk into a
 *     zero-padded 16-row buffer, whose extra sums land in acc rows that
 *     are never written out;
 *   columns: 32-column blocks (N is padded to 32 by the packing); a block
 *     of at most 16 real columns runs on one B tile (a 1-wide variant),
 *     and the epilogue writes only the real columns;
 *   inputs: a chunk's last pairs that do not fill a tile (kp not a
 *     multiple of 16) are copied, for the A rows and the B lines, into
 *     zero-padded tiles.
 * The tile configuration is loaded at the start of each call and released
 * at its end, on the calling thread (x86/amx/amx.h says why).
 */
#include "kernels/elementwise_ops.h"
#include "kernels/x86/amx/amx_tiles.h"
#include "kernels/gemm_bf16_backend.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The activation on each finished block: the element-wise build of the
 * instruction set it runs beside (AVX-512 with AMX; AVX2 for the
 * emulated tiles, which need no more). */
#ifdef RF_AMX_EMULATED
#define AMX_ELEMENTWISE rf_elementwise_avx2
#else
#define AMX_ELEMENTWISE rf_elementwise_avx512
#endif

#define PANEL 16     /* columns per panel and per B or C tile */
#define TILE_PAIRS 16 /* pairs of inputs per A tile row, lines per B tile */
#ifndef MC
#define MC 64        /* rows per block: acc is MC x 32 f32, 8 KiB */
#endif
#ifndef AMX_B_BLOCK
#define AMX_B_BLOCK (1024 * 1024) /* bytes of packed panels kept in L2: half a Sapphire Rapids L2 */
#endif
#ifndef KC_PAIRS
#define KC_PAIRS 192 /* pairs per chunk, a multiple of TILE_PAIRS */
#endif

/* tile numbers: digits, since the instructions' macros spell them out */
#define TA0 0
#define TA1 1
#define TB0 2
#define TB1 3
#define TC00 4
#define TC01 5
#define TC10 6
#define TC11 7

/* Where a 16-row A tile reads its rows: `p` row 0 at the chunk's first
 * pair, rows `lda` uint32 apart. */
typedef struct {
    const uint32_t *p;
    size_t lda;
} a_tile;

/* Copies pairs [from, from + n) of the 16 rows of `a` into a 16 x 16 tile,
 * zero past n. */
static inline void copy_tail_a(a_tile a, int from, int n, uint32_t dst[16][16])
{
    for (int r = 0; r < 16; r++) {
        memcpy(dst[r], a.p + (size_t)r * a.lda + from, (size_t)n * 4);
        memset(dst[r] + n, 0, (size_t)(TILE_PAIRS - n) * 4);
    }
}

/* Copies n lines of a panel into a 16-line tile, zero past n. */
static inline void copy_tail_b(const uint32_t *lines, int n, uint32_t dst[16][16])
{
    memcpy(dst, lines, (size_t)n * 64);
    memset(dst[n], 0, (size_t)(TILE_PAIRS - n) * 64);
}

/* A row block's partial sums, and the last rows of a row block and the
 * last pairs of a chunk copied and zero-padded to whole tiles. On the
 * stack of amx_gemm, which touches every page of it on each call: a first
 * tail or a larger block met in a later product then faults no new stack
 * page in (a steady state without page faults: test_page_faults). */
typedef struct {
    float acc[MC][32];          /* MC x 32 f32 sums, 8 KiB */
    uint32_t pad[16][KC_PAIRS]; /* a row block's last rows, 16 x the chunk */
    uint32_t ta[2][16][16];     /* the A tiles' last pairs */
    uint32_t tb[2][16][16];     /* the B tiles' last lines */
} __attribute__((aligned(64))) buffers;

/* One block: A tiles a0 (and a1 when two_a) times the panels' lines b0
 * (and b1 when two_b, 16 uint32 a line) over n_pairs pairs, added to the
 * rows c0 (and c1), ldc bytes apart; first: not yet written, start
 * from 0. two_a and two_b are constants at every call, so each variant
 * compiles to its own straight loop with constant tile numbers. */
RF_TARGET_AMX static inline __attribute__((always_inline)) void
block(const bool two_a, const bool two_b, a_tile a0, a_tile a1, const uint32_t *b0,
      const uint32_t *b1, int n_pairs, float *c0, float *c1, size_t ldc, bool first, buffers *buf)
{
    if (first) {
        RF_TILE_ZERO(TC00);
        if (two_b)
            RF_TILE_ZERO(TC01);
        if (two_a)
            RF_TILE_ZERO(TC10);
        if (two_a && two_b)
            RF_TILE_ZERO(TC11);
    } else {
        RF_TILE_LOAD(TC00, c0, ldc);
        if (two_b)
            RF_TILE_LOAD(TC01, c0 + PANEL, ldc);
        if (two_a)
            RF_TILE_LOAD(TC10, c1, ldc);
        if (two_a && two_b)
            RF_TILE_LOAD(TC11, c1 + PANEL, ldc);
    }
    int full = n_pairs / TILE_PAIRS * TILE_PAIRS;
    for (int k = 0; k < full; k += TILE_PAIRS) {
        RF_TILE_LOAD(TB0, b0 + (size_t)k * PANEL, 64);
        RF_TILE_LOAD(TA0, a0.p + k, a0.lda * 4);
        RF_TILE_DPBF16PS(TC00, TA0, TB0);
        if (two_b) {
            RF_TILE_LOAD(TB1, b1 + (size_t)k * PANEL, 64);
            RF_TILE_DPBF16PS(TC01, TA0, TB1);
        }
        if (two_a) {
            RF_TILE_LOAD(TA1, a1.p + k, a1.lda * 4);
            RF_TILE_DPBF16PS(TC10, TA1, TB0);
            if (two_b)
                RF_TILE_DPBF16PS(TC11, TA1, TB1);
        }
    }
    if (full < n_pairs) {
        int n = n_pairs - full;
        uint32_t(*ta)[16][16] = buf->ta, (*tb)[16][16] = buf->tb;
        copy_tail_a(a0, full, n, ta[0]);
        copy_tail_b(b0 + (size_t)full * PANEL, n, tb[0]);
        RF_TILE_LOAD(TA0, ta[0], 64);
        RF_TILE_LOAD(TB0, tb[0], 64);
        RF_TILE_DPBF16PS(TC00, TA0, TB0);
        if (two_b) {
            copy_tail_b(b1 + (size_t)full * PANEL, n, tb[1]);
            RF_TILE_LOAD(TB1, tb[1], 64);
            RF_TILE_DPBF16PS(TC01, TA0, TB1);
        }
        if (two_a) {
            copy_tail_a(a1, full, n, ta[1]);
            RF_TILE_LOAD(TA1, ta[1], 64);
            RF_TILE_DPBF16PS(TC10, TA1, TB0);
            if (two_b)
                RF_TILE_DPBF16PS(TC11, TA1, TB1);
        }
    }
    RF_TILE_STORE(TC00, c0, ldc);
    if (two_b)
        RF_TILE_STORE(TC01, c0 + PANEL, ldc);
    if (two_a)
        RF_TILE_STORE(TC10, c1, ldc);
    if (two_a && two_b)
        RF_TILE_STORE(TC11, c1 + PANEL, ldc);
}

RF_TARGET_AMX static void block_any(bool two_a, bool two_b, a_tile a0, a_tile a1,
                                    const uint32_t *b0, const uint32_t *b1, int n_pairs, float *c0,
                                    float *c1, size_t ldc, bool first, buffers *buf)
{
    if (two_a && two_b)
        block(true, true, a0, a1, b0, b1, n_pairs, c0, c1, ldc, first, buf);
    else if (two_a)
        block(true, false, a0, a1, b0, b1, n_pairs, c0, c1, ldc, first, buf);
    else if (two_b)
        block(false, true, a0, a1, b0, b1, n_pairs, c0, c1, ldc, first, buf);
    else
        block(false, false, a0, a1, b0, b1, n_pairs, c0, c1, ldc, first, buf);
}

/* The epilogue: acc's rows (in L1) plus the bias (or 0) into Y; the
 * caller applies the activation on Y's block while in cache. */
RF_TARGET_AMX static void epilogue(const float (*restrict acc)[32], int rows, int cols,
                                   const float *restrict bias, float *restrict y, int ldy)
{
    for (int i = 0; i < rows; i++) {
        float *restrict yi = y + (size_t)i * ldy;
        if (bias)
            for (int c = 0; c < cols; c++)
                yi[c] = acc[i][c] + bias[c];
        else
            memcpy(yi, acc[i], (size_t)cols * sizeof(float));
    }
}

/* The epilogue of C tiles stored in Y: the bias added in place. */
RF_TARGET_AMX static void epilogue_in_place(int rows, int cols, const float *restrict bias,
                                            float *restrict y, int ldy)
{
    if (!bias)
        return;
    for (int i = 0; i < rows; i++) {
        float *restrict yi = y + (size_t)i * ldy;
        for (int c = 0; c < cols; c++)
            yi[c] += bias[c];
    }
}

/* Y rows [ms, me) (at most MC), columns [n, n + cols) (cols at most 32)
 * = act(A . W^T + b), A's rows kp pairs apart and bp the first panel's
 * lines: the row block over every chunk of inputs, then its epilogue and
 * post. */
RF_TARGET_AMX static void row_block(const uint32_t *A, int kp, int ms, int me,
                                    const uint32_t *bp, size_t panel_stride, int n, int cols,
                                    const float *b, rf_activation act, const rf_block_post *post,
                                    float *Y, int ldy, buffers *buf)
{
    int r = me - ms, full_tiles = r / 16, tail_rows = r % 16;
    int n_tiles = full_tiles + (tail_rows > 0);
    bool two_b = cols > PANEL;
    float *y = Y + (size_t)ms * ldy + n;
    /* one chunk, whole tiles of rows and columns: the C tiles go straight
       to Y, no partial sums to keep */
    bool direct = kp <= KC_PAIRS && tail_rows == 0 && cols % PANEL == 0;
    for (int kc = 0; kc < kp; kc += KC_PAIRS) {
        int n_pairs = kp - kc < KC_PAIRS ? kp - kc : KC_PAIRS;
        if (tail_rows > 0) {
            /* pairs past n_pairs, up to the tile, zero as well */
            int padded = (n_pairs + TILE_PAIRS - 1) / TILE_PAIRS * TILE_PAIRS;
            for (int i = 0; i < 16; i++) {
                int filled = i < tail_rows ? n_pairs : 0;
                if (filled)
                    memcpy(buf->pad[i], A + (size_t)(ms + 16 * full_tiles + i) * kp + kc,
                           (size_t)n_pairs * 4);
                memset(buf->pad[i] + filled, 0, (size_t)(padded - filled) * 4);
            }
        }
        for (int t = 0; t < n_tiles; t += 2) {
            a_tile a[2];
            for (int e = 0; e < 2 && t + e < n_tiles; e++)
                a[e] = t + e < full_tiles
                           ? (a_tile){A + (size_t)(ms + 16 * (t + e)) * kp + kc, (size_t)kp}
                           : (a_tile){&buf->pad[0][0], KC_PAIRS};
            bool two_a = t + 1 < n_tiles;
            int t1 = t + (two_a ? 1 : 0);
            block_any(two_a, two_b, a[0], a[t1 - t], bp + (size_t)kc * PANEL,
                      bp + panel_stride + (size_t)kc * PANEL, n_pairs,
                      direct ? y + (size_t)16 * t * ldy : buf->acc[16 * t],
                      direct ? y + (size_t)16 * t1 * ldy : buf->acc[16 * t1],
                      direct ? (size_t)ldy * sizeof(float) : sizeof buf->acc[0], kc == 0, buf);
        }
    }
    if (direct)
        epilogue_in_place(r, cols, b ? b + n : NULL, y, ldy);
    else
        epilogue(buf->acc, r, cols, b ? b + n : NULL, y, ldy);
    if (act != RF_ACT_LINEAR)
        AMX_ELEMENTWISE.bias_act(y, r, cols, ldy, NULL, act);
    rf_block_post_run(post, Y, ldy, ms, me, n, n + cols);
}

/* Y rows [m0, m1), columns [n0, n1) (n0 a multiple of 32, rows of Y ldy
 * apart) = act(Xb . W^T + b): gemm_bf16_backend.h's kernel. */
RF_TARGET_AMX static void amx_gemm(const uint16_t *Xb, int K, int m0, int m1, const uint16_t *Wp,
                                   int n0, int n1, const float *b, rf_activation act,
                                   const rf_block_post *post, float *Y, int ldy)
{
    int kp = rf_bf16_k_pairs(K), rows = m1 - m0;
    if (rows <= 0 || n1 <= n0)
        return;
    size_t panel_stride = (size_t)kp * PANEL; /* uint32 lines of 16 columns */
    const uint32_t *A = (const uint32_t *)(const void *)Xb;
    const uint32_t *B = (const uint32_t *)(const void *)Wp;
    buffers buf;
    for (size_t at = 0; at < sizeof buf; at += 4096)
        ((volatile uint8_t *)&buf)[at] = 0;
    ((volatile uint8_t *)&buf)[sizeof buf - 1] = 0;
    RF_TILE_CONFIG(rf_amx_config_16x64());
    /* columns per block of panels (4 bytes a pair and column): pairs of
       panels, at least one pair */
    int nc_cols = (int)(AMX_B_BLOCK / (panel_stride * 4)) / 2 * (2 * PANEL);
    if (nc_cols < 2 * PANEL)
        nc_cols = 2 * PANEL;
    int n_blocks = (rows + MC - 1) / MC; /* row blocks of equal size, at most MC */
    for (int nb = n0; nb < n1; nb += nc_cols) {
        int ne = nb + nc_cols < n1 ? nb + nc_cols : n1;
        for (int blk = 0; blk < n_blocks; blk++) {
            int ms = m0 + (int)((long)rows * blk / n_blocks);
            int me = m0 + (int)((long)rows * (blk + 1) / n_blocks);
            for (int n = nb; n < ne; n += 2 * PANEL)
                row_block(A, kp, ms, me, B + (size_t)(n / PANEL) * panel_stride, panel_stride, n,
                          ne - n < 2 * PANEL ? ne - n : 2 * PANEL, b, act, post, Y, ldy, &buf);
        }
    }
    RF_TILE_RELEASE();
}
