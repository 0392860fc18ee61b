/*
 * safetensors.c — safetensors reader: the JSON header through cJSON, every
 * shape and data offset checked against the buffer (format in safetensors.h).
 */
#include "formats/safetensors.h"

#include "base/error.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

static const struct {
    const char *name;
    rf_ck_dtype dtype;
} dtypes[] = {
    {"F64", RF_CK_F64}, {"F32", RF_CK_F32}, {"F16", RF_CK_F16}, {"BF16", RF_CK_BF16},
    {"I64", RF_CK_I64}, {"I32", RF_CK_I32}, {"I16", RF_CK_I16}, {"I8", RF_CK_I8},
    {"U8", RF_CK_U8},   {"BOOL", RF_CK_BOOL},
};

static const char unsupported_dtype[] = "has an unsupported dtype";

/* A JSON number that is a whole number in [0, 2^53]. */
static bool json_index(const cJSON *j, uint64_t *out)
{
    if (!cJSON_IsNumber(j))
        return false;
    double d = j->valuedouble;
    if (!(d >= 0 && d <= 9007199254740992.0) || floor(d) != d)
        return false;
    *out = (uint64_t)d;
    return true;
}

/* Fills `t` from one header entry; returns a static description of what is
 * wrong, or NULL. */
static const char *parse_entry(const cJSON *e, const uint8_t *base, uint64_t data_size,
                               rf_ck_tensor *t)
{
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    uint64_t begin, end, count = 1;
    if (!cJSON_IsObject(e) || !cJSON_IsString(dt) || !cJSON_IsArray(shape) || !cJSON_IsArray(offs))
        return "needs \"dtype\", \"shape\" and \"data_offsets\"";
    size_t i;
    for (i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (!strcmp(dt->valuestring, dtypes[i].name))
            break;
    if (i == sizeof dtypes / sizeof dtypes[0])
        return unsupported_dtype;
    t->dtype = dtypes[i].dtype;
    int n = cJSON_GetArraySize(shape);
    if (n > RF_CK_MAX_DIMS)
        return "has too many dimensions";
    t->n_dims = n;
    const cJSON *d;
    i = 0;
    cJSON_ArrayForEach(d, shape) {
        uint64_t v;
        if (!json_index(d, &v))
            return "has a bad shape";
        /* no tensor holds more elements than the file has bytes */
        if (v != 0 && count > data_size / v)
            return "has a shape larger than the file";
        count *= v;
        t->shape[i++] = (int64_t)v;
    }
    if (cJSON_GetArraySize(offs) != 2 || !json_index(cJSON_GetArrayItem(offs, 0), &begin) ||
        !json_index(cJSON_GetArrayItem(offs, 1), &end))
        return "has bad data_offsets";
    if (begin > end || end > data_size)
        return "has data_offsets outside the file";
    if (end - begin != count * rf_ck_dtype_size(t->dtype))
        return "has data_offsets that do not match its shape and dtype";
    t->count = (int64_t)count;
    t->nbytes = (size_t)(end - begin);
    t->data = base + begin;
    return NULL;
}

rf_status rf_safetensors_read(const void *data, size_t size, const char *what, rf_checkpoint *ck,
                              rf_error *err)
{
    const uint8_t *p = data;
    cJSON *root = NULL;
    rf_status st = RF_OK;
    uint64_t hlen = 0;
    if (size < 8) {
        st = rf_fail(err, RF_ERR_FORMAT, "%s: truncated file (%zu bytes, no safetensors header)",
                     what, size);
        goto done;
    }
    for (int i = 0; i < 8; i++)
        hlen |= (uint64_t)p[i] << (8 * i);
    if (hlen > RF_SAFETENSORS_MAX_HEADER) {
        st = rf_fail(err, RF_ERR_LIMIT, "%s: safetensors header of %llu bytes exceeds the limit",
                     what, (unsigned long long)hlen);
        goto done;
    }
    if (hlen > size - 8) {
        st = rf_fail(err, RF_ERR_FORMAT,
                     "%s: truncated file (header needs %llu bytes, file has %zu)", what,
                     (unsigned long long)(hlen + 8), size);
        goto done;
    }
    root = cJSON_ParseWithLength((const char *)p + 8, (size_t)hlen);
    if (!cJSON_IsObject(root)) {
        st = rf_fail(err, RF_ERR_FORMAT, "%s: safetensors header is not a JSON object", what);
        goto done;
    }
    const uint8_t *base = p + 8 + hlen;
    uint64_t data_size = size - 8 - hlen;
    const cJSON *e;
    cJSON_ArrayForEach(e, root) {
        if (!strcmp(e->string, "__metadata__"))
            continue;
        rf_ck_tensor t = {0};
        const char *bad = parse_entry(e, base, data_size, &t);
        if (bad) {
            st = rf_fail(err, bad == unsupported_dtype ? RF_ERR_UNSUPPORTED : RF_ERR_FORMAT,
                         "%s: tensor '%s' %s", what, e->string, bad);
            goto done;
        }
        if ((st = rf_checkpoint_add(ck, e->string, strlen(e->string), &t, err)))
            goto done;
    }
    st = rf_checkpoint_index(ck, what, err);
done:
    cJSON_Delete(root);
    return st;
}
