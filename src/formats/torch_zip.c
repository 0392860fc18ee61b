/*
 * torch_zip.c — the zip container of torch.save archives (see torch_zip.h),
 * following PKWARE's APPNOTE.TXT: end of central directory record (and its
 * zip64 form), central directory headers, local file headers.
 */
#include "formats/torch_zip.h"

#include "base/error.h"
#include "formats/pickle.h"

#include <stdlib.h>
#include <string.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOCATOR64 0x07064b50u

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Locates the central directory: offset, size and entry count. */
static rf_status find_directory(const uint8_t *p, size_t size, const char *what, uint64_t *cd_off,
                                uint64_t *cd_size, uint64_t *count, rf_error *err)
{
    if (size < 22)
        return rf_fail(err, RF_ERR_FORMAT, "%s: truncated zip archive (%zu bytes)", what, size);
    size_t lo = size - 22 > 65535 ? size - 22 - 65535 : 0;
    size_t at = size - 22;
    while (le(p + at, 4) != SIG_EOCD) {
        if (at == lo)
            return rf_fail(err, RF_ERR_FORMAT, "%s: truncated zip archive (no end of central directory)",
                           what);
        at--;
    }
    *count = le(p + at + 10, 2);
    *cd_size = le(p + at + 12, 4);
    *cd_off = le(p + at + 16, 4);
    if (*count == 0xffff || *cd_size == 0xffffffffu || *cd_off == 0xffffffffu) {
        /* zip64: a locator just before the record points at the 64-bit record */
        if (at < 20 || le(p + at - 20, 4) != SIG_LOCATOR64)
            return rf_fail(err, RF_ERR_FORMAT, "%s: zip64 archive without a zip64 locator", what);
        uint64_t rec = le(p + at - 20 + 8, 8);
        if (rec > size || size - rec < 56 || le(p + rec, 4) != SIG_EOCD64)
            return rf_fail(err, RF_ERR_FORMAT, "%s: bad zip64 end of central directory", what);
        *count = le(p + rec + 32, 8);
        *cd_size = le(p + rec + 40, 8);
        *cd_off = le(p + rec + 48, 8);
    }
    if (*cd_off > size || *cd_size > size - *cd_off)
        return rf_fail(err, RF_ERR_FORMAT, "%s: truncated zip archive (central directory outside the file)",
                       what);
    /* a central directory header is at least 46 bytes */
    if (*count > RF_ZIP_MAX_ENTRIES || *count > *cd_size / 46)
        return rf_fail(err, RF_ERR_FORMAT, "%s: zip archive claims %llu entries in %llu bytes", what,
                       (unsigned long long)*count, (unsigned long long)*cd_size);
    return RF_OK;
}

/* Reads the zip64 extra field of a central directory header: the 64-bit
 * values of the fields whose 32-bit slots hold 0xffffffff, in order. */
static bool zip64_extra(const uint8_t *extra, size_t n, uint64_t *usize, uint64_t *csize,
                        uint64_t *offset)
{
    size_t i = 0;
    while (n - i >= 4) {
        uint64_t id = le(extra + i, 2), len = le(extra + i + 2, 2);
        if (len > n - i - 4)
            return false;
        if (id == 1) {
            const uint8_t *f = extra + i + 4;
            uint64_t *fields[3] = {usize, csize, offset};
            for (int k = 0; k < 3; k++) {
                if (*fields[k] != 0xffffffffu)
                    continue;
                if (len < 8)
                    return false;
                *fields[k] = le(f, 8);
                f += 8;
                len -= 8;
            }
            return true;
        }
        i += 4 + len;
    }
    return *usize != 0xffffffffu && *csize != 0xffffffffu && *offset != 0xffffffffu;
}

rf_status rf_zip_open(const void *data, size_t size, const char *what, rf_zip *out, rf_error *err)
{
    const uint8_t *p = data;
    uint64_t cd_off = 0, cd_size = 0, count = 0;
    rf_status st;
    memset(out, 0, sizeof *out);
    if ((st = find_directory(p, size, what, &cd_off, &cd_size, &count, err)))
        return st;
    out->entries = calloc(count ? count : 1, sizeof *out->entries);
    if (!out->entries)
        return rf_fail(err, RF_ERR_NOMEM, "%s: out of memory", what);
    const uint8_t *c = p + cd_off, *end = c + cd_size;
    for (uint64_t i = 0; i < count; i++) {
        rf_zip_entry *e = &out->entries[i];
        if (end - c < 46 || le(c, 4) != SIG_CENTRAL) {
            st = rf_fail(err, RF_ERR_FORMAT, "%s: bad zip central directory entry %llu", what,
                         (unsigned long long)i);
            goto done;
        }
        uint64_t method = le(c + 10, 2), csize = le(c + 20, 4), usize = le(c + 24, 4);
        uint64_t name_len = le(c + 28, 2), extra_len = le(c + 30, 2), comment_len = le(c + 32, 2);
        uint64_t local = le(c + 42, 4);
        if ((uint64_t)(end - c) - 46 < name_len + extra_len + comment_len) {
            st = rf_fail(err, RF_ERR_FORMAT, "%s: truncated zip central directory", what);
            goto done;
        }
        e->name = (const char *)c + 46;
        e->name_len = name_len;
        if (!zip64_extra(c + 46 + name_len, extra_len, &usize, &csize, &local)) {
            st = rf_fail(err, RF_ERR_FORMAT, "%s: zip entry '%.*s' has a bad zip64 field", what,
                         (int)name_len, e->name);
            goto done;
        }
        c += 46 + name_len + extra_len + comment_len;
        /* the local header repeats the name and has its own extra field */
        if (local > size || size - local < 30 || le(p + local, 4) != SIG_LOCAL) {
            st = rf_fail(err, RF_ERR_FORMAT, "%s: zip entry '%.*s' has a bad local header offset",
                         what, (int)name_len, e->name);
            goto done;
        }
        uint64_t start = local + 30 + le(p + local + 26, 2) + le(p + local + 28, 2);
        if (start > size || csize > size - start) {
            st = rf_fail(err, RF_ERR_FORMAT, "%s: truncated zip archive (entry '%.*s' needs bytes %llu..%llu, file has %zu)",
                         what, (int)name_len, e->name, (unsigned long long)start,
                         (unsigned long long)(start + csize), size);
            goto done;
        }
        e->method = (uint16_t)method;
        e->size = usize;
        e->data = method == 0 && csize == usize ? p + start : NULL;
    }
    out->n = count;
done:
    if (st)
        rf_zip_free(out);
    return st;
}

void rf_zip_free(rf_zip *zip)
{
    free(zip->entries);
    zip->entries = NULL;
    zip->n = 0;
}

const rf_zip_entry *rf_zip_find(const rf_zip *zip, const char *name, size_t name_len)
{
    for (uint64_t i = 0; i < zip->n; i++)
        if (zip->entries[i].name_len == name_len && !memcmp(zip->entries[i].name, name, name_len))
            return &zip->entries[i];
    return NULL;
}

/* ==== torch.save archives ==== */

typedef struct {
    const rf_zip *zip;
    const char *prefix; /* "<archive>/" */
    size_t prefix_len;
} archive;

static const uint8_t *lookup_storage(void *ctx, const char *key, size_t key_len, uint64_t *size)
{
    const archive *a = ctx;
    char name[512];
    if (a->prefix_len + 5 + key_len >= sizeof name)
        return NULL;
    memcpy(name, a->prefix, a->prefix_len);
    memcpy(name + a->prefix_len, "data/", 5);
    memcpy(name + a->prefix_len + 5, key, key_len);
    const rf_zip_entry *e = rf_zip_find(a->zip, name, a->prefix_len + 5 + key_len);
    if (!e || !e->data)
        return NULL;
    *size = e->size;
    return e->data;
}

rf_status rf_torch_read(const void *data, size_t size, const char *what, rf_checkpoint *ck,
                        rf_error *err)
{
    rf_zip zip;
    rf_status st = rf_zip_open(data, size, what, &zip, err);
    const rf_zip_entry *pkl = NULL;
    if (st)
        return st;
    for (uint64_t i = 0; i < zip.n && !pkl; i++) {
        const rf_zip_entry *e = &zip.entries[i];
        const char *slash = memchr(e->name, '/', e->name_len);
        if (slash && e->name + e->name_len - (slash + 1) == 8 && !memcmp(slash + 1, "data.pkl", 8))
            pkl = e;
    }
    if (!pkl) {
        st = rf_fail(err, RF_ERR_FORMAT, "%s: not a torch.save archive (no <name>/data.pkl)", what);
        goto done;
    }
    if (!pkl->data) {
        st = rf_fail(err, RF_ERR_UNSUPPORTED, "%s: data.pkl is compressed", what);
        goto done;
    }
    archive a = {&zip, pkl->name, pkl->name_len - 8};
    char name[512];
    if (a.prefix_len + 9 < sizeof name) {
        memcpy(name, a.prefix, a.prefix_len);
        memcpy(name + a.prefix_len, "byteorder", 9);
        const rf_zip_entry *bo = rf_zip_find(&zip, name, a.prefix_len + 9);
        if (bo && !(bo->data && bo->size == 6 && !memcmp(bo->data, "little", 6))) {
            st = rf_fail(err, RF_ERR_UNSUPPORTED, "%s: storages are not little-endian", what);
            goto done;
        }
    }
    st = rf_unpickle_state_dict(pkl->data, pkl->size, lookup_storage, &a, size, what, ck, err);
done:
    rf_zip_free(&zip);
    return st;
}
