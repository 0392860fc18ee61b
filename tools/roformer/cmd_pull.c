/*
 * cmd_pull.c — `roformer pull OWNER/NAME[@REVISION] [--dtype f32|f16|bf16|q8]
 * [--tokenizer auto|wobert|bert] [--pooler-activation tanh|linear]
 * [--progress|--no-progress]` and
 * `roformer pull --list`: a checkpoint from the HuggingFace hub into the
 * cache (rf_hub_pull), or what the cache holds.
 */
#include "cli.h"
#include "options.h"
#include "download_bar.h"
#include "progress.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: roformer pull OWNER/NAME[@REVISION] [--dtype f32|f16|bf16|q8]\n"
    "                     [--tokenizer auto|wobert|bert] [--pooler-activation tanh|linear]\n"
    "                     [--progress|--no-progress]\n"
    "       roformer pull --list\n"
    "\n"
    "Downloads a RoFormer checkpoint from the HuggingFace hub (config.json,\n"
    "vocab.txt, the tokenizer files it has, model.safetensors or else\n"
    "pytorch_model.bin), converts it once, and prints the path of the cached\n"
    "GGUF file. Every -m also takes hf:OWNER/NAME[@REVISION], pulled the same\n"
    "way on first use. A complete cache is used with no network at all; each\n"
    "set of conversion options is its own GGUF file beside the downloads.\n"
    "\n"
    "  --dtype T            storage type of the weight matrices (default f32)\n"
    "  --tokenizer MODE     wobert or bert; default auto (tokenizer_config.json)\n"
    "  --pooler-activation A  tanh or linear, overriding config.json (RoFormer-Sim\n"
    "                       checkpoints are meant to pool with linear)\n"
    "  --progress           a progress bar on stderr for every file (default: for\n"
    "                       large files when stderr is a terminal); --no-progress\n"
    "  --list               the cached repositories, their files and sizes\n"
    "\n"
    "environment:\n"
    "  ROFORMER_CACHE       the cache folder (else $XDG_CACHE_HOME/roformer, else\n"
    "                       ~/.cache/roformer); one folder per repository and revision\n"
    "  HF_ENDPOINT          the hub (default https://huggingface.co), e.g. a mirror\n"
    "  HF_TOKEN             sent as a Bearer token, for private and gated repositories\n";

/* ==== --list ==== */

typedef struct {
    char dir[4096];
    int64_t bytes, total;
    int repos;
} lister;

/* "572 B", "374.0 kB", "21.3 MB", "1.23 GB" into buf[32] */
static const char *size_text(int64_t bytes, char *buf)
{
    if (bytes < 1000)
        snprintf(buf, 32, "%lld B", (long long)bytes);
    else if (bytes < 1000000)
        snprintf(buf, 32, "%.1f kB", bytes / 1e3);
    else if (bytes < 1000000000)
        snprintf(buf, 32, "%.1f MB", bytes / 1e6);
    else
        snprintf(buf, 32, "%.2f GB", bytes / 1e9);
    return buf;
}

static void end_repo(lister *l)
{
    if (!l->dir[0])
        return;
    char size[32];
    printf("  %-32s %10s\n", "(all)", size_text(l->bytes, size));
    l->total += l->bytes;
}

static int list_one(void *user, const rf_hub_cached_file *f)
{
    lister *l = user;
    if (strcmp(l->dir, f->dir)) {
        end_repo(l);
        snprintf(l->dir, sizeof l->dir, "%s", f->dir);
        l->bytes = 0;
        l->repos++;
        printf("%s@%s  %s\n", f->repo, f->revision, f->dir);
    }
    char size[32];
    printf("  %-32s %10s%s\n", f->file, size_text(f->bytes, size),
           strstr(f->file, ".part") ? "  (partial download)" : "");
    l->bytes += f->bytes;
    return 0;
}

static int list_cache(void)
{
    lister l = {0};
    char root[4096];
    rf_error err;
    if (rf_hub_cache_dir(root, sizeof root, &err) || rf_hub_list(list_one, &l, &err))
        return cli_error("%s", err.message);
    end_repo(&l);
    char size[32];
    printf("%d cached revision%s in %s, %s\n", l.repos, l.repos == 1 ? "" : "s", root,
           size_text(l.total, size));
    return CLI_OK;
}

/* ==== pull ==== */

int cmd_pull(int argc, char **argv)
{
    cli_args args;
    int start = cli_command_args("pull", usage, argc, argv, &args);
    if (start >= 0)
        return start;
    rf_convert_params convert = cli_convert_params(&args);
    const char *spec = args.n_args ? args.args[0] : NULL;
    int progress = cli_arg_int(&args, CLI_OPT_PROGRESS, CLI_PROGRESS_AUTO);
    bool list = args.given[CLI_OPT_LIST];
    char path[4096];
    if (list && spec)
        return cli_usage_error("pull", "--list takes no repository");
    if (list)
        return list_cache();
    if (!spec)
        return cli_usage_error("pull", "missing OWNER/NAME (e.g. junnyu/roformer_chinese_sim_char_ft_small)");
    int rc = cli_hub_pull(spec, &convert, progress, path, sizeof path);
    if (rc == CLI_OK)
        printf("%s\n", path);
    return rc;
}
