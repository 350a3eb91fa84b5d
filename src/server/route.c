/* route.c -- the route tables, content-type match, capped body buffer and listen addresses. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "tg/route.h"

/* Webhook port: what kube-apiserver calls (POST, application/json:
 * docs/references.md#ref-admission-webhook-call). */
const struct tg_route tg_webhook_routes[] = {
    {"/validate", "POST", TG_HANDLER_VALIDATE},
    {"/mutate", "POST", TG_HANDLER_MUTATE},
};
const size_t tg_webhook_route_count = sizeof(tg_webhook_routes) / sizeof(tg_webhook_routes[0]);

/* Probe port: kubelet probes and Prometheus, plain HTTP. */
const struct tg_route tg_probe_routes[] = {
    {"/healthz", "GET", TG_HANDLER_HEALTHZ},
    {"/readyz", "GET", TG_HANDLER_READYZ},
    {"/metrics", "GET", TG_HANDLER_METRICS},
};
const size_t tg_probe_route_count = sizeof(tg_probe_routes) / sizeof(tg_probe_routes[0]);

static bool method_matches(const char *row, const char *method)
{
    if (!strcmp(row, method))
        return true;
    return !strcmp(row, "GET") && !strcmp(method, "HEAD");
}

const struct tg_route *tg_route_find(const struct tg_route *t, size_t n, const char *path,
                                     const char *method, bool *path_known)
{
    *path_known = false;
    if (!path || !method)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(t[i].path, path))
            continue;
        *path_known = true;
        if (method_matches(t[i].method, method))
            return &t[i];
    }
    return NULL;
}

size_t tg_route_allow(const struct tg_route *t, size_t n, const char *path, char *buf, size_t len)
{
    size_t used = 0;

    if (len)
        buf[0] = '\0';
    for (size_t i = 0; path && i < n; i++) {
        if (strcmp(t[i].path, path))
            continue;
        int w = snprintf(buf + used, len > used ? len - used : 0, "%s%s%s", used ? ", " : "",
                         t[i].method, strcmp(t[i].method, "GET") ? "" : ", HEAD");
        if (w < 0 || (size_t)w >= (len > used ? len - used : 0))
            return used;
        used += (size_t)w;
    }
    return used;
}

bool tg_content_type_is_json(const char *ct)
{
    static const char want[] = "application/json";
    const size_t wl = sizeof(want) - 1;

    if (!ct)
        return false;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    if (strncasecmp(ct, want, wl))
        return false;
    ct += wl;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    return *ct == '\0' || *ct == ';';
}

int tg_content_length_parse(const char *s, unsigned long long *out)
{
    char *end;

    if (!s || !isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end != '\0')
        return -EINVAL;
    *out = v;
    return 0;
}

/* Bytes held by every request body buffer of the process, against one budget: 7 MiB per request
 * times --max-connections would otherwise let a few dozen slow uploads exhaust the pod's memory
 * limit. 0 means no budget. */
static _Atomic size_t buffered;
static size_t budget = (size_t)64 << 20;

void tg_body_budget_set(size_t bytes)
{
    budget = bytes;
}

size_t tg_body_buffered(void)
{
    return atomic_load(&buffered);
}

void tg_body_init(struct tg_body *b, size_t max)
{
    b->buf = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

static int body_grow(struct tg_body *b, size_t need)
{
    size_t ncap = b->cap ? b->cap : 4096;

    if (need > b->max)
        return -EFBIG;
    if (need <= b->cap)
        return 0;
    while (ncap < need)
        ncap = ncap > b->max / 2 ? b->max : ncap * 2;
    if (ncap > b->max)
        ncap = b->max;
    size_t delta = ncap - b->cap;
    if (atomic_fetch_add(&buffered, delta) + delta > budget && budget) {
        atomic_fetch_sub(&buffered, delta);
        return -ENOSPC;
    }
    /* +1 keeps room for a NUL so that parsers may treat the body as a string. */
    char *nb = realloc(b->buf, ncap + 1);
    if (!nb) {
        atomic_fetch_sub(&buffered, delta);
        return -ENOMEM;
    }
    b->buf = nb;
    b->cap = ncap;
    return 0;
}

int tg_body_reserve(struct tg_body *b, size_t n)
{
    if (n > b->max)
        return -EFBIG;
    if (n <= b->cap)
        return 0;
    size_t delta = n - b->cap;
    if (atomic_fetch_add(&buffered, delta) + delta > budget && budget) {
        atomic_fetch_sub(&buffered, delta);
        return -ENOSPC;
    }
    char *nb = realloc(b->buf, n + 1);
    if (!nb) {
        atomic_fetch_sub(&buffered, delta);
        return -ENOMEM;
    }
    b->buf = nb;
    b->cap = n;
    return 0;
}

int tg_body_append(struct tg_body *b, const char *data, size_t n)
{
    if (n > b->max - b->len)
        return -EFBIG;
    int rc = body_grow(b, b->len + n);
    if (rc < 0)
        return rc;
    if (n)
        memcpy(b->buf + b->len, data, n);
    b->len += n;
    b->buf[b->len] = '\0';
    return 0;
}

void tg_body_release(struct tg_body *b)
{
    atomic_fetch_sub(&buffered, b->cap);
    free(b->buf);
    tg_body_init(b, b->max);
}

bool tg_listen_ipv4_fallback(struct sockaddr_storage *ss, bool ipv6)
{
    const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)ss;
    struct sockaddr_in a4 = {.sin_family = AF_INET};
    if (ipv6 || ss->ss_family != AF_INET6 || !IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr))
        return false;
    a4.sin_port = a6->sin6_port;
    a4.sin_addr.s_addr = htonl(INADDR_ANY);
    memset(ss, 0, sizeof(*ss));
    memcpy(ss, &a4, sizeof(a4));
    return true;
}

int tg_listen_parse(const char *s, struct sockaddr_storage *ss, socklen_t *sslen, char *err,
                    size_t errlen)
{
    char host[256], port[16];
    const char *colon, *h = s;
    size_t hl;
    struct addrinfo hints = {0}, *res = NULL;
    char *end;
    int r;

    if (!s || !*s)
        goto bad;
    if (*s == '[') {
        const char *rb = strchr(s, ']');
        if (!rb || rb[1] != ':')
            goto bad;
        h = s + 1;
        hl = (size_t)(rb - h);
        colon = rb + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon || memchr(s, ':', (size_t)(colon - s)))
            goto bad; /* no port, or a bare IPv6 address without brackets */
        hl = (size_t)(colon - s);
    }
    if (hl >= sizeof(host) || strlen(colon + 1) >= sizeof(port) || !colon[1])
        goto bad;
    memcpy(host, h, hl);
    host[hl] = '\0';
    snprintf(port, sizeof(port), "%s", colon + 1);
    errno = 0;
    long p = strtol(port, &end, 10);
    if (errno || *end || p < 0 || p > 65535 || !isdigit((unsigned char)port[0]))
        goto bad;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    r = getaddrinfo(hl ? host : "0.0.0.0", port, &hints, &res);
    if (r != 0 || !res) {
        snprintf(err, errlen, "%s: cannot resolve host '%s': %s", s, host, gai_strerror(r));
        if (res)
            freeaddrinfo(res);
        return -EINVAL;
    }
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *sslen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
bad:
    snprintf(err, errlen, "%s: expected host:port, [ipv6]:port or :port (port 0-65535)",
             s ? s : "(null)");
    return -EINVAL;
}
