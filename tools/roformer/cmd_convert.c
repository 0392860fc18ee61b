/*
 * cmd_convert.c — `roformer convert HF_DIR -o MODEL.gguf [--dtype f32|f16|bf16|q8]
 * [--jieba-dict PATH] [--tokenizer auto|wobert|bert] [--pooler-activation tanh|linear]`.
 */
#include "cli.h"
#include "convert_options.h"

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
    rf_convert_params params = rf_convert_default_params();
    const char *dir = NULL, *out = NULL;
    rf_error err;
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        int taken = cli_convert_option("convert", argc, argv, &i, &params);
        if (taken == 1)
            continue;
        if (taken)
            return taken;
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!has_value)
                return cli_usage_error("convert", "%s needs a path", a);
            out = argv[++i];
        } else if (!strcmp(a, "--jieba-dict")) {
            if (!has_value)
                return cli_usage_error("convert", "--jieba-dict needs a path");
            params.jieba_dict = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("convert", "unknown option '%s'", a);
        } else if (!dir) {
            dir = a;
        } else {
            return cli_usage_error("convert", "more than one input directory ('%s', '%s')", dir, a);
        }
    }
    if (!dir)
        return cli_usage_error("convert", "missing the HF checkpoint directory");
    if (!out)
        return cli_usage_error("convert", "missing -o MODEL.gguf");
    if (rf_convert(dir, out, &params, &err) != RF_OK)
        return cli_error("%s", err.message);
    return CLI_OK;
}
