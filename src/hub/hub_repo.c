/*
 * hub_repo.c — parsing "OWNER/NAME[@REVISION]" and building the hub's file
 * URLs (see hub_repo.h). It checks names; it does not touch the network or
 * the cache.
 */
#include "hub/hub_repo.h"

#include "base/error.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

/* One owner or repository name of n bytes: allowed characters, not "." or "..". */
static rf_status check_name(const char *spec, const char *what, const char *s, size_t n,
                            rf_error *err)
{
    if (n == 0)
        return rf_fail(err, RF_ERR_INPUT, "hf:%s: the %s is empty (expected OWNER/NAME[@REVISION])",
                       spec, what);
    if (n > RF_HUB_NAME_MAX)
        return rf_fail(err, RF_ERR_INPUT, "hf:%s: the %s is longer than %d bytes", spec, what,
                       RF_HUB_NAME_MAX);
    for (size_t i = 0; i < n; i++)
        if (!is_name_char(s[i]))
            return rf_fail(err, RF_ERR_INPUT,
                           "hf:%s: the %s may only hold letters, digits, '.', '_' and '-'", spec,
                           what);
    if ((n == 1 && s[0] == '.') || memmem(s, n, "..", 2))
        return rf_fail(err, RF_ERR_INPUT, "hf:%s: '%.*s' is not a %s", spec, (int)n, s, what);
    return RF_OK;
}

/* A revision: parts of name characters separated by single '/', none of
 * them ".", and no ".." anywhere (git refuses it in a ref name). */
static rf_status check_revision(const char *spec, const char *s, size_t n, rf_error *err)
{
    if (n == 0)
        return rf_fail(err, RF_ERR_INPUT, "hf:%s: the revision after '@' is empty", spec);
    if (n > RF_HUB_REVISION_MAX)
        return rf_fail(err, RF_ERR_INPUT, "hf:%s: the revision is longer than %d bytes", spec,
                       RF_HUB_REVISION_MAX);
    if (memmem(s, n, "..", 2))
        return rf_fail(err, RF_ERR_INPUT, "hf:%s: '%.*s' is not a revision", spec, (int)n, s);
    size_t part = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '/') {
            const char *p = s + i - part;
            if (part == 0 || (part == 1 && p[0] == '.'))
                return rf_fail(err, RF_ERR_INPUT, "hf:%s: '%.*s' is not a revision", spec, (int)n,
                               s);
            part = 0;
        } else if (!is_name_char(s[i])) {
            return rf_fail(err, RF_ERR_INPUT,
                           "hf:%s: the revision may only hold letters, digits, '.', '_', '-' and '/'",
                           spec);
        } else {
            part++;
        }
    }
    return RF_OK;
}

rf_status rf_hub_repo_parse(const char *spec, rf_hub_repo *repo, rf_error *err)
{
    rf_status st;
    if (!strncmp(spec, "hf:", 3))
        spec += 3;
    const char *slash = strchr(spec, '/');
    const char *at = strchr(spec, '@');
    if (!slash || (at && at < slash))
        return rf_fail(err, RF_ERR_INPUT, "hf:%s: expected OWNER/NAME[@REVISION]", spec);
    size_t owner_n = (size_t)(slash - spec);
    const char *name = slash + 1;
    size_t name_n = at ? (size_t)(at - name) : strlen(name);
    const char *rev = at ? at + 1 : "main";
    size_t rev_n = strlen(rev);
    if ((st = check_name(spec, "owner", spec, owner_n, err)) ||
        (st = check_name(spec, "repository name", name, name_n, err)) ||
        (st = check_revision(spec, rev, rev_n, err)))
        return st;
    memcpy(repo->owner, spec, owner_n);
    repo->owner[owner_n] = '\0';
    memcpy(repo->name, name, name_n);
    repo->name[name_n] = '\0';
    memcpy(repo->revision, rev, rev_n + 1);
    char *e = repo->revision_escaped;
    for (size_t i = 0; i < rev_n; i++) {
        if (rev[i] == '/') {
            memcpy(e, "%2F", 3);
            e += 3;
        } else {
            *e++ = rev[i];
        }
    }
    *e = '\0';
    return RF_OK;
}

const char *rf_hub_endpoint(size_t *len)
{
    const char *e = getenv("HF_ENDPOINT");
    if (!e || !*e)
        e = RF_HUB_DEFAULT_ENDPOINT;
    size_t n = strlen(e);
    while (n > 0 && e[n - 1] == '/')
        n--;
    *len = n;
    return e;
}

rf_status rf_hub_file_url(const rf_hub_repo *repo, const char *file, char *buf, size_t size,
                          rf_error *err)
{
    size_t n;
    const char *endpoint = rf_hub_endpoint(&n);
    int w = snprintf(buf, size, "%.*s/%s/%s/resolve/%s/%s", (int)n, endpoint, repo->owner,
                     repo->name, repo->revision_escaped, file);
    if (w < 0 || (size_t)w >= size)
        return rf_fail(err, RF_ERR_LIMIT, "HF_ENDPOINT: the URL of %s/%s's %s is too long",
                       repo->owner, repo->name, file);
    return RF_OK;
}
