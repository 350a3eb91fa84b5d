/* x509.c -- trainguard-x509.so: the OpenSSL 3 side of trainguard (see include/tg/x509.h for why
 * it is a shared object of its own). Checking a serving pair, making a CA and a serving
 * certificate. Inputs arrive validated (tg_certs_validate); nothing here touches files. */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tg/x509.h"

/* X.509 upper bound for a commonName (RFC 5280 ub-common-name); OpenSSL refuses longer ones. */
#define CN_MAX 64
/* RFC 5280 4.1.2.2: serials are positive and at most 20 octets; 16 random octets = 128 bits. */
#define SERIAL_BYTES 16

struct pem {
    char *data;
    size_t len;
};

/* ---- checking a serving pair ------------------------------------------------------------- */

static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1; /* encrypted keys are refused rather than prompted for */
}

static const char *ossl_reason(void)
{
    unsigned long e = ERR_peek_last_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    return r ? r : "no detail";
}

static long long asn1_to_unix(const ASN1_TIME *t)
{
    struct tm tm;

    if (!t || ASN1_TIME_to_tm(t, &tm) != 1)
        return 0;
    return (long long)timegm(&tm);
}

static void format_utc(long long t, char *buf, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;

    gmtime_r(&tt, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void read_subject(X509 *x, char *buf, size_t len)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *data = NULL;
    long n;

    buf[0] = '\0';
    if (!b)
        return;
    if (X509_NAME_print_ex(b, X509_get_subject_name(x), 0, XN_FLAG_RFC2253) >= 0) {
        n = BIO_get_mem_data(b, &data);
        if (n > 0)
            snprintf(buf, len, "%.*s", (int)n, data);
    }
    BIO_free(b);
}

static void append(char *buf, size_t len, const char *prefix, const char *value)
{
    size_t used = strlen(buf);

    if (used < len)
        snprintf(buf + used, len - used, "%s%s%s", used ? ", " : "", prefix, value);
}

static void read_sans(X509 *x, char *buf, size_t len)
{
    GENERAL_NAMES *names = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
    char ip[INET6_ADDRSTRLEN];

    buf[0] = '\0';
    for (int i = 0; names && i < sk_GENERAL_NAME_num(names); i++) {
        const GENERAL_NAME *gn = sk_GENERAL_NAME_value(names, i);
        if (gn->type == GEN_DNS) {
            char dns[256];
            snprintf(dns, sizeof(dns), "%.*s", ASN1_STRING_length(gn->d.dNSName),
                     (const char *)ASN1_STRING_get0_data(gn->d.dNSName));
            append(buf, len, "DNS:", dns);
        } else if (gn->type == GEN_IPADD) {
            int l = ASN1_STRING_length(gn->d.iPAddress);
            const unsigned char *p = ASN1_STRING_get0_data(gn->d.iPAddress);
            int af = l == 4 ? AF_INET : l == 16 ? AF_INET6 : 0;
            if (af && inet_ntop(af, p, ip, sizeof(ip)))
                append(buf, len, "IP:", ip);
        }
    }
    GENERAL_NAMES_free(names);
}

static int check_pair(const char *cert_path, const char *cert_pem, size_t cert_len,
                      const char *key_path, const char *key_pem, size_t key_len, time_t now,
                      struct tg_tls_info *info, char *err, size_t errlen)
{
    BIO *cb = NULL, *kb = NULL;
    X509 *x = NULL, *extra;
    EVP_PKEY *k = NULL;
    char when[32];
    int rc = -EINVAL;

    memset(info, 0, sizeof(*info));
    ERR_clear_error();
    if (cert_len > INT_MAX || key_len > INT_MAX) {
        snprintf(err, errlen, "%s: too large", cert_len > INT_MAX ? cert_path : key_path);
        return -EINVAL;
    }
    cb = BIO_new_mem_buf(cert_pem, (int)cert_len);
    kb = BIO_new_mem_buf(key_pem, (int)key_len);
    if (!cb || !kb) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
        goto out;
    }
    x = PEM_read_bio_X509(cb, NULL, no_passphrase, NULL);
    if (!x) {
        snprintf(err, errlen, "%s: no PEM certificate could be read (%s)", cert_path,
                 ossl_reason());
        goto out;
    }
    info->chain_len = 1;
    while ((extra = PEM_read_bio_X509(cb, NULL, no_passphrase, NULL)) != NULL) {
        info->chain_len++;
        X509_free(extra);
    }
    ERR_clear_error(); /* the loop ends on "no start line" */
    k = PEM_read_bio_PrivateKey(kb, NULL, no_passphrase, NULL);
    if (!k) {
        snprintf(err, errlen,
                 "%s: no PEM private key could be read (%s; encrypted keys are not "
                 "supported)",
                 key_path, ossl_reason());
        goto out;
    }
    if (X509_check_private_key(x, k) != 1) {
        snprintf(err, errlen, "%s: private key does not match the certificate in %s", key_path,
                 cert_path);
        goto out;
    }
    info->not_before = asn1_to_unix(X509_get0_notBefore(x));
    info->not_after = asn1_to_unix(X509_get0_notAfter(x));
    read_subject(x, info->subject, sizeof(info->subject));
    read_sans(x, info->sans, sizeof(info->sans));
    if ((long long)now < info->not_before) {
        format_utc(info->not_before, when, sizeof(when));
        snprintf(err, errlen, "%s: certificate is not valid before %s", cert_path, when);
        goto out;
    }
    if ((long long)now > info->not_after) {
        format_utc(info->not_after, when, sizeof(when));
        snprintf(err, errlen, "%s: certificate expired on %s", cert_path, when);
        goto out;
    }
    rc = 0;
out:
    ERR_clear_error();
    EVP_PKEY_free(k);
    X509_free(x);
    BIO_free(kb);
    BIO_free(cb);
    return rc;
}

/* ---- making a CA and a serving certificate ----------------------------------------------- */

/* Appends the first queued OpenSSL error (and clears the queue) to a message. */
static int ssl_fail(char *err, size_t errlen, const char *what)
{
    char buf[256];
    unsigned long e = ERR_get_error();

    if (e)
        ERR_error_string_n(e, buf, sizeof(buf));
    else
        snprintf(buf, sizeof(buf), "no detail");
    ERR_clear_error();
    snprintf(err, errlen, "%s: %s", what, buf);
    return -EIO;
}

static EVP_PKEY *make_key(enum tg_key_type type)
{
    if (type == TG_KEY_RSA)
        return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
    return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

/* A random positive 128-bit serial (CA/Browser Forum asks for at least 64 random bits). */
static int set_random_serial(X509 *x)
{
    unsigned char raw[SERIAL_BYTES];
    BIGNUM *bn = NULL;
    int ret = -EIO;

    if (RAND_bytes(raw, sizeof(raw)) != 1)
        goto out;
    raw[0] &= 0x7f; /* positive as a DER INTEGER without a leading zero octet */
    raw[0] |= 0x40; /* and never short: exactly 127 significant bits */
    bn = BN_bin2bn(raw, sizeof(raw), NULL);
    if (!bn || !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)))
        goto out;
    ret = 0;
out:
    BN_free(bn);
    OPENSSL_cleanse(raw, sizeof(raw));
    return ret;
}

/* Adds one extension written in OpenSSL's config syntax; issuer may equal x (self-signed). */
static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509_EXTENSION *ext;
    int ok;

    X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
    ext = X509V3_EXT_nconf_nid(NULL, &ctx, nid, value);
    if (!ext)
        return -EIO;
    ok = X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    return ok ? 0 : -EIO;
}

/* Common fields: v3, random serial, subject CN, backdated notBefore, notAfter after `days`. */
static X509 *new_cert(EVP_PKEY *key, const char *cn, long days)
{
    X509 *x = X509_new();
    X509_NAME *name;

    if (!x || !X509_set_version(x, X509_VERSION_3) || set_random_serial(x) < 0)
        goto fail;
    name = X509_get_subject_name(x);
    if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, (const unsigned char *)"trainguard",
                                    -1, -1, 0) ||
        !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1,
                                    0))
        goto fail;
    if (!X509_gmtime_adj(X509_getm_notBefore(x), -TG_CERTS_BACKDATE_SECONDS) ||
        !X509_time_adj_ex(X509_getm_notAfter(x), (int)days, 0, NULL) || !X509_set_pubkey(x, key))
        goto fail;
    return x;
fail:
    X509_free(x);
    return NULL;
}

static X509 *make_ca(EVP_PKEY *key, char *err, size_t errlen)
{
    X509 *x = new_cert(key, "trainguard webhook CA", TG_CERTS_CA_DAYS);

    if (!x || !X509_set_issuer_name(x, X509_get_subject_name(x)))
        goto fail;
    if (add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE") < 0 ||
        add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
        add_ext(x, x, NID_subject_key_identifier, "hash") < 0 ||
        add_ext(x, x, NID_authority_key_identifier, "keyid:always") < 0)
        goto fail;
    if (!X509_sign(x, key, EVP_sha256()))
        goto fail;
    return x;
fail:
    ssl_fail(err, errlen, "making the CA certificate");
    X509_free(x);
    return NULL;
}

static int push_dns(GENERAL_NAMES *gens, const char *name)
{
    GENERAL_NAME *gen;

    /* skip a name already present (a --dns that repeats a service name) */
    for (int i = 0; i < sk_GENERAL_NAME_num(gens); i++) {
        GENERAL_NAME *g = sk_GENERAL_NAME_value(gens, i);
        if (g->type == GEN_DNS &&
            !strcasecmp((const char *)ASN1_STRING_get0_data(g->d.dNSName), name))
            return 0;
    }
    gen = GENERAL_NAME_new();
    if (!gen)
        return -ENOMEM;
    gen->type = GEN_DNS;
    gen->d.dNSName = ASN1_IA5STRING_new();
    if (!gen->d.dNSName || !ASN1_STRING_set(gen->d.dNSName, name, (int)strlen(name)) ||
        !sk_GENERAL_NAME_push(gens, gen)) {
        GENERAL_NAME_free(gen);
        return -ENOMEM;
    }
    return 0;
}

static int push_ip(GENERAL_NAMES *gens, const char *text)
{
    unsigned char buf[16];
    int len = inet_pton(AF_INET, text, buf) == 1 ? 4 : inet_pton(AF_INET6, text, buf) == 1 ? 16 : 0;
    GENERAL_NAME *gen;

    if (!len)
        return -EINVAL;
    gen = GENERAL_NAME_new();
    if (!gen)
        return -ENOMEM;
    gen->type = GEN_IPADD;
    gen->d.iPAddress = ASN1_OCTET_STRING_new();
    if (!gen->d.iPAddress || !ASN1_OCTET_STRING_set(gen->d.iPAddress, buf, len) ||
        !sk_GENERAL_NAME_push(gens, gen)) {
        GENERAL_NAME_free(gen);
        return -ENOMEM;
    }
    return 0;
}

/* subjectAltName: the four service names the API server may dial, then --dns, then --ip. */
static int add_sans(X509 *x, const struct tg_certs_opts *o)
{
    GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
    char name[300];
    static const char *const suffix[] = {"", ".svc", ".svc.cluster.local"};
    int ret = -ENOMEM;

    if (!gens)
        return -ENOMEM;
    if ((ret = push_dns(gens, o->service)) < 0)
        goto out;
    for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
        snprintf(name, sizeof(name), "%s.%s%s", o->service, o->ns, suffix[i]);
        if ((ret = push_dns(gens, name)) < 0)
            goto out;
    }
    for (size_t i = 0; i < o->ndns; i++) {
        if ((ret = push_dns(gens, o->dns[i])) < 0)
            goto out;
    }
    for (size_t i = 0; i < o->nips; i++) {
        if ((ret = push_ip(gens, o->ips[i])) < 0)
            goto out;
    }
    ret = X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0, X509V3_ADD_DEFAULT) == 1 ? 0 : -EIO;
out:
    GENERAL_NAMES_free(gens);
    return ret;
}

static X509 *make_leaf(EVP_PKEY *key, X509 *ca, EVP_PKEY *ca_key, const struct tg_certs_opts *o,
                       char *err, size_t errlen)
{
    char cn[CN_MAX + 1];
    X509 *x;
    const char *ku = o->key_type == TG_KEY_RSA ? "critical,digitalSignature,keyEncipherment"
                                               : "critical,digitalSignature";

    /* CN = NAME.NS.svc, the name the API server checks; it is informational only (clients match
     * SANs), so a name over the 64-character CN limit falls back to the Service name. */
    if (snprintf(cn, sizeof(cn), "%s.%s.svc", o->service, o->ns) >= (int)sizeof(cn))
        snprintf(cn, sizeof(cn), "%s", o->service);
    x = new_cert(key, cn, o->days);
    if (!x || !X509_set_issuer_name(x, X509_get_subject_name(ca)))
        goto fail;
    if (add_ext(x, ca, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
        add_ext(x, ca, NID_key_usage, ku) < 0 ||
        add_ext(x, ca, NID_ext_key_usage, "serverAuth") < 0 ||
        add_ext(x, ca, NID_subject_key_identifier, "hash") < 0 ||
        add_ext(x, ca, NID_authority_key_identifier, "keyid:always") < 0 || add_sans(x, o) < 0)
        goto fail;
    if (!X509_sign(x, ca_key, EVP_sha256()))
        goto fail;
    return x;
fail:
    ssl_fail(err, errlen, "making the serving certificate");
    X509_free(x);
    return NULL;
}

/* Copies what a memory BIO holds into p (a new buffer). */
static int bio_take(BIO *b, struct pem *p)
{
    char *data;
    long n = BIO_get_mem_data(b, &data);

    if (n <= 0)
        return -EIO;
    p->data = malloc((size_t)n);
    if (!p->data)
        return -ENOMEM;
    memcpy(p->data, data, (size_t)n);
    p->len = (size_t)n;
    return 0;
}

static int pem_cert(X509 *x, struct pem *p)
{
    BIO *b = BIO_new(BIO_s_mem());
    int ret = -ENOMEM;

    if (b)
        ret = PEM_write_bio_X509(b, x) ? bio_take(b, p) : -EIO;
    BIO_free(b);
    return ret;
}

/* Unencrypted PKCS#8 ("BEGIN PRIVATE KEY"), which OpenSSL, GnuTLS and Go all read. */
static int pem_key(EVP_PKEY *k, struct pem *p)
{
    BIO *b = BIO_new(BIO_s_mem());
    int ret = -ENOMEM;

    if (b)
        ret = PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) ? bio_take(b, p) : -EIO;
    BIO_free(b);
    return ret;
}

static void pem_release(struct pem *p, bool secret)
{
    if (p->data && secret)
        OPENSSL_cleanse(p->data, p->len);
    free(p->data);
    p->data = NULL;
    p->len = 0;
}

static void release(struct tg_x509_pems *p)
{
    for (int i = 0; i < TG_X509_NPEM; i++) {
        if (p->data[i] && (i == TG_X509_CA_KEY || i == TG_X509_TLS_KEY))
            OPENSSL_cleanse(p->data[i], p->len[i]);
        free(p->data[i]);
        p->data[i] = NULL;
        p->len[i] = 0;
    }
}

static int make(const struct tg_certs_opts *o, struct tg_x509_pems *out, char *err, size_t errlen)
{
    EVP_PKEY *ca_key = NULL, *key = NULL;
    X509 *ca = NULL, *leaf = NULL;
    struct pem pems[TG_X509_NPEM] = {{0}};
    int ret;

    memset(out, 0, sizeof(*out));
    ca_key = make_key(o->key_type);
    key = make_key(o->key_type);
    if (!ca_key || !key) {
        ret = ssl_fail(err, errlen, "generating a key");
        goto out;
    }
    ca = make_ca(ca_key, err, errlen);
    leaf = ca ? make_leaf(key, ca, ca_key, o, err, errlen) : NULL;
    if (!leaf) {
        ret = -EIO;
        goto out;
    }
    if ((ret = pem_cert(ca, &pems[TG_X509_CA_CRT])) < 0 ||
        (ret = pem_key(ca_key, &pems[TG_X509_CA_KEY])) < 0 ||
        (ret = pem_cert(leaf, &pems[TG_X509_TLS_CRT])) < 0 ||
        (ret = pem_key(key, &pems[TG_X509_TLS_KEY])) < 0) {
        snprintf(err, errlen, "encoding PEM: %s", strerror(-ret));
        goto out;
    }
    for (int i = 0; i < TG_X509_NPEM; i++) {
        out->data[i] = pems[i].data;
        out->len[i] = pems[i].len;
        pems[i].data = NULL;
    }
out:
    for (int i = 0; i < TG_X509_NPEM; i++)
        pem_release(&pems[i], i == TG_X509_CA_KEY || i == TG_X509_TLS_KEY);
    X509_free(leaf);
    X509_free(ca);
    EVP_PKEY_free(key);
    EVP_PKEY_free(ca_key);
    return ret;
}

static const char *openssl_version(void)
{
    return OpenSSL_version(OPENSSL_VERSION);
}

/* The one symbol the object exports (-fvisibility=hidden hides the rest). */
__attribute__((visibility("default"))) const struct tg_x509_api tg_x509_api = {
    .abi = TG_X509_ABI,
    .size = sizeof(struct tg_x509_api),
    .info_size = sizeof(struct tg_tls_info),
    .opts_size = sizeof(struct tg_certs_opts),
    .openssl_version = openssl_version,
    .check_pair = check_pair,
    .make = make,
    .release = release,
};
