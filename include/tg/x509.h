/* x509.h -- everything trainguard does with OpenSSL: check a serving certificate and key, make a
 * CA and a serving certificate. It is built as a shared object of its own, trainguard-x509.so,
 * installed next to the binary, so that the long-running server never maps libcrypto: merely
 * linking it costs 1.4 MiB of resident memory (its relocated tables) and using it 2.3 MiB more,
 * against the 10 MiB budget of issue 9. `trainguard certs` loads it in-process; the server runs
 * each certificate check in a short-lived child, `trainguard __check-pair`, that loads it
 * (src/server/tls.c).
 *
 * The unit tests link src/x509/x509.c directly; tg_x509() then returns that copy. */
#ifndef TG_X509_H
#define TG_X509_H

#include <stddef.h>
#include <time.h>

#include <stdbool.h>

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

/* Bumped whenever struct tg_x509_api or the structs it passes change. */
#define TG_X509_ABI 2
/* The file name tg_x509() looks for, beside the executable, then in ../lib/trainguard/. */
#define TG_X509_SO "trainguard-x509.so"

/* What a check learnt about a pair (for logs and metrics). */
struct tg_tls_info {
    char subject[256];    /* RFC 2253, e.g. "CN=trainguard.trainguard.svc" */
    char sans[512];       /* "DNS:a, DNS:b, IP:127.0.0.1" ("" when none) */
    long long not_before; /* unix seconds */
    long long not_after;
    int chain_len; /* certificates in the file */
};

/* The four PEM files of `trainguard certs`, in this order. */
enum { TG_X509_CA_CRT, TG_X509_CA_KEY, TG_X509_TLS_CRT, TG_X509_TLS_KEY, TG_X509_NPEM };

struct tg_x509_pems {
    char *data[TG_X509_NPEM]; /* malloc'd, not NUL-terminated */
    size_t len[TG_X509_NPEM];
};

struct tg_x509_api {
    unsigned int abi; /* TG_X509_ABI of the object */
    /* sizeof of this struct and of the structs it passes, as the object was built */
    size_t size, info_size, opts_size;
    /* the OpenSSL version it runs with (OpenSSL_version) */
    const char *(*openssl_version)(void);
    /* Checks a PEM certificate (chain) and private key: both parse, the key matches the first
     * certificate, and now lies within notBefore..notAfter. The paths only name the files in
     * messages. 0 with info filled, or -EINVAL with "<file>: problem" in err. */
    int (*check_pair)(const char *cert_path, const char *cert_pem, size_t cert_len,
                      const char *key_path, const char *key_pem, size_t key_len, time_t now,
                      struct tg_tls_info *info, char *err, size_t errlen);
    /* Makes a CA and a serving certificate for validated options (tg_certs_validate) in memory.
     * 0 with out filled (release it), or a negative errno with the reason in err. */
    int (*make)(const struct tg_certs_opts *o, struct tg_x509_pems *out, char *err, size_t errlen);
    /* Frees what make filled; the key buffers are wiped first. */
    void (*release)(struct tg_x509_pems *p);
};

/* The API, loading trainguard-x509.so on the first call (thread-safe). NULL with the reason in
 * err when it cannot be found or was built for another ABI. */
const struct tg_x509_api *tg_x509(char *err, size_t errlen);

#endif
