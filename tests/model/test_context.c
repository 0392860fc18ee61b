/*
 * test_context.c — rf_context_create / rf_forward on a small random-weight
 * model built in memory (no fixtures needed): every bad batch and output
 * request gets its status and message, results do not depend on the
 * thread count or on padding, hidden_states ends with last_hidden_state,
 * a sequence with every key masked still gives finite numbers, a
 * resized context computes what a new one of that size does, and the
 * scratch of a context is no larger than its buffers' sharing allows.
 */
#include "kernels/gemm_bf16.h"
#include "kernels/gemm_int8.h"
#include "model/attention.h"
#include "model/context.h"

#include "../check.h"

#include <math.h>
#include <stdint.h>

/* D = 48, H = 3 (Dh = 16), E = 40 (so embeddings_project is used), F = 72 */
enum { V = 97, E = 40, D = 48, H = 3, F = 72, LAYERS = 2, MAXPOS = 64, LABELS = 5 };

/* Every weight of the test model lives in one static pool. */
static float pool[65536];
static size_t pool_used;

static const float *weights(size_t n, float scale, float offset)
{
    if (pool_used + n > sizeof pool / sizeof pool[0]) {
        fprintf(stderr, "test model does not fit its weight pool\n");
        exit(1);
    }
    float *w = pool + pool_used;
    pool_used += n;
    for (size_t i = 0; i < n; i++)
        w[i] = offset + check_rnd(scale);
    return w;
}

static void build_model(rf_model *m, rf_head_kind head, bool pooler)
{
    memset(m, 0, sizeof *m);
    pool_used = 0;
    rf_hparams *hp = &m->hp;
    hp->vocab_size = V;
    hp->embedding_size = E;
    hp->hidden_size = D;
    hp->num_layers = LAYERS;
    hp->num_heads = H;
    hp->intermediate_size = F;
    hp->max_position = MAXPOS;
    hp->type_vocab_size = 2;
    hp->layer_norm_eps = 1e-12f;
    hp->norm_type = RF_NORM_LAYER;
    hp->use_bias = true;
    hp->hidden_act = RF_ACT_GELU_NEW;
    hp->rotary_value = true;
    hp->head = head;
    hp->num_labels = LABELS;
    hp->has_pooler = pooler;
    hp->pooler_act = RF_ACT_TANH;
    rf_weights *w = &m->w;
    static rf_layer_weights layers[LAYERS];
    w->token_embd = weights((size_t)V * E, 0.5f, 0);
    w->token_types = weights(2 * E, 0.5f, 0);
    w->embd_norm_w = weights(E, 0.1f, 1);
    w->embd_norm_b = weights(E, 0.1f, 0);
    w->embd_proj_w = weights((size_t)D * E, 0.2f, 0);
    w->embd_proj_b = weights(D, 0.1f, 0);
    for (int i = 0; i < LAYERS; i++) {
        rf_layer_weights *l = &layers[i];
        /* Q, K, V weights back to back, then their biases, as in a file */
        l->attn_q_w = weights((size_t)D * D, 0.4f, 0);
        l->attn_k_w = weights((size_t)D * D, 0.4f, 0);
        l->attn_v_w = weights((size_t)D * D, 0.2f, 0);
        l->attn_q_b = weights(D, 0.1f, 0);
        l->attn_k_b = weights(D, 0.1f, 0);
        l->attn_v_b = weights(D, 0.1f, 0);
        l->attn_out_w = weights((size_t)D * D, 0.2f, 0);
        l->attn_out_b = weights(D, 0.1f, 0);
        l->attn_norm_w = weights(D, 0.1f, 1);
        l->attn_norm_b = weights(D, 0.1f, 0);
        l->ffn_up_w = weights((size_t)F * D, 0.2f, 0);
        l->ffn_up_b = weights(F, 0.1f, 0);
        l->ffn_down_w = weights((size_t)D * F, 0.2f, 0);
        l->ffn_down_b = weights(D, 0.1f, 0);
        l->out_norm_w = weights(D, 0.1f, 1);
        l->out_norm_b = weights(D, 0.1f, 0);
    }
    w->layers = layers;
    if (pooler) {
        w->pooler_w = weights((size_t)D * D, 0.2f, 0);
        w->pooler_b = weights(D, 0.1f, 0);
    }
    w->mlm_dense_w = weights((size_t)E * D, 0.2f, 0);
    w->mlm_dense_b = weights(E, 0.1f, 0);
    w->mlm_norm_w = weights(E, 0.1f, 1);
    w->mlm_norm_b = weights(E, 0.1f, 0);
    w->mlm_decoder_w = w->token_embd;
    w->mlm_decoder_b = weights(V, 0.1f, 0);
    w->cls_dense_w = weights((size_t)D * D, 0.2f, 0);
    w->cls_dense_b = weights(D, 0.1f, 0);
    w->cls_out_w = weights((size_t)LABELS * D, 0.2f, 0);
    w->cls_out_b = weights(LABELS, 0.1f, 0);
    w->token_cls_w = w->cls_out_w;
    w->token_cls_b = w->cls_out_b;
    w->qa_w = weights(2 * D, 0.2f, 0);
    w->qa_b = weights(2, 0.1f, 0);
    rf_error err;
    m->owned_qkv = NULL;
    CHECK(rf_model_stack_qkv(m, "test model", &err) == RF_OK && !m->owned_qkv &&
              layers[0].attn_qkv_w == layers[0].attn_q_w && layers[0].attn_qkv_b == layers[0].attn_q_b,
          "Q, K, V lying back to back are used in place");
}

/* ==== creating a context ==== */

static void test_create(void)
{
    rf_model m;
    build_model(&m, RF_HEAD_NONE, false);
    rf_error err = {{0}};
    rf_context *ctx = (rf_context *)&err;
    rf_context_params p = rf_context_default_params();
    p.max_seq_len = MAXPOS + 1;
    CHECK(rf_context_create(&m, &p, &ctx, &err) == RF_ERR_INPUT && ctx == NULL &&
              strstr(err.message, "max_position"),
          "max_seq_len over max_position refused: %s", err.message);
    p = rf_context_default_params();
    p.max_batch = 0;
    CHECK(rf_context_create(&m, &p, &ctx, &err) == RF_ERR_INPUT, "max_batch 0 refused");
    m.hp.num_heads = 5;
    CHECK(rf_context_create(&m, NULL, &ctx, &err) == RF_ERR_UNSUPPORTED,
          "hidden 48 with 5 heads refused: %s", err.message);
    m.hp.num_heads = 32; /* 48 / 32: not a whole head size */
    CHECK(rf_context_create(&m, NULL, &ctx, &err) == RF_ERR_UNSUPPORTED, "32 heads refused");
    m.hp.num_heads = 16; /* head size 3: odd, RoPE needs pairs */
    CHECK(rf_context_create(&m, NULL, &ctx, &err) == RF_ERR_UNSUPPORTED, "odd head size refused");
    m.hp.num_heads = H;
    CHECK(rf_context_create(&m, NULL, &ctx, &err) == RF_OK, "default params: %s", err.message);
    rf_context_free(ctx);
    rf_context_free(NULL);
    CHECK(rf_context_create(NULL, NULL, &ctx, &err) == RF_ERR_INPUT, "NULL model refused");
}

/* ==== bad batches and output requests ==== */

static void expect_input_error(rf_context *ctx, const rf_batch *b, rf_outputs *o,
                               const char *needle, const char *what)
{
    rf_error err = {{0}};
    rf_status st = rf_forward(ctx, b, o, &err);
    CHECK(st == RF_ERR_INPUT && strstr(err.message, needle), "%s: status %d, message '%s'", what,
          st, err.message);
}

static void test_validation(void)
{
    rf_model m;
    build_model(&m, RF_HEAD_MLM, false);
    rf_context_params p = {.max_batch = 2, .max_seq_len = 16, .n_threads = 2};
    rf_context *ctx;
    rf_error err;
    if (rf_context_create(&m, &p, &ctx, &err) != RF_OK) {
        CHECK(0, "context: %s", err.message);
        return;
    }
    int32_t ids[3 * 20] = {0}, types[3 * 20] = {0}, mask[3 * 20];
    for (int i = 0; i < 60; i++)
        mask[i] = 1, ids[i] = i % V;
    float hidden[3 * 20 * D], logits[2 * 16 * V];
    rf_outputs out = {.last_hidden_state = hidden};
    rf_batch b = {3, 4, ids, types, mask};
    expect_input_error(ctx, &b, &out, "batch of 3", "batch over max_batch");
    b = (rf_batch){1, 0, ids, types, mask};
    expect_input_error(ctx, &b, &out, "length 0", "empty sequence");
    b = (rf_batch){1, MAXPOS + 1, ids, types, mask};
    expect_input_error(ctx, &b, &out, "max_position_embeddings (64)", "longer than the model");
    b = (rf_batch){1, 17, ids, types, mask};
    expect_input_error(ctx, &b, &out, "max_seq_len (16)", "longer than the context");
    b = (rf_batch){1, 4, NULL, types, mask};
    expect_input_error(ctx, &b, &out, "input_ids", "no ids");
    b = (rf_batch){2, 4, ids, types, mask};
    ids[6] = V;
    expect_input_error(ctx, &b, &out, "input_ids[1][2] = 97", "id past the vocab");
    ids[6] = -1;
    expect_input_error(ctx, &b, &out, "input_ids[1][2] = -1", "negative id");
    ids[6] = 6;
    types[3] = 2;
    expect_input_error(ctx, &b, &out, "token_type_ids[0][3] = 2", "type id past type_vocab_size");
    types[3] = 0;
    mask[5] = 2;
    expect_input_error(ctx, &b, &out, "attention_mask[1][1] = 2", "mask not 0/1");
    mask[5] = 1;
    float pooled[2 * D];
    out.pooled = pooled;
    expect_input_error(ctx, &b, &out, "no pooler", "pooled without a pooler");
    out.pooled = NULL;
    float start[8];
    out.start_logits = start;
    expect_input_error(ctx, &b, &out, "masked-LM head", "start logits from an MLM model");
    out.start_logits = NULL;
    int32_t positions[2] = {1, 4};
    out.logits = logits;
    out.mlm_positions = positions;
    out.n_mlm_positions = 2;
    expect_input_error(ctx, &b, &out, "position 4", "MLM position past the sequence");
    out.n_mlm_positions = 0;
    expect_input_error(ctx, &b, &out, "0 MLM positions", "no MLM positions");
    out.n_mlm_positions = 1;
    CHECK(rf_forward(ctx, &b, &out, &err) == RF_OK, "valid MLM batch: %s", err.message);
    CHECK(rf_forward(NULL, &b, &out, &err) == RF_ERR_INPUT, "NULL context");
    rf_context_free(ctx);

    build_model(&m, RF_HEAD_NONE, false);
    rf_context_create(&m, &p, &ctx, &err);
    out = (rf_outputs){.last_hidden_state = hidden, .logits = logits};
    expect_input_error(ctx, &b, &out, "no head", "logits from a model without a head");
    rf_context_free(ctx);
}

/* ==== numbers that must not depend on how the batch is run ==== */

typedef struct {
    float *last, *hidden, *pooled, *logits, *start, *end;
} outputs;

static rf_status run(const rf_model *m, int n_threads, const rf_batch *b, outputs *o)
{
    rf_context_params p = {.max_batch = 4, .max_seq_len = MAXPOS, .n_threads = n_threads};
    rf_context *ctx;
    rf_error err;
    rf_status st = rf_context_create(m, &p, &ctx, &err);
    size_t BL = (size_t)b->batch * b->seq_len;
    o->last = calloc(BL * D, sizeof(float));
    o->hidden = calloc((LAYERS + 1) * BL * D, sizeof(float));
    o->pooled = m->hp.has_pooler ? calloc((size_t)b->batch * D, sizeof(float)) : NULL;
    o->logits = m->hp.head == RF_HEAD_QA || m->hp.head == RF_HEAD_NONE
                    ? NULL
                    : calloc(BL * (m->hp.head == RF_HEAD_MLM ? V : LABELS), sizeof(float));
    o->start = m->hp.head == RF_HEAD_QA ? calloc(BL, sizeof(float)) : NULL;
    o->end = m->hp.head == RF_HEAD_QA ? calloc(BL, sizeof(float)) : NULL;
    rf_outputs out = {o->last, o->hidden, o->pooled, o->logits, o->start, o->end, NULL, 0};
    if (st == RF_OK)
        st = rf_forward(ctx, b, &out, &err);
    CHECK(st == RF_OK, "forward on %d threads: %s", n_threads, err.message);
    rf_context_free(ctx);
    return st;
}

static void free_outputs(outputs *o)
{
    free(o->last);
    free(o->hidden);
    free(o->pooled);
    free(o->logits);
    free(o->start);
    free(o->end);
}

static void test_invariance(rf_head_kind head, const char *name)
{
    rf_model m;
    build_model(&m, head, true);
    enum { B = 3, L = 50 };
    const int lengths[B] = {50, 37, 5};
    int32_t ids[B * L], types[B * L], mask[B * L];
    for (int b = 0; b < B; b++)
        for (int t = 0; t < L; t++) {
            int real = t < lengths[b];
            ids[b * L + t] = real ? 1 + (b * 31 + t * 7) % (V - 1) : 0;
            types[b * L + t] = real && t > lengths[b] / 2;
            mask[b * L + t] = real;
        }
    rf_batch batch = {B, L, ids, types, mask};
    outputs o1, o2, o3;
    if (run(&m, 1, &batch, &o1) || run(&m, 2, &batch, &o2) || run(&m, 3, &batch, &o3))
        return;
    size_t BL = (size_t)B * L;
    float d = check_max_nan(check_max_abs_diff(o1.last, o2.last, BL * D),
                            check_max_abs_diff(o1.last, o3.last, BL * D));
    CHECK(d <= 1e-5f, "%s: 1, 2 and 3 threads agree: max |diff| %g", name, d);
    CHECK(check_max_abs_diff(o1.hidden + LAYERS * BL * D, o1.last, BL * D) == 0.0f,
          "%s: the last hidden_states layer is last_hidden_state", name);
    if (o1.logits) {
        size_t n = head == RF_HEAD_MLM ? BL * V : head == RF_HEAD_SEQ_CLS ? B * LABELS : BL * LABELS;
        d = check_max_abs_diff(o1.logits, o2.logits, n);
        CHECK(d <= 1e-4f, "%s: logits on 1 and 2 threads agree: max |diff| %g", name, d);
    }

    /* each sequence alone, at its real length */
    for (int b = 0; b < B; b++) {
        rf_batch one = {1, lengths[b], ids + b * L, types + b * L, mask + b * L};
        outputs a;
        if (run(&m, 2, &one, &a))
            continue;
        size_t n = (size_t)lengths[b];
        d = check_max_abs_diff(a.last, o2.last + (size_t)b * L * D, n * D);
        d = check_max_nan(d, check_max_abs_diff(a.pooled, o2.pooled + (size_t)b * D, D));
        if (head == RF_HEAD_SEQ_CLS)
            d = check_max_nan(d, check_max_abs_diff(a.logits, o2.logits + (size_t)b * LABELS, LABELS));
        if (head == RF_HEAD_TOKEN_CLS)
            d = check_max_nan(d, check_max_abs_diff(a.logits, o2.logits + (size_t)b * L * LABELS,
                                                    n * LABELS));
        if (head == RF_HEAD_MLM)
            d = check_max_nan(d, check_max_abs_diff(a.logits, o2.logits + (size_t)b * L * V, n * V));
        if (head == RF_HEAD_QA) {
            d = check_max_nan(d, check_max_abs_diff(a.start, o2.start + (size_t)b * L, n));
            d = check_max_nan(d, check_max_abs_diff(a.end, o2.end + (size_t)b * L, n));
        }
        CHECK(d <= 1e-5f, "%s: sequence %d alone vs padded: max |diff| %g", name, b, d);
        free_outputs(&a);
    }
    free_outputs(&o1);
    free_outputs(&o2);
    free_outputs(&o3);
}

/* MLM logits at chosen positions equal the full logits at those rows. */
static void test_mlm_positions(void)
{
    rf_model m;
    build_model(&m, RF_HEAD_MLM, false);
    enum { B = 2, L = 9, P = 3 };
    int32_t ids[B * L];
    for (int i = 0; i < B * L; i++)
        ids[i] = (i * 13) % V;
    rf_batch batch = {B, L, ids, NULL, NULL};
    rf_context_params p = {.max_batch = B, .max_seq_len = L, .n_threads = 2};
    rf_context *ctx;
    rf_error err;
    CHECK(rf_context_create(&m, &p, &ctx, &err) == RF_OK, "context: %s", err.message);
    float *full = malloc(sizeof(float) * B * L * V), *at = malloc(sizeof(float) * B * P * V);
    int32_t positions[P] = {8, 0, 3};
    rf_outputs o1 = {.logits = full};
    rf_outputs o2 = {.logits = at, .mlm_positions = positions, .n_mlm_positions = P};
    CHECK(rf_forward(ctx, &batch, &o1, &err) == RF_OK && rf_forward(ctx, &batch, &o2, &err) == RF_OK,
          "MLM forward: %s", err.message);
    float d = 0.0f;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < P; j++)
            d = check_max_nan(d, check_max_abs_diff(at + ((size_t)b * P + j) * V,
                                                    full + ((size_t)b * L + positions[j]) * V, V));
    CHECK(d <= 1e-5f, "logits_at equals logits at the positions: max |diff| %g", d);
    free(full);
    free(at);
    rf_context_free(ctx);
}

/* A sequence whose mask is all 0 attends uniformly, as HF's finfo.min mask. */
static void test_fully_masked(void)
{
    rf_model m;
    build_model(&m, RF_HEAD_NONE, false);
    int32_t ids[6] = {5, 6, 7, 8, 9, 10}, mask[6] = {0};
    rf_batch b = {1, 6, ids, NULL, mask};
    outputs o;
    if (run(&m, 2, &b, &o) == RF_OK) {
        int finite = 1;
        for (int i = 0; i < 6 * D; i++)
            finite &= isfinite(o.last[i]);
        CHECK(finite, "fully masked sequence gives finite outputs");
    }
    free_outputs(&o);
}

/* Q, K and V that do not lie back to back (a file with another tensor
 * order) are copied into one stacked block: the same numbers. */
static void test_qkv_copied(void)
{
    rf_model m;
    build_model(&m, RF_HEAD_NONE, false);
    enum { B = 2, L = 9 };
    int32_t ids[B * L], mask[B * L];
    for (int t = 0; t < B * L; t++) {
        ids[t] = 1 + t * 5 % (V - 1);
        mask[t] = t < L + 6;
    }
    rf_batch batch = {B, L, ids, NULL, mask};
    outputs in_place, copied;
    if (run(&m, 2, &batch, &in_place))
        return;
    static rf_layer_weights moved[LAYERS];
    float *k_elsewhere[LAYERS];
    for (int i = 0; i < LAYERS; i++) {
        moved[i] = m.w.layers[i];
        k_elsewhere[i] = malloc((size_t)D * D * sizeof(float));
        memcpy(k_elsewhere[i], moved[i].attn_k_w, (size_t)D * D * sizeof(float));
        moved[i].attn_k_w = k_elsewhere[i];
        moved[i].attn_qkv_w = moved[i].attn_qkv_b = NULL;
    }
    rf_model m2 = m;
    m2.w.layers = moved;
    rf_error err;
    CHECK(rf_model_stack_qkv(&m2, "test model", &err) == RF_OK && m2.owned_qkv &&
              moved[0].attn_qkv_w == m2.owned_qkv,
          "Q, K, V apart are copied into one stacked block");
    if (!run(&m2, 2, &batch, &copied)) {
        float d = check_max_abs_diff(in_place.last, copied.last, (size_t)B * L * D);
        CHECK(d == 0.0f, "stacked copy gives the same hidden states: max |diff| %g", d);
        free_outputs(&copied);
    }
    free_outputs(&in_place);
    free(m2.owned_qkv);
    for (int i = 0; i < LAYERS; i++)
        free(k_elsewhere[i]);
}

/* ==== growing a context ==== */

/* A context resized from 1 x 4 tokens to 2 x MAXPOS gives what a context
 * created at that size gives; a refused resize leaves it working. */
static void test_resize(void)
{
    rf_model m;
    build_model(&m, RF_HEAD_NONE, false);
    rf_error err;
    rf_context_params p = rf_context_default_params();
    p.max_batch = 1;
    p.max_seq_len = 4;
    p.n_threads = 2;
    rf_context *small, *big;
    CHECK(rf_context_create(&m, &p, &small, &err) == RF_OK, "small context: %s", err.message);
    p.max_batch = 2;
    p.max_seq_len = MAXPOS;
    CHECK(rf_context_create(&m, &p, &big, &err) == RF_OK, "big context: %s", err.message);
    int32_t ids[2 * MAXPOS], mask[2 * MAXPOS];
    for (int i = 0; i < 2 * MAXPOS; i++) {
        ids[i] = (int32_t)(i * 7 % V);
        mask[i] = i < MAXPOS + 5;
    }
    rf_batch b = {2, MAXPOS, ids, NULL, mask};
    float *x = calloc((size_t)2 * MAXPOS * D, sizeof *x), *y = calloc((size_t)2 * MAXPOS * D, sizeof *y);
    rf_outputs ox = {.last_hidden_state = x}, oy = {.last_hidden_state = y};
    CHECK(rf_forward(small, &b, &ox, &err) == RF_ERR_INPUT, "2 x MAXPOS is too big before resizing");
    CHECK(rf_context_resize(small, 2, MAXPOS + 1, &err) == RF_ERR_INPUT &&
              strstr(err.message, "max_seq_len"),
          "resize past max_position refused: %s", err.message);
    rf_batch b1 = {1, 4, ids, NULL, NULL};
    CHECK(rf_forward(small, &b1, &ox, &err) == RF_OK, "still runs after a refused resize: %s",
          err.message);
    CHECK(rf_context_resize(small, 2, MAXPOS, &err) == RF_OK, "resize: %s", err.message);
    CHECK(rf_forward(small, &b, &ox, &err) == RF_OK && rf_forward(big, &b, &oy, &err) == RF_OK,
          "forward after resize: %s", err.message);
    float d = check_max_abs_diff(x, y, (size_t)2 * MAXPOS * D);
    CHECK(d == 0.0f, "resized context = one created at that size: max |diff| %g", d);
    free(x);
    free(y);
    rf_context_free(small);
    rf_context_free(big);
}

/* ==== scratch size ==== */

/* Buffers of different phases share memory (context.h): x [T][D], one
 * region of max(T 3D, R F, T E) floats and one of T max(D, E), where R is
 * the FFN's block of rows (every row in f32); a buffer per use would take
 * T (E + 3D + D + D + F + D + max(D, E)), 496 T floats for this model
 * against 240 T. Besides those: each thread's attention scores, the mask
 * and the RoPE tables, and with int8 the quantized input of the larger of
 * a [T][D] and an [R][F] product (and, on CPUs with the bf16 kernel,
 * attention's bf16 scratch); each buffer starts on 16 floats. */
static void test_scratch_size(void)
{
    rf_model m;
    build_model(&m, RF_HEAD_MLM, true);
    struct {
        int B, L, threads;
        rf_compute_type compute;
    } shapes[] = {{1, 4, 1, RF_COMPUTE_F32}, {3, MAXPOS, 2, RF_COMPUTE_F32},
                  {8, MAXPOS, 3, RF_COMPUTE_INT8}, {20, MAXPOS, 2, RF_COMPUTE_INT8}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (shapes[i].compute == RF_COMPUTE_INT8 && !rf_int8_supported())
            continue;
        rf_context_params p = rf_context_default_params();
        p.max_batch = shapes[i].B;
        p.max_seq_len = shapes[i].L;
        p.n_threads = shapes[i].threads;
        p.compute = shapes[i].compute;
        rf_context *ctx;
        rf_error err;
        if (rf_context_create(&m, &p, &ctx, &err) != RF_OK) {
            CHECK(0, "context %d x %d: %s", p.max_batch, p.max_seq_len, err.message);
            continue;
        }
        size_t T = (size_t)p.max_batch * (size_t)p.max_seq_len, L = (size_t)p.max_seq_len;
        size_t R = p.compute == RF_COMPUTE_F32 || T < RF_FFN_ROWS ? T : RF_FFN_ROWS;
        size_t wide = T * 3 * D > R * F ? T * 3 * D : R * F;
        if (T * E > wide)
            wide = T * E;
        size_t floats = T * D + wide + T * (D > E ? D : E) +
                        (size_t)p.n_threads * rf_attention_scratch((int)L) +
                        (size_t)p.max_batch * L + L * (D / H) + 8 * 16;
        if (p.compute == RF_COMPUTE_INT8) {
            size_t td = rf_int8_scratch_size((int)T, D), rf = rf_int8_scratch_size((int)R, F);
            floats += (td > rf ? td : rf) / sizeof(float) + 16;
            /* attention in bf16 where the bf16 kernel is fast */
            if (rf_bf16_attention_fast())
                floats += (rf_attention_bf16_kv_size(p.max_batch, (int)L, H, D / H) +
                           (size_t)p.n_threads * rf_attention_bf16_scratch((int)L, D / H) + 1) / 2 + 16;
        }
        CHECK(ctx->ffn_rows == (int)R && ctx->arena_bytes <= floats * sizeof(float),
              "%d x %d tokens, %d threads: FFN blocks of %d rows (%zu expected), %zu bytes of "
              "scratch, at most %zu expected", p.max_batch, p.max_seq_len, p.n_threads,
              ctx->ffn_rows, R, ctx->arena_bytes, floats * sizeof(float));
        rf_context_free(ctx);
    }
    rf_packed_weights_free(&m.packed);
}

int main(void)
{
    test_create();
    test_validation();
    test_invariance(RF_HEAD_MLM, "mlm");
    test_invariance(RF_HEAD_SEQ_CLS, "seq cls");
    test_invariance(RF_HEAD_TOKEN_CLS, "token cls");
    test_invariance(RF_HEAD_QA, "qa");
    test_mlm_positions();
    test_fully_masked();
    test_qkv_copied();
    test_resize();
    test_scratch_size();
    return check_done();
}
