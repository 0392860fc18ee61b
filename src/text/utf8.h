/*
 * utf8.h — UTF-8 validation (utf8proc), and decoding / encoding of text
 * that has already been validated.
 *
 * Every text the tokenizer receives is validated once, up front, with
 * rf_utf8_validate; the later stages decode with the unchecked inline
 * rf_utf8_decode, which must only ever see validated bytes.
 */
#ifndef RF_UTF8_H
#define RF_UTF8_H

#include "roformer.h" /* rf_utf8_validate, public */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Encodes `cp` into dst (room for 4 bytes); returns the byte count. */
int rf_utf8_encode(int32_t cp, char *dst);

/* Decodes the code point at s (validated UTF-8); returns its byte length. */
static inline int rf_utf8_decode(const char *s, int32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    if (u[0] < 0x80) {
        *cp = u[0];
        return 1;
    }
    if (u[0] < 0xE0) {
        *cp = ((u[0] & 0x1F) << 6) | (u[1] & 0x3F);
        return 2;
    }
    if (u[0] < 0xF0) {
        *cp = ((u[0] & 0x0F) << 12) | ((u[1] & 0x3F) << 6) | (u[2] & 0x3F);
        return 3;
    }
    *cp = ((u[0] & 0x07) << 18) | ((u[1] & 0x3F) << 12) | ((u[2] & 0x3F) << 6) | (u[3] & 0x3F);
    return 4;
}

#endif
