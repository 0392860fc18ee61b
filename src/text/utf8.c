/*
 * utf8.c — UTF-8 validation and encoding on top of utf8proc.
 */
#include "text/utf8.h"

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
        /* Fast path for the bulk of CJK text: a lead byte E1..EC or EE..EF
         * with two continuation bytes is always a valid character (the
         * overlong and surrogate cases need E0 and ED). Everything else
         * goes through utf8proc. */
        if (i + 3 <= len && u[i] >= 0xE1 && u[i] <= 0xEF && u[i] != 0xED &&
            (u[i + 1] & 0xC0) == 0x80 && (u[i + 2] & 0xC0) == 0x80) {
            i += 3;
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
