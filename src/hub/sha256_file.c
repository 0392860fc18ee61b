/*
 * sha256_file.c — rf_sha256_file (roformer.h): sha256 of a file through
 * OpenSSL's EVP digest. It reads the file in 1 MiB blocks; it does not
 * compare digests (the downloader does).
 */
#include "roformer.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK (1 << 20)

rf_status rf_sha256_file(const char *path, char hex[65], rf_error *err)
{
    rf_status st = RF_OK;
    unsigned char *buf = malloc(BLOCK);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (!buf || !md) {
        st = rf_fail(err, RF_ERR_NOMEM, "%s: out of memory for its sha256", path);
        goto done;
    }
    if (fd < 0) {
        st = rf_fail(err, RF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        goto done;
    }
    if (!EVP_DigestInit_ex(md, EVP_sha256(), NULL)) {
        st = rf_fail(err, RF_ERR_UNSUPPORTED, "%s: OpenSSL has no sha256", path);
        goto done;
    }
    for (;;) {
        ssize_t n = read(fd, buf, BLOCK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            st = rf_fail(err, RF_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
            goto done;
        }
        if (n == 0)
            break;
        EVP_DigestUpdate(md, buf, (size_t)n);
    }
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(md, digest, &len);
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < 32; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[64] = '\0';
done:
    if (fd >= 0)
        close(fd);
    EVP_MD_CTX_free(md);
    free(buf);
    return st;
}
