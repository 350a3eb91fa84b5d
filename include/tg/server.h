/* server.h -- `trainguard serve`: the HTTPS webhook daemon (/validate, /mutate) and the plain
 * HTTP probe daemon (/healthz, /readyz, /metrics), plus the small pure pieces they are built from
 * (route table, content-type match, capped body buffer, listen address), exposed for tests. */
#ifndef TG_SERVER_H
#define TG_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "tg/policy.h"
#include "tg/route.h"

struct tg_server_config {
    const char *cert_file;
    const char *key_file;
    const char *client_ca_file; /* NULL: no client certificates asked for */
    const char *listen; /* "[::]:8443" (dual-stack), "0.0.0.0:8443"; port 0 picks a free one */
    const char *probe_listen; /* "[::]:8080" */
    const char *config_file;  /* policy file; NULL: the embedded default policy */
    bool has_mode;
    enum tg_mode mode;           /* --mode overrides the policy's mode */
    unsigned int threads;        /* worker threads of the webhook daemon */
    unsigned int shutdown_delay; /* seconds between SIGTERM (readyz 503) and closing the port */
    unsigned int drain_timeout;  /* seconds to wait for in-flight requests after that */
    unsigned int max_connections;
    unsigned int connection_timeout; /* idle seconds before MHD closes a connection */
    unsigned int header_timeout;     /* seconds from a request line to complete headers */
    size_t max_buffered;             /* all request bodies together, bytes (0: no limit) */
    unsigned int reload_interval;    /* seconds between certificate file checks */
    size_t max_body;
    const char *tls_min_version;   /* "VersionTLS12" (NULL: that) or "VersionTLS13" */
    const char *tls_cipher_suites; /* Go names, comma-separated; NULL: the default profile */
    bool metrics_namespace_label;  /* trainguard_findings_total gets a namespace label */
};

/* Fills the defaults documented in docs/server.md (threads: online CPUs). */
void tg_server_config_defaults(struct tg_server_config *c);

/* Runs the server until SIGTERM or SIGINT. Returns the process exit code: 0 after a graceful
 * shutdown, 1 when it cannot start (bad certificate, policy, address), with the reason logged. */
int tg_server_run(const struct tg_server_config *c);

#endif
