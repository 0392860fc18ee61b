/*
 * response.h — what a route answers: the HTTP status and the body that
 * http.c sends. Filled in by the route handlers (routes.h) and by the
 * helpers they call (openai.h), which need nothing else of the routes.
 * The JSON inside the bodies is built by responses.h.
 */
#ifndef RF_SERVE_RESPONSE_H
#define RF_SERVE_RESPONSE_H

#include <stddef.h>

typedef struct {
    int status;
    const char *content_type;
    char *body;        /* malloc'd */
    size_t len;
} serve_response;

#endif
