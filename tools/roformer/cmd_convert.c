/*
 * cmd_convert.c — `roformer convert HF_DIR -o MODEL.gguf [--dtype f32|f16|bf16|q8]
 * [--jieba-dict PATH] [--tokenizer auto|wobert|bert] [--pooler-activation tanh|linear]`.
 */
#include "cli.h"
#include "options.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: roformer convert HF_DIR -o MODEL.gguf [--dtype f32|f16|bf16|q8]\n"
    "                        [--jieba-dict PATH] [--tokenizer auto|wobert|bert]\n"
    "                        [--pooler-activation tanh|linear]\n"
    "\n"
    "Converts a HuggingFace RoFormer checkpoint directory (config.json, vocab.txt,\n"
    "optional tokenizer_config.json, model.safetensors or pytorch_model.bin) to one\n"
    "GGUF file.\n"
    "\n"
    "  -o, --output PATH    the GGUF file to write\n"
    "  --dtype T            storage type of the weight matrices (default f32);\n"
    "                       biases and LayerNorm weights stay f32; q8: int8 with\n"
    "                       one f32 scale per row (for --compute int8)\n"
    "  --jieba-dict PATH    jieba dictionary for word-level (wobert) models\n"
    "                       (default: python3-jieba's dict.txt)\n"
    "  --tokenizer MODE     wobert (jieba words) or bert (characters); default auto,\n"
    "                       from tokenizer_config.json's tokenizer_class\n"
    "  --pooler-activation A  tanh or linear: the pooler's activation, overriding\n"
    "                       config.json's pooler_activation (default tanh);\n"
    "                       RoFormer-Sim checkpoints are meant to pool with linear\n";

int cmd_convert(int argc, char **argv)
{
    cli_args args;
    int start = cli_command_args("convert", usage, argc, argv, &args);
    if (start >= 0)
        return start;
    rf_convert_params params = cli_convert_params(&args);
    const char *dir = args.n_args ? args.args[0] : NULL;
    const char *out = cli_arg_text(&args, CLI_OPT_OUTPUT, NULL);
    rf_error err;
    if (!dir)
        return cli_usage_error("convert", "missing the HF checkpoint directory");
    if (!out)
        return cli_usage_error("convert", "missing -o MODEL.gguf");
    if (rf_convert(dir, out, &params, &err) != RF_OK)
        return cli_error("%s", err.message);
    return CLI_OK;
}
