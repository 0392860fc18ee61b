/*
 * test_hub_units.c — the hub client's parts that need no server: repository
 * names and revisions, file URLs, the cache folder from the environment,
 * the response header reader, and the sha256 of a file. (Downloads against
 * a stand-in hub: test_hub.sh.)
 */
#include "../check.h"

#include "hub/hub_cache.h"
#include "hub/hub_headers.h"
#include "hub/hub_repo.h"

#include <stdlib.h>
#include <unistd.h>

static void test_repo_names(void)
{
    rf_hub_repo r;
    rf_error err;
    CHECK(rf_hub_repo_parse("junnyu/roformer_chinese_base", &r, &err) == RF_OK, "plain name");
    CHECK(!strcmp(r.owner, "junnyu") && !strcmp(r.name, "roformer_chinese_base"), "owner/name");
    CHECK(!strcmp(r.revision, "main") && !strcmp(r.revision_escaped, "main"), "revision main");
    CHECK(rf_hub_repo_parse("hf:a-b/c.d_e@v1.0", &r, &err) == RF_OK, "hf: prefix and revision");
    CHECK(!strcmp(r.owner, "a-b") && !strcmp(r.name, "c.d_e") && !strcmp(r.revision, "v1.0"),
          "parts: %s %s %s", r.owner, r.name, r.revision);
    CHECK(rf_hub_repo_parse("a/b@refs/pr/1", &r, &err) == RF_OK, "revision with '/'");
    CHECK(!strcmp(r.revision, "refs/pr/1") && !strcmp(r.revision_escaped, "refs%2Fpr%2F1"),
          "escaped %s", r.revision_escaped);

    static const char *const bad[] = {"a",      "/b",       "a/",         "a/b@",     "a/b/c",
                                      "../b",   "a/..",     "a/.",        "a/b@x/../y", "a/b@/x",
                                      "a/b@x//y", "a/b@x/", "a b/c",      "a/b@x y",  "a@x/b",
                                      "a/b@%2F", "a..b/c",  "a/b..c",   "a/b@x..y", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err.message[0] = '\0';
        CHECK(rf_hub_repo_parse(bad[i], &r, &err) == RF_ERR_INPUT, "'%s' refused", bad[i]);
        CHECK(err.message[0] != '\0', "'%s' has a message", bad[i]);
    }
    char longname[200];
    memset(longname, 'x', sizeof longname);
    memcpy(longname, "a/", 2);
    longname[2 + 97] = '\0';
    CHECK(rf_hub_repo_parse(longname, &r, &err) == RF_ERR_INPUT, "a 97-byte name refused");
    longname[2 + 96] = '\0';
    CHECK(rf_hub_repo_parse(longname, &r, &err) == RF_OK, "a 96-byte name accepted");
}

static void test_urls(void)
{
    rf_hub_repo r;
    rf_error err;
    char url[256];
    rf_hub_repo_parse("a/b@refs/pr/1", &r, &err);
    unsetenv("HF_ENDPOINT");
    CHECK(rf_hub_file_url(&r, "config.json", url, sizeof url, &err) == RF_OK, "default endpoint");
    CHECK(!strcmp(url, "https://huggingface.co/a/b/resolve/refs%2Fpr%2F1/config.json"), "%s", url);
    setenv("HF_ENDPOINT", "http://127.0.0.1:8080//", 1);
    CHECK(rf_hub_file_url(&r, "vocab.txt", url, sizeof url, &err) == RF_OK, "HF_ENDPOINT");
    CHECK(!strcmp(url, "http://127.0.0.1:8080/a/b/resolve/refs%2Fpr%2F1/vocab.txt"), "%s", url);
    CHECK(rf_hub_file_url(&r, "vocab.txt", url, 20, &err) == RF_ERR_LIMIT, "too long is refused");
    unsetenv("HF_ENDPOINT");
}

static void test_cache_dir(void)
{
    char dir[RF_HUB_PATH_MAX];
    rf_error err;
    rf_hub_repo r;
    setenv("HOME", "/users/u", 1);
    unsetenv("ROFORMER_CACHE");
    unsetenv("XDG_CACHE_HOME");
    CHECK(rf_hub_cache_dir(dir, sizeof dir, &err) == RF_OK && !strcmp(dir, "/users/u/.cache/roformer"),
          "HOME: %s", dir);
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    CHECK(rf_hub_cache_dir(dir, sizeof dir, &err) == RF_OK && !strcmp(dir, "/xdg/roformer"),
          "XDG_CACHE_HOME: %s", dir);
    setenv("ROFORMER_CACHE", "/c", 1);
    CHECK(rf_hub_cache_dir(dir, sizeof dir, &err) == RF_OK && !strcmp(dir, "/c"),
          "ROFORMER_CACHE: %s", dir);
    rf_hub_repo_parse("o/n@refs/pr/2", &r, &err);
    CHECK(rf_hub_cache_repo_dir(&r, dir, sizeof dir, &err) == RF_OK &&
              !strcmp(dir, "/c/o/n/refs%2Fpr%2F2"),
          "one folder per revision: %s", dir);
    unsetenv("ROFORMER_CACHE");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    CHECK(rf_hub_cache_dir(dir, sizeof dir, &err) == RF_ERR_INPUT, "no HOME: an error");
}

static void feed(rf_hub_headers *h, const char *line)
{
    rf_hub_headers_feed(h, line, strlen(line));
}

#define SHA_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_headers(void)
{
    rf_hub_headers h;
    /* the hub's redirect, then the CDN's partial answer */
    rf_hub_headers_init(&h);
    CHECK(rf_hub_headers_sha256(&h) == NULL, "no digest before any header");
    feed(&h, "HTTP/1.1 302 Found\r\n");
    feed(&h, "x-linked-etag: \"0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\"\r\n");
    feed(&h, "ETag: \"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff\"\r\n");
    CHECK(h.status == 302 && h.responses == 1, "status %d", h.status);
    feed(&h, "HTTP/2 206\r\n");
    feed(&h, "Content-Range: bytes 100-999/1000\r\n");
    feed(&h, "ETag: \"" SHA_A "\"\r\n");
    CHECK(h.status == 206 && h.responses == 2, "second response %d", h.status);
    CHECK(h.range_start == 100 && h.range_total == 1000, "range %lld/%lld", (long long)h.range_start,
          (long long)h.range_total);
    CHECK(rf_hub_headers_sha256(&h) && !strcmp(rf_hub_headers_sha256(&h), SHA_A),
          "X-Linked-Etag wins, lower-cased");
    CHECK(!strcmp(h.etag_sha256, "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
          "ETag of the first response only");

    /* a file kept in git: ETag is a sha1, so no digest */
    rf_hub_headers_init(&h);
    feed(&h, "HTTP/1.1 200 OK");
    feed(&h, "etag: W/\"a94a8fe5ccb19ba61c4c0873d391e987982fbbd3\"");
    CHECK(rf_hub_headers_sha256(&h) == NULL, "a git sha1 is no sha256");
    rf_hub_headers_init(&h);
    feed(&h, "HTTP/1.1 200 OK");
    feed(&h, "ETag:   W/\"" SHA_A "\"  ");
    CHECK(rf_hub_headers_sha256(&h) && !strcmp(rf_hub_headers_sha256(&h), SHA_A), "W/ and spaces");

    /* malformed values are ignored */
    rf_hub_headers_init(&h);
    feed(&h, "HTTP/1.1 404 Not Found");
    feed(&h, "X-Error-Code: Revision\x01NotFound ");
    feed(&h, "X-Linked-Etag: \"" SHA_A "0\"");
    feed(&h, "X-Linked-Etag: \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg\"");
    feed(&h, "Content-Range: bytes 5-4/10");
    CHECK(h.status == 404 && !strcmp(h.error_code, "RevisionNotFound"), "code '%s'", h.error_code);
    CHECK(rf_hub_headers_sha256(&h) == NULL, "65 digits or a non-hex digit: no digest");
    CHECK(h.range_start == -1, "a backwards range is ignored");
    feed(&h, "Content-Range: bytes 0-9/*");
    CHECK(h.range_start == 0 && h.range_total == -1, "unknown total");
    feed(&h, "Content-Range: bytes 0-9/9");
    CHECK(h.range_start == 0, "a total not past the range is ignored (previous value kept)");
    feed(&h, "HTTP/1.1 2000 Odd");
    CHECK(h.status == 0 && h.range_start == -1 && h.error_code[0] == '\0',
          "a new response resets its fields; a 4-digit status is none");
}

static void test_sha256(void)
{
    char path[] = "/tmp/test_hub_unitsXXXXXX", hex[65];
    rf_error err;
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, "abc", 3) == 3, "temporary file");
    close(fd);
    CHECK(rf_sha256_file(path, hex, &err) == RF_OK, "sha256 of a file");
    CHECK(!strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
          "sha256('abc') = %s (FIPS 180-2 example)", hex);
    unlink(path);
    CHECK(rf_sha256_file(path, hex, &err) == RF_ERR_IO, "a missing file is RF_ERR_IO");
}

static void test_pull_params(void)
{
    rf_hub_params p = rf_hub_default_params();
    rf_error err;
    char path[64];
    p.convert.jieba_dict = "dict.txt";
    CHECK(rf_hub_pull("a/b", &p, path, sizeof path, &err) == RF_ERR_UNSUPPORTED,
          "an own jieba dictionary is refused");
    CHECK(rf_hub_pull("a", NULL, path, sizeof path, &err) == RF_ERR_INPUT, "a bad name is refused");
}

int main(void)
{
    test_repo_names();
    test_urls();
    test_cache_dir();
    test_headers();
    test_sha256();
    test_pull_params();
    return check_done();
}
