/*
 * unicode.c — Python-compatible character classes and case mapping over
 * utf8proc (HF tokenization_bert.py: _is_control, _is_whitespace,
 * _is_punctuation, _is_chinese_char; str.lower()).
 */
#include "text/unicode.h"

#include <utf8proc.h>

int rf_uni_lower(int32_t cp, int32_t out[3])
{
    if (cp < 0x80) {
        out[0] = cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
        return 1;
    }
    /* The one unconditional multi-character lower-case mapping in
     * SpecialCasing.txt; utf8proc only has the simple mappings. */
    if (cp == 0x130) {
        out[0] = 'i';
        out[1] = 0x307;
        return 2;
    }
    out[0] = utf8proc_tolower(cp);
    return 1;
}

bool rf_uni_is_control(int32_t cp)
{
    if (cp == '\t' || cp == '\n' || cp == '\r')
        return false;
    switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CN:
        return true;
    default:
        return false;
    }
}

bool rf_uni_is_space(int32_t cp)
{
    if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r')
        return true;
    return cp >= 0x80 && utf8proc_category(cp) == UTF8PROC_CATEGORY_ZS;
}

bool rf_uni_splits_words(int32_t cp)
{
    /* Python's str.split() whitespace that survives cleaning: the line and
     * paragraph separators (categories Zl, Zp). */
    return cp == 0x2028 || cp == 0x2029;
}

bool rf_uni_is_punct(int32_t cp)
{
    if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
        (cp >= 123 && cp <= 126))
        return true;
    if (cp < 0x80)
        return false;
    switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
        return true;
    default:
        return false;
    }
}

bool rf_uni_is_mark_mn(int32_t cp)
{
    return cp >= 0x300 && utf8proc_category(cp) == UTF8PROC_CATEGORY_MN;
}

int rf_uni_combining_class(int32_t cp)
{
    return cp < 0x300 ? 0 : utf8proc_get_property(cp)->combining_class;
}

/* Full canonical decomposition with canonical ordering (the first half of
 * both NFD and NFC). */
ptrdiff_t rf_uni_nfd(const int32_t *in, size_t n, int32_t *out, size_t cap)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        int boundclass = 0;
        utf8proc_ssize_t got = utf8proc_decompose_char(in[i], out + len, (utf8proc_ssize_t)(cap - len),
                                                       UTF8PROC_DECOMPOSE | UTF8PROC_STABLE,
                                                       &boundclass);
        if (got < 0 || (size_t)got > cap - len)
            return -1;
        len += (size_t)got;
    }
    /* Canonical ordering: a stable sort of each run of non-starters by
     * combining class (runs are short; insertion sort). */
    for (size_t i = 1; i < len; i++) {
        int cc = rf_uni_combining_class(out[i]);
        if (cc == 0)
            continue;
        int32_t c = out[i];
        size_t j = i;
        while (j > 0) {
            int pc = rf_uni_combining_class(out[j - 1]);
            if (pc == 0 || pc <= cc)
                break;
            out[j] = out[j - 1];
            j--;
        }
        out[j] = c;
    }
    return (ptrdiff_t)len;
}

ptrdiff_t rf_uni_nfc(const int32_t *in, size_t n, int32_t *out, size_t cap)
{
    ptrdiff_t len = rf_uni_nfd(in, n, out, cap);
    if (len <= 0)
        return len;
    utf8proc_ssize_t composed = utf8proc_normalize_utf32(out, len, UTF8PROC_COMPOSE | UTF8PROC_STABLE);
    return composed < 0 ? -1 : (ptrdiff_t)composed;
}
