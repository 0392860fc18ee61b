/*
 * hub_cache.c — the cache's folders (see hub_cache.h) and rf_hub_list,
 * which walks them. It creates folders and reads directory listings; it
 * never writes or deletes a file.
 */
#include "hub/hub_cache.h"

#include "base/error.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

rf_status rf_hub_cache_dir(char *path, size_t size, rf_error *err)
{
    const char *env = getenv("ROFORMER_CACHE"), *suffix = "";
    if (!env || !*env) {
        env = getenv("XDG_CACHE_HOME");
        suffix = "/roformer";
    }
    if (!env || !*env) {
        env = getenv("HOME");
        suffix = "/.cache/roformer";
    }
    if (!env || !*env)
        return rf_fail(err, RF_ERR_INPUT,
                       "no cache folder: set ROFORMER_CACHE (or XDG_CACHE_HOME or HOME)");
    int n = snprintf(path, size, "%s%s", env, suffix);
    if (n < 0 || (size_t)n >= size)
        return rf_fail(err, RF_ERR_LIMIT, "the cache folder's path is longer than %zu bytes",
                       size - 1);
    return RF_OK;
}

rf_status rf_hub_cache_repo_dir(const rf_hub_repo *repo, char *path, size_t size, rf_error *err)
{
    char root[RF_HUB_PATH_MAX];
    rf_status st = rf_hub_cache_dir(root, sizeof root, err);
    if (st)
        return st;
    int n = snprintf(path, size, "%s/%s/%s/%s", root, repo->owner, repo->name,
                     repo->revision_escaped);
    if (n < 0 || (size_t)n >= size)
        return rf_fail(err, RF_ERR_LIMIT, "%s: the cache path is longer than %zu bytes", root,
                       size - 1);
    return RF_OK;
}

rf_status rf_hub_join(char *buf, size_t size, const char *dir, const char *file,
                      const char *suffix, rf_error *err)
{
    int n = snprintf(buf, size, "%s/%s%s", dir, file, suffix);
    if (n < 0 || (size_t)n >= size)
        return rf_fail(err, RF_ERR_LIMIT, "%s: the path of %s is too long", dir, file);
    return RF_OK;
}

rf_status rf_hub_make_dirs(const char *path, rf_error *err)
{
    char buf[RF_HUB_PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof buf)
        return rf_fail(err, RF_ERR_LIMIT, "%s: path too long", path);
    memcpy(buf, path, n + 1);
    /* each prefix ending before a '/', then the whole path */
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return rf_fail(err, RF_ERR_IO, "%s: cannot create the folder: %s", buf,
                           strerror(errno));
        buf[i] = c;
    }
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return rf_fail(err, RF_ERR_IO, "%s: not a folder", path);
    return RF_OK;
}

/* ==== Listing ==== */

/* Entries of a folder, sorted, without "." and ".."; folders only when
 * dirs_only, files only otherwise. Free with free_entries. */
static int list_dir(const char *path, int dirs_only, struct dirent ***out)
{
    struct dirent **names;
    int n = scandir(path, &names, NULL, alphasort);
    if (n < 0)
        return -1;
    int k = 0;
    for (int i = 0; i < n; i++) {
        char full[RF_HUB_PATH_MAX];
        struct stat sb;
        int keep = names[i]->d_name[0] != '.' &&
                   !rf_hub_join(full, sizeof full, path, names[i]->d_name, "", NULL) && stat(full, &sb) == 0 && (dirs_only ? S_ISDIR(sb.st_mode) : S_ISREG(sb.st_mode));
        if (keep)
            names[k++] = names[i];
        else
            free(names[i]);
    }
    *out = names;
    return k;
}

static void free_entries(struct dirent **e, int n)
{
    for (int i = 0; i < n; i++)
        free(e[i]);
    free(e);
}

/* The files of one revision folder; returns non-zero when fn stopped the walk. */
static int list_revision(const char *dir, const char *repo, const char *rev_escaped,
                         int (*fn)(void *, const rf_hub_cached_file *), void *user)
{
    char revision[RF_HUB_REVISION_MAX + 1];
    size_t k = 0;
    for (const char *p = rev_escaped; *p && k < sizeof revision - 1; p++) {
        if (!strncmp(p, "%2F", 3)) {
            revision[k++] = '/';
            p += 2;
        } else {
            revision[k++] = *p;
        }
    }
    revision[k] = '\0';
    struct dirent **files;
    int n = list_dir(dir, 0, &files), stop = 0;
    for (int i = 0; i < n && !stop; i++) {
        char full[RF_HUB_PATH_MAX];
        struct stat sb;
        if (rf_hub_join(full, sizeof full, dir, files[i]->d_name, "", NULL) || stat(full, &sb) != 0)
            continue;
        rf_hub_cached_file f = {repo, revision, dir, files[i]->d_name, (int64_t)sb.st_size};
        stop = fn(user, &f);
    }
    if (n >= 0)
        free_entries(files, n);
    return stop;
}

rf_status rf_hub_list(int (*fn)(void *user, const rf_hub_cached_file *f), void *user,
                      rf_error *err)
{
    char root[RF_HUB_PATH_MAX];
    rf_status st = rf_hub_cache_dir(root, sizeof root, err);
    if (st)
        return st;
    struct dirent **owners;
    int n_owners = list_dir(root, 1, &owners), stop = 0;
    if (n_owners < 0)
        return errno == ENOENT ? RF_OK
                               : rf_fail(err, RF_ERR_IO, "%s: cannot list: %s", root, strerror(errno));
    for (int o = 0; o < n_owners && !stop; o++) {
        char owner_dir[RF_HUB_PATH_MAX];
        struct dirent **names;
        int n_names = rf_hub_join(owner_dir, sizeof owner_dir, root, owners[o]->d_name, "", NULL)
                          ? -1
                          : list_dir(owner_dir, 1, &names);
        for (int m = 0; m < n_names && !stop; m++) {
            char repo_dir[RF_HUB_PATH_MAX], repo[2 * 256 + 2];
            snprintf(repo, sizeof repo, "%s/%s", owners[o]->d_name, names[m]->d_name);
            struct dirent **revs;
            int n_revs = rf_hub_join(repo_dir, sizeof repo_dir, owner_dir, names[m]->d_name, "", NULL)
                             ? -1
                             : list_dir(repo_dir, 1, &revs);
            for (int r = 0; r < n_revs && !stop; r++) {
                char rev_dir[RF_HUB_PATH_MAX];
                if (!rf_hub_join(rev_dir, sizeof rev_dir, repo_dir, revs[r]->d_name, "", NULL))
                    stop = list_revision(rev_dir, repo, revs[r]->d_name, fn, user);
            }
            if (n_revs >= 0)
                free_entries(revs, n_revs);
        }
        if (n_names >= 0)
            free_entries(names, n_names);
    }
    free_entries(owners, n_owners);
    return RF_OK;
}
