/*
 * context.c — rf_context_create sizes every scratch buffer of the forward
 * pass once (from max_batch x max_seq_len) and carves them out of one
 * allocation; rf_context_resize and rf_context_free; and what a context
 * reports of its passes (rf_context_time_steps, rf_context_step_times,
 * rf_context_parallel_regions). The forward pass that runs in them:
 * forward.c.
 */
#include "model/context.h"
#include "model/attention.h"
#include "base/error.h"
#include "kernels/gemm_bf16.h"
#include "kernels/gemm_int8.h"
#include "kernels/kernel_choice.h"
#include "kernels/linalg.h"
#include "kernels/rope.h"
#include "formats/hf_config.h"

#include <stdlib.h>
#include <unistd.h>

/* Upper bound on engine threads, whatever the machine reports. */
#define MAX_THREADS RF_MAX_THREADS /* more asked is an error; all cores are capped */

rf_context_params rf_context_default_params(void)
{
    rf_context_params p = {.max_batch = 1, .max_seq_len = 0, .n_threads = 0, .skip_padding = 0,
                           .compute = RF_COMPUTE_F32, .extend_positions = 0,
                           .rope_scaling = RF_ROPE_SCALING_DEFAULT, .rope_factor = 0.0f};
    return p;
}

/* The scaling and factor `p` asks for, the model's where it says default. */
static void resolve_rope(const rf_hparams *hp, const rf_context_params *p, int *scaling,
                         double *factor)
{
    *scaling = p->rope_scaling == RF_ROPE_SCALING_DEFAULT ? (int)hp->rope_scaling : (int)p->rope_scaling;
    if (*scaling == RF_ROPE_SCALING_DEFAULT)
        *scaling = RF_ROPE_SCALING_NONE;
    *factor = p->rope_factor > 0 ? (double)p->rope_factor
              : hp->rope_factor > 0 ? (double)hp->rope_factor : 1.0;
    if (*scaling == RF_ROPE_SCALING_NONE)
        *factor = 1.0;
}

/* The longest sequence for the resolved scaling (see roformer.h). */
static int32_t length_limit(const rf_hparams *hp, bool extend, int scaling, double factor)
{
    if (extend)
        return RF_MAX_SEQ_LEN > hp->max_position ? RF_MAX_SEQ_LEN : hp->max_position;
    if (scaling == RF_ROPE_SCALING_NONE || factor <= 1.0)
        return hp->max_position;
    double n = (double)hp->max_position * factor;
    return n >= RF_MAX_SEQ_LEN ? RF_MAX_SEQ_LEN : (int32_t)n;
}

int32_t rf_context_length_limit(const rf_model *model, const rf_context_params *params)
{
    rf_context_params p = params ? *params : rf_context_default_params();
    int scaling;
    double factor;
    resolve_rope(&model->hp, &p, &scaling, &factor);
    return length_limit(&model->hp, p.extend_positions != 0, scaling, factor);
}

/* ==== Sizing ==== */

/* Buffers start on 64-byte boundaries: sizes are rounded to 16 floats. */
static size_t padded(size_t floats)
{
    return (floats + 15) / 16 * 16;
}

struct carve {
    float *base;   /* NULL while only measuring */
    size_t used;   /* floats handed out so far */
};

static float *carve(struct carve *c, size_t floats)
{
    float *p = c->base ? c->base + c->used : NULL;
    c->used += padded(floats);
    return floats ? p : NULL;
}

/* Attention's two products run in bf16 for bf16 and int8 compute where
 * the bf16 kernel in use is faster than f32 sgemm (rf_attention_in_bf16:
 * rf_bf16_attention_fast's rule, AMX, AMD's VDPBF16PS, ARM64's BF16,
 * unless ROFORMER_KERNEL chose; for int8 their rounding is far below what
 * int8 moves: test_int8); in f32 otherwise, as on Intel CPUs without AMX,
 * where bf16 would only be slower (docs/compute.md). */
static bool attention_in_bf16(rf_compute_type compute)
{
    return (compute == RF_COMPUTE_BF16 || compute == RF_COMPUTE_INT8) && rf_attention_in_bf16();
}

/* Points every named buffer of ctx into c (or only measures when c->base is
 * NULL). Sizes fit in size_t: checked by the caller. */
static void carve_buffers(rf_context *ctx, struct carve *c, int n_threads)
{
    const rf_hparams *hp = &ctx->model->hp;
    size_t L = (size_t)ctx->max_seq_len, T = (size_t)ctx->max_batch * L;
    size_t D = (size_t)hp->hidden_size, E = (size_t)hp->embedding_size;
    size_t F = (size_t)hp->intermediate_size, Dh = D / (size_t)hp->num_heads;
    /* the two shared regions, one phase's buffers at a time (context.h) */
    size_t R = ctx->compute != RF_COMPUTE_F32 && T > RF_FFN_ROWS ? RF_FFN_ROWS : T;
    ctx->ffn_rows = (int)R;
    size_t wide = T * 3 * D > R * F ? T * 3 * D : R * F, narrow = T * (D > E ? D : E);
    if (E != D && T * E > wide)
        wide = T * E;
    ctx->x = carve(c, T * D);
    float *wide_rows = carve(c, wide), *narrow_rows = carve(c, narrow);
    ctx->emb = E != D ? wide_rows : NULL;
    ctx->qkv = ctx->attn_proj = ctx->ffn = ctx->head_in = ctx->qa = wide_rows;
    ctx->attn = ctx->ffn_proj = ctx->head_mid = narrow_rows;
    ctx->scores = carve(c, (size_t)n_threads * (size_t)rf_attention_scratch((int)L));
    ctx->mask_bias = carve(c, (size_t)ctx->max_batch * L);
    ctx->rope_sin = carve(c, L * Dh / 2);
    ctx->rope_cos = carve(c, L * Dh / 2);
    /* a layer product's input: [T][D], or [R][F] in the FFN's down product */
    if (ctx->bf16_layers) {
        size_t td = rf_bf16_scratch_size((int)T, (int)D), rf = rf_bf16_scratch_size((int)R, (int)F);
        /* uint16 elements, two to a float */
        ctx->x_bf16 = (uint16_t *)(void *)carve(c, ((td > rf ? td : rf) + 1) / 2);
    }
    if (attention_in_bf16(ctx->compute))
        ctx->attn_bf16 = (uint16_t *)(void *)carve(
            c, (rf_attention_bf16_kv_size(ctx->max_batch, (int)L, hp->num_heads, (int)Dh) +
                (size_t)n_threads * rf_attention_bf16_scratch((int)L, (int)Dh) + 1) / 2);
    if (ctx->int8_layers) {
        size_t td = rf_int8_scratch_size((int)T, (int)D), rf = rf_int8_scratch_size((int)R, (int)F);
        ctx->x_int8 = carve(c, ((td > rf ? td : rf) + 3) / 4);
    }
}

/* Sizes, allocates and carves the scratch of ctx for max_batch x
 * max_seq_len tokens (replacing ctx->arena, ctx->seq_off and the sizes
 * without freeing the old ones), and fills the RoPE table. */
static rf_status alloc_scratch(rf_context *ctx, int32_t max_batch, int32_t max_seq_len,
                               int n_threads, rf_error *err)
{
    const rf_hparams *hp = &ctx->model->hp;
    /* the largest buffer is T x max(3D, E, F) floats; refuse sizes that
       overflow size_t long before they would be allocated */
    size_t widest = (size_t)hp->hidden_size;
    if ((size_t)hp->embedding_size > widest)
        widest = (size_t)hp->embedding_size;
    if ((size_t)hp->intermediate_size > widest)
        widest = (size_t)hp->intermediate_size;
    size_t T = (size_t)max_batch * (size_t)max_seq_len;
    if (T > SIZE_MAX / 64 / widest / sizeof(float) ||
        (size_t)max_seq_len * max_seq_len > SIZE_MAX / 64 / MAX_THREADS)
        return rf_fail(err, RF_ERR_LIMIT, "context: %d x %d tokens is too large a batch",
                       max_batch, max_seq_len);
    ctx->max_batch = max_batch;
    ctx->max_seq_len = max_seq_len;
    /* seq_off, then head_rows: a segment for each of up to T gathered rows
       or two for each sequence of the padded layout (rf_run_heads) */
    size_t head_segments = T > 2 * (size_t)max_batch ? T : 2 * (size_t)max_batch;
    ctx->seq_off = calloc((size_t)max_batch + 1 + head_segments + 1, sizeof *ctx->seq_off);
    ctx->head_rows = ctx->seq_off ? ctx->seq_off + max_batch + 1 : NULL;
    struct carve c = {NULL, 0};
    carve_buffers(ctx, &c, n_threads);
    ctx->arena_bytes = c.used * sizeof(float);
    ctx->arena = ctx->seq_off ? aligned_alloc(64, ctx->arena_bytes) : NULL;
    if (!ctx->arena) {
        free(ctx->seq_off);
        ctx->seq_off = NULL;
        return rf_fail(err, RF_ERR_NOMEM, "context: cannot allocate %zu MiB of scratch for %d x %d tokens",
                       ctx->arena_bytes >> 20, max_batch, max_seq_len);
    }
    c = (struct carve){ctx->arena, 0};
    carve_buffers(ctx, &c, n_threads);
    int Dh = hp->hidden_size / hp->num_heads;
    double base, pos_divisor;
    rf_rope_scaled(ctx->rope_scaling, ctx->rope_factor, Dh, &base, &pos_divisor);
    rf_rope_table(ctx->rope_sin, ctx->rope_cos, max_seq_len, Dh, base, pos_divisor);
    return RF_OK;
}

/* The size rules of rf_context_create and rf_context_resize: max_seq_len
 * <= 0 becomes the model's max_position; it may not exceed `limit`
 * (rf_context_length_limit); max_batch at least 1. */
static rf_status check_size(const rf_hparams *hp, int32_t limit, int32_t max_batch,
                            int32_t *max_seq_len, rf_error *err)
{
    if (*max_seq_len <= 0)
        *max_seq_len = hp->max_position;
    if (*max_seq_len > limit && limit == hp->max_position)
        return rf_fail(err, RF_ERR_INPUT,
                       "context: max_seq_len %d is longer than the model's max_position %d "
                       "(extend_positions allows it)",
                       *max_seq_len, hp->max_position);
    if (*max_seq_len > limit)
        return rf_fail(err, RF_ERR_INPUT,
                       "context: max_seq_len %d is longer than the %d this context accepts",
                       *max_seq_len, limit);
    if (max_batch < 1)
        return rf_fail(err, RF_ERR_INPUT, "context: max_batch %d must be >= 1", max_batch);
    return RF_OK;
}

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

rf_status rf_context_create(const rf_model *model, const rf_context_params *params,
                            rf_context **out, rf_error *err)
{
    *out = NULL;
    if (!model)
        return rf_fail(err, RF_ERR_INPUT, "context: no model");
    rf_context_params p = params ? *params : rf_context_default_params();
    const rf_hparams *hp = &model->hp;
    if (hp->hidden_size <= 0 || hp->num_heads <= 0 || hp->hidden_size % hp->num_heads != 0 ||
        (hp->hidden_size / hp->num_heads) % 2 != 0)
        return rf_fail(err, RF_ERR_UNSUPPORTED,
                       "context: hidden size %d with %d heads: the head size must be a whole "
                       "even number for rotary embeddings", hp->hidden_size, hp->num_heads);
    if (p.rope_scaling != RF_ROPE_SCALING_DEFAULT && p.rope_scaling != RF_ROPE_SCALING_NONE &&
        p.rope_scaling != RF_ROPE_SCALING_LINEAR && p.rope_scaling != RF_ROPE_SCALING_NTK)
        return rf_fail(err, RF_ERR_INPUT, "context: unknown rope scaling %d", p.rope_scaling);
    if (!(p.rope_factor <= RF_MAX_ROPE_FACTOR))
        return rf_fail(err, RF_ERR_INPUT, "context: rope_factor %g is not at most %d",
                       (double)p.rope_factor, RF_MAX_ROPE_FACTOR);
    int rope_scaling;
    double rope_factor;
    resolve_rope(hp, &p, &rope_scaling, &rope_factor);
    int32_t limit = length_limit(hp, p.extend_positions != 0, rope_scaling, rope_factor);
    rf_status size_st = check_size(hp, limit, p.max_batch, &p.max_seq_len, err);
    if (size_st != RF_OK)
        return size_st;
    if (p.compute != RF_COMPUTE_F32 && p.compute != RF_COMPUTE_BF16 &&
        p.compute != RF_COMPUTE_INT8)
        return rf_fail(err, RF_ERR_INPUT, "context: unknown compute type %d", p.compute);
    rf_status kernel_st = rf_kernels_from_env(err);
    if (kernel_st != RF_OK)
        return kernel_st;
    if (p.compute == RF_COMPUTE_BF16 && !rf_bf16_supported())
        return rf_fail(err, RF_ERR_UNSUPPORTED,
                       "context: bf16 compute needs a CPU with " RF_BF16_CPU_NEEDS
                       ", which this one lacks");
    if (p.compute == RF_COMPUTE_INT8 && !rf_int8_supported())
        return rf_fail(err, RF_ERR_UNSUPPORTED,
                       "context: int8 compute needs a CPU with AVX2, which this one lacks");
    if (p.n_threads > MAX_THREADS)
        return rf_fail(err, RF_ERR_INPUT, "context: %d threads asked, at most %d run",
                       p.n_threads, MAX_THREADS);
    /* the model's packed weights: made by the first context that needs them */
    rf_status pack_st = rf_model_pack((rf_model *)model, (rf_compute_type)p.compute, err);
    if (pack_st != RF_OK)
        return pack_st;
    int n_threads = p.n_threads > 0 ? p.n_threads : online_cpus();

    rf_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return rf_fail(err, RF_ERR_NOMEM, "context: out of memory");
    ctx->model = model;
    ctx->skip_padding = p.skip_padding != 0;
    ctx->length_limit = limit;
    ctx->rope_scaling = rope_scaling;
    ctx->rope_factor = rope_factor;
    ctx->compute = (rf_compute_type)p.compute;
    if (p.compute == RF_COMPUTE_BF16)
        ctx->bf16_layers = model->packed.bf16_layers;
    if (p.compute == RF_COMPUTE_INT8)
        ctx->int8_layers = model->packed.int8_layers;
    rf_status st = alloc_scratch(ctx, p.max_batch, p.max_seq_len, n_threads, err);
    if (st == RF_OK) {
        rf_blas_single_thread();
        st = rf_pool_create(n_threads, &ctx->pool, err);
        ctx->par = rf_pool_parallel(ctx->pool);
        rf_step_timer_init(&ctx->steps, ctx->par);
    }
    if (st != RF_OK) {
        rf_context_free(ctx);
        return st;
    }
    *out = ctx;
    return RF_OK;
}

rf_status rf_context_resize(rf_context *ctx, int32_t max_batch, int32_t max_seq_len, rf_error *err)
{
    rf_status st = check_size(&ctx->model->hp, ctx->length_limit, max_batch, &max_seq_len, err);
    if (st != RF_OK)
        return st;
    /* the new buffers first: on failure the context stays as it was */
    rf_context old = *ctx;
    st = alloc_scratch(ctx, max_batch, max_seq_len, rf_pool_threads(ctx->pool), err);
    if (st != RF_OK) {
        *ctx = old;
        return st;
    }
    free(old.arena);
    free(old.seq_off);
    return RF_OK;
}

void rf_context_time_steps(rf_context *ctx, bool on)
{
    rf_step_timer_reset(&ctx->steps, on);
}

void rf_context_step_times(const rf_context *ctx, rf_step_times *out)
{
    rf_step_timer_read(&ctx->steps, out);
}

void rf_context_free(rf_context *ctx)
{
    if (!ctx)
        return;
    rf_pool_free(ctx->pool);
    free(ctx->arena);
    free(ctx->seq_off);
    free(ctx);
}

int64_t rf_context_parallel_regions(const rf_context *ctx)
{
    return rf_pool_regions(ctx->pool);
}
