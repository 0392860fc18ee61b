/*
 * test_int8.c — RF_COMPUTE_INT8 against the engine's f32 result on every
 * case of every reference model (the f32 result is itself checked against
 * HuggingFace by test_parity): the cosine of each real token's
 * last_hidden_state row, and the argmax of the classification, token
 * classification and QA logits. Also on tiny-word-cls and tiny-qa
 * converted with --dtype q8, whose int8 weights are then read from the
 * file as they are.
 *
 * Asserted: every row's cosine >= 0.998 (0.9977 with attention in bf16:
 * the rules below say why); sequence classification and QA
 * argmax equal on every case; token classification equal on >= 98% of
 * tokens per model, every token that differs being a near tie in f32 (top
 * two within rule.argmax_tie, about what int8 moves a logit of these models by).
 * The target is 99% of tokens, which tiny-char-proj misses (1136 of 1152):
 * its random weights leave 7% of its tokens within 0.05 of a tie, and
 * quantizing its weights alone (inputs kept f32) already gives 1137. Prints the minimum cosine,
 * the max |diff| and the argmax agreement per model. Where the CPU has
 * the bf16 kernel, attention's two products run in bf16 and the same rules
 * hold (their rounding, 2^-8 relative per operand, moves a hidden state
 * far less than quantizing the Linear products). Two int8 contexts of
 * one model share one packed copy of its weights. The FFN's blocks of
 * rows change no result (check_ffn_blocks). On a CPU without AVX2 the
 * context must be refused with RF_ERR_UNSUPPORTED.
 */
#include "kernels/gemm_bf16.h"
#include "kernels/gemm_int8.h"
#include "kernels/kernel_choice.h"
#include "model/context.h"

#include "../check.h"
#include "../convert_temp.h"
#include "compute_compare.h"
#include "../reference_cases.h"

#include <dirent.h>
#include <sys/stat.h>
#include <math.h>
#include <unistd.h>

/* Every real token within the rule's cosine of f32; f32 logits whose top
 * two are within 0.2 (about what int8 moves a logit of these models by)
 * may swap, in token classification only. These measure the quantization
 * through the model; every build (AVX2, VNNI) computes the same integer
 * sums exactly and differs from another only in the float rounding of the
 * epilogue (test_kernels bounds it at 8 u of its terms), about 1e-6 of
 * what quantization moves, so the rules hold on every build alike.
 *
 * The cosines are docs/compute.md's. Attention in f32: the lowest stated
 * is 0.99803 (tiny-word-cls from a q8 file; 0.99841 from f32 weights),
 * the same to 6 digits on AVX2 (AMD Zen 3) as documented; the bound 0.998
 * leaves 3e-5 for the f32 reference's own last bits, which differ with
 * OpenBLAS's kernels by about 1e-6 of a hidden state. Attention in bf16
 * (where the bf16 kernel is fast): for small errors 1 - cosine adds up,
 * so int8's 1.97e-3 plus bf16 compute's 2.96e-4 (its lowest, 0.999704,
 * with every product in bf16, attention's among them) gives 0.99773,
 * bounded at 0.9977. */
static const compare_rule rule_attention_f32 = {"int8", 0.998, 0.2f, false};
static const compare_rule rule_attention_bf16 = {"int8", 0.9977, 0.2f, false};
static const compare_rule *rule = &rule_attention_f32;

#define MIN_TOKEN_AGREEMENT 0.98

static void check_model(const char *load_path, const char *case_dir, const char *label)
{
    compare_pair p;
    rf_context *second = NULL;
    if (!compare_pair_open(&p, load_path, RF_COMPUTE_INT8, label))
        return;
    rf_error err;
    rf_context_params cp = rf_context_default_params();
    cp.compute = RF_COMPUTE_INT8;
    cp.max_batch = 1;
    rf_status st = rf_context_create(p.model, &cp, &second, &err);
    CHECK(st == RF_OK, "%s: a second int8 context: %s", label, err.message);
    if (st != RF_OK)
        goto done;
    CHECK(p.other->int8_layers && second->int8_layers == p.other->int8_layers &&
              p.model->packed.int8_layers == p.other->int8_layers,
          "%s: int8 contexts share the model's packed weights", label);
    /* attention's products run in bf16 where the bf16 kernel is faster than
       f32 (kernel_choice.h's rule): the rules below then hold with them */
    if (rf_attention_in_bf16())
        CHECK(p.other->attn_bf16 && !p.f32->attn_bf16,
              "%s: int8 compute runs attention in bf16 on this CPU", label);
    else
        CHECK(!p.other->attn_bf16,
              "%s: int8 compute keeps attention in f32 without a fast bf16 kernel", label);
    const rf_hparams *hp = rf_model_hparams(p.model);
    compare_stats s = compare_cases(rule, label, hp, case_dir, p.f32, p.other, COMPARE_BATCH);
    if (hp->head == RF_HEAD_TOKEN_CLS)
        CHECK(s.agree >= MIN_TOKEN_AGREEMENT * s.total, "%s: token labels agree on %d of %d",
              label, s.agree, s.total);
done:
    rf_context_free(second);
    compare_pair_free(&p);
}

static long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* The model converted with --dtype q8 (every matrix int8, embeddings and
 * heads too): a smaller file; its layer matrices packed for int8 compute
 * are exactly those packed from the f32 weights (the same quantization,
 * read from the file instead of made at load); int8 compute from it and
 * f32 compute from it (its weights widened) both stay near f32 on every
 * case, by the same criteria as check_model. */
static void check_q8(const char *dir, const char *label)
{
    char *q8_path = convert_temp(dir, RF_DTYPE_Q8), *f32_path = convert_temp(dir, RF_DTYPE_F32);
    rf_model *model = NULL, *q8 = NULL;
    rf_context *ctx[3] = {NULL}; /* f32 on the f32 file; int8 and f32 on the q8 file */
    char path[1600];
    snprintf(path, sizeof path, "%s/cases.jsonl", dir);
    char *cases = check_read_file(path, NULL);
    rf_error err;
    rf_status st = q8_path && f32_path && cases ? RF_OK : RF_ERR_IO;
    if (st == RF_OK) {
        long a = file_size(f32_path), b = file_size(q8_path);
        CHECK(b > 0 && b < a, "%s: q8 file %ld bytes, f32 %ld", label, b, a);
        st = rf_model_load(f32_path, &model, &err);
    }
    if (st == RF_OK)
        st = rf_model_load(q8_path, &q8, &err);
    CHECK(st == RF_OK, "%s: load: %s", label, st == RF_OK ? "" : err.message);
    if (st != RF_OK)
        goto done;
    CHECK(rf_model_hparams(q8)->dtype == RF_DTYPE_Q8 && !q8->w.layers[0].ffn_up_w &&
              q8->w.layers[0].ffn_up_stored.data && !q8->w.token_embd && q8->w.token_embd_stored.data,
          "%s: q8 file loaded with its layer matrices and word embeddings int8 only", label);
    rf_context_params cp = rf_context_default_params();
    cp.max_batch = 8;
    cp.n_threads = 2;
    st = rf_context_create(model, &cp, &ctx[0], &err);
    cp.compute = RF_COMPUTE_INT8;
    if (st == RF_OK)
        st = rf_context_create(q8, &cp, &ctx[1], &err);
    CHECK(st == RF_OK && !q8->w.layers[0].ffn_up_w, "%s: int8 context on q8: %s", label,
          st == RF_OK ? "made an f32 copy" : err.message);
    cp.compute = RF_COMPUTE_F32;
    if (st == RF_OK)
        st = rf_context_create(q8, &cp, &ctx[2], &err);
    CHECK(st == RF_OK, "%s: contexts: %s", label, st == RF_OK ? "" : err.message);
    if (st != RF_OK)
        goto done;
    const rf_hparams *hp = rf_model_hparams(model);
    st = rf_model_pack(model, RF_COMPUTE_INT8, &err);
    int same = 0;
    for (int l = 0; st == RF_OK && l < hp->num_layers; l++) {
        const rf_int8_layer *a = &model->packed.int8_layers[l], *b = &q8->packed.int8_layers[l];
        int D = hp->hidden_size, F = hp->intermediate_size;
        same += !memcmp(a->attn_qkv.panels, b->attn_qkv.panels, rf_int8_packed_size(3 * D, D)) &&
                !memcmp(a->attn_qkv.scale, b->attn_qkv.scale, 3 * (size_t)D * sizeof(float)) &&
                !memcmp(a->ffn_down.panels, b->ffn_down.panels, rf_int8_packed_size(D, F)) &&
                !memcmp(a->ffn_down.scale, b->ffn_down.scale, (size_t)D * sizeof(float));
    }
    CHECK(same == hp->num_layers, "%s: int8 weights from the q8 file equal those from f32 in %d "
          "of %d layers", label, same, hp->num_layers);
    compare_stats s[2] = {{.min_cosine = 1.0}, {.min_cosine = 1.0}};
    for (char *line = strtok(cases, "\n"); line; line = strtok(NULL, "\n")) {
        test_case c;
        if (read_case(line, &c) != 0 || c.B > cp.max_batch) {
            free_case(&c);
            continue;
        }
        outputs o[3] = {{0}};
        bool ok = true;
        for (int i = 0; i < 3; i++)
            ok = run(ctx[i], hp, &c, &o[i], &err) == RF_OK && ok;
        CHECK(ok, "%s %s: forward: %s", label, c.id, err.message);
        if (ok) {
            compare_case(rule, label, hp, &c, &o[0], &o[1], &s[0]);
            compare_case(rule, label, hp, &c, &o[0], &o[2], &s[1]);
        }
        for (int i = 0; i < 3; i++)
            free_outputs(&o[i]);
        free_case(&c);
    }
    for (int i = 0; i < 2; i++)
        printf("  %-26s %s from the q8 file vs f32: min cosine %.6f, max |diff| %.3g, argmax "
               "agrees %d/%d\n",
               label, i ? "f32" : "int8", s[i].min_cosine, s[i].max_diff, s[i].agree, s[i].total);
done:
    for (int i = 0; i < 3; i++)
        rf_context_free(ctx[i]);
    rf_model_free(model);
    rf_model_free(q8);
    free(cases);
    if (q8_path)
        unlink(q8_path);
    if (f32_path)
        unlink(f32_path);
    free(q8_path);
    free(f32_path);
}

/* A --dtype bf16 file: int8 compute packs its layers without an f32 copy
 * of them, and stays near f32 compute from the same file (which widens
 * them when its context is made). */
static void check_half_file(const char *dir, const char *label)
{
    char *path = convert_temp(dir, RF_DTYPE_BF16);
    rf_model *model = NULL;
    rf_context *ctx = NULL;
    rf_error err;
    if (path && rf_model_load(path, &model, &err) == RF_OK) {
        rf_context_params cp = rf_context_default_params();
        cp.compute = RF_COMPUTE_INT8;
        rf_status st = rf_context_create(model, &cp, &ctx, &err);
        CHECK(st == RF_OK && !model->w.layers[0].ffn_up_w && !model->packed.widened_layers,
              "%s (bf16 file): int8 context without f32 layers: %s", label,
              st == RF_OK ? "widened" : err.message);
        char name[300];
        snprintf(name, sizeof name, "%s (bf16 file)", label);
        check_model(path, dir, name);
    } else {
        CHECK(0, "%s (bf16 file): load", label);
    }
    rf_context_free(ctx);
    rf_model_free(model);
    if (path)
        unlink(path);
    free(path);
}

/* The FFN runs on blocks of RF_FFN_ROWS rows: in a batch of 20 x 64
 * tokens the last four sequences are in the second block (rows 1024 to
 * 1279), and they come out exactly as in a batch of 16 (one block) made of
 * sequences 4 to 19. (The model must have E == D: an f32 embeddings
 * projection depends on the rows around, by ~1e-6, which quantizing can
 * turn into more.) */
static void check_ffn_blocks(const char *dir, const char *label)
{
    enum { B = 20, L = 64, SHIFT = 4, FIRST_IN_BLOCK_2 = RF_FFN_ROWS / L };
    rf_model *model = NULL;
    rf_context *ctx = NULL;
    rf_error err;
    rf_context_params cp = rf_context_default_params();
    cp.max_batch = B;
    cp.max_seq_len = L;
    cp.n_threads = 2;
    cp.compute = RF_COMPUTE_INT8;
    rf_status st = rf_model_load(dir, &model, &err);
    if (st == RF_OK)
        st = rf_context_create(model, &cp, &ctx, &err);
    CHECK(st == RF_OK, "%s: int8 context: %s", label, st == RF_OK ? "" : err.message);
    if (st != RF_OK) {
        rf_model_free(model);
        return;
    }
    const rf_hparams *hp = rf_model_hparams(model);
    static int32_t ids[B * L];
    for (int i = 0; i < B * L; i++)
        ids[i] = 5 + (i * 13 + i / L) % (hp->vocab_size - 5);
    size_t seq = (size_t)L * (size_t)hp->hidden_size;
    float *all = calloc(B * seq, sizeof *all), *part = calloc((B - SHIFT) * seq, sizeof *part);
    rf_batch whole = {B, L, ids, NULL, NULL}, last = {B - SHIFT, L, ids + SHIFT * L, NULL, NULL};
    rf_outputs o_all = {.last_hidden_state = all}, o_part = {.last_hidden_state = part};
    float d = INFINITY;
    if (all && part && rf_forward(ctx, &whole, &o_all, &err) == RF_OK &&
        rf_forward(ctx, &last, &o_part, &err) == RF_OK)
        d = check_max_abs_diff(all + FIRST_IN_BLOCK_2 * seq, part + (FIRST_IN_BLOCK_2 - SHIFT) * seq,
                               (B - FIRST_IN_BLOCK_2) * seq);
    CHECK(hp->embedding_size == hp->hidden_size && ctx->ffn_rows == RF_FFN_ROWS && d == 0.0f,
          "%s: int8 FFN in blocks of %d rows: the second block's sequences as in one block, max "
          "|diff| %g", label, ctx->ffn_rows, d);
    free(all);
    free(part);
    rf_context_free(ctx);
    rf_model_free(model);
}

/* Each reference model; q8 files, a half-precision file and the FFN's row
 * blocks on the models that have them. */
static void check_reference_model(const char *dir, const char *name, void *user)
{
    (void)user;
    check_model(dir, dir, name);
    if (!strcmp(name, "tiny-word-cls") || !strcmp(name, "tiny-qa"))
        check_q8(dir, name);
    if (!strcmp(name, "tiny-word-cls"))
        check_half_file(dir, name);
    if (!strcmp(name, "small-fp16"))
        check_ffn_blocks(dir, name);
}

int main(void)
{
    /* each bound passes the lowest documented cosine and fails a row moved
       as far as the earlier bound 0.995 allowed */
    compare_rule_bounds(&rule_attention_f32, 0.99803, 0.995);
    compare_rule_bounds(&rule_attention_bf16, 0.99773, 0.995);
    const char *ref = check_reference();
    if (!rf_int8_supported()) {
        refused_without_instructions(ref, RF_COMPUTE_INT8, "int8", "AVX2");
        return check_done();
    }
    if (!ref) {
        SKIP("no reference fixtures (../shared/reference or $ROFORMER_REFERENCE): int8 not checked");
        return check_done();
    }
    if (!rf_attention_in_bf16())
        SKIP("int8 compute with attention in bf16 runs where the bf16 kernel is faster than f32 "
             "(AMX-BF16, AMD's AVX512_BF16, ARM64 BF16): checked with attention in f32");
    else
        rule = &rule_attention_bf16;
    for_each_reference_model(ref, "cases.jsonl", check_reference_model, NULL);
    return check_done();
}
