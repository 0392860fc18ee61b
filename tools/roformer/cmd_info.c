/*
 * cmd_info.c — `roformer info -m MODEL`: what a model is (hyper-parameters,
 * norm and biases (RoFormer or RoFormer-v2), head and labels, pooler,
 * tokenizer, storage type, tensor count), how long it took to load, and
 * the kernels: those in use and every build of the library's tables.
 */
#include "cli.h"
#include "load_model.h"
#include "options.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: roformer info -m MODEL\n"
    "\n"
    "Prints a model's hyper-parameters, norm type and encoder biases (RoFormer-v2:\n"
    "rms_norm, none), head, labels, pooler activation, sentence-transformers\n"
    "settings (pooling, normalize, max_seq_length, prompts), tokenizer mode, weight\n"
    "storage type and tensor count, then the kernels: those in use, and every build\n"
    "of the int8 and bf16 products, whether this CPU runs it and which is in use.\n"
    "MODEL is a .gguf file or an HF checkpoint directory (converted in memory).\n";

/* The sentence-transformers settings: one line, then one per prompt. */
static void print_sentence_config(const rf_sentence_config *sc)
{
    if (!sc->present) {
        printf("sentence-transformers: none\n");
        return;
    }
    printf("sentence-transformers: pooling %s, normalize %s, max_seq_length ",
           rf_pooling_name((rf_pooling)sc->pooling), sc->normalize ? "true" : "false");
    if (sc->max_seq_length > 0)
        printf("%d", sc->max_seq_length);
    else
        printf("none");
    printf(", do_lower_case %s, default prompt %s\n", sc->do_lower_case ? "true" : "false",
           sc->default_prompt_name ? sc->default_prompt_name : "none");
    for (int32_t i = 0; i < sc->n_prompts; i++)
        printf("prompt %-14s \"%s\"\n", sc->prompt_names[i], sc->prompts[i]);
}

/* Every build of the library's tables, a line each: whether this CPU runs
 * it, and the one in use with how it was chosen. */
static void print_kernel_builds(void)
{
    rf_kernel_build builds[64];
    int32_t n = rf_kernels_list(builds, 64);
    if (n > 64)
        n = 64; /* more rows than any table has: the first ones */
    for (int32_t i = 0; i < n; i++) {
        const rf_kernel_build *b = &builds[i];
        bool int8 = !strcmp(b->product, "int8");
        printf("%s build:%*s%-11s %s", b->product, 14 - (int)strlen(b->product), "", b->name,
               b->runs ? "runs" : "not on this CPU");
        if (b->tests_only)
            printf(", tests only");
        if (b->in_use)
            printf(", in use (%s%s)", int8 ? "chosen by " : "", rf_kernels_chosen_by(b->product));
        printf("\n");
    }
}

int cmd_info(int argc, char **argv)
{
    cli_args args;
    int start = cli_command_args("info", usage, argc, argv, &args);
    if (start >= 0)
        return start;
    const char *path = cli_arg_text(&args, CLI_OPT_MODEL, NULL);
    if (!path)
        return cli_usage_error("info", "missing -m MODEL");
    double t0 = 1e3 * cli_now_seconds();
    rf_model *model = cli_load_model(path);
    double load_ms = 1e3 * cli_now_seconds() - t0;
    if (!model)
        return CLI_FAILED;
    const rf_hparams *hp = rf_model_hparams(model);
    printf("model:               %s\n", path);
    printf("architecture:        roformer\n");
    printf("head:                %s\n", rf_head_name(hp->head));
    if (hp->num_labels > 0) {
        printf("labels:              %d (", hp->num_labels);
        for (int32_t i = 0; i < hp->num_labels; i++)
            printf("%s%s", i ? ", " : "", rf_model_label(model, i));
        printf(")\n");
    }
    printf("vocab_size:          %d\n", hp->vocab_size);
    printf("embedding_size:      %d\n", hp->embedding_size);
    printf("hidden_size:         %d\n", hp->hidden_size);
    printf("num_layers:          %d\n", hp->num_layers);
    printf("num_heads:           %d (head size %d)\n", hp->num_heads, hp->hidden_size / hp->num_heads);
    printf("intermediate_size:   %d\n", hp->intermediate_size);
    printf("max_position:        %d\n", hp->max_position);
    printf("type_vocab_size:     %d\n", hp->type_vocab_size);
    printf("norm_type:           %s%s\n", rf_norm_type_name(hp->norm_type),
           hp->norm_type == RF_NORM_RMS ? " (RoFormer-v2, no parameters)" : "");
    printf("encoder biases:      %s\n", hp->use_bias ? "true" : "false");
    printf("layer_norm_eps:      %g\n", hp->layer_norm_eps);
    printf("hidden_act:          %s\n", rf_activation_name(hp->hidden_act));
    printf("rotary_value:        %s\n", hp->rotary_value ? "true" : "false");
    if (hp->rope_scaling == RF_ROPE_SCALING_LINEAR || hp->rope_scaling == RF_ROPE_SCALING_NTK)
        printf("rope_scaling:        %s, factor %g\n", rf_rope_scaling_name(hp->rope_scaling),
               (double)hp->rope_factor);
    if (hp->has_pooler)
        printf("pooler:              %s\n", rf_activation_name(hp->pooler_act));
    else
        printf("pooler:              none\n");
    print_sentence_config(rf_model_sentence_config(model));
    printf("tokenizer:           %s (do_lower_case %s)\n", rf_tokenizer_mode_name(hp->tokenizer),
           hp->do_lower_case ? "true" : "false");
    printf("special tokens:      [PAD]=%d [UNK]=%d [CLS]=%d [SEP]=%d [MASK]=%d\n", hp->pad_id,
           hp->unk_id, hp->cls_id, hp->sep_id, hp->mask_id);
    printf("dtype:               %s\n", rf_dtype_name(hp->dtype));
    printf("tensors:             %d\n", rf_model_tensor_count(model));
    printf("load time:           %.1f ms\n", load_ms);
    rf_blas_info blas = rf_blas_get_info();
    printf("blas:                OpenBLAS core %s, %d threads\n", blas.core, (int)blas.threads);
    rf_kernel_info kernels = rf_kernels_get_info();
    printf("int8 kernel:         %s (chosen by %s)\n", kernels.int8, kernels.int8_chosen_by);
    printf("bf16 kernel:         %s (%s)\n", kernels.bf16, kernels.bf16_chosen_by);
    printf("attention products:  %s under bf16 and int8 compute\n", kernels.attention);
    printf("amx:                 %s\n", kernels.amx);
    print_kernel_builds();
    rf_model_free(model);
    return CLI_OK;
}
