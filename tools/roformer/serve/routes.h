/*
 * routes.h — the route table of `roformer serve` and each route's handler:
 * from a request body to a response (status, JSON body) and its log facts.
 * Engine routes parse the body (request.h), tokenize to count and check
 * lengths, and hand back a pending job (serve_route_submit) that http.c
 * queues on the model's batcher and, once it ran or was dropped, turns
 * into the answer (serve_route_finish, responses.h). No HTTP library
 * here: http.c calls in.
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

/* A request whose job is built and not yet answered (routes.c). */
typedef struct serve_pending serve_pending;

/* The index of the model a request would run on (0 when it names none
 * served), without answering it. */
int serve_route_model(const serve_server *s, int route, const char *path, const char *body,
                      size_t len);
/* The first half of a request: chooses its model (log->path: a
 * /models/NAME prefix; log->model is set), parses and checks the body and
 * counts its tokens. Answered at once (GET routes, routes that run no job,
 * refusals): *resp is set and NULL returned. Else the job is built and
 * returned, holding its model's generation (models.h) until it is answered
 * with serve_route_finish or freed with serve_route_pending_free (when
 * nobody waits any more); it is queued with serve_route_queue. `http`
 * carries the gauges the HTTP side owns (in_flight, draining), for /metrics. */
serve_pending *serve_route_submit(const serve_server *s, int route, const char *body, size_t len,
                                  const serve_gauges *http, serve_response *resp,
                                  serve_log_entry *log);
/* Queues the job with its model's batcher: on_done(job, arg) is called
 * from a batcher thread when it ran or was dropped; client_gone(arg), when not
 * NULL, is asked before it is taken into a batch. */
void serve_route_queue(serve_pending *p, serve_job_done_fn on_done, serve_job_gone_fn client_gone,
                       void *arg);
/* The queued job (its outcome, its abandoned flag). */
serve_job *serve_route_job(serve_pending *p);
/* The second half, after on_done: the answer from the job's results (503
 * for a job dropped unrun), then frees p. */
void serve_route_finish(serve_pending *p, serve_response *resp, serve_log_entry *log);
/* Frees a pending request that will not be answered; only after its on_done
 * or before it was queued. NULL: nothing. */
void serve_route_pending_free(serve_pending *p);

/* An error response in TEI's shape {"error": ..., "error_type": ...}. */
void serve_response_error(serve_response *resp, int status, const char *type, const char *msg);

#endif
