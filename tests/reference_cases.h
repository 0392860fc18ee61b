/*
 * reference_cases.h — one case of <reference>/models/<model>/cases.jsonl:
 * its id, token ids, type ids and mask ([B][L]) and the names of the
 * outputs stored for it in expected.safetensors; the reference models
 * themselves: for_each_reference_model walks <reference>/models in name
 * order and load_reference_model loads one. Shared by the tests that run
 * the reference models.
 */
#ifndef RF_TEST_REFERENCE_CASES_H
#define RF_TEST_REFERENCE_CASES_H

#include "check.h"
#include "roformer.h"

#include <cJSON.h>
#include <dirent.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char id[32];
    int B, L;
    int32_t *ids, *types, *mask; /* [B][L] */
    cJSON *outputs;              /* names stored in expected.safetensors */
} test_case;

/* Reads a [B][L] int array of the case; returns NULL on a malformed one. */
static inline int32_t *read_matrix(const cJSON *obj, const char *key, int *B, int *L)
{
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(obj, key);
    int b = cJSON_GetArraySize(rows), l = b ? cJSON_GetArraySize(cJSON_GetArrayItem(rows, 0)) : 0;
    if (!cJSON_IsArray(rows) || b == 0 || l == 0 || (*B && (b != *B || l != *L)))
        return NULL;
    int32_t *m = malloc((size_t)b * l * sizeof *m);
    int i = 0;
    const cJSON *row, *v;
    cJSON_ArrayForEach(row, rows) {
        if (cJSON_GetArraySize(row) != l) {
            free(m);
            return NULL;
        }
        cJSON_ArrayForEach(v, row) m[i++] = (int32_t)v->valuedouble;
    }
    *B = b;
    *L = l;
    return m;
}

static inline int read_case(const char *line, test_case *c)
{
    memset(c, 0, sizeof *c);
    cJSON *obj = cJSON_Parse(line);
    if (!obj)
        return -1;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(obj, "id");
    snprintf(c->id, sizeof c->id, "%s", cJSON_IsString(id) ? id->valuestring : "?");
    c->ids = read_matrix(obj, "input_ids", &c->B, &c->L);
    c->types = read_matrix(obj, "token_type_ids", &c->B, &c->L);
    c->mask = read_matrix(obj, "attention_mask", &c->B, &c->L);
    c->outputs = cJSON_DetachItemFromObjectCaseSensitive(obj, "outputs");
    cJSON_Delete(obj);
    return c->ids && c->types && c->mask && c->outputs ? 0 : -1;
}

static inline void free_case(test_case *c)
{
    free(c->ids);
    free(c->types);
    free(c->mask);
    cJSON_Delete(c->outputs);
}

static inline int case_has(const test_case *c, const char *what)
{
    const cJSON *o;
    cJSON_ArrayForEach(o, c->outputs) {
        if (cJSON_IsString(o) && !strcmp(o->valuestring, what))
            return 1;
    }
    return 0;
}

/* scandir's comparator: entries in name order. */
static inline int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* Calls fn(dir, name, user) for each folder of <ref>/models that holds
 * `file` (e.g. "cases.jsonl"), in name order; returns how many it found. */
static inline int for_each_reference_model(const char *ref, const char *file,
                                           void (*fn)(const char *dir, const char *name,
                                                      void *user),
                                           void *user)
{
    char models[1024];
    snprintf(models, sizeof models, "%s/models", ref);
    struct dirent **names;
    int n = scandir(models, &names, NULL, by_name), found = 0;
    CHECK(n > 2, "%s lists model directories", models);
    for (int i = 0; i < n; i++) {
        char dir[1400], path[1600];
        snprintf(dir, sizeof dir, "%s/%s", models, names[i]->d_name);
        snprintf(path, sizeof path, "%s/%s", dir, file);
        if (names[i]->d_name[0] != '.' && access(path, F_OK) == 0) {
            found++;
            fn(dir, names[i]->d_name, user);
        }
        free(names[i]);
    }
    if (n > 0)
        free(names);
    return found;
}

/* The reference model <ref>/models/<name>, or NULL (a failed check). */
static inline rf_model *load_reference_model(const char *ref, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/models/%s", ref, name);
    rf_model *m = NULL;
    rf_error err;
    if (rf_model_load(path, &m, &err) != RF_OK)
        CHECK(0, "loading %s: %s", path, err.message);
    return m;
}

#endif
