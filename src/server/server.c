/* server.c -- `trainguard serve`: the HTTPS webhook daemon, the probe daemon, reloads, signals
 * and graceful shutdown, on libmicrohttpd (request lifecycle as in MHD's post_example.c:
 * Karlson2k/libmicrohttpd: src/examples/post_example.c). */
#include <errno.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tg/arena.h"
#include "tg/catalogue.h"
#include "tg/conntrack.h"
#include "tg/finding.h"
#include "tg/handler.h"
#include "tg/log.h"
#include "tg/metrics.h"
#include "tg/pipeline.h"
#include "tg/policy.h"
#include "tg/reload.h"
#include "tg/response.h"
#include "tg/review.h"
#include "tg/server.h"
#include "tg/tls.h"
#include "tg/tls_profile.h"
#include "tg/version.h"

/* Per-connection memory pool (headers, read buffer). An AdmissionReview's headers are a few
 * hundred bytes and the body goes to our own buffer: 16 KiB is ample (measured: 64 KiB only added
 * 3 MiB of peak RSS at 64 connections, libmicrohttpd zeroes the pool on each request). */
#define TG_CONN_MEMORY ((size_t)16 * 1024)
/* Bodies declared up to this size get their buffer in one allocation (most reviews are < 64 KiB).
 */
#define TG_RESERVE_MAX ((unsigned long long)1024 * 1024)

static struct {
    const struct tg_server_config *cfg;
    atomic_bool shutting_down;
    atomic_bool started; /* MHD log lines are errors before start, debug after */
    bool client_ca;
    /* The TLS profile (src/server/tls_profile.c): TLS 1.2 and 1.3 only (SPEC section 2), ECDHE
     * with AEAD ciphers only (SPEC 13). No static RSA key exchange: besides forward secrecy, it
     * means the private key is used only in the flight right after the certificate callback,
     * never later in a handshake, which the reload's grace period relies on. */
    struct tg_tls_profile tls;
} srv;

/* Per-request state, in *req_cls from the first call to the completed callback. */
struct tg_req {
    const struct tg_route *route;
    unsigned int status; /* an error decided early (413 past the cap, 500 ENOMEM), or 0 */
    char msg[400];
    struct tg_body body;
    size_t discarded; /* body bytes dropped after an early error */
    struct timespec t0;
};

static double elapsed_s(const struct timespec *t0)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* ---- responses ----------------------------------------------------------------------------- */

/* Queues body (malloc'd; freed by MHD, also on failure) with status and content type. */
static enum MHD_Result respond(struct MHD_Connection *c, unsigned int status, char *body,
                               size_t len, const char *ctype, const char *allow)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    if (allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    /* While draining or busy, ask keep-alive clients to reconnect (to another replica). */
    if (atomic_load(&srv.shutting_down) || status == MHD_HTTP_SERVICE_UNAVAILABLE)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result respond_static(struct MHD_Connection *c, unsigned int status,
                                      const char *text, const char *ctype)
{
    size_t n = strlen(text);
    char *copy = malloc(n + 1);

    if (!copy)
        return MHD_NO;
    memcpy(copy, text, n + 1);
    return respond(c, status, copy, n, ctype, NULL);
}

/* A JSON error body (metav1 Status via tg_error_body) on the webhook port. */
static enum MHD_Result respond_error(struct MHD_Connection *c, unsigned int status, const char *msg,
                                     const char *allow)
{
    size_t len = 0;
    char *body = tg_error_body((int)status, msg, &len);

    tg_metrics_http_error((int)status);
    if (!body) {
        /* The message could not be encoded (ENOMEM, or invalid UTF-8 echoed from a client). */
        char fallback[128];
        int n = snprintf(fallback, sizeof(fallback),
                         "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                         "\"code\":%u}",
                         status);
        body = strndup(fallback, (size_t)n);
        if (!body)
            return MHD_NO;
        len = strlen(body);
    }
    return respond(c, status, body, len, "application/json", allow);
}

/* ---- webhook port ------------------------------------------------------------------------ */

/* Checks done when the headers are in: client certificate, route, method, content type and
 * declared length. Returns the HTTP status to refuse with (msg and allow filled), or 0. */
static unsigned int check_headers(struct tg_req *r, struct MHD_Connection *c, const char *url,
                                  const char *method, char *allow, size_t allowlen)
{
    bool known;
    unsigned long long cl;
    const char *v;

    if (srv.client_ca) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
        int rc = tg_tls_verify_client(ci ? (gnutls_session_t)ci->tls_session : NULL, r->msg,
                                      sizeof(r->msg));
        if (rc == -ENOENT)
            return MHD_HTTP_UNAUTHORIZED;
        if (rc < 0)
            return MHD_HTTP_FORBIDDEN;
    }
    r->route = tg_route_find(tg_webhook_routes, tg_webhook_route_count, url, method, &known);
    /* What the client sent is echoed cut by characters, valid UTF-8, no control characters:
     * MHD decodes %xx in the path, so a byte cut could leave a message JSON cannot carry. */
    char safe_url[256], safe_method[48], safe_ctype[128];
    tg_text_sanitize(url, safe_url, sizeof(safe_url), 60);
    tg_text_sanitize(method, safe_method, sizeof(safe_method), 12);
    if (!r->route && !known) {
        snprintf(r->msg, sizeof(r->msg), "no such path: %s (use /validate or /mutate)", safe_url);
        return MHD_HTTP_NOT_FOUND;
    }
    if (!r->route) {
        tg_route_allow(tg_webhook_routes, tg_webhook_route_count, url, allow, allowlen);
        snprintf(r->msg, sizeof(r->msg), "method %s not allowed on %s (allowed: %.60s)",
                 safe_method, safe_url, allow);
        return MHD_HTTP_METHOD_NOT_ALLOWED;
    }
    v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!tg_content_type_is_json(v)) {
        tg_text_sanitize(v ? v : "", safe_ctype, sizeof(safe_ctype), 30);
        snprintf(r->msg, sizeof(r->msg), "Content-Type must be application/json, got '%s'",
                 safe_ctype);
        return MHD_HTTP_UNSUPPORTED_MEDIA_TYPE;
    }
    v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (v && tg_content_length_parse(v, &cl) == 0) {
        if (cl > srv.cfg->max_body) {
            snprintf(r->msg, sizeof(r->msg),
                     "request body of %llu bytes is over the limit of "
                     "%zu bytes",
                     cl, srv.cfg->max_body);
            return MHD_HTTP_CONTENT_TOO_LARGE;
        }
        /* One allocation of the declared size instead of doubling up to it; only up to 1 MiB,
         * so that a client declaring 7 MiB and sending nothing does not pin 7 MiB. */
        int rc = cl <= TG_RESERVE_MAX ? tg_body_reserve(&r->body, (size_t)cl) : 0;
        if (rc == -ENOSPC) {
            snprintf(r->msg, sizeof(r->msg),
                     "busy: request bodies in flight use the whole "
                     "buffer budget (--max-buffered-mib); retry");
            return MHD_HTTP_SERVICE_UNAVAILABLE;
        }
        if (rc < 0) {
            snprintf(r->msg, sizeof(r->msg), "out of memory");
            return MHD_HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    return 0;
}

static void log_and_count(const struct tg_req *r, const struct tg_admission_out *o, bool patched)
{
    bool mutate = r->route->handler == TG_HANDLER_MUTATE;
    enum tg_metric_endpoint ep = mutate ? TG_EP_MUTATE : TG_EP_VALIDATE;
    const struct tg_review *rv = o->decoded ? &o->review : NULL;
    const struct tg_result *res = o->http_status == 200 ? &o->result : NULL;
    enum tg_metric_verdict verdict = !res           ? TG_VERDICT_ERROR
                                     : res->allowed ? TG_VERDICT_ALLOWED
                                                    : TG_VERDICT_DENIED;
    const char *rules[64];
    size_t nrules = 0;
    int kind = tg_metrics_kind_index(rv ? rv->kind : NULL);
    double secs = elapsed_s(&r->t0);

    for (size_t i = 0; res && i < res->findings.n; i++) {
        const struct tg_finding *f = &res->findings.v[i];
        tg_metrics_finding(f->rule_index, tg_metrics_action_for(res->mode, f->action),
                           rv ? rv->namespace : NULL);
        if (nrules < sizeof(rules) / sizeof(rules[0]))
            rules[nrules++] = f->rule;
    }
    for (size_t i = 0; res && i < res->nexempted; i++)
        tg_metrics_exemption(tg_rule_index(res->exempted[i]));
    if (res && res->nratcheted)
        tg_metrics_ratcheted(res->nratcheted);
    if (patched)
        tg_metrics_patch(kind);
    tg_metrics_admission(ep, kind, tg_metrics_op_index(rv ? rv->operation : NULL), verdict, secs);
    if (!rv) {
        /* Not a review: no decision to log, only why it was refused. */
        tg_log(TG_LOG_WARN, "bad admission request on %s: %u %s", r->route->path, o->http_status,
               o->error);
        return;
    }
    if (!res)
        tg_log(TG_LOG_ERROR, "uid %s: %s", rv->uid, o->error);

    static const char *const verdicts[] = {"allowed", "denied", "error"};
    struct tg_decision d = {
        .endpoint = mutate ? "mutate" : "validate",
        .uid = rv->uid,
        .kind = rv->kind,
        .namespace = rv->namespace,
        .name = rv->name,
        .operation = rv->operation,
        .user = rv->username,
        .dry_run = rv->dry_run,
        .mode = res ? tg_mode_name(res->mode) : "",
        .verdict = verdicts[verdict],
        .rules = rules,
        .nrules = nrules,
        .exempted = res ? res->exempted : NULL,
        .nexempted = res ? res->nexempted : 0,
        .nratcheted = res ? res->nratcheted : 0,
        .patched = patched,
        .latency_ms = secs * 1000.0,
    };
    tg_log_decision(&d);
}

/* The last call of a /validate or /mutate request: tg_admission_handle (the same code the golden
 * tests run) under the current policy snapshot, then metrics, the decision line and the answer. */
static enum MHD_Result admit(struct MHD_Connection *c, struct tg_req *r)
{
    bool mutate = r->route->handler == TG_HANDLER_MUTATE;
    struct tg_pipeline_opts opts = {.mutate = mutate};
    struct tg_admission_out o;
    struct tg_policy *p;
    enum MHD_Result ret;
    bool patched;

    opts.has_mode_override = srv.cfg->has_mode;
    opts.mode_override = srv.cfg->mode;
    p = tg_policy_acquire();
    if (!p) {
        tg_body_release(&r->body);
        return respond_error(c, 503, "no policy loaded", NULL);
    }
    tg_admission_handle(p, &opts, mutate, r->body.buf ? r->body.buf : "", r->body.len, &o);
    tg_policy_release(p);
    tg_body_release(&r->body);
    patched = o.http_status == 200 && mutate && o.result.mode != TG_MODE_AUDIT &&
              tg_patch_count(&o.result.patch) > 0;
    log_and_count(r, &o, patched);
    if (o.http_status != 200 || !o.body) {
        ret = respond_error(c, o.http_status ? (unsigned int)o.http_status : 500,
                            o.error[0] ? o.error : "internal error", NULL);
    } else {
        ret = respond(c, MHD_HTTP_OK, o.body, o.len, "application/json", NULL);
        o.body = NULL; /* MHD owns it now */
    }
    tg_admission_out_release(&o);
    return ret;
}

static enum MHD_Result webhook_access(void *cls, struct MHD_Connection *c, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_data_size,
                                      void **req_cls)
{
    struct tg_req *r = *req_cls;
    char allow[64] = "";

    (void)cls;
    (void)version;
    if (!r) {
        r = calloc(1, sizeof(*r));
        if (!r)
            return MHD_NO;
        clock_gettime(CLOCK_MONOTONIC, &r->t0);
        tg_body_init(&r->body, srv.cfg->max_body);
        *req_cls = r;
        tg_conntrack_in_request(c);
        tg_metrics_inflight_add(1);
        r->status = check_headers(r, c, url, method, allow, sizeof(allow));
        if (r->status) {
            /* Refused before the body is read: MHD then closes the connection instead of
             * reading a body nobody wants. */
            tg_log(TG_LOG_DEBUG, "%s %s: %u %s", method, url, r->status, r->msg);
            return respond_error(c, r->status, r->msg, allow[0] ? allow : NULL);
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!r->status) {
            int rc = tg_body_append(&r->body, upload_data, *upload_data_size);
            if (rc == -EFBIG) {
                r->status = MHD_HTTP_CONTENT_TOO_LARGE;
                snprintf(r->msg, sizeof(r->msg), "request body is over the limit of %zu bytes",
                         srv.cfg->max_body);
                tg_body_release(&r->body);
            } else if (rc == -ENOSPC) {
                r->status = MHD_HTTP_SERVICE_UNAVAILABLE;
                snprintf(r->msg, sizeof(r->msg),
                         "busy: request bodies in flight use the whole "
                         "buffer budget (--max-buffered-mib); retry");
                tg_body_release(&r->body);
            } else if (rc < 0) {
                r->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
                snprintf(r->msg, sizeof(r->msg), "out of memory reading the request body");
                tg_body_release(&r->body);
            }
        }
        if (r->status) {
            /* MHD answers only once the body is read; drop it, but give up (close) when a
             * client keeps streaming far past the cap. */
            r->discarded += *upload_data_size;
            if (r->discarded > srv.cfg->max_body)
                return MHD_NO;
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (r->status)
        return respond_error(c, r->status, r->msg, NULL);
    return admit(c, r);
}

static void webhook_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                              enum MHD_RequestTerminationCode toe)
{
    struct tg_req *r = *req_cls;

    (void)cls;
    (void)toe;
    tg_conntrack_request_done(c);
    if (!r)
        return;
    tg_metrics_inflight_add(-1);
    tg_body_release(&r->body);
    free(r);
    *req_cls = NULL;
}

/* ---- probe port ---------------------------------------------------------------------------- */

static bool ready(const char **why)
{
    struct tg_policy *p;

    if (atomic_load(&srv.shutting_down)) {
        *why = "shutting down";
        return false;
    }
    if (!tg_tls_loaded()) {
        *why = "no serving certificate loaded";
        return false;
    }
    p = tg_policy_acquire();
    tg_policy_release(p);
    if (!p) {
        *why = "no policy loaded";
        return false;
    }
    *why = "ok";
    return true;
}

/* What /metrics reads from the reloaders and the policy in force, just before it renders. */
static void scrape_state(void)
{
    unsigned long long ok = 0, failed = 0;
    struct tg_policy *p = tg_policy_acquire();

    tg_policy_reload_counts(&ok, &failed, NULL);
    tg_metrics_policy_reloads(ok, failed);
    tg_metrics_reload_state(tg_policy_reload_ok(), tg_tls_reload_ok());
    /* --mode wins over the policy's own mode (per-namespace modes aside) */
    enum tg_mode mode = srv.cfg->has_mode ? srv.cfg->mode : p ? p->mode : TG_MODE_ENFORCE;

    tg_metrics_policy_info(p ? tg_mode_name(mode) : NULL, p ? p->sha256 : NULL);
    tg_policy_release(p);
}

static enum MHD_Result probe_access(void *cls, struct MHD_Connection *c, const char *url,
                                    const char *method, const char *version,
                                    const char *upload_data, size_t *upload_data_size,
                                    void **req_cls)
{
    const struct tg_route *route;
    const char *why;
    char allow[64], text[96];
    bool known;
    size_t len;
    char *body;

    (void)cls;
    (void)version;
    (void)upload_data;
    /* A body on a probe is ignored; answer once it is drained. */
    if (*upload_data_size) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    (void)req_cls;
    route = tg_route_find(tg_probe_routes, tg_probe_route_count, url, method, &known);
    if (!route && !known)
        return respond_static(c, MHD_HTTP_NOT_FOUND, "not found\n", "text/plain; charset=utf-8");
    if (!route) {
        tg_route_allow(tg_probe_routes, tg_probe_route_count, url, allow, sizeof(allow));
        body = strdup("method not allowed\n");
        if (!body)
            return MHD_NO;
        return respond(c, MHD_HTTP_METHOD_NOT_ALLOWED, body, strlen(body),
                       "text/plain; charset=utf-8", allow);
    }
    switch (route->handler) {
    case TG_HANDLER_HEALTHZ:
        return respond_static(c, MHD_HTTP_OK, "ok\n", "text/plain; charset=utf-8");
    case TG_HANDLER_READYZ:
        if (ready(&why))
            return respond_static(c, MHD_HTTP_OK, "ok\n", "text/plain; charset=utf-8");
        snprintf(text, sizeof(text), "not ready: %s\n", why);
        return respond_static(c, MHD_HTTP_SERVICE_UNAVAILABLE, text, "text/plain; charset=utf-8");
    case TG_HANDLER_METRICS:
        scrape_state();
        body = tg_metrics_render(&len);
        if (!body)
            return respond_static(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n",
                                  "text/plain; charset=utf-8");
        return respond(c, MHD_HTTP_OK, body, len, TG_METRICS_CONTENT_TYPE, NULL);
    default:
        return respond_static(c, MHD_HTTP_NOT_FOUND, "not found\n", "text/plain; charset=utf-8");
    }
}

/* ---- daemons ----------------------------------------------------------------------------- */

__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char msg[512];
    size_t n;

    (void)cls;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    /* After start, MHD reports every broken client (plain HTTP on the TLS port, handshake
     * failures, timeouts): debug noise, not errors of ours. */
    tg_log(atomic_load(&srv.started) ? TG_LOG_DEBUG : TG_LOG_ERROR, "libmicrohttpd: %s", msg);
}

/* An IPv6 address listens dual-stack: libmicrohttpd clears IPV6_V6ONLY on the socket for
 * MHD_USE_DUAL_STACK (src/microhttpd/daemon.c, MHD_start_daemon), so [::] also accepts IPv4
 * clients (as ::ffff:a.b.c.d). MHD_USE_IPv6 alone would set IPV6_V6ONLY: IPv6 only. */
static unsigned int family_flag(const struct sockaddr_storage *ss)
{
    return ss->ss_family == AF_INET6 ? MHD_USE_DUAL_STACK : 0;
}

/* Does this kernel do IPv6? With ipv6.disable=1, socket(AF_INET6) fails (EAFNOSUPPORT) and
 * libmicrohttpd cannot open [::] at all ("Failed to create socket for listening"). */
static bool kernel_has_ipv6(void)
{
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    close(fd);
    return MHD_is_feature_supported(MHD_FEATURE_IPv6) == MHD_YES;
}

/* [::] falls back to 0.0.0.0 where IPv6 is off (SPEC 1); says so in the log. */
static void listen_family(struct sockaddr_storage *ss, const char *what, const char *addr)
{
    if (ss->ss_family == AF_INET6 && tg_listen_ipv4_fallback(ss, kernel_has_ipv6()))
        tg_log(TG_LOG_WARN, "%s %s: this kernel has no IPv6; listening on 0.0.0.0 (IPv4 only)",
               what, addr);
}

/* How the log describes a listening address. */
static const char *family_note(const struct sockaddr_storage *ss)
{
    return ss->ss_family == AF_INET6 ? ", dual-stack" : "";
}

/* Deadlines for slow clients (conntrack.h); filled in tg_server_run before the daemons start. */
static struct tg_conntrack_limits web_limits, probe_limits;

static struct MHD_Daemon *start_webhook(const struct sockaddr_storage *ss, const char *ca_pem)
{
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TLS |
                         MHD_USE_ERROR_LOG | MHD_USE_ITC | family_flag(ss);
    unsigned int pool = srv.cfg->threads > 1 ? srv.cfg->threads : 0;

    return MHD_start_daemon(
        flags, 0, NULL, NULL, webhook_access, NULL, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)ss, MHD_OPTION_HTTPS_CERT_CALLBACK,
        tg_tls_cert_callback, MHD_OPTION_HTTPS_PRIORITIES, srv.tls.priorities,
        MHD_OPTION_THREAD_POOL_SIZE, pool, MHD_OPTION_CONNECTION_LIMIT, srv.cfg->max_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, srv.cfg->connection_timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, TG_CONN_MEMORY, MHD_OPTION_NOTIFY_COMPLETED,
        webhook_completed, NULL, MHD_OPTION_NOTIFY_CONNECTION, tg_conntrack_notify, &web_limits,
        MHD_OPTION_URI_LOG_CALLBACK, tg_conntrack_request_line, NULL,
        /* Last, so that without a CA the list simply ends here. */
        ca_pem ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, ca_pem, MHD_OPTION_END);
}

static void probe_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                            enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)req_cls;
    (void)toe;
    tg_conntrack_request_done(c);
}

static struct MHD_Daemon *start_probes(const struct sockaddr_storage *ss)
{
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG |
                         MHD_USE_ITC | family_flag(ss);

    /* Probes and scrapes are few and small: one thread, few connections, short timeout. */
    return MHD_start_daemon(
        flags, 0, NULL, NULL, probe_access, NULL, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)ss, MHD_OPTION_CONNECTION_LIMIT, 64U,
        MHD_OPTION_CONNECTION_TIMEOUT, 10U, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32 * 1024,
        MHD_OPTION_NOTIFY_COMPLETED, probe_completed, NULL, MHD_OPTION_NOTIFY_CONNECTION,
        tg_conntrack_notify, &probe_limits, MHD_OPTION_URI_LOG_CALLBACK, tg_conntrack_request_line,
        NULL, MHD_OPTION_END);
}

static unsigned int bound_port(struct MHD_Daemon *d)
{
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    return di ? di->port : 0;
}

/* ---- reloads ----------------------------------------------------------------------------- */

static void log_cert(const char *what, const struct tg_tls_info *info)
{
    char when[32];
    time_t t = (time_t)info->not_after;
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    tg_log(TG_LOG_INFO, "%s: %s: subject %s, SANs [%s], %d certificate(s), expires %s", what,
           srv.cfg->cert_file, info->subject, info->sans, info->chain_len, when);
    if (!info->sans[0])
        tg_log(TG_LOG_WARN,
               "%s: the certificate has no subjectAltName: the API server will "
               "refuse it (it must name <service>.<namespace>.svc)",
               srv.cfg->cert_file);
    if (info->not_after - (long long)time(NULL) < 7 * 24 * 3600)
        tg_log(TG_LOG_WARN, "%s: the certificate expires in less than 7 days (%s)",
               srv.cfg->cert_file, when);
}

static void reload_certificate(bool force)
{
    struct tg_tls_info info;
    char err[512];
    int rc = tg_tls_reload(force, &info, err, sizeof(err));

    if (rc == 1) {
        tg_metrics_cert_reload(TG_RESULT_SUCCESS);
        tg_metrics_cert_expiry(info.not_after);
        log_cert("serving certificate reloaded", &info);
    } else if (rc == -EINTR) {
        tg_log(TG_LOG_INFO, "%s", err); /* stopping: not a failure */
    } else if (rc == -EAGAIN) {
        tg_metrics_cert_reload(TG_RESULT_FAILURE);
        tg_log(TG_LOG_ERROR,
               "certificate check did not complete, still serving the previous pair (trying "
               "again in %u s): %s",
               srv.cfg->reload_interval, err);
    } else if (rc < 0) {
        tg_metrics_cert_reload(TG_RESULT_FAILURE);
        tg_log(TG_LOG_ERROR, "certificate reload failed, still serving the previous one: %s", err);
    }
}

/* --config goes to the policy reloader (src/policy/reload.c): it polls the file every
 * reload_interval and logs its own failures; SIGHUP asks it to reload at once. */
static int start_policy(char *err, size_t errlen)
{
    struct tg_policy *p;

    if (srv.cfg->config_file)
        return tg_policy_reloader_start(srv.cfg->config_file, srv.cfg->reload_interval * 1000U,
                                        srv.cfg->has_mode ? &srv.cfg->mode : NULL, err, errlen);
    p = tg_policy_new_default();
    if (!p) {
        snprintf(err, errlen, "out of memory loading the default policy");
        return -ENOMEM;
    }
    tg_policy_publish(p);
    return 0;
}

/* The reloader logs and counts the outcome itself. */
static void reload_policy(void)
{
    if (srv.cfg->config_file)
        tg_policy_reload_now();
}

/* ---- lifecycle ----------------------------------------------------------------------------- */

static int load_client_ca(char **pem)
{
    char err[512];
    size_t len;
    int rc;

    *pem = NULL;
    if (!srv.cfg->client_ca_file)
        return 0;
    rc = tg_tls_read_file(srv.cfg->client_ca_file, pem, &len, err, sizeof(err));
    if (rc == 0 && !strstr(*pem, "-----BEGIN CERTIFICATE-----")) {
        snprintf(err, sizeof(err), "%s: no PEM certificate in the file", srv.cfg->client_ca_file);
        rc = -EINVAL;
    }
    if (rc < 0) {
        free(*pem);
        *pem = NULL;
        tg_log(TG_LOG_ERROR, "--client-ca-file: %s", err);
        return rc;
    }
    return 0;
}

/* Waits for signals: SIGHUP reloads, the file poll runs every reload_interval; returns on
 * SIGTERM or SIGINT. */
static void wait_for_stop(const sigset_t *set)
{
    struct timespec tick = {1, 0};
    unsigned int since_poll = 0;

    for (;;) {
        int sig = sigtimedwait(set, NULL, &tick);
        unsigned int cut = tg_conntrack_reap();
        if (cut)
            tg_log(TG_LOG_DEBUG, "cut %u connection(s) past their header or idle deadline", cut);
        if (sig == SIGTERM || sig == SIGINT) {
            tg_log(TG_LOG_INFO, "received %s", sig == SIGTERM ? "SIGTERM" : "SIGINT");
            return;
        }
        if (sig == SIGHUP) {
            tg_log(TG_LOG_INFO, "received SIGHUP: reloading certificate and policy");
            reload_certificate(true);
            reload_policy();
            since_poll = 0;
            continue;
        }
        if (++since_poll >= srv.cfg->reload_interval) {
            since_poll = 0;
            reload_certificate(false);
        }
    }
}

/* SIGTERM: readyz 503 at once; after shutdown_delay (time for endpoints to drop this pod) close
 * new connections, let in-flight requests finish (at most drain_timeout), stop. A second signal
 * skips the delay. */
static void drain(const sigset_t *set)
{
    struct timespec one = {1, 0};

    atomic_store(&srv.shutting_down, true);
    tg_log(TG_LOG_INFO, "shutting down: /readyz now answers 503; closing the port in %u s",
           srv.cfg->shutdown_delay);
    for (unsigned int i = 0; i < srv.cfg->shutdown_delay; i++) {
        int sig = sigtimedwait(set, NULL, &one);
        if (sig == SIGTERM || sig == SIGINT) {
            tg_log(TG_LOG_INFO, "second signal: skipping the shutdown delay");
            break;
        }
    }
    /* Not MHD_quiesce_daemon: see tg_conntrack_close_new. */
    tg_conntrack_close_new(&web_limits);
    tg_log(TG_LOG_INFO, "closing new connections; %ld request(s) in flight", tg_metrics_inflight());
    for (unsigned int i = 0; i < srv.cfg->drain_timeout * 10 && tg_metrics_inflight() > 0; i++)
        nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    if (tg_metrics_inflight() > 0)
        tg_log(TG_LOG_WARN, "drain timeout: %ld request(s) still in flight are cut",
               tg_metrics_inflight());
}

/* Everything that can fail before the port opens: addresses, policy, certificate, client CA.
 * Returns 0, or -1 after logging why (the caller exits 1). */
static int prepare(struct sockaddr_storage *web_addr, struct sockaddr_storage *probe_addr,
                   char **ca_pem)
{
    const struct tg_server_config *cfg = srv.cfg;
    struct tg_tls_info info;
    struct tg_policy *policy;
    char err[2048];
    socklen_t alen;

    if (tg_tls_profile_build(cfg->tls_min_version, cfg->tls_cipher_suites, &srv.tls, err,
                             sizeof(err)) < 0) {
        tg_log(TG_LOG_ERROR, "bad TLS profile: %s", err);
        return -1;
    }
    if (srv.tls.note[0])
        tg_log(TG_LOG_WARN, "%s", srv.tls.note);
    if (tg_listen_parse(cfg->listen, web_addr, &alen, err, sizeof(err)) < 0 ||
        tg_listen_parse(cfg->probe_listen, probe_addr, &alen, err, sizeof(err)) < 0) {
        tg_log(TG_LOG_ERROR, "bad listen address: %s", err);
        return -1;
    }
    listen_family(web_addr, "--listen", cfg->listen);
    listen_family(probe_addr, "--probe-listen", cfg->probe_listen);
    if (start_policy(err, sizeof(err)) < 0) {
        tg_log(TG_LOG_ERROR, "cannot load the policy: %s", err);
        return -1;
    }
    policy = tg_policy_acquire();
    tg_log(TG_LOG_INFO, "policy loaded from %s (mode %s%s)",
           policy && policy->source ? policy->source : "<embedded>",
           tg_mode_name(cfg->has_mode ? cfg->mode
                        : policy      ? policy->mode
                                      : TG_MODE_ENFORCE),
           cfg->has_mode ? ", set by --mode" : "");
    if (policy && policy->warnings)
        tg_log(TG_LOG_WARN, "policy %s: %s", policy->source ? policy->source : "<embedded>",
               policy->warnings);
    tg_policy_release(policy);

    if (tg_tls_init(cfg->cert_file, cfg->key_file, &info, err, sizeof(err)) < 0) {
        tg_log(TG_LOG_ERROR, "cannot use the serving certificate: %s", err);
        return -1;
    }
    log_cert("serving certificate", &info);
    tg_metrics_cert_expiry(info.not_after);
    /* A replaced pair outlives any handshake that picked it: a handshake is bounded by the idle
     * timeout per flight, and the key is used in the first server flight. */
    tg_tls_set_grace(cfg->connection_timeout * 4 > 300 ? (int)cfg->connection_timeout * 4 : 300);
    return load_client_ca(ca_pem) < 0 ? -1 : 0;
}

int tg_server_run(const struct tg_server_config *cfg)
{
    struct sockaddr_storage web_addr, probe_addr;
    struct MHD_Daemon *web = NULL, *probes = NULL;
    char *ca_pem = NULL;
    sigset_t set;
    int rc = 1;

    srv.cfg = cfg;
    web_limits.idle_ms = cfg->connection_timeout * 1000;
    web_limits.header_ms = cfg->header_timeout * 1000;
    /* A body dribbled past the API server's own deadline (at most 30 s) serves nobody, and each
     * such connection pins a slot and up to TG_RESERVE_MAX of buffer. */
    web_limits.request_ms = cfg->connection_timeout * 1000;
    probe_limits.idle_ms = 10 * 1000;
    probe_limits.header_ms = 5 * 1000;
    atomic_store(&web_limits.closing, false);
    atomic_store(&srv.shutting_down, false);
    atomic_store(&srv.started, false);
    srv.client_ca = cfg->client_ca_file != NULL;

    /* Signals go to the main thread's sigtimedwait only: block them before any thread starts,
     * so MHD's threads (and the policy reloader's) inherit the mask. */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    tg_body_budget_set(cfg->max_buffered);
    /* Request-path JSON comes from per-thread arenas (src/engine/arena.c): before any thread. */
    tg_arena_install();
    if (tg_metrics_init(tg_rule_defs, tg_rule_count, TG_VERSION) < 0 ||
        (cfg->metrics_namespace_label && tg_metrics_namespace_label() < 0)) {
        tg_log(TG_LOG_ERROR, "out of memory");
        return 1;
    }
    /* Decision lines go to per-thread buffers from here on (log.h); flushed on every way out. */
    if (tg_log_buffering_start() < 0)
        tg_log(TG_LOG_WARN, "cannot start the log flusher: decision lines are written unbuffered");
    if (prepare(&web_addr, &probe_addr, &ca_pem) < 0)
        goto out;
    web = start_webhook(&web_addr, ca_pem);
    if (!web) {
        tg_log(TG_LOG_ERROR, "cannot listen on %s (address in use, or not allowed?)", cfg->listen);
        goto out;
    }
    probes = start_probes(&probe_addr);
    if (!probes) {
        tg_log(TG_LOG_ERROR, "cannot listen on %s for probes (address in use?)", cfg->probe_listen);
        goto out;
    }
    atomic_store(&srv.started, true);
    tg_log(TG_LOG_INFO, "webhook listening on %s port %u (%s, %u thread(s)%s%s)", cfg->listen,
           bound_port(web), srv.tls.tls13_only ? "TLS 1.3" : "TLS 1.2/1.3", cfg->threads,
           family_note(&web_addr), srv.client_ca ? ", client certificates required" : "");
    tg_log(TG_LOG_INFO, "probes listening on %s port %u (/healthz /readyz /metrics%s)",
           cfg->probe_listen, bound_port(probes), family_note(&probe_addr));

    wait_for_stop(&set);
    drain(&set);
    rc = 0;
out:
    if (web)
        MHD_stop_daemon(web);
    if (probes)
        MHD_stop_daemon(probes);
    tg_log_buffering_stop();
    tg_tls_shutdown();
    tg_policy_reloader_stop();
    tg_policy_publish(NULL);
    tg_metrics_release();
    free(ca_pem);
    if (rc == 0)
        tg_log(TG_LOG_INFO, "stopped");
    return rc;
}

void tg_server_config_defaults(struct tg_server_config *c)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    memset(c, 0, sizeof(*c));
    /* Dual-stack: IPv4 and IPv6 on one socket (0.0.0.0 where the kernel has no IPv6). */
    c->listen = "[::]:8443";
    c->probe_listen = "[::]:8080";
    c->threads = n > 0 ? (unsigned int)n : 1;
    c->shutdown_delay = 5;
    c->drain_timeout = 30;
    c->max_connections = 1024;
    /* The API server waits at most 30 s for a webhook (timeoutSeconds 1..30): an idle or
     * dribbling connection past that serves nobody. */
    c->connection_timeout = 30;
    c->header_timeout = 10;
    c->max_buffered = (size_t)64 << 20;
    c->reload_interval = 5;
    c->max_body = TG_BODY_MAX;
}
