/*
 * log.c — request log lines (see log.h). Each line is formatted whole and
 * written with one fputs on unbuffered stderr, so lines from concurrent
 * requests do not interleave. Text lines replace control bytes of the
 * client's path with '?'; JSON lines escape them.
 */
#include "serve/log.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void timestamp(char *buf, size_t n)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    size_t k = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + k, n - k, ".%03ldZ", ts.tv_nsec / 1000000);
}

static void log_json(const serve_log_entry *e, const char *time)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "time", time);
    cJSON_AddStringToObject(o, "method", e->method);
    cJSON_AddStringToObject(o, "path", e->path);
    cJSON_AddNumberToObject(o, "status", e->status);
    cJSON_AddNumberToObject(o, "ms", (double)(int64_t)(e->seconds * 1e6) / 1e3);
    if (e->inputs) {
        cJSON_AddNumberToObject(o, "inputs", e->inputs);
        cJSON_AddNumberToObject(o, "tokens", e->tokens);
        cJSON_AddNumberToObject(o, "queue_ms", (double)(int64_t)(e->queue_seconds * 1e6) / 1e3);
        cJSON_AddNumberToObject(o, "inference_ms",
                                (double)(int64_t)(e->inference_seconds * 1e6) / 1e3);
    }
    if (e->error[0])
        cJSON_AddStringToObject(o, "error", e->error);
    char *line = cJSON_PrintUnformatted(o);
    if (line) {
        size_t n = strlen(line);
        char *with_nl = realloc(line, n + 2);
        if (with_nl) {
            memcpy(with_nl + n, "\n", 2);
            fputs(with_nl, stderr);
            line = with_nl;
        }
    }
    free(line);
    cJSON_Delete(o);
}

void serve_log_request(serve_log_format format, const serve_log_entry *e)
{
    char time[40];
    timestamp(time, sizeof time);
    if (format == SERVE_LOG_JSON) {
        log_json(e, time);
        return;
    }
    char path[256];
    snprintf(path, sizeof path, "%s", e->path);
    for (char *p = path; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == ' ')
            *p = '?';
    char line[1024];
    int k = snprintf(line, sizeof line, "%s %s %s %d %.3fms", time, e->method, path, e->status,
                     e->seconds * 1e3);
    if (e->inputs && k > 0 && (size_t)k < sizeof line)
        k += snprintf(line + k, sizeof line - k, " inputs=%d tokens=%d queue=%.3fms inference=%.3fms",
                      e->inputs, e->tokens, e->queue_seconds * 1e3, e->inference_seconds * 1e3);
    if (e->error[0] && k > 0 && (size_t)k < sizeof line)
        k += snprintf(line + k, sizeof line - k, " error=\"%s\"", e->error);
    if (k < 0 || (size_t)k >= sizeof line - 1)
        k = (int)sizeof line - 2;
    line[k] = '\n';
    line[k + 1] = '\0';
    fputs(line, stderr);
}
