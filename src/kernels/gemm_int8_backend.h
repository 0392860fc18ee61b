/*
 * gemm_int8_backend.h — the builds of the int8 product behind the driver
 * (gemm_int8.c), one per instruction set, each in a file of its own:
 *
 *   gemm_int8_avx2.c       RF_INT8_AVX2   VPSIGNB + VPMADDUBSW + VPMADDWD
 *   gemm_int8_vnni.c       RF_INT8_VNNI   VPDPBUSD (AVX512-VNNI)
 *   gemm_int8_amx.c        RF_INT8_AMX    TDPBSSD (AMX-INT8)
 *   gemm_int8_amx_model.c  RF_INT8_AMX_MODEL  the same loops on the C
 *                          model of the tiles (tests only)
 *   gemm_int8_neon.c       RF_INT8_NEON, RF_INT8_SDOT, RF_INT8_I8MM (ARM64)
 *
 * All read the packed layout of gemm_int8.h and give the same exact
 * integer sums; they differ only in speed. A backend never calls the
 * driver: the driver quantizes, packs, splits the work over threads and
 * calls a backend's `block` for each thread's share. Adding an
 * instruction set is one more file and one more row in the driver's
 * table.
 */
#ifndef RF_GEMM_INT8_BACKEND_H
#define RF_GEMM_INT8_BACKEND_H

#include "roformer.h"
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
    float *Y;             /* rows ldy apart */
    int32_t *C;           /* the raw sums when sx is NULL, rows ldy apart */
    int ldy;
} rf_int8_product;

typedef struct {
    const char *name;
    bool (*cpu_runs)(void);
    /* Y (or C) rows [m0, m1), channels [n0, n1) (n0 a multiple of 16). */
    void (*block)(const rf_int8_product *p, int m0, int m1, int n0, int n1);
    /* Quantizes rows [m0, m1) of X (K used, rows K apart) into Xq (rows
     * of rf_int8_row_bytes(K)), scales and centers: the bytes of
     * rf_int8_quantize_row_naive. */
    void (*quantize_rows)(const float *X, int K, int m0, int m1, int8_t *Xq, float *scale,
                          float *center);
    /* The sum of the K int8 values of w (packing). */
    int32_t (*row_sum)(const int8_t *w, int K);
    /* quantize_rows stores Xq + 128 (u8), which `block` reads */
    bool unsigned_inputs;
} rf_int8_backend;

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

extern const rf_int8_backend rf_int8_backend_avx2, rf_int8_backend_vnni, rf_int8_backend_amx,
    rf_int8_backend_amx_model, rf_int8_backend_neon, rf_int8_backend_sdot, rf_int8_backend_i8mm;

/* Shared by the x86-64 backends (gemm_int8_x86.c), AVX2 code:
 * rf_int8_quantize_rows_avx2 and rf_int8_row_sum_avx2 as the backend's
 * members; rf_int8_store_tile writes rows [m, m + mr) from a tile of sums
 * (C, rows 16 apart) for `cols` channels from n: Y = act(s_x[r] s_w[n] C
 * + c_x[r] s_w[n] colsum[n] + b[n]), or the raw sums into p->C when
 * p->sx is NULL. Where the element-wise kernels run AVX-512, both go
 * through their AVX-512 twins (gemm_int8_avx512.c; the epilogue for
 * whole tiles): the same bytes and outputs. */
void rf_int8_quantize_rows_avx2(const float *X, int K, int m0, int m1, int8_t *Xq, float *scale,
                                float *center);
int32_t rf_int8_row_sum_avx2(const int8_t *w, int K);
void rf_int8_store_tile(const rf_int8_product *p, const int32_t *C, int m, int mr, int n, int cols);
void rf_int8_store_tile_avx512(const rf_int8_product *p, const int32_t *C, int m, int mr, int n);
void rf_int8_quantize_rows_avx512(const float *X, int K, int m0, int m1, int8_t *Xq, float *scale,
                                  float *center);

/* A register tile of the AVX2 and VNNI builds: rows [0, mr) of A (rows
 * lda bytes apart) times one packed panel over kq quads, into C (mr x 16
 * int32, rows 16 apart), mr <= RF_INT8_MAX_TILE_ROWS. */
#define RF_INT8_MAX_TILE_ROWS 12
typedef void (*rf_int8_register_tile)(int mr, const int8_t *A, size_t lda, const int8_t *W, int kq,
                                      const int32_t *colsum, int32_t *C);
/* The walk of those builds over rows [m0, m1) and channels [n0, n1):
 * rows in blocks that stay in L2, then one panel (in L1) against every
 * tile of `step` rows of the block, each tile stored by
 * rf_int8_store_tile_avx2. */
void rf_int8_walk_panels(const rf_int8_product *p, int m0, int m1, int n0, int n1, int step,
                         rf_int8_register_tile tile);

#endif
