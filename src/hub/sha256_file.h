/*
 * sha256_file.h — the sha256 of a whole file, as lower-case hex, computed
 * with OpenSSL's EVP interface (libcrypto).
 */
#ifndef RF_SHA256_FILE_H
#define RF_SHA256_FILE_H

#include "roformer.h"

/* hex: 64 digits and a NUL. RF_ERR_IO when the file cannot be read. */
rf_status rf_sha256_file(const char *path, char hex[65], rf_error *err);

#endif
