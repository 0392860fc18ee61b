/*
 * stored_matrix.c — rows of a q8, f16 or bf16 matrix of the model file
 * widened to f32 (see stored_matrix.h).
 */
#include "formats/stored_matrix.h"

#include "kernels/widen.h"
#include "kernels/gemm_int8.h"

#include <stdint.h>

void rf_stored_matrix_widen(const rf_stored_matrix *m, size_t row0, size_t rows, size_t K,
                            float *out)
{
    size_t first = row0 * K, count = rows * K;
    if (m->type == RF_DTYPE_Q8)
        rf_int8_dequantize_rows((const int8_t *)m->data + first, m->scale + row0, rows, K, out);
    else if (m->type == RF_DTYPE_F16)
        rf_widen_f16((const uint16_t *)m->data + first, out, count);
    else
        rf_widen_bf16((const uint16_t *)m->data + first, out, count);
}
