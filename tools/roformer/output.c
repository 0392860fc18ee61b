/*
 * output.c — JSON lines on stdout through cJSON. cJSON prints doubles with
 * up to 17 digits, so a float32 like 0.1f would come out as
 * 0.10000000149011612; floats are written here as raw numbers with the
 * shortest "%.Ng" (N = 6..9) that parses back to the same float32.
 */
#include "output.h"

#include <math.h>
#include <stdlib.h>

cJSON *cli_json_float(float v)
{
    if (!isfinite(v))
        return cJSON_CreateNull();
    char buf[32];
    for (int digits = 6; digits <= 9; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, (double)v);
        if (strtof(buf, NULL) == v)
            break;
    }
    return cJSON_CreateRaw(buf);
}

cJSON *cli_json_floats(const float *x, int32_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int32_t i = 0; arr && i < n; i++) {
        cJSON *v = cli_json_float(x[i]);
        if (!v || !cJSON_AddItemToArray(arr, v)) {
            cJSON_Delete(v);
            cJSON_Delete(arr);
            return NULL;
        }
    }
    return arr;
}

void cli_add_float(cJSON *obj, const char *name, float v)
{
    cJSON *num = cli_json_float(v);
    if (!num || !cJSON_AddItemToObject(obj, name, num))
        cJSON_Delete(num);
}

cJSON *cli_json_error(const char *msg, long line)
{
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddStringToObject(obj, "error", msg);
    cJSON_AddNumberToObject(obj, "line", (double)line);
    return obj;
}

int cli_write_json(FILE *f, const cJSON *obj)
{
    char *s = obj ? cJSON_PrintUnformatted(obj) : NULL;
    if (!s)
        return -1;
    int rc = fputs(s, f) < 0 || fputc('\n', f) == EOF ? -1 : 0;
    free(s);
    return rc;
}
