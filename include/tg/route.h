/* route.h -- the request plumbing under the server: route tables, header checks, the capped body
 * buffer and listen-address parsing (src/server/route.c). */
#ifndef TG_ROUTE_H
#define TG_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* 7 MiB, as controller-runtime: an UPDATE carries object and oldObject of up to 3 MiB each (the
 * API server's request limit), plus 1 MiB of envelope. */
#define TG_BODY_MAX ((size_t)7 * 1024 * 1024)

/* ---- routes ------------------------------------------------------------------------------ */

enum tg_handler {
    TG_HANDLER_VALIDATE,
    TG_HANDLER_MUTATE,
    TG_HANDLER_HEALTHZ,
    TG_HANDLER_READYZ,
    TG_HANDLER_METRICS,
};

struct tg_route {
    const char *path;   /* exact match; the query string is not part of it */
    const char *method; /* "POST" or "GET" (a GET row also answers HEAD) */
    enum tg_handler handler;
};

extern const struct tg_route tg_webhook_routes[];
extern const size_t tg_webhook_route_count;
extern const struct tg_route tg_probe_routes[];
extern const size_t tg_probe_route_count;

/* The row for (path, method), or NULL. *path_known tells whether any row has that path (then
 * the answer is 405, else 404). */
const struct tg_route *tg_route_find(const struct tg_route *t, size_t n, const char *path,
                                     const char *method, bool *path_known);
/* Writes the Allow header value for path ("POST", "GET, HEAD") into buf; returns its length
 * (0 when the path is unknown). */
size_t tg_route_allow(const struct tg_route *t, size_t n, const char *path, char *buf, size_t len);

/* True for "application/json" in any case, with optional parameters ("; charset=utf-8") and
 * surrounding blanks; false for NULL, "", "application/json-patch+json", "text/json", ... */
bool tg_content_type_is_json(const char *ct);

/* A Content-Length value: decimal digits only (RFC 9110). 0 or -EINVAL. */
int tg_content_length_parse(const char *s, unsigned long long *out);

/* ---- body buffer ----------------------------------------------------------------------------
 * Invariant: len <= cap <= max; buf is NULL until the first byte or reservation. It grows by
 * doubling from 4 KiB and never past max, so a request costs what it sends, not the ceiling. */
struct tg_body {
    char *buf;
    size_t len, cap, max;
};

void tg_body_init(struct tg_body *b, size_t max);
/* The process-wide budget for all body buffers together (0: none; default 64 MiB). A buffer that
 * would pass it fails with -ENOSPC (the server answers 503). */
void tg_body_budget_set(size_t bytes);
size_t tg_body_buffered(void);
/* Makes room for n bytes in total (a known Content-Length). 0, -EFBIG (n > max), -ENOSPC (the
 * process budget is used up), -ENOMEM. */
int tg_body_reserve(struct tg_body *b, size_t n);
/* Appends; 0, -EFBIG when len + n would pass max (nothing appended), -ENOSPC, -ENOMEM. */
int tg_body_append(struct tg_body *b, const char *data, size_t n);
void tg_body_release(struct tg_body *b);

/* ---- addresses ------------------------------------------------------------------------------ */

/* [::] (every IPv6 address) where the kernel has no IPv6 at all: rewrites ss to 0.0.0.0 on the
 * same port and returns true (the server then listens on IPv4 only, SPEC 1); any other address,
 * or when ipv6 is true, is left alone (false). */
bool tg_listen_ipv4_fallback(struct sockaddr_storage *ss, bool ipv6);

/* Parses "host:port", "[v6]:port" or ":port" (all interfaces, IPv4) into a socket address.
 * Host names resolve through getaddrinfo. 0, or -EINVAL with the reason in err. */
int tg_listen_parse(const char *s, struct sockaddr_storage *ss, socklen_t *sslen, char *err,
                    size_t errlen);

#endif
