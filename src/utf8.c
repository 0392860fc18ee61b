/*
 * utf8.c — UTF-8 validation and encoding on top of utf8proc.
 */
#include "utf8.h"

#include <string.h>
#include <utf8proc.h>

bool rf_utf8_validate(const char *s, size_t len, size_t *bad_offset)
{
    const utf8proc_uint8_t *u = (const utf8proc_uint8_t *)s;
    size_t i = 0;
    while (i < len) {
        /* ASCII runs are the bulk of punctuation and digits: 8 bytes at a time. */
        while (i + 8 <= len) {
            uint64_t w;
            memcpy(&w, u + i, 8);
            if (w & 0x8080808080808080ull)
                break;
            i += 8;
        }
        if (i >= len)
            break;
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        utf8proc_int32_t cp;
        utf8proc_ssize_t n = utf8proc_iterate(u + i, (utf8proc_ssize_t)(len - i), &cp);
        if (n <= 0) {
            if (bad_offset)
                *bad_offset = i;
            return false;
        }
        i += (size_t)n;
    }
    return true;
}

int rf_utf8_encode(int32_t cp, char *dst)
{
    return (int)utf8proc_encode_char(cp, (utf8proc_uint8_t *)dst);
}
