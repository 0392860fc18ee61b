/*
 * gemm_int8_shared_walk.c — what the register-tile backends of the int8
 * product share on every architecture (gemm_int8_backend.h): the walk over
 * a block's rows and panels (AVX2, VNNI, and ARM64's NEON, SDOT and I8MM),
 * and the copy of a tile's raw sums out, for the product that asks for
 * them instead of outputs. Plain C: the tiles and epilogues it calls carry
 * the instruction sets.
 */
#include "kernels/gemm_int8_backend.h"

#include <string.h>

#define PANEL RF_INT8_PANEL
#define L2_BLOCK (256 * 1024) /* bytes of quantized inputs per row block */

void rf_int8_walk_panels(const rf_int8_product *p, int m0, int m1, int n0, int n1, int step,
                         rf_int8_register_tile tile, rf_int8_epilogue *store)
{
    int kb = rf_int8_row_bytes(p->K), kq = kb / 4;
    int mc_rows = L2_BLOCK / kb / step * step;
    if (mc_rows < step)
        mc_rows = step;
    int32_t sums[RF_INT8_MAX_TILE_ROWS * PANEL];
    for (int mc = m0; mc < m1; mc += mc_rows) {
        int mc_end = mc + mc_rows < m1 ? mc + mc_rows : m1;
        int post_n0 = n0; /* the first column post has not seen */
        for (int n = n0; n < n1; n += PANEL) {
            const int8_t *W = p->W->panels + (size_t)(n / PANEL) * kb * PANEL;
            int cols = n1 - n < PANEL ? n1 - n : PANEL;
            for (int m = mc; m < mc_end; m += step) {
                int mr = mc_end - m < step ? mc_end - m : step;
                tile(mr, p->Xq + (size_t)m * kb, (size_t)kb, W, kq, p->W->colsum + n, sums);
                store(p, sums, m, mr, n, cols);
            }
            rf_block_post_columns(p->post, p->Y, p->ldy, mc, mc_end, &post_n0, n + cols, n1);
        }
    }
}

void rf_int8_store_sums(const rf_int8_product *p, const int32_t *C, int m, int mr, int n0,
                        int cols)
{
    for (int r = 0; r < mr; r++)
        memcpy(p->C + (size_t)(m + r) * p->ldy + n0, C + r * PANEL, (size_t)cols * sizeof *C);
}
