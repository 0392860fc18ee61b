/*
 * file_sha256.h — the sha256 of a whole file as lower-case hex, for the
 * checksum /info shows of each served model (libcrypto's EVP digest, as
 * the library's hub downloads check theirs).
 */
#ifndef RF_SERVE_FILE_SHA256_H
#define RF_SERVE_FILE_SHA256_H

#include <stddef.h>

/* hex: 64 digits and a NUL. 0, or -1 with a one-line reason in msg. */
int serve_file_sha256(const char *path, char hex[65], char *msg, size_t msg_len);

#endif
