/*
 * log.h — the request log: one line per request on stderr, as text or as
 * a JSON object (--log-format text|json).
 */
#ifndef RF_SERVE_LOG_H
#define RF_SERVE_LOG_H

#include <stdbool.h>
#include <stdint.h>

typedef enum { SERVE_LOG_TEXT, SERVE_LOG_JSON } serve_log_format;

typedef struct {
    const char *method, *path; /* as received (untrusted; escaped when written) */
    int status;
    double seconds;            /* headers in to response queued */
    int32_t inputs, tokens;    /* 0 for requests that ran nothing */
    double queue_seconds;      /* waiting for the batcher */
    double inference_seconds;  /* its batch's run */
    double tokenize_seconds;   /* counting its tokens */
    int64_t characters;        /* of its texts */
    bool batch;                /* a list of inputs was sent */
    bool openai;               /* errors in OpenAI's shape (paths under /v1/, /embeddings) */
    int model;                 /* the index of the model it ran on (0: the first, also
                                  when refused before one was chosen) */
    char error[256];           /* the error message; "" when none */
    const char *error_type;    /* TEI's error_type of it; NULL when none */
} serve_log_entry;

void serve_log_request(serve_log_format format, const serve_log_entry *e);

#endif
