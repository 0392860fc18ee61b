/*
 * gemm_int8_backend.h — the operations of the int8 product's builds
 * behind the driver (gemm_int8.c), one per instruction set, each an
 * rf_int8_ops filled in a file of its own and a row of the kernels' one
 * table (backend.c), which names it and says what it needs:
 *
 *   x86/gemm_int8_avx2.c               "avx2"   VPSIGNB + VPMADDUBSW + VPMADDWD
 *   x86/gemm_int8_vnni.c               "vnni"   VPDPBUSD (AVX512-VNNI)
 *   x86/amx/gemm_int8_amx.c            "amx"    TDPBSSD (AMX-INT8)
 *   emulated/gemm_int8_amx_emulated.c  "amx-model"  the same loops on the C
 *                                      emulator of the tiles (tests only)
 *   arm/gemm_int8_neon.c               "neon", "sdot", "i8mm" (ARM64)
 *
 * and the pieces several share: x86/gemm_int8_shared_avx2.c and
 * x86/gemm_int8_shared_avx512.c (below), gemm_int8_shared_walk.c (the walk of
 * the register-tile builds, x86-64 and ARM64), x86/amx/gemm_int8_amx_body.h (the
 * tile loops). All read the packed layout of gemm_int8.h and give the same
 * exact integer sums; they differ only in speed. The driver quantizes,
 * packs, splits the work over threads and calls the chosen row's
 * members; a build never calls the driver nor an entry point that reads
 * the table (its activations go through its own instruction set's
 * element-wise build), and no member asks the CPU again. Adding an instruction set is one more file and one more row in
 * the table (docs/architecture.md).
 */
#ifndef RF_GEMM_INT8_BACKEND_H
#define RF_GEMM_INT8_BACKEND_H

#include "roformer.h"
#include "kernels/block_post.h"
#include "kernels/cpu.h"
#include "kernels/int8_layout.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

/* One product: Y = act(s_x s_w (Xq . Wq^T) + c_x s_w colsum + b) (gemm_int8.h). */
typedef struct {
    const int8_t *Xq; /* rows x rf_int8_row_bytes(K) quantized inputs, every row readable, as
                         the backend's quantize_rows stores them */
    int rows, K;
    const float *sx, *cx; /* per row scale and center; sx NULL: raw sums into C */
    const rf_int8_matrix *W;
    const float *bias;    /* [N] or NULL */
    rf_activation act;
    const rf_block_post *post; /* on each tile of Y once stored; NULL: none */
    float *Y;             /* rows ldy apart */
    int32_t *C;           /* the raw sums when sx is NULL, rows ldy apart */
    int ldy;
} rf_int8_product;

/* How a backend's operands come in: one set per way of storing the
 * inputs (below, and arm/gemm_int8_neon.c's own). */
typedef struct {
    /* Quantizes rows [m0, m1) of X (K used, rows K apart) into Xq (rows of
     * rf_int8_row_bytes(K)), scales and centers: the bytes of
     * rf_int8_quantize_row_naive, or with unsigned_inputs those bytes +
     * 128 (u8), which the backend's `block` reads. */
    void (*quantize_rows)(const float *X, int K, int m0, int m1, int8_t *Xq, float *scale,
                          float *center);
    bool unsigned_inputs;
    /* The sum of the K int8 values of w (packing). */
    int32_t (*row_sum)(const int8_t *w, int K);
} rf_int8_operands;

typedef struct rf_int8_ops rf_int8_ops;
struct rf_int8_ops {
    const rf_int8_operands *operands; /* rows in, and a weight row's sum */
    /* The tile walk with its epilogue: Y (or C) rows [m0, m1), channels
     * [n0, n1) (n0 a multiple of 16). */
    void (*block)(const rf_int8_product *p, int m0, int m1, int n0, int n1);
    /* Products of fewer than min_rows rows run on `small` instead (its
     * rows in too): the tiles' rows come 16 at a time. Its row needs no
     * more of the CPU than this one's. */
    int min_rows;
    const rf_int8_ops *small;
};

/* Quantizing one input row, the scalar parts every build shares around
 * its vector loops (gemm_int8.h's rule): rf_int8_row_scale takes the min
 * and max of x[0, k) and finishes them over x[k, K), stores the row's
 * scale and center and returns the factor that quantizes, q = (x - c) *
 * inv rounded; rf_int8_row_tail quantizes x[k, K) and zeroes q[K, kb). */
static inline float rf_int8_row_scale(const float *x, int k, int K, float min, float max,
                                      float *scale, float *center)
{
    for (; k < K; k++) {
        min = x[k] < min ? x[k] : min;
        max = x[k] > max ? x[k] : max;
    }
    float c = 0.5f * (max + min), half = 0.5f * (max - min);
    *scale = half / 127.0f;
    *center = c;
    return half > 0.0f ? 127.0f / half : 0.0f;
}

static inline void rf_int8_row_tail(const float *x, int k, int K, int kb, float c, float inv,
                                    int8_t *q)
{
    for (; k < K; k++)
        q[k] = (int8_t)nearbyintf((x[k] - c) * inv);
    for (; k < kb; k++)
        q[k] = 0;
}

/* The builds, one file each (the list above). */
extern const rf_int8_ops rf_int8_ops_avx2, rf_int8_ops_vnni, rf_int8_ops_amx,
    rf_int8_ops_amx_emulated, rf_int8_ops_neon, rf_int8_ops_sdot, rf_int8_ops_i8mm;

/* An epilogue: rows [m, m + mr) of Y from a tile of sums (C, rows 16
 * apart) for `cols` channels from n: Y = act(s_x[r] s_w[n] C + c_x[r]
 * s_w[n] colsum[n] + b[n]), or the raw sums into p->C when p->sx is NULL. */
typedef void rf_int8_epilogue(const rf_int8_product *p, const int32_t *C, int m, int mr, int n,
                              int cols);

/* Shared by the x86-64 backends. The AVX2 pieces (x86/gemm_int8_shared_avx2.c):
 * quantizing rows, a weight row's sum and the epilogue; the AVX-512 ones
 * (x86/gemm_int8_shared_avx512.c), for the backends that need AVX-512 anyway: rows
 * quantized 16 values at a time (signed, or + 128 for VPDPBUSD) and the
 * epilogue 16 channels at a time. The same operations per value in the
 * same order, so every backend gives the same bytes and outputs. */
void rf_int8_quantize_rows_avx2(const float *X, int K, int m0, int m1, int8_t *Xq, float *scale,
                                float *center);
int32_t rf_int8_row_sum_avx2(const int8_t *w, int K);
rf_int8_epilogue rf_int8_store_tile_avx2;
void rf_int8_quantize_rows_avx512(const float *X, int K, int m0, int m1, int8_t *Xq, float *scale,
                                  float *center);
void rf_int8_quantize_rows_avx512_u8(const float *X, int K, int m0, int m1, int8_t *Xq,
                                     float *scale, float *center);
rf_int8_epilogue rf_int8_store_tile_avx512;
/* Those rows and sums as operand sets: AVX2; AVX-512 signed; AVX-512 +
 * 128 (VPDPBUSD's unsigned operand). */
extern const rf_int8_operands rf_int8_operands_avx2, rf_int8_operands_avx512,
    rf_int8_operands_avx512_u8;

/* Shared by every register-tile backend (AVX2, VNNI, NEON, SDOT, I8MM;
 * gemm_int8_shared_walk.c). A register tile: rows [0, mr) of A (rows lda
 * bytes apart) times one packed panel over kq quads, into C (mr x 16
 * int32, rows 16 apart), mr <= RF_INT8_MAX_TILE_ROWS; colsum is the
 * panel's weight sums, for a tile that takes them off itself (VNNI). */
#define RF_INT8_MAX_TILE_ROWS 12
typedef void (*rf_int8_register_tile)(int mr, const int8_t *A, size_t lda, const int8_t *W, int kq,
                                      const int32_t *colsum, int32_t *C);
/* The walk of those builds over rows [m0, m1) and channels [n0, n1):
 * rows in blocks that stay in L2, then one panel (in L1) against every
 * tile of `step` rows of the block, each tile stored by `store`. */
void rf_int8_walk_panels(const rf_int8_product *p, int m0, int m1, int n0, int n1, int step,
                         rf_int8_register_tile tile, rf_int8_epilogue *store);
/* The epilogues' part for a product without scales (p->sx NULL): the raw
 * sums into p->C. */
rf_int8_epilogue rf_int8_store_sums;

/* A register-tile backend's block, from its tile: TILE(mr, A, lda, W, kq,
 * colsum, C), an always-inline function of at most ROWS rows whose loops
 * unroll for a constant mr. Defines NAME_rows, TILE with mr made a
 * constant (a branch per row count below ROWS, dropped above it), and
 * NAME, the block: rf_int8_walk_panels over tiles of ROWS rows, each
 * stored by STORE. TARGET: the tile's target attribute. */
#define RF_INT8_ROWS_CASE(TILE, n, ROWS)                                                          \
    if ((n) < (ROWS) && mr == (n)) {                                                               \
        TILE((n) < (ROWS) ? (n) : (ROWS), A, lda, W, kq, colsum, C);                               \
        return;                                                                                    \
    }
#define RF_INT8_TILE_BLOCK(NAME, TARGET, TILE, ROWS, STORE)                                       \
    _Static_assert((ROWS) >= 1 && (ROWS) <= RF_INT8_MAX_TILE_ROWS, "a row count per branch");     \
    TARGET static void NAME##_rows(int mr, const int8_t *A, size_t lda, const int8_t *W, int kq,  \
                                   const int32_t *colsum, int32_t *C)                              \
    {                                                                                              \
        RF_INT8_ROWS_CASE(TILE, 1, ROWS) RF_INT8_ROWS_CASE(TILE, 2, ROWS)                          \
        RF_INT8_ROWS_CASE(TILE, 3, ROWS) RF_INT8_ROWS_CASE(TILE, 4, ROWS)                          \
        RF_INT8_ROWS_CASE(TILE, 5, ROWS) RF_INT8_ROWS_CASE(TILE, 6, ROWS)                          \
        RF_INT8_ROWS_CASE(TILE, 7, ROWS) RF_INT8_ROWS_CASE(TILE, 8, ROWS)                          \
        RF_INT8_ROWS_CASE(TILE, 9, ROWS) RF_INT8_ROWS_CASE(TILE, 10, ROWS)                         \
        RF_INT8_ROWS_CASE(TILE, 11, ROWS)                                                          \
        TILE(ROWS, A, lda, W, kq, colsum, C); /* mr == ROWS */                                     \
    }                                                                                              \
    TARGET static void NAME(const rf_int8_product *p, int m0, int m1, int n0, int n1)              \
    {                                                                                              \
        rf_int8_walk_panels(p, m0, m1, n0, n1, ROWS, NAME##_rows, STORE);                          \
    }

#endif
