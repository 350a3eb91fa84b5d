/* certs.h -- a development / bootstrap CA and a webhook serving certificate, made with OpenSSL.
 *
 * tg_certs_generate() writes four PEM files into opts->out_dir, the names of a Kubernetes TLS
 * Secret plus the CA: ca.crt, ca.key, tls.crt, tls.key. Keys are created mode 0600 (never widened
 * and narrowed later), certificates 0644 (both subject to the umask). Nothing is written unless
 * every input is valid and every key and certificate has been made in memory first. */
#ifndef TG_CERTS_H
#define TG_CERTS_H

#include <stdbool.h>
#include <stddef.h>

enum tg_key_type {
    TG_KEY_ECDSA = 0, /* ECDSA P-256 (prime256v1), the default */
    TG_KEY_RSA = 1,   /* RSA 2048 */
};

/* Validity bounds of the serving certificate in days. The CA always lives TG_CERTS_CA_DAYS, which
 * is the largest leaf lifetime too, so a leaf never outlives the CA that signed it. */
#define TG_CERTS_DEFAULT_DAYS 365
#define TG_CERTS_MAX_DAYS 3650
#define TG_CERTS_CA_DAYS 3650
/* notBefore of both certificates is backdated by this many seconds against clock skew between the
 * machine that makes them and the API server (kubernetes/client-go: util/cert/cert.go does the
 * same). */
#define TG_CERTS_BACKDATE_SECONDS 3600

struct tg_certs_opts {
    const char *out_dir; /* created (with parents) when missing */
    const char *service; /* Service name: DNS-1035 label */
    const char *ns;      /* namespace: DNS-1123 label */
    const char **dns;    /* extra DNS SANs (a leading "*." wildcard label is allowed) */
    size_t ndns;
    const char **ips; /* extra IP SANs, IPv4 dotted quad or IPv6 text */
    size_t nips;
    enum tg_key_type key_type;
    long days;  /* serving certificate lifetime, 1..TG_CERTS_MAX_DAYS */
    bool force; /* replace existing files (atomically, via rename) */
};

/* Sets the defaults: ECDSA, TG_CERTS_DEFAULT_DAYS, no names, no force. */
void tg_certs_opts_init(struct tg_certs_opts *o);

/* Checks every input without touching the file system. 0 or -EINVAL with the reason in err. */
int tg_certs_validate(const struct tg_certs_opts *o, char *err, size_t errlen);

/* Makes the CA and the serving certificate and writes the four files. On success returns 0 and,
 * when ca_bundle is not NULL, stores a new NUL-terminated string (free() it): the base64 of ca.crt
 * on one line, the value of a webhook's clientConfig.caBundle.
 * Errors: -EINVAL (bad input), -EEXIST (a file exists and force is false; err names it, and no
 * file has been written), -EIO / -ENOMEM / other -errno, each with a message in err. */
int tg_certs_generate(const struct tg_certs_opts *o, char **ca_bundle, char *err, size_t errlen);

#endif
