/*
 * openai.c — OpenAI's error body and embedding dimensions (see openai.h).
 */
#include "serve/openai.h"

#include "roformer.h"

#include <cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The field a message names first: the text before ": " when it has no
 * space ("input[1]: invalid UTF-8" names "input[1]"); "body" names none. */
static bool message_param(const char *msg, char *param, size_t n)
{
    const char *colon = strstr(msg, ": ");
    size_t len = colon ? (size_t)(colon - msg) : 0;
    if (len == 0 || len >= n || memchr(msg, ' ', len) || (len == 4 && !strncmp(msg, "body", 4)))
        return false;
    memcpy(param, msg, len);
    param[len] = '\0';
    return true;
}

void serve_openai_error(serve_response *resp, int status, const char *msg)
{
    if (status == 422)
        status = 400;
    char param[64];
    bool has_param = message_param(msg, param, sizeof param);
    /* a 404 that names the "model" field: OpenAI's unknown model */
    const char *code = status == 401                                  ? "invalid_api_key"
                       : status == 404 && has_param && !strcmp(param, "model") ? "model_not_found"
                       : status == 404                                ? "unknown_url"
                       : status == 429                                ? "rate_limit_exceeded"
                                                                      : NULL;
    cJSON *obj = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(obj, "error");
    cJSON_AddStringToObject(e, "message", msg);
    cJSON_AddStringToObject(e, "type", status >= 500 ? "server_error" : "invalid_request_error");
    if (has_param)
        cJSON_AddStringToObject(e, "param", param);
    else
        cJSON_AddNullToObject(e, "param");
    if (code)
        cJSON_AddStringToObject(e, "code", code);
    else
        cJSON_AddNullToObject(e, "code");
    char *text = e ? cJSON_PrintUnformatted(obj) : NULL;
    cJSON_Delete(obj);
    if (!text) /* nothing left to build JSON with: a fixed body */
        text = strdup("{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\","
                      "\"param\":null,\"code\":null}}");
    *resp = (serve_response){.status = status, .content_type = "application/json",
                             .body = text, .len = text ? strlen(text) : 0};
}

void serve_openai_truncate(float *vecs, int32_t n, int32_t D, int32_t dims)
{
    for (int32_t i = 0; i < n; i++) {
        memmove(vecs + (size_t)i * dims, vecs + (size_t)i * D, sizeof(float) * (size_t)dims);
        rf_l2_normalize(vecs + (size_t)i * dims, dims);
    }
}
