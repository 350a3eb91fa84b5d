/* serve_cmd.c -- `trainguard serve`: flags to a server configuration, then tg_server_run. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/log.h"
#include "tg/policy.h"
#include "tg/serve_cmd.h"
#include "tg/server.h"
#include "tg/tls_profile.h"
#include "tg/version.h"

enum {
    OPT_CERT = 256,
    OPT_KEY,
    OPT_CLIENT_CA,
    OPT_LISTEN,
    OPT_PROBE_LISTEN,
    OPT_CONFIG,
    OPT_MODE,
    OPT_THREADS,
    OPT_SHUTDOWN_DELAY,
    OPT_DRAIN_TIMEOUT,
    OPT_LOG_LEVEL,
    OPT_LOG_DECISIONS,
    OPT_MAX_CONNECTIONS,
    OPT_CONNECTION_TIMEOUT,
    OPT_HEADER_TIMEOUT,
    OPT_MAX_BUFFERED,
    OPT_RELOAD_INTERVAL,
    OPT_TLS_MIN_VERSION,
    OPT_TLS_CIPHER_SUITES,
    OPT_METRICS_NAMESPACE_LABEL,
    OPT_HELP,
};

static const struct option options[] = {
    {"tls-cert-file", required_argument, NULL, OPT_CERT},
    {"tls-private-key-file", required_argument, NULL, OPT_KEY},
    {"client-ca-file", required_argument, NULL, OPT_CLIENT_CA},
    {"listen", required_argument, NULL, OPT_LISTEN},
    {"probe-listen", required_argument, NULL, OPT_PROBE_LISTEN},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"mode", required_argument, NULL, OPT_MODE},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"shutdown-delay", required_argument, NULL, OPT_SHUTDOWN_DELAY},
    {"drain-timeout", required_argument, NULL, OPT_DRAIN_TIMEOUT},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"log-decisions", required_argument, NULL, OPT_LOG_DECISIONS},
    {"max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS},
    {"connection-timeout", required_argument, NULL, OPT_CONNECTION_TIMEOUT},
    {"header-timeout", required_argument, NULL, OPT_HEADER_TIMEOUT},
    {"max-buffered-mib", required_argument, NULL, OPT_MAX_BUFFERED},
    {"reload-interval", required_argument, NULL, OPT_RELOAD_INTERVAL},
    {"tls-min-version", required_argument, NULL, OPT_TLS_MIN_VERSION},
    {"tls-cipher-suites", required_argument, NULL, OPT_TLS_CIPHER_SUITES},
    {"metrics-namespace-label", no_argument, NULL, OPT_METRICS_NAMESPACE_LABEL},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *out, const struct tg_server_config *d)
{
    fprintf(
        out,
        "usage: trainguard serve --tls-cert-file FILE --tls-private-key-file FILE [OPTIONS]\n"
        "\n"
        "Runs the admission webhook: POST /validate and /mutate over HTTPS (TLS 1.2/1.3,\n"
        "ECDHE with AEAD ciphers); GET /healthz, /readyz and /metrics over plain HTTP on the\n"
        "probe address.\n"
        "\n"
        "  --tls-cert-file FILE         serving certificate (PEM, chain allowed); reloaded\n"
        "                               when it changes or on SIGHUP\n"
        "  --tls-private-key-file FILE  its private key (PEM, unencrypted)\n"
        "  --client-ca-file FILE        require client certificates signed by these CAs\n"
        "  --tls-min-version VERSION    VersionTLS12 (default) or VersionTLS13\n"
        "  --tls-cipher-suites NAMES    TLS 1.2 suites, comma-separated Go/IANA names as for\n"
        "                               kube-apiserver (ECDHE with AES-GCM or ChaCha20-Poly1305\n"
        "                               only; default: all of those)\n"
        "  --listen HOST:PORT           webhook address (default %s: IPv4 and IPv6 on one\n"
        "                               socket, 0.0.0.0 where the kernel has no IPv6)\n"
        "  --probe-listen HOST:PORT     probe address, plain HTTP (default %s, dual-stack)\n"
        "  --config FILE                policy file (default: the embedded policy)\n"
        "  --mode enforce|warn|audit    override the policy's mode\n"
        "  --threads N                  worker threads (default: online CPUs, here %u)\n"
        "  --shutdown-delay SECONDS     after SIGTERM, keep serving with /readyz 503 this\n"
        "                               long before closing the port (default %u)\n"
        "  --drain-timeout SECONDS      then wait at most this long for in-flight requests\n"
        "                               (default %u)\n"
        "  --max-connections N          concurrent connections (default %u)\n"
        "  --connection-timeout SECONDS close a connection idle this long, or that takes this\n"
        "                               long to send a request line (default %u)\n"
        "  --header-timeout SECONDS     close a connection whose request headers take longer\n"
        "                               than this after its request line (default %u)\n"
        "  --max-buffered-mib N         request bodies held at once, all connections together;\n"
        "                               past it new bodies get 503 (default %zu, 0: no limit)\n"
        "  --reload-interval SECONDS    how often the certificate files are checked\n"
        "                               (default %u)\n"
        "  --metrics-namespace-label    add a namespace label to trainguard_findings_total\n"
        "                               (one series per namespace and rule: mind cardinality)\n"
        "  --log-level debug|info|warn|error   (default info)\n"
        "  --log-decisions all|findings|none   a line per decision, only for decisions\n"
        "                               with findings (or not allowed), or none (default all)\n"
        "  --help                       this text\n"
        "\n"
        "Signals: SIGTERM/SIGINT graceful shutdown (exit 0), SIGHUP reload certificate and\n"
        "policy. Exit 1 when it cannot start (the log line names the file and the problem),\n"
        "2 on bad usage.\n",
        d->listen, d->probe_listen, d->threads, d->shutdown_delay, d->drain_timeout,
        d->max_connections, d->connection_timeout, d->header_timeout, d->max_buffered >> 20,
        d->reload_interval);
}

/* Parses a whole unsigned number in [min, max]; 0 or -EINVAL. */
static int parse_uint(const char *flag, const char *s, unsigned long min, unsigned long max,
                      unsigned int *out)
{
    char *end;

    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
        fprintf(stderr,
                "trainguard serve: --%s: expected a whole number from %lu to %lu, got "
                "'%s'\n",
                flag, min, max, s);
        return -EINVAL;
    }
    *out = (unsigned int)v;
    return 0;
}

int tg_cmd_serve(int argc, char **argv)
{
    struct tg_server_config cfg, defaults;
    enum tg_log_level level = TG_LOG_INFO;
    struct tg_tls_profile tls;
    char err[512];
    enum tg_log_decisions decisions = TG_LOG_DECISIONS_ALL;
    int opt, rc = 0;

    tg_server_config_defaults(&cfg);
    defaults = cfg;
    optind = 1;
    opterr = 1;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case OPT_CERT:
            cfg.cert_file = optarg;
            break;
        case OPT_KEY:
            cfg.key_file = optarg;
            break;
        case OPT_CLIENT_CA:
            cfg.client_ca_file = optarg;
            break;
        case OPT_LISTEN:
            cfg.listen = optarg;
            break;
        case OPT_PROBE_LISTEN:
            cfg.probe_listen = optarg;
            break;
        case OPT_CONFIG:
            cfg.config_file = optarg;
            break;
        case OPT_MODE:
            if (tg_mode_parse(optarg, &cfg.mode) < 0) {
                fprintf(stderr,
                        "trainguard serve: --mode: expected enforce, warn or audit, got "
                        "'%s'\n",
                        optarg);
                return 2;
            }
            cfg.has_mode = true;
            break;
        case OPT_THREADS:
            rc = parse_uint("threads", optarg, 1, 1024, &cfg.threads);
            break;
        case OPT_SHUTDOWN_DELAY:
            rc = parse_uint("shutdown-delay", optarg, 0, 3600, &cfg.shutdown_delay);
            break;
        case OPT_DRAIN_TIMEOUT:
            rc = parse_uint("drain-timeout", optarg, 0, 3600, &cfg.drain_timeout);
            break;
        case OPT_MAX_CONNECTIONS:
            rc = parse_uint("max-connections", optarg, 1, 1000000, &cfg.max_connections);
            break;
        case OPT_CONNECTION_TIMEOUT:
            rc = parse_uint("connection-timeout", optarg, 1, 3600, &cfg.connection_timeout);
            break;
        case OPT_MAX_BUFFERED: {
            unsigned int mib;
            rc = parse_uint("max-buffered-mib", optarg, 0, 65536, &mib);
            cfg.max_buffered = (size_t)mib << 20;
            break;
        }
        case OPT_HEADER_TIMEOUT:
            rc = parse_uint("header-timeout", optarg, 1, 3600, &cfg.header_timeout);
            break;
        case OPT_RELOAD_INTERVAL:
            rc = parse_uint("reload-interval", optarg, 1, 3600, &cfg.reload_interval);
            break;
        case OPT_TLS_MIN_VERSION:
            cfg.tls_min_version = optarg;
            break;
        case OPT_TLS_CIPHER_SUITES:
            cfg.tls_cipher_suites = optarg;
            break;
        case OPT_METRICS_NAMESPACE_LABEL:
            cfg.metrics_namespace_label = true;
            break;
        case OPT_LOG_LEVEL:
            if (tg_log_level_parse(optarg, &level) < 0) {
                fprintf(stderr,
                        "trainguard serve: --log-level: expected debug, info, warn or "
                        "error, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case OPT_LOG_DECISIONS:
            if (tg_log_decisions_parse(optarg, &decisions) < 0) {
                fprintf(stderr,
                        "trainguard serve: --log-decisions: expected all, findings or none, "
                        "got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'h':
        case OPT_HELP:
            usage(stdout, &defaults);
            return 0;
        default:
            fprintf(stderr, "Run 'trainguard serve --help' for the options.\n");
            return 2;
        }
        if (rc < 0)
            return 2;
    }
    if (optind < argc) {
        fprintf(stderr, "trainguard serve: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!cfg.cert_file || !cfg.key_file) {
        fprintf(stderr, "trainguard serve: --tls-cert-file and --tls-private-key-file are "
                        "required\n");
        return 2;
    }
    if (tg_tls_profile_build(cfg.tls_min_version, cfg.tls_cipher_suites, &tls, err, sizeof(err)) <
        0) {
        fprintf(stderr, "trainguard serve: %s\n", err);
        return 2;
    }
    tg_log_set_level(level);
    tg_log_set_decisions(decisions);
    return tg_server_run(&cfg);
}
