/*
 * hub_download.c — downloading one file with libcurl (see hub_download.h):
 * resume, redirects, HF_TOKEN, the hub's checksum, and one message per way
 * it can fail. HTTP and TLS are libcurl's; the digest is OpenSSL's
 * (sha256_file.c); the header lines are read by hub_headers.c.
 */
#include "hub/hub_download.h"

#include "base/error.h"
#include "hub/hub_cache.h"
#include "hub/hub_headers.h"
#include "hub/hub_repo.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A connection that cannot be made within this many seconds is no
 * network; a transfer that moves no byte for LOW_SPEED_TIME is cut. */
#define CONNECT_TIMEOUT 20L
#define LOW_SPEED_TIME 60L
#define MAX_REDIRECTS 10L

struct rf_hub_session {
    CURL *curl;
    char *token; /* HF_TOKEN, or NULL */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_code;

static void init_curl(void)
{
    curl_init_code = curl_global_init(CURL_GLOBAL_DEFAULT);
}

rf_status rf_hub_session_open(rf_hub_session **out, rf_error *err)
{
    pthread_once(&curl_once, init_curl);
    *out = NULL;
    if (curl_init_code != CURLE_OK)
        return rf_fail(err, RF_ERR_NETWORK, "libcurl cannot start: %s",
                       curl_easy_strerror(curl_init_code));
    rf_hub_session *s = calloc(1, sizeof *s);
    if (!s || !(s->curl = curl_easy_init())) {
        free(s);
        return rf_fail(err, RF_ERR_NOMEM, "out of memory for a libcurl handle");
    }
    const char *token = getenv("HF_TOKEN");
    if (token && *token && !(s->token = strdup(token))) {
        rf_hub_session_close(s);
        return rf_fail(err, RF_ERR_NOMEM, "out of memory");
    }
    *out = s;
    return RF_OK;
}

void rf_hub_session_close(rf_hub_session *s)
{
    if (!s)
        return;
    curl_easy_cleanup(s->curl);
    free(s->token);
    free(s);
}

/* ==== One transfer ==== */

typedef struct {
    const rf_hub_fetch *f;
    int fd;               /* the .part, opened for appending */
    int64_t offset;       /* bytes in the .part before this transfer */
    int64_t received;     /* body bytes written by this transfer */
    rf_hub_headers h;
    bool body_started;    /* the first body byte of the final response arrived */
    bool wrong_range;     /* a 206 that does not start where the .part ends */
    int write_errno;      /* a failed write to the .part */
    int64_t total;        /* the whole file's size when known, else -1 */
    int64_t reported;     /* bytes last given to the progress callback */
} transfer;

static bool body_wanted(const transfer *t)
{
    return t->h.status == 200 || t->h.status == 206;
}

static size_t on_header(char *line, size_t size, size_t n, void *user)
{
    transfer *t = user;
    rf_hub_headers_feed(&t->h, line, size * n);
    return size * n;
}

static size_t on_body(char *data, size_t size, size_t n, void *user)
{
    transfer *t = user;
    size_t len = size * n;
    if (!body_wanted(t))
        return len; /* an error page: not kept */
    if (!t->body_started) {
        t->body_started = true;
        if (t->h.status == 200 && t->offset > 0) {
            /* the server sent the whole file instead of the range: start over */
            if (ftruncate(t->fd, 0) != 0) {
                t->write_errno = errno;
                return 0;
            }
            t->offset = 0;
        } else if (t->h.status == 206 && t->h.range_start != t->offset) {
            t->wrong_range = true;
            return 0;
        }
    }
    for (size_t done = 0; done < len;) {
        ssize_t w = write(t->fd, data + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            t->write_errno = w < 0 ? errno : ENOSPC;
            return 0;
        }
        done += (size_t)w;
    }
    t->received += (int64_t)len;
    return len;
}

static int on_progress(void *user, curl_off_t total, curl_off_t now, curl_off_t ut, curl_off_t un)
{
    transfer *t = user;
    (void)ut;
    (void)un;
    /* only news, and never the end: fetch_once reports that once */
    if (!t->f->progress || !body_wanted(t) || now <= 0 || t->offset + now == t->reported ||
        (total > 0 && now >= total))
        return 0;
    t->reported = t->offset + now;
    t->f->progress(t->f->progress_user, t->f->file, t->offset + now,
                   total > 0 ? t->offset + total : -1);
    return 0;
}

static void set_options(rf_hub_session *s, transfer *t, char *errbuf, const char *range)
{
    CURL *c = s->curl;
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, t->f->url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, MAX_REDIRECTS);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "roformer.c/" RF_VERSION);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, LOW_SPEED_TIME);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, t);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    if (range)
        curl_easy_setopt(c, CURLOPT_RANGE, range);
    if (s->token) {
        /* libcurl sends it to the URL's host only, never to a redirect's */
        curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
        curl_easy_setopt(c, CURLOPT_XOAUTH2_BEARER, s->token);
    }
}

static bool is_unreachable(CURLcode rc)
{
    return rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY ||
           rc == CURLE_COULDNT_CONNECT;
}

/* The message of a transfer that did not end with a whole body. */
static rf_status transfer_error(const rf_hub_session *s, const transfer *t, CURLcode rc,
                                const char *errbuf, const char *part, rf_error *err)
{
    const rf_hub_fetch *f = t->f;
    const char *why = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    size_t n;
    const char *endpoint = rf_hub_endpoint(&n);
    if (t->write_errno == ENOSPC || t->write_errno == EDQUOT)
        return rf_fail(err, RF_ERR_IO,
                       "%s: disk full after %lld bytes of %s (%s); free some space and run it "
                       "again to resume",
                       f->repo, (long long)(t->offset + t->received), f->file, part);
    if (t->write_errno)
        return rf_fail(err, RF_ERR_IO, "%s: cannot write: %s", part, strerror(t->write_errno));
    if (t->wrong_range)
        return rf_fail(err, RF_ERR_NETWORK,
                       "%s: %s: the answer to a resumed download starts at byte %lld, not %lld; "
                       "the partial file was deleted, run it again",
                       f->repo, f->file, (long long)t->h.range_start, (long long)t->offset);
    if (is_unreachable(rc) || (rc == CURLE_OPERATION_TIMEDOUT && t->h.responses == 0))
        return rf_fail(err, RF_ERR_NETWORK,
                       "%s: cannot reach %.*s (%s): no network? A local checkpoint directory or "
                       ".gguf file works offline",
                       f->repo, (int)n, endpoint, why);
    if (t->h.responses == 0)
        return rf_fail(err, RF_ERR_NETWORK, "%s: %s", f->url, why);
    if (t->h.status == 401)
        return rf_fail(err, RF_ERR_NETWORK,
                       s->token ? "%s: 401 Unauthorized: HF_TOKEN was not accepted; set HF_TOKEN to "
                                  "a valid token that can read this repository"
                                : "%s: 401 Unauthorized: the repository is private or gated; set "
                                  "HF_TOKEN to a token that can read it",
                       f->repo);
    if (t->h.status == 403)
        return rf_fail(err, RF_ERR_NETWORK,
                       s->token ? "%s: 403 Forbidden: HF_TOKEN does not give access to it (a gated "
                                  "repository: accept its conditions on the hub first)"
                                : "%s: 403 Forbidden: set HF_TOKEN to a token that can read it",
                       f->repo);
    if (!body_wanted(t))
        return rf_fail(err, RF_ERR_NETWORK, "%s: %s: HTTP %d from %.*s", f->repo, f->file,
                       t->h.status, (int)n, endpoint);
    if (t->total > 0)
        return rf_fail(err, RF_ERR_NETWORK,
                       "%s: %s: download interrupted after %lld of %lld bytes (%s); run it again "
                       "to resume",
                       f->repo, f->file, (long long)(t->offset + t->received), (long long)t->total, why);
    return rf_fail(err, RF_ERR_NETWORK,
                   "%s: %s: download interrupted after %lld bytes (%s); run it again to resume",
                   f->repo, f->file, (long long)(t->offset + t->received), why);
}

/* The .part is whole: its sha256 against the hub's, then the rename. */
static rf_status finish(const transfer *t, const char *part, rf_error *err)
{
    const rf_hub_fetch *f = t->f;
    const char *expected = rf_hub_headers_sha256(&t->h);
    if (expected) {
        char got[65];
        rf_status st = rf_sha256_file(part, got, err);
        if (st)
            return st;
        if (strcmp(got, expected)) {
            unlink(part);
            return rf_fail(err, RF_ERR_FORMAT,
                           "%s: %s: sha256 %s does not match the hub's %s; the download was "
                           "deleted, run it again",
                           f->repo, f->file, got, expected);
        }
    }
    if (rename(part, f->dest) != 0)
        return rf_fail(err, RF_ERR_IO, "%s: cannot rename to %s: %s", part, f->dest, strerror(errno));
    return RF_OK;
}

/* One GET, from the end of the .part; *retry is set when the .part must be
 * emptied and the GET done again (416: nothing left to send past it). */
static rf_status fetch_once(rf_hub_session *s, const rf_hub_fetch *f, const char *part,
                            bool *not_found, char error_code[64], bool *retry, rf_error *err)
{
    transfer t = {.f = f, .fd = -1};
    char errbuf[CURL_ERROR_SIZE] = "", range[32];
    rf_status st = RF_OK;
    struct stat sb;
    *retry = false;
    rf_hub_headers_init(&t.h);
    t.fd = open(part, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (t.fd < 0 || fstat(t.fd, &sb) != 0) {
        st = rf_fail(err, RF_ERR_IO, "%s: cannot open: %s", part, strerror(errno));
        goto done;
    }
    t.offset = (int64_t)sb.st_size;
    snprintf(range, sizeof range, "%lld-", (long long)t.offset);
    set_options(s, &t, errbuf, t.offset > 0 ? range : NULL);
    CURLcode rc = curl_easy_perform(s->curl);
    curl_off_t length = -1;
    curl_easy_getinfo(s->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    t.total = body_wanted(&t) && length >= 0 ? t.offset + length : -1;
    if (rc == CURLE_OK && t.h.status == 404) {
        *not_found = true;
        memcpy(error_code, t.h.error_code, sizeof t.h.error_code);
        unlink(part);
    } else if (rc == CURLE_OK && t.h.status == 416 && t.offset > 0) {
        *retry = ftruncate(t.fd, 0) == 0;
        if (!*retry)
            st = rf_fail(err, RF_ERR_IO, "%s: cannot truncate: %s", part, strerror(errno));
    } else if (rc != CURLE_OK || !body_wanted(&t)) {
        st = transfer_error(s, &t, rc, errbuf, part, err);
        if (t.wrong_range || (t.offset + t.received == 0 && !body_wanted(&t)))
            unlink(part); /* nothing worth resuming */
    } else {
        if (t.h.status == 200 && t.offset > 0 && !t.body_started) {
            /* the whole file, and it is empty: what the .part held must go */
            if (ftruncate(t.fd, 0) != 0) {
                st = rf_fail(err, RF_ERR_IO, "%s: cannot truncate: %s", part, strerror(errno));
                goto done;
            }
            t.offset = 0;
        }
        if (fsync(t.fd) != 0 && errno != EINVAL) {
            st = rf_fail(err, RF_ERR_IO, "%s: cannot write: %s", part, strerror(errno));
            goto done;
        }
        if (f->progress)
            f->progress(f->progress_user, f->file, t.offset + t.received, t.offset + t.received);
        close(t.fd);
        t.fd = -1;
        st = finish(&t, part, err);
    }
done:
    if (t.fd >= 0)
        close(t.fd);
    return st;
}

rf_status rf_hub_download(rf_hub_session *s, const rf_hub_fetch *f, bool *not_found,
                          char error_code[64], rf_error *err)
{
    char part[RF_HUB_PATH_MAX];
    bool retry;
    int n = snprintf(part, sizeof part, "%s.part", f->dest);
    *not_found = false;
    error_code[0] = '\0';
    if (n < 0 || (size_t)n >= sizeof part)
        return rf_fail(err, RF_ERR_LIMIT, "%s: path too long", f->dest);
    rf_status st = fetch_once(s, f, part, not_found, error_code, &retry, err);
    if (!st && retry)
        st = fetch_once(s, f, part, not_found, error_code, &retry, err);
    return st;
}
