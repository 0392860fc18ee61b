/*
 * routes.h — the route table of `roformer serve` and each route's handler:
 * from a request body to a response (status, JSON body) and its log facts.
 * Engine routes parse the body (request.h), tokenize to count and check
 * lengths, run the job through the batcher and write the answer
 * (responses.h). No HTTP library here: http.c calls in.
 */
#ifndef RF_SERVE_ROUTES_H
#define RF_SERVE_ROUTES_H

#include "serve/log.h"
#include "serve/response.h"
#include "serve/server.h"

#include <stdbool.h>
#include <stddef.h>

/* Route ids count from 0 to serve_route_count() - 1; the last is "unknown",
 * the label of 404s in the metrics. */
int serve_route_count(void);
const char *const *serve_route_names(void);

/* Looks up `path` for `method`. Returns 200 with *route set, 404 (no such
 * path; *route is serve_route_unknown()) or 405 (*route is the path's
 * route, *allow the method it takes). */
int serve_route_find(const char *method, const char *path, int *route, const char **allow);
/* True for routes that run the model (they count against
 * --max-concurrent-requests). */
bool serve_route_uses_engine(int route);
/* True for routes that need no API key (GET /health). */
bool serve_route_is_public(int route);
/* True for routes still answered while the server drains after a stop
 * signal (GET /metrics, so that a scrape sees the drain); the others are 503. */
bool serve_route_answers_draining(int route);
/* True where errors take OpenAI's shape (openai.h): paths under /v1/ (the path, for a
 * route not in the table) and /embeddings. */
bool serve_route_speaks_openai(int route, const char *path);
/* The method a route takes; NULL for "unknown". */
const char *serve_route_method(int route);

/* `http` carries the gauges the HTTP side owns (in_flight, draining), for
 * /metrics. */
void serve_route_handle(const serve_server *s, int route, const char *body, size_t len,
                        const serve_gauges *http, serve_response *resp, serve_log_entry *log);

/* An error response in TEI's shape {"error": ..., "error_type": ...}. */
void serve_response_error(serve_response *resp, int status, const char *type, const char *msg);

#endif
