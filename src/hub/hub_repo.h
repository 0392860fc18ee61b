/*
 * hub_repo.h — a HuggingFace hub repository named by the user,
 * "OWNER/NAME[@REVISION]", and the names derived from it: the file URL
 * `{endpoint}/{owner}/{name}/resolve/{revision}/{file}` and the cache
 * folder `{cache}/{owner}/{name}/{revision}`.
 *
 * Only names the hub itself allows get through: owner and name are
 * [A-Za-z0-9._-] (not ".", no "..", at most 96 bytes), a revision is a
 * branch, tag or commit ([A-Za-z0-9._-/], no "..", no empty or "." part). A '/'
 * in a revision ("refs/pr/1") is written %2F, in the URL as the hub wants
 * it and in the folder name so that a revision stays one folder.
 */
#ifndef RF_HUB_REPO_H
#define RF_HUB_REPO_H

#include "roformer.h"

#define RF_HUB_NAME_MAX 96
#define RF_HUB_REVISION_MAX 255
#define RF_HUB_DEFAULT_ENDPOINT "https://huggingface.co"

typedef struct {
    char owner[RF_HUB_NAME_MAX + 1];
    char name[RF_HUB_NAME_MAX + 1];
    char revision[RF_HUB_REVISION_MAX + 1];      /* as given; "main" when absent */
    char revision_escaped[3 * RF_HUB_REVISION_MAX + 1]; /* '/' as %2F */
} rf_hub_repo;

/* Parses "OWNER/NAME[@REVISION]" (an "hf:" prefix is allowed); a name the
 * hub could not hold is RF_ERR_INPUT with the reason. */
rf_status rf_hub_repo_parse(const char *spec, rf_hub_repo *repo, rf_error *err);

/* The hub's endpoint: $HF_ENDPOINT without its trailing '/', else
 * https://huggingface.co. Points into the environment or a constant. */
const char *rf_hub_endpoint(size_t *len);

/* {endpoint}/{owner}/{name}/resolve/{revision}/{file} into buf;
 * RF_ERR_LIMIT when it does not fit. */
rf_status rf_hub_file_url(const rf_hub_repo *repo, const char *file, char *buf, size_t size,
                          rf_error *err);

#endif
