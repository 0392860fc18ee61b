/*
 * hub_cache.h — where pulled checkpoints live on disk: the cache root from
 * the environment, the folder of one repository and revision, creating
 * it, and the names of the files in it. (Listing the cache for users is
 * rf_hub_list in hub_cache.c too; downloading is hub_download.c.)
 *
 *   {cache}/{owner}/{name}/{revision}/
 *       config.json  vocab.txt  tokenizer_config.json  special_tokens_map.json
 *       model.safetensors | pytorch_model.bin         downloaded, verified
 *       {file}.part                                   a download under way or interrupted
 *       model-{dtype}[-{tokenizer}][-pooler-{act}].gguf   converted from the files above
 *       .lock                                         taken while pulling
 */
#ifndef RF_HUB_CACHE_H
#define RF_HUB_CACHE_H

#include "hub/hub_repo.h"

/* Longest path the cache builds. */
#define RF_HUB_PATH_MAX 4096

/* The folder of repo's revision under the cache root. */
rf_status rf_hub_cache_repo_dir(const rf_hub_repo *repo, char *path, size_t size, rf_error *err);
/* mkdir -p, each missing folder with mode 0755. */
rf_status rf_hub_make_dirs(const char *path, rf_error *err);
/* "{dir}/{file}{suffix}" into buf; RF_ERR_LIMIT when too long. */
rf_status rf_hub_join(char *buf, size_t size, const char *dir, const char *file,
                      const char *suffix, rf_error *err);

#endif
