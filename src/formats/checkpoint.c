/*
 * checkpoint.c — the tensor set the checkpoint readers fill (see
 * checkpoint.h). Opening a file by its content is checkpoint_open.c, so that
 * this container knows none of its readers.
 */
#include "formats/checkpoint.h"

#include "base/error.h"
#include "base/sorted_find.h"

#include <stdlib.h>
#include <string.h>

size_t rf_ck_dtype_size(rf_ck_dtype t)
{
    switch (t) {
    case RF_CK_F64: case RF_CK_I64: return 8;
    case RF_CK_F32: case RF_CK_I32: return 4;
    case RF_CK_F16: case RF_CK_BF16: case RF_CK_I16: return 2;
    case RF_CK_I8: case RF_CK_U8: case RF_CK_BOOL: return 1;
    }
    return 0;
}

const char *rf_ck_dtype_name(rf_ck_dtype t)
{
    switch (t) {
    case RF_CK_F64: return "F64";
    case RF_CK_F32: return "F32";
    case RF_CK_F16: return "F16";
    case RF_CK_BF16: return "BF16";
    case RF_CK_I64: return "I64";
    case RF_CK_I32: return "I32";
    case RF_CK_I16: return "I16";
    case RF_CK_I8: return "I8";
    case RF_CK_U8: return "U8";
    case RF_CK_BOOL: return "BOOL";
    }
    return "unknown";
}

rf_status rf_checkpoint_own(rf_checkpoint *ck, void *p, rf_error *err)
{
    if (ck->n_owned == ck->cap_owned) {
        int32_t cap = ck->cap_owned ? 2 * ck->cap_owned : 16;
        void **o = realloc(ck->owned, (size_t)cap * sizeof *o);
        if (!o) {
            free(p);
            return rf_fail(err, RF_ERR_NOMEM, "out of memory");
        }
        ck->owned = o;
        ck->cap_owned = cap;
    }
    ck->owned[ck->n_owned++] = p;
    return RF_OK;
}

rf_status rf_checkpoint_add(rf_checkpoint *ck, const char *name, size_t name_len,
                            const rf_ck_tensor *t, rf_error *err)
{
    if (ck->n >= RF_CK_MAX_TENSORS)
        return rf_fail(err, RF_ERR_LIMIT, "more than %d tensors", RF_CK_MAX_TENSORS);
    if (ck->n == ck->cap) {
        int32_t cap = ck->cap ? 2 * ck->cap : 64;
        rf_ck_tensor *ts = realloc(ck->tensors, (size_t)cap * sizeof *ts);
        if (!ts)
            return rf_fail(err, RF_ERR_NOMEM, "out of memory");
        ck->tensors = ts;
        ck->cap = cap;
    }
    char *copy = malloc(name_len + 1);
    if (!copy)
        return rf_fail(err, RF_ERR_NOMEM, "out of memory");
    memcpy(copy, name, name_len);
    copy[name_len] = '\0';
    ck->tensors[ck->n] = *t;
    ck->tensors[ck->n].name = copy;
    ck->n++;
    free(ck->order); /* stale until the reader indexes again */
    ck->order = NULL;
    return RF_OK;
}

static int cmp_name(const void *a, const void *b, void *tensors)
{
    const rf_ck_tensor *t = tensors;
    return strcmp(t[*(const int32_t *)a].name, t[*(const int32_t *)b].name);
}

rf_status rf_checkpoint_index(rf_checkpoint *ck, const char *what, rf_error *err)
{
    free(ck->order);
    ck->order = malloc(((size_t)ck->n + 1) * sizeof *ck->order);
    if (!ck->order)
        return rf_fail(err, RF_ERR_NOMEM, "%s: out of memory", what);
    for (int32_t i = 0; i < ck->n; i++)
        ck->order[i] = i;
    qsort_r(ck->order, (size_t)ck->n, sizeof *ck->order, cmp_name, ck->tensors);
    for (int32_t i = 1; i < ck->n; i++)
        if (!strcmp(ck->tensors[ck->order[i - 1]].name, ck->tensors[ck->order[i]].name))
            return rf_fail(err, RF_ERR_FORMAT, "%s: duplicate tensor '%.200s'", what,
                           ck->tensors[ck->order[i]].name);
    return RF_OK;
}

typedef struct {
    const rf_checkpoint *ck;
    const char *name;
} find_key;

static int cmp_at(const void *ctx, int64_t i)
{
    const find_key *k = ctx;
    return strcmp(k->ck->tensors[k->ck->order[i]].name, k->name);
}

const rf_ck_tensor *rf_checkpoint_find(const rf_checkpoint *ck, const char *name)
{
    if (!ck->order) /* not indexed yet (a reader still adding) */
        return NULL;
    find_key key = {ck, name};
    int64_t i = rf_sorted_find(ck->n, cmp_at, &key);
    return i < 0 ? NULL : &ck->tensors[ck->order[i]];
}

void rf_checkpoint_free(rf_checkpoint *ck)
{
    if (!ck)
        return;
    for (int32_t i = 0; i < ck->n; i++)
        free(ck->tensors[i].name);
    free(ck->tensors);
    for (int32_t i = 0; i < ck->n_owned; i++)
        free(ck->owned[i]);
    free(ck->owned);
    free(ck->order);
    rf_unmap_file(&ck->map);
    free(ck);
}
