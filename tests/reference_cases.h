/*
 * reference_cases.h — one case of <reference>/models/<model>/cases.jsonl:
 * its id, token ids, type ids and mask ([B][L]) and the names of the
 * outputs stored for it in expected.safetensors, and by_name, which
 * scandir uses to list <reference>/models in name order. Shared by the
 * tests that run the reference cases.
 */
#ifndef RF_TEST_REFERENCE_CASES_H
#define RF_TEST_REFERENCE_CASES_H

#include <cJSON.h>
#include <dirent.h>
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

#endif
