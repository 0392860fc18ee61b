/*
 * http.h — the HTTP side of `roformer serve`, on libmicrohttpd: a fixed
 * pool of threads over epoll, requests parked while their job waits for the
 * engine, limits on connections per client and in all, the request body gathered up to --payload-limit, the
 * checks that need no body (route 404/405, API key 401, declared size 413,
 * concurrency 429), then the route's handler (routes.h), the response,
 * the metrics and the request log line.
 */
#ifndef RF_SERVE_HTTP_H
#define RF_SERVE_HTTP_H

#include "serve/server.h"

typedef struct serve_http serve_http;

/* Binds s->host:s->port (port 0: any free port) and starts serving.
 * On failure returns -1 with a message in errbuf. */
int serve_http_start(const serve_server *s, serve_http **out, char *errbuf, size_t errlen);
/* The port it listens on. */
int serve_http_port(const serve_http *h);
/* Graceful stop: closes the listening socket (no new connections), answers
 * every request already begun (up to grace_seconds), then stops. */
void serve_http_stop(serve_http *h, double grace_seconds);

#endif
