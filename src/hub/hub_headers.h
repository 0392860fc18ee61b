/*
 * hub_headers.h — what a download needs from the HTTP response headers of
 * the hub and of the CDN it redirects to, read one header line at a time
 * as libcurl hands them over (every response of a redirect chain, in
 * order).
 *
 *   HTTP/1.1 302 Found                       starts a response: its status
 *   X-Linked-Etag: "<sha256 hex>"            LFS file: the sha256 of its bytes
 *   ETag: "<sha256 hex>" | W/"<git sha1>"    the hub's own response only
 *   X-Error-Code: RepositoryNotFound         why a 401/404 (RevisionNotFound,
 *                                            EntryNotFound, GatedRepo, ...)
 *   Content-Range: bytes 100-999/1000        where a 206 answer starts
 *
 * The bytes come from the network: every line is parsed with its length,
 * anything malformed is ignored (a digest that is not exactly 64 hex
 * digits is no digest), nothing is allocated.
 */
#ifndef RF_HUB_HEADERS_H
#define RF_HUB_HEADERS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int responses;            /* status lines seen so far */
    int status;               /* HTTP status of the latest response; 0 before one */
    char linked_sha256[65];   /* X-Linked-Etag of any response, lower-case hex; "" if none */
    char etag_sha256[65];     /* ETag of the first response, if a sha256; "" if none */
    char error_code[64];      /* X-Error-Code of the latest response; "" if none */
    int64_t range_start;      /* Content-Range start of the latest response; -1 if none */
    int64_t range_total;      /* its complete length; -1 if none or '*' */
} rf_hub_headers;

void rf_hub_headers_init(rf_hub_headers *h);
/* Reads one header line (with or without its CRLF). */
void rf_hub_headers_feed(rf_hub_headers *h, const char *line, size_t len);
/* The sha256 the file must have (X-Linked-Etag, else the hub's ETag), or
 * NULL when the hub gave none (files kept in git, not LFS). */
const char *rf_hub_headers_sha256(const rf_hub_headers *h);

#endif
