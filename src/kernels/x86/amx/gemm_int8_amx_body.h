/*
 * gemm_int8_amx_body.h — the int8 product on AMX tiles, written once on the
 * tile operations of x86/amx/amx_tiles.h and built twice: with the instructions
 * (x86/amx/gemm_int8_amx.c) and on the C emulator of the tiles
 * (emulated/gemm_int8_amx_emulated.c, which tests run on any CPU). The includer
 * defines AMX_BLOCK, the name of the block function this defines, and
 * AMX_STORE_TILE, its epilogue (gemm_int8_backend.h); and may define
 * AMX_B_BLOCK, the bytes of a block of panels (the emulated build's are
 * small, so that tests walk several).
 *
 * TDPBSSD multiplies signed bytes by signed bytes into int32 sums that do
 * not saturate, so the quantized rows go in as they are (no +128 and no
 * colsum to take off) and the sums are exact. With every tile 16 rows of
 * 64 bytes (x86/amx/amx.h):
 *   A (tiles 4, 5): 16 rows of Xq, 64 inputs each, rows kb bytes apart;
 *   B (tiles 6, 7): 16 consecutive 64-byte lines of a packed panel, i.e.
 *                   64 inputs of its 16 channels (gemm_int8.h's layout is
 *                   already the B operand's);
 *   C (tiles 0-3):  the 2 x 2 blocks of 16 x 16 sums of 32 rows x 2 panels.
 * Per 64 inputs: 4 tile loads, 4 TDPBSSD (16 x 16 x 64 products each).
 *
 * Walk, per thread (the C tiles stay in their registers over the whole K
 * of a 32 x 32 block; only the caches are blocked):
 *   panels in blocks of at most AMX_B_BLOCK bytes, which stay in L2 while
 *   every row of the thread's rectangle runs over them (the weights leave
 *   the L3 once per thread, not once per 32 rows);
 *   within a block of panels, rows: a 32-row block, in L1 up to K = 1024,
 *   against every pair of the block's panels; at larger K, rows in blocks
 *   of AMX_L2_BLOCK bytes, and for each pair of panels every 32-row block
 *   of the row block.
 * The C tiles are stored to a 4 KiB buffer and the epilogue
 * (AMX_STORE_TILE) reads them from L1.
 * Edges, without reading outside Xq or the panels:
 *   rows: the last block of a row block is moved back to end at the last
 *         readable row (the product has at least 16: the driver sends
 *         fewer rows to the VNNI build) and writes only its new rows;
 *   channels: a lone last panel runs with one B tile;
 *   K: the last kb % 64 bytes of the A rows and the last lines of the
 *      panels are copied into zeroed 64-byte-wide buffers.
 */
#include "kernels/x86/amx/amx_tiles.h"
#include "kernels/gemm_int8_backend.h"

#include <string.h>

#define AMX_PANEL RF_INT8_PANEL
#define AMX_L2_BLOCK (256 * 1024) /* bytes of quantized inputs per row block */
#define AMX_L1_ROWS_BYTES (32 * 1024) /* bytes of a row block kept in L1 */
#ifndef AMX_B_BLOCK
#define AMX_B_BLOCK (1024 * 1024) /* bytes of packed panels kept in L2: half a Sapphire Rapids L2 */
#endif

/* The K tail's operands, zero beyond the tail. */
struct amx_tail {
    int8_t a[32][64] __attribute__((aligned(64)));
    int8_t b[2][16][64] __attribute__((aligned(64)));
};

/* C tiles 0-3 += the block at A (h = 16 or 32 rows, lda apart) times B0
 * (and B1 when two), over `steps` steps of 64 inputs; A and B advance by
 * a_step and b_step bytes a step. */
RF_TARGET_AMX static inline __attribute__((always_inline)) void
amx_steps(const int8_t *A, size_t lda, int h, const int8_t *B0, const int8_t *B1, bool two,
          size_t b_stride, int steps, size_t a_step, size_t b_step)
{
    for (int s = 0; s < steps; s++) {
        const int8_t *a = A + (size_t)s * a_step;
        RF_TILE_LOAD(4, a, lda);
        RF_TILE_LOAD(6, B0 + (size_t)s * b_step, b_stride);
        RF_TILE_DPBSSD(0, 4, 6);
        if (h == 32) {
            RF_TILE_LOAD(5, a + 16 * lda, lda);
            RF_TILE_DPBSSD(2, 5, 6);
        }
        if (two) {
            RF_TILE_LOAD(7, B1 + (size_t)s * b_step, b_stride);
            RF_TILE_DPBSSD(1, 4, 7);
            if (h == 32)
                RF_TILE_DPBSSD(3, 5, 7);
        }
    }
}

/* One block of h rows from row m (moved back to start at the last
 * readable block where it would pass the product's rows) times the panels
 * B0 (and B1 when two) at column n, over the whole K in the C tiles; its
 * rows [m, end) go through the epilogue and post (columns up to n1). */
RF_TARGET_AMX static inline __attribute__((always_inline)) void
block_rows(const rf_int8_product *p, int h, int m, int end, const int8_t *B0, const int8_t *B1,
           bool two, int n, int n1, struct amx_tail *t, int32_t sums[4][16][16])
{
    int kb = rf_int8_row_bytes(p->K);
    int full = kb / 64, tail = kb % 64; /* whole steps of 64 inputs, bytes left */
    int s = m + h <= p->rows ? m : p->rows - h; /* the block's first row */
    const int8_t *A = p->Xq + (size_t)s * kb;
    RF_TILE_ZERO(0);
    RF_TILE_ZERO(1);
    RF_TILE_ZERO(2);
    RF_TILE_ZERO(3);
    amx_steps(A, (size_t)kb, h, B0, B1, two, 64, full, 64, 64 * 16);
    if (tail) {
        for (int r = 0; r < h; r++)
            memcpy(t->a[r], A + (size_t)r * kb + (size_t)full * 64, (size_t)tail);
        amx_steps(&t->a[0][0], 64, h, &t->b[0][0][0], &t->b[1][0][0], two, 64, 1, 0, 0);
    }
    RF_TILE_STORE(0, sums[0], 64);
    RF_TILE_STORE(1, sums[1], 64);
    RF_TILE_STORE(2, sums[2], 64);
    RF_TILE_STORE(3, sums[3], 64);
    /* rows [m, end) are new: block rows from m - s */
    for (int half = 0; half < h / 16; half++) {
        int r0 = half * 16 > m - s ? half * 16 : m - s; /* first block row */
        int r1 = half * 16 + 16 < end - s ? half * 16 + 16 : end - s;
        if (r1 <= r0)
            continue;
        for (int i = 0; i < (two ? 2 : 1); i++) {
            int c0 = n + i * AMX_PANEL;
            int cols = n1 - c0 < AMX_PANEL ? n1 - c0 : AMX_PANEL;
            AMX_STORE_TILE(p, &sums[2 * half + i][r0 - half * 16][0], s + r0, r1 - r0, c0, cols);
            rf_block_post_run(p->post, p->Y, p->ldy, s + r0, s + r1, c0, c0 + cols);
        }
    }
}

RF_TARGET_AMX static void AMX_BLOCK(const rf_int8_product *p, int m0, int m1, int n0, int n1)
{
    int kb = rf_int8_row_bytes(p->K);
    int full = kb / 64, tail = kb % 64;
    size_t panel_bytes = (size_t)kb * AMX_PANEL;
    int h = p->rows >= 32 ? 32 : 16; /* rows per block: 2 A tiles, or 1 */
    /* one block of rows at a time, against every pair of panels, where
       its rows fit in L1 beside a pair of panels (K <= 1024 at 32 rows;
       docs/performance.md); else rows in blocks that stay in L2, each
       pair of panels against every block of them */
    int mc_rows = (size_t)kb * (size_t)h <= AMX_L1_ROWS_BYTES ? h : AMX_L2_BLOCK / kb / h * h;
    if (mc_rows < h)
        mc_rows = h;
    /* columns per block of panels: pairs of panels, at least one pair */
    int nc_cols = (int)(AMX_B_BLOCK / panel_bytes) / 2 * (2 * AMX_PANEL);
    if (nc_cols < 2 * AMX_PANEL)
        nc_cols = 2 * AMX_PANEL;
    struct amx_tail t;
    int32_t sums[4][16][16] __attribute__((aligned(64)));
    if (tail)
        memset(&t, 0, sizeof t);
    RF_TILE_CONFIG(rf_amx_config_16x64());
    for (int nb = n0; nb < n1; nb += nc_cols) {
        int ne = nb + nc_cols < n1 ? nb + nc_cols : n1;
        for (int mc = m0; mc < m1; mc += mc_rows) {
            int mc_end = mc + mc_rows < m1 ? mc + mc_rows : m1;
            for (int n = nb; n < ne; n += 2 * AMX_PANEL) {
                bool two = n + AMX_PANEL < ne;
                const int8_t *B0 = p->W->panels + (size_t)(n / AMX_PANEL) * panel_bytes;
                const int8_t *B1 = B0 + panel_bytes;
                /* the panels' last tail / 4 lines: the B operand of the tail */
                for (int i = 0; tail && i < (two ? 2 : 1); i++)
                    memcpy(t.b[i], (i ? B1 : B0) + (size_t)full * 64 * 16, (size_t)tail * 16);
                for (int m = mc; m < mc_end; m += h)
                    block_rows(p, h, m, m + h < mc_end ? m + h : mc_end, B0, B1, two, n, n1, &t,
                               sums);
            }
        }
    }
    RF_TILE_RELEASE();
}
