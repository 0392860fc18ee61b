/*
 * hub_pull.c — rf_hub_pull: a hub repository to a cached GGUF file.
 *
 *   1. the GGUF for these conversion options is in the cache: done (no lock, no network)
 *   2. take the folder's lock (another process may be pulling it), look again
 *   3. download what is missing, in order: config.json, vocab.txt, the two
 *      optional tokenizer files, the sentence-transformers files when the
 *      repository has modules.json (1_Pooling/config.json,
 *      sentence_bert_config.json, config_sentence_transformers.json), then
 *      model.safetensors, else
 *      pytorch_model.bin — so a weights file in the folder means that every
 *      file before it was settled, and the folder is complete
 *   4. convert the folder to the GGUF (rf_convert: through a temporary file)
 *
 * What a download does (resume, checksum, rename) is hub_download.c; names
 * and folders are hub_repo.c and hub_cache.c.
 */
#include "hub/hub_cache.h"
#include "hub/hub_download.h"
#include "hub/hub_repo.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const tokenizer_files[] = {"tokenizer_config.json", "special_tokens_map.json"};
static const char *const weight_files[] = {"model.safetensors", "pytorch_model.bin"};
/* fetched when the repository has modules.json; the Pooling module's folder
   is the one sentence-transformers writes (another is reported by convert) */
static const char *const sentence_files[] = {"1_Pooling/config.json", "sentence_bert_config.json",
                                             "config_sentence_transformers.json"};

rf_hub_params rf_hub_default_params(void)
{
    rf_hub_params p = {.convert = rf_convert_default_params()};
    return p;
}

static bool is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static bool has_file(const char *dir, const char *file)
{
    char path[RF_HUB_PATH_MAX];
    return rf_hub_join(path, sizeof path, dir, file, "", NULL) == RF_OK && is_file(path);
}

/* model-{dtype}[-{tokenizer}][-pooler-{activation}].gguf: one file per set
 * of conversion options. */
static void gguf_name(const rf_convert_params *c, char *buf, size_t size)
{
    const char *tok = c->tokenizer == RF_TOKENIZER_AUTO ? ""
                      : c->tokenizer == RF_TOKENIZER_BERT ? "-bert"
                                                          : "-wobert";
    const char *pooler = c->pooler_activation == RF_POOLER_ACT_AUTO ? ""
                         : c->pooler_activation == RF_POOLER_ACT_LINEAR ? "-pooler-linear"
                                                                    : "-pooler-tanh";
    snprintf(buf, size, "model-%s%s%s.gguf", rf_dtype_name(c->dtype), tok, pooler);
}

typedef struct {
    rf_hub_session *session;
    const rf_hub_repo *repo;
    const char *dir;
    char id[2 * RF_HUB_NAME_MAX + RF_HUB_REVISION_MAX + 6]; /* hf:OWNER/NAME@REVISION */
    const rf_hub_params *params;
} puller;

/* A required file's 404, in the hub's words when it gave them. */
static rf_status not_found(const puller *p, const char *file, const char *code, rf_error *err)
{
    size_t n;
    const char *endpoint = rf_hub_endpoint(&n);
    if (!strcmp(code, "RepositoryNotFound"))
        return rf_fail(err, RF_ERR_NETWORK,
                       "hf:%s/%s: no such repository on %.*s (404; a private one needs HF_TOKEN)",
                       p->repo->owner, p->repo->name, (int)n, endpoint);
    if (!strcmp(code, "RevisionNotFound"))
        return rf_fail(err, RF_ERR_NETWORK, "%s: repository %s/%s has no revision '%s' (404)",
                       p->id, p->repo->owner, p->repo->name, p->repo->revision);
    if (code[0])
        return rf_fail(err, RF_ERR_NETWORK, "%s: the repository has no %s (404): not a "
                       "HuggingFace RoFormer checkpoint?", p->id, file);
    return rf_fail(err, RF_ERR_NETWORK,
                   "%s: %s not found on %.*s (404): no such repository or revision, or not a "
                   "HuggingFace checkpoint",
                   p->id, file, (int)n, endpoint);
}

/* Downloads `file` unless the folder has it; *absent: the hub has no such file. */
static rf_status fetch(puller *p, const char *file, bool *absent, char code[64], rf_error *err)
{
    char url[RF_HUB_PATH_MAX], dest[RF_HUB_PATH_MAX];
    rf_status st;
    *absent = false;
    code[0] = '\0';
    if ((st = rf_hub_join(dest, sizeof dest, p->dir, file, "", err)))
        return st;
    if (is_file(dest))
        return RF_OK;
    if (!p->session && (st = rf_hub_session_open(&p->session, err)))
        return st;
    if ((st = rf_hub_file_url(p->repo, file, url, sizeof url, err)))
        return st;
    rf_hub_fetch f = {url, dest, file, p->id, p->params->progress, p->params->progress_user};
    return rf_hub_download(p->session, &f, absent, code, err);
}

static rf_status download_missing(puller *p, rf_error *err)
{
    char code[64];
    bool absent;
    rf_status st;
    if ((st = fetch(p, "config.json", &absent, code, err)) ||
        (absent && (st = not_found(p, "config.json", code, err))))
        return st;
    if ((st = fetch(p, "vocab.txt", &absent, code, err)) ||
        (absent && (st = not_found(p, "vocab.txt", code, err))))
        return st;
    for (size_t i = 0; i < sizeof tokenizer_files / sizeof *tokenizer_files; i++)
        if ((st = fetch(p, tokenizer_files[i], &absent, code, err)))
            return st;
    if ((st = fetch(p, "modules.json", &absent, code, err)))
        return st;
    if (!absent) {
        char pooling_dir[RF_HUB_PATH_MAX];
        if ((st = rf_hub_join(pooling_dir, sizeof pooling_dir, p->dir, "1_Pooling", "", err)) ||
            (st = rf_hub_make_dirs(pooling_dir, err)))
            return st;
        for (size_t i = 0; i < sizeof sentence_files / sizeof *sentence_files; i++)
            if ((st = fetch(p, sentence_files[i], &absent, code, err)))
                return st;
    }
    if (has_file(p->dir, weight_files[1]))
        return RF_OK;
    if ((st = fetch(p, weight_files[0], &absent, code, err)) || !absent)
        return st;
    if ((st = fetch(p, weight_files[1], &absent, code, err)) || !absent)
        return st;
    return rf_fail(err, RF_ERR_NETWORK,
                   "%s: the repository has neither model.safetensors nor pytorch_model.bin",
                   p->id);
}

static bool is_complete(const char *dir)
{
    return has_file(dir, "config.json") && has_file(dir, "vocab.txt") &&
           (has_file(dir, weight_files[0]) || has_file(dir, weight_files[1]));
}

rf_status rf_hub_pull(const char *spec, const rf_hub_params *params, char *path, size_t size,
                      rf_error *err)
{
    rf_hub_params defaults = rf_hub_default_params();
    rf_hub_repo repo;
    char dir[RF_HUB_PATH_MAX], name[64], gguf[RF_HUB_PATH_MAX], lock_path[RF_HUB_PATH_MAX];
    puller p = {0};
    int lock = -1;
    rf_status st;
    if (!params)
        params = &defaults;
    if ((st = rf_hub_repo_parse(spec, &repo, err)))
        return st;
    if (params->convert.pooler_activation != RF_POOLER_ACT_AUTO &&
        params->convert.pooler_activation != RF_POOLER_ACT_TANH &&
        params->convert.pooler_activation != RF_POOLER_ACT_LINEAR)
        return rf_fail(err, RF_ERR_INPUT, "hf:%s: the pooler activation is tanh or linear", spec);
    if (params->convert.jieba_dict)
        return rf_fail(err, RF_ERR_UNSUPPORTED,
                       "hf:%s: a jieba dictionary of one's own is not cached; pull, then convert "
                       "the cached folder with it",
                       spec);
    /* RoFormer-Sim's publisher pools without tanh, set in its code rather than
     * in config.json, so its repositories (roformer_chinese_sim_*) default to
     * a linear pooler; an explicit choice still wins. */
    rf_convert_params convert = params->convert;
    if (convert.pooler_activation == RF_POOLER_ACT_AUTO &&
        !strncmp(repo.name, "roformer_chinese_sim_", strlen("roformer_chinese_sim_")))
        convert.pooler_activation = RF_POOLER_ACT_LINEAR;
    gguf_name(&convert, name, sizeof name);
    if ((st = rf_hub_cache_repo_dir(&repo, dir, sizeof dir, err)) ||
        (st = rf_hub_join(gguf, sizeof gguf, dir, name, "", err)) ||
        (st = rf_hub_join(lock_path, sizeof lock_path, dir, ".lock", "", err)))
        return st;
    if (strlen(gguf) >= size)
        return rf_fail(err, RF_ERR_LIMIT, "%s: longer than the %zu bytes given for it", gguf, size);
    if (is_file(gguf))
        goto found;
    if ((st = rf_hub_make_dirs(dir, err)))
        return st;
    /* one process per folder at a time; the others wait, then find the file */
    lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0)
        return rf_fail(err, RF_ERR_IO, "%s: cannot open: %s", lock_path, strerror(errno));
    while (flock(lock, LOCK_EX) != 0)
        if (errno != EINTR) {
            st = rf_fail(err, RF_ERR_IO, "%s: cannot lock: %s", lock_path, strerror(errno));
            goto done;
        }
    if (is_file(gguf))
        goto done;
    p.repo = &repo;
    p.dir = dir;
    p.params = params;
    snprintf(p.id, sizeof p.id, "hf:%s/%s@%s", repo.owner, repo.name, repo.revision);
    if (!is_complete(dir) && (st = download_missing(&p, err)))
        goto done;
    st = rf_convert(dir, gguf, &convert, err);
done:
    rf_hub_session_close(p.session);
    if (lock >= 0)
        close(lock);
    if (st)
        return st;
found:
    memcpy(path, gguf, strlen(gguf) + 1);
    return RF_OK;
}
