/*
 * http.c — libmicrohttpd plumbing (see http.h). libmicrohttpd parses HTTP;
 * this file only sees each request's method, path, headers and body.
 *
 * libmicrohttpd calls on_request once when the headers are in, then once
 * per piece of body, then once with no data: the request is judged on the
 * first call, the body gathered on the middle ones, and the answer given on
 * the last. A request refused before its body (401, 404, 405, 429, 503)
 * still reads the body, so the client sees the answer rather than a reset
 * connection; one that declares a body over the limit gets 413 at once.
 *
 * With --cors-allow-origin, a request from a listed origin gets the CORS
 * headers, and OPTIONS on any path is a preflight answered 204 before any
 * other check (browsers send no credentials with it). Engine requests
 * answer with TEI's x-* timing headers.
 *
 * Connections are served by a fixed pool of HTTP_THREADS threads, each
 * waiting on epoll (or poll) for its share of the connections. A request
 * whose job goes to the engine is parked: its connection is suspended,
 * the job queued (routes.h, batcher.h), and the thread goes on with other
 * connections; the batcher's on_done resumes the connection, and the next
 * call of on_request writes the answer. While parked, the batcher asks
 * client_gone before it takes the job, and drops the job unrun when the
 * client has hung up (libmicrohttpd does not watch a suspended
 * connection's socket); a job that waited longer than --queue-timeout is
 * answered 503 with Retry-After, unrun.
 *
 * Limits that keep one client from shutting the others out: connections
 * per client address (--max-connections-per-client; more are closed at
 * once), connections in all (--max-connections), and --request-timeout:
 * a connection silent that long is closed, and so is a request whose body
 * is still arriving that long after its headers came in.
 *
 * After a stop signal the listener is shut and every request begun is
 * answered; a new request on a connection already open gets 503, but for
 * GET /metrics, which keeps answering so that the drain can be watched.
 */
#include "serve/http.h"

#include "cli.h"
#include "serve/openai.h"
#include "serve/routes.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* The threads that serve the connections. Tokenizing a request's texts
 * happens on them, so a few: one long body does not hold up every other
 * connection (docs/serving.md, "Connections"). */
#define HTTP_THREADS 4

/* The Retry-After of a 503 for a request that waited longer than
 * --queue-timeout, in seconds. */
#define RETRY_AFTER_SECONDS "1"

struct serve_http {
    const serve_server *s;
    struct MHD_Daemon *daemon;
    atomic_int in_flight;  /* admitted engine requests, for the 429 limit */
    atomic_int active;     /* every request begun and not yet answered */
    atomic_int parked;     /* connections suspended while their job is queued or runs */
    atomic_bool draining;  /* the listener is shut: new requests get 503 */
};

/* A request's state, from its headers to its connection's completion. Its
 * job's on_done and the connection's completion may come in either order
 * when a stop closes a parked connection: `lock` orders them, and whichever
 * comes second frees the state. */
typedef struct {
    serve_http *h;
    struct MHD_Connection *c;
    int fd;                /* the connection's socket, for client_gone */
    double start;
    int route;             /* route id (see serve_route_find) */
    int refused;           /* HTTP status decided before the body, or 0 */
    const char *refused_type;
    char refused_msg[160];
    const char *allow;     /* the method a 405 names */
    bool preflight;        /* a CORS preflight (OPTIONS with --cors-allow-origin) */
    bool openai;           /* refusals in OpenAI's error shape */
    bool admitted;         /* counted in in_flight */
    bool answered;
    bool draining;         /* h->draining when answered: "Connection: close", and what
                              /metrics says, from one reading */
    char *body;
    size_t len, cap;

    serve_pending *pending; /* its job, while queued or running and until answered */
    serve_log_entry log;    /* kept while parked */
    pthread_mutex_t lock;   /* orders job_done and orphaned */
    bool job_done;          /* on_done has been called */
    bool orphaned;          /* the connection closed first: on_done frees the state */
} request_state;

static void refuse(request_state *rq, int status, const char *type, const char *msg)
{
    rq->refused = status;
    rq->refused_type = type;
    snprintf(rq->refused_msg, sizeof rq->refused_msg, "%s", msg);
}

/* Constant-time comparison of the Authorization header with "Bearer KEY". */
static bool authorized(struct MHD_Connection *c, const char *key)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncasecmp(h, "Bearer ", 7) != 0)
        return false;
    h += 7;
    size_t n = strlen(h), k = strlen(key);
    unsigned char diff = n != k;
    for (size_t i = 0; i < k; i++)
        diff |= (unsigned char)(key[i] ^ (i < n ? h[i] : 0));
    return diff == 0;
}

/* The checks made on the headers alone. */
static void judge(serve_http *h, request_state *rq, struct MHD_Connection *c, const char *url,
                  const char *method)
{
    const serve_server *s = h->s;
    const char *allow = NULL;
    int r, found = serve_route_find(method, url, &r, &allow);
    rq->route = r;
    rq->openai = serve_route_speaks_openai(r, url);
    if (s->cors_origins && !strcmp(method, "OPTIONS")) {
        rq->preflight = true;
        return;
    }
    if (found == 404) {
        refuse(rq, 404, "NotFound", "no such route");
        return;
    }
    if (found == 405) {
        rq->allow = allow;
        refuse(rq, 405, "MethodNotAllowed", "method not allowed on this route");
        return;
    }
    if (s->api_key && !serve_route_is_public(r) && !authorized(c, s->api_key)) {
        refuse(rq, 401, "Unauthorized", "missing or wrong Authorization: Bearer key");
        return;
    }
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoull(cl, NULL, 10) > s->payload_limit) {
        char msg[96];
        snprintf(msg, sizeof msg, "body of %.20s bytes, over the limit of %zu", cl,
                 s->payload_limit);
        refuse(rq, 413, "Validation", msg);
        return;
    }
    if (atomic_load(&h->draining) && !serve_route_answers_draining(r)) {
        refuse(rq, 503, "Unhealthy", "the server is shutting down");
        return;
    }
    if (serve_route_uses_engine(r)) {
        if (atomic_fetch_add(&h->in_flight, 1) >= s->max_concurrent) {
            atomic_fetch_sub(&h->in_flight, 1);
            refuse(rq, 429, "Overloaded", "too many concurrent requests (--max-concurrent-requests)");
            return;
        }
        rq->admitted = true;
    }
}

static bool append_body(request_state *rq, const char *data, size_t n, size_t limit)
{
    if (rq->len + n > limit)
        return false;
    if (rq->len + n + 1 > rq->cap) {
        size_t cap = rq->cap ? rq->cap : 4096;
        while (cap < rq->len + n + 1)
            cap *= 2;
        char *grown = realloc(rq->body, cap);
        if (!grown)
            return false;
        rq->body = grown;
        rq->cap = cap;
    }
    memcpy(rq->body + rq->len, data, n);
    rq->len += n;
    rq->body[rq->len] = '\0';
    return true;
}

/* The Access-Control-Allow-Origin value for this request's Origin: "*",
 * the origin itself when --cors-allow-origin lists it, else NULL. */
static const char *cors_origin(const serve_server *s, struct MHD_Connection *c)
{
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (!s->cors_origins || !origin)
        return NULL;
    if (!strcmp(s->cors_origins, "*"))
        return "*";
    size_t n = strlen(origin);
    for (const char *p = s->cors_origins; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && !strncmp(p, origin, n))
            return origin;
        if (!end)
            break;
        p = end + 1;
    }
    return NULL;
}

static void add_cors_headers(serve_http *h, struct MHD_Connection *c, request_state *rq,
                             struct MHD_Response *r)
{
    const char *origin = cors_origin(h->s, c);
    if (!origin)
        return;
    MHD_add_response_header(r, "Access-Control-Allow-Origin", origin);
    if (strcmp(origin, "*") != 0)
        MHD_add_response_header(r, "Vary", "Origin");
    if (!rq->preflight) {
        MHD_add_response_header(r, "Access-Control-Expose-Headers",
                                "x-compute-type, x-compute-time, x-compute-characters, "
                                "x-compute-tokens, x-total-time, x-tokenization-time, "
                                "x-queue-time, x-inference-time");
        return;
    }
    const char *method = serve_route_method(rq->route);
    char methods[32];
    snprintf(methods, sizeof methods, "%s, OPTIONS", method ? method : "GET, POST");
    MHD_add_response_header(r, "Access-Control-Allow-Methods", methods);
    const char *asked =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Access-Control-Request-Headers");
    MHD_add_response_header(r, "Access-Control-Allow-Headers",
                            asked ? asked : "authorization, content-type");
    MHD_add_response_header(r, "Access-Control-Max-Age", "86400");
}

/* TEI's response headers of a request that ran: times in whole
 * milliseconds, the characters and tokens it computed. */
static void add_timing_headers(struct MHD_Response *r, const serve_log_entry *log,
                               double seconds)
{
    char v[32];
#define MS_HEADER(name, s) \
    (snprintf(v, sizeof v, "%lld", (long long)((s) * 1000.0)), MHD_add_response_header(r, name, v))
    MHD_add_response_header(r, "x-compute-type", "cpu");
    MS_HEADER("x-compute-time", seconds);
    MS_HEADER("x-total-time", seconds);
    MS_HEADER("x-tokenization-time", log->tokenize_seconds);
    MS_HEADER("x-queue-time", log->queue_seconds);
    MS_HEADER("x-inference-time", log->inference_seconds);
#undef MS_HEADER
    snprintf(v, sizeof v, "%lld", (long long)log->characters);
    MHD_add_response_header(r, "x-compute-characters", v);
    snprintf(v, sizeof v, "%d", log->tokens);
    MHD_add_response_header(r, "x-compute-tokens", v);
}

static enum MHD_Result send_response(serve_http *h, struct MHD_Connection *c, request_state *rq,
                                     const char *method, const char *url, serve_response *resp,
                                     serve_log_entry *log, bool queue_timeout)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(resp->len, resp->body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(resp->body);
        return MHD_NO;
    }
    double seconds = cli_now_seconds() - rq->start;
    if (resp->content_type)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
    add_cors_headers(h, c, rq, r);
    if (resp->status == 200 && log->inputs > 0 && serve_route_uses_engine(rq->route))
        add_timing_headers(r, log, seconds);
    if (resp->status == 405 && rq->allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, rq->allow);
    if (resp->status == 401)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (rq->draining)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    if (queue_timeout)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, RETRY_AFTER_SECONDS);
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)resp->status, r);
    MHD_destroy_response(r);
    rq->answered = true;

    serve_metrics_request(h->s->metrics, log->model, rq->route, resp->status, seconds);
    if (serve_route_uses_engine(rq->route) && !rq->preflight)
        serve_metrics_tei_request(h->s->metrics, resp->status, log, seconds);
    log->method = method;
    log->path = url;
    log->status = resp->status;
    log->seconds = seconds;
    serve_log_request(h->s->log_format, log);
    return ok;
}

static void request_free(request_state *rq)
{
    serve_route_pending_free(rq->pending);
    pthread_mutex_destroy(&rq->lock);
    free(rq->body);
    free(rq);
}

/* Whether the client of a request read whole has hung up: its socket reads
 * end-of-file or an error (anything still to read is a next request, and
 * the client is there). Asked by a batcher thread of a parked request,
 * whose socket stays open while the connection is suspended. */
static bool peer_closed(int fd)
{
    char b;
    ssize_t n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static bool client_gone(void *arg)
{
    const request_state *rq = arg;
    return peer_closed(rq->fd);
}

/* The batcher's on_done: counts a drop, then resumes the connection, whose
 * next on_request writes the answer; or, when the connection has closed
 * meanwhile, frees the request. */
static void on_job_done(serve_job *job, void *arg)
{
    request_state *rq = arg;
    serve_http *h = rq->h;
    if (job->outcome != SERVE_JOB_RAN)
        serve_metrics_dropped(h->s->metrics, rq->log.model,
                              job->outcome == SERVE_JOB_QUEUE_TIMEOUT ? SERVE_DROP_QUEUE_TIMEOUT
                                                                      : SERVE_DROP_CLIENT_GONE);
    pthread_mutex_lock(&rq->lock);
    rq->job_done = true;
    bool orphaned = rq->orphaned;
    if (!orphaned)
        MHD_resume_connection(rq->c);
    pthread_mutex_unlock(&rq->lock);
    if (orphaned)
        request_free(rq);
    /* after the resume, and after an orphan's free (which gives its model's
       generation back): a stop waits for parked to reach 0 before it stops
       the daemon, which must find no connection suspended, and frees the
       models */
    atomic_fetch_sub(&h->parked, 1);
}

/* Suspends the connection, then queues its job: on_done's resume always
 * comes after the suspend. */
static void park(serve_http *h, struct MHD_Connection *c, request_state *rq)
{
    rq->c = c;
    atomic_fetch_add(&h->parked, 1);
    MHD_suspend_connection(c);
    serve_route_queue(rq->pending, on_job_done, rq->fd >= 0 ? client_gone : NULL, rq);
}

/* The request's work is done: its slot is free before the response goes
 * out, so a client's next request never finds its own last one still
 * counted (the completion callback can run after the client has read the
 * whole response). */
static void release_slot(serve_http *h, request_state *rq)
{
    if (rq->admitted) {
        atomic_fetch_sub(&h->in_flight, 1);
        rq->admitted = false;
    }
}

/* An engine request whose client hung up before its job ran: no answer,
 * nobody to read it; the log line says 499 (nginx's "client closed
 * request"), and roformer_requests_dropped_total counts it. The
 * connection closes. */
static enum MHD_Result client_left(serve_http *h, request_state *rq, const char *method,
                                   const char *url)
{
    serve_route_pending_free(rq->pending);
    rq->pending = NULL;
    release_slot(h, rq);
    rq->answered = true;
    serve_log_entry *log = &rq->log;
    log->method = method;
    log->path = url;
    log->status = 499;
    log->seconds = cli_now_seconds() - rq->start;
    snprintf(log->error, sizeof log->error, "the client went away; not run");
    serve_log_request(h->s->log_format, log);
    return MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    serve_http *h = cls;
    request_state *rq = *con_cls;
    if (!rq) { /* headers in */
        rq = calloc(1, sizeof *rq);
        if (!rq)
            return MHD_NO;
        rq->h = h;
        rq->start = cli_now_seconds();
        pthread_mutex_init(&rq->lock, NULL);
        atomic_fetch_add(&h->active, 1);
        *con_cls = rq;
        judge(h, rq, c, url, method);
        if (rq->refused != 413)
            return MHD_YES;
    } else if (*upload_data_size) { /* a piece of body */
        /* a body that trickles in past --request-timeout: the connection is closed */
        if (cli_now_seconds() - rq->start > h->s->request_timeout)
            return MHD_NO;
        if (!rq->refused && !append_body(rq, upload_data, *upload_data_size, h->s->payload_limit)) {
            char msg[96];
            snprintf(msg, sizeof msg, "body over the limit of %zu bytes", h->s->payload_limit);
            refuse(rq, 413, "Validation", msg);
            free(rq->body);
            rq->body = NULL;
            rq->len = rq->cap = 0;
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (rq->answered)
        return MHD_YES;

    serve_response resp;
    serve_log_entry *log = &rq->log;
    if (rq->pending) { /* resumed: its job ran or was dropped */
        serve_job_outcome outcome = serve_route_job(rq->pending)->outcome;
        if (outcome == SERVE_JOB_CLIENT_GONE)
            return client_left(h, rq, method, url);
        bool late = outcome == SERVE_JOB_QUEUE_TIMEOUT;
        serve_route_finish(rq->pending, &resp, log);
        rq->pending = NULL;
        release_slot(h, rq);
        return send_response(h, c, rq, method, url, &resp, log, late);
    }
    rq->draining = atomic_load(&h->draining);
    if (rq->preflight) {
        resp = (serve_response){.status = 204, .body = strdup(""), .len = 0};
    } else if (rq->refused) {
        if (rq->openai)
            serve_openai_error(&resp, rq->refused, rq->refused_msg);
        else
            serve_response_error(&resp, rq->refused, rq->refused_type, rq->refused_msg);
        log->error_type = rq->refused_type;
        snprintf(log->error, sizeof log->error, "%s", rq->refused_msg);
    } else {
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        rq->fd = info ? info->connect_fd : -1;
        /* a client gone before its body is parsed: no tokenizing for nobody */
        const char *body = rq->body ? rq->body : "";
        if (serve_route_uses_engine(rq->route) && rq->fd >= 0 && peer_closed(rq->fd)) {
            log->model = serve_route_model(h->s, rq->route, url, body, rq->len);
            serve_metrics_dropped(h->s->metrics, log->model, SERVE_DROP_CLIENT_GONE);
            return client_left(h, rq, method, url);
        }
        log->path = url; /* the route reads a /models/NAME prefix */
        serve_gauges gauges = {.in_flight = atomic_load(&h->in_flight),
                               .draining = rq->draining};
        rq->pending = serve_route_submit(h->s, rq->route, body, rq->len, &gauges, &resp, log);
        if (rq->pending) {
            park(h, c, rq);
            return MHD_YES;
        }
    }
    release_slot(h, rq);
    return send_response(h, c, rq, method, url, &resp, log, false);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)c;
    (void)toe;
    serve_http *h = cls;
    request_state *rq = *con_cls;
    if (!rq)
        return;
    *con_cls = NULL;
    release_slot(h, rq);
    atomic_fetch_sub(&h->active, 1);
    pthread_mutex_lock(&rq->lock);
    /* closed while its job is queued or running: nobody waits for it, and
       the batcher still holds it, so on_done frees it */
    bool waiting = rq->pending && !rq->job_done;
    if (waiting) {
        rq->orphaned = true;
        atomic_store(&serve_route_job(rq->pending)->abandoned, true);
    }
    pthread_mutex_unlock(&rq->lock);
    if (!waiting)
        request_free(rq);
}

/* Lets the process hold `connections` sockets beside its other files: the
 * soft limit on open files raised towards the hard one. */
static void raise_file_limit(int connections)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    rlim_t want = (rlim_t)connections + 64; /* the model, the log, the listener, ... */
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int serve_http_start(const serve_server *s, serve_http **out, char *errbuf, size_t errlen)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->port)};
    struct sockaddr_in6 addr6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)s->port)};
    const struct sockaddr *sa;
    /* MHD_USE_AUTO_INTERNAL_THREAD: epoll where there is one (poll, never
       select, whose FD_SETSIZE would cap the connections); MHD_USE_ITC:
       needed by MHD_quiesce_daemon and by MHD_resume_connection from the
       batcher thread */
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC |
                     MHD_USE_ERROR_LOG;
    if (inet_pton(AF_INET, s->host, &addr.sin_addr) == 1) {
        sa = (const struct sockaddr *)&addr;
    } else if (inet_pton(AF_INET6, s->host, &addr6.sin6_addr) == 1) {
        sa = (const struct sockaddr *)&addr6;
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(errbuf, errlen, "--host '%s' is not an IPv4 or IPv6 address", s->host);
        return -1;
    }
    serve_http *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(errbuf, errlen, "out of memory");
        return -1;
    }
    h->s = s;
    raise_file_limit(s->max_connections);
    h->daemon = MHD_start_daemon(flags, (uint16_t)s->port, NULL, NULL, on_request, h,
                                 MHD_OPTION_SOCK_ADDR, sa,
                                 MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                                 MHD_OPTION_THREAD_POOL_SIZE, (unsigned)HTTP_THREADS,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->max_connections,
                                 MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                                 (unsigned)s->max_connections_per_client,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->request_timeout,
                                 MHD_OPTION_END);
    if (!h->daemon) {
        snprintf(errbuf, errlen, "cannot listen on %s:%d (in use, or not an address of this host)",
                 s->host, s->port);
        free(h);
        return -1;
    }
    *out = h;
    return 0;
}

int serve_http_port(const serve_http *h)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : -1;
}

void serve_http_stop(serve_http *h, double grace_seconds)
{
    if (!h)
        return;
    MHD_socket listen = MHD_quiesce_daemon(h->daemon);
    /* libmicrohttpd no longer accepts, but the kernel would still complete
       connections on the open socket (which must stay open until the daemon
       stops): take it out of the listening state so they are refused. */
    if (listen != MHD_INVALID_SOCKET)
        shutdown(listen, SHUT_RDWR);
    /* only now: a client that sees roformer_draining 1 (or a 503) knows
       that a new connection is refused */
    atomic_store(&h->draining, true);
    double until = cli_now_seconds() + grace_seconds;
    while (atomic_load(&h->active) > 0 && cli_now_seconds() < until)
        usleep(10000);
    /* libmicrohttpd must find no connection suspended when it stops; a
       parked job is always run or dropped by the batcher, which still runs */
    while (atomic_load(&h->parked) > 0)
        usleep(10000);
    MHD_stop_daemon(h->daemon);
    if (listen != MHD_INVALID_SOCKET)
        close(listen);
    free(h);
}
