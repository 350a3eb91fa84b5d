/* certs_cmd.c -- `trainguard certs`: a CA and a webhook serving certificate made with OpenSSL 3
 * (in trainguard-x509.so, src/x509/x509.c); this file checks the inputs and writes the files. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tg/base64.h"
#include "tg/certs_cmd.h"
#include "tg/dnsname.h"
#include "tg/patch.h"
#include "tg/x509.h"

static const char *const file_names[] = {"ca.crt", "ca.key", "tls.crt", "tls.key"};
#define NFILES (sizeof(file_names) / sizeof(file_names[0]))
_Static_assert(NFILES == TG_X509_NPEM, "file_names[] follows the TG_X509_* order");

void tg_certs_opts_init(struct tg_certs_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->key_type = TG_KEY_ECDSA;
    o->days = TG_CERTS_DEFAULT_DAYS;
}

/* ---- input checks ------------------------------------------------------------------------ */

/* DNS-1035 label (Service names): a DNS-1123 label that starts with a letter. */
static bool is_dns1035_label(const char *s)
{
    return tg_dns1123_label(s) && s[0] >= 'a' && s[0] <= 'z';
}

static bool is_host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

/* A host name for a dNSName SAN: labels of [A-Za-z0-9-], 1..63 each, not starting or ending with
 * '-', at most 253 characters; the first label may be "*" (a wildcard). */
static bool is_dns_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 253)
        return false;
    if (s[0] == '*') {
        if (s[1] != '.' || s[2] == '\0')
            return false;
        s += 2;
    }
    while (*s) {
        size_t len = 0;
        while (s[len] && s[len] != '.') {
            if (!is_host_char(s[len]))
                return false;
            len++;
        }
        if (len == 0 || len > 63 || s[0] == '-' || s[len - 1] == '-')
            return false;
        s += len;
        if (*s == '.') {
            s++;
            if (*s == '\0')
                return false;
        }
    }
    return true;
}

/* Parses an IPv4 or IPv6 address into buf (4 or 16 bytes); returns the length or 0. */
static int parse_ip(const char *s, unsigned char buf[16])
{
    if (inet_pton(AF_INET, s, buf) == 1)
        return 4;
    if (inet_pton(AF_INET6, s, buf) == 1)
        return 16;
    return 0;
}

int tg_certs_validate(const struct tg_certs_opts *o, char *err, size_t errlen)
{
    unsigned char ip[16];

    if (!o->out_dir || !*o->out_dir) {
        snprintf(err, errlen, "--out-dir is required (the directory for ca.crt, tls.crt, ...)");
        return -EINVAL;
    }
    if (!o->service || !*o->service) {
        snprintf(err, errlen, "--service is required (the name of the webhook's Service)");
        return -EINVAL;
    }
    if (!is_dns1035_label(o->service)) {
        snprintf(err, errlen,
                 "--service '%s' is not a valid Service name (lowercase letters, digits and '-', "
                 "starting with a letter, at most 63 characters)",
                 o->service);
        return -EINVAL;
    }
    if (!o->ns || !*o->ns) {
        snprintf(err, errlen, "--namespace is required (the namespace of the webhook's Service)");
        return -EINVAL;
    }
    if (!tg_dns1123_label(o->ns)) {
        snprintf(err, errlen,
                 "--namespace '%s' is not a valid namespace name (lowercase letters, digits and "
                 "'-', at most 63 characters)",
                 o->ns);
        return -EINVAL;
    }
    for (size_t i = 0; i < o->ndns; i++) {
        if (!is_dns_name(o->dns[i])) {
            snprintf(err, errlen, "--dns '%s' is not a valid DNS name", o->dns[i]);
            return -EINVAL;
        }
    }
    for (size_t i = 0; i < o->nips; i++) {
        if (!parse_ip(o->ips[i], ip)) {
            snprintf(err, errlen, "--ip '%s' is not an IPv4 or IPv6 address", o->ips[i]);
            return -EINVAL;
        }
    }
    if (o->key_type != TG_KEY_ECDSA && o->key_type != TG_KEY_RSA) {
        snprintf(err, errlen, "unknown key type %d", (int)o->key_type);
        return -EINVAL;
    }
    if (o->days < 1 || o->days > TG_CERTS_MAX_DAYS) {
        snprintf(err, errlen, "--days %ld is out of range: give 1 to %d", o->days,
                 TG_CERTS_MAX_DAYS);
        return -EINVAL;
    }
    return 0;
}

/* ---- files ------------------------------------------------------------------------------- */

/* mkdir -p; parents get 0755, the last directory 0700 (it holds private keys). */
static int make_dirs(const char *dir, char *err, size_t errlen)
{
    char path[PATH_MAX];
    struct stat st;
    size_t n;

    if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
        snprintf(err, errlen, "--out-dir: path too long");
        return -ENAMETOOLONG;
    }
    n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = '\0';
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        path[i] = '\0';
        if (mkdir(path, i == n ? 0700 : 0755) < 0 && errno != EEXIST) {
            int e = errno;
            snprintf(err, errlen, "cannot create directory %s: %s", path, strerror(e));
            return -e;
        }
        if (i < n)
            path[i] = '/';
    }
    if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s is not a directory", path);
        return -ENOTDIR;
    }
    return 0;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        data += w;
        len -= (size_t)w;
    }
    return fsync(fd) < 0 ? -errno : 0;
}

/* Writes one file. Without force it is created with O_EXCL, so an existing file is never touched.
 * With force a temporary file is made next to it (mkstemp: O_EXCL, mode 0600 from the start) and
 * renamed over the old one, so a reader sees either the old or the new file, never half of one. */
static int write_file(const char *dir, const char *name, const char *data, size_t len, bool secret,
                      bool force, char *err, size_t errlen)
{
    char path[PATH_MAX], tmp[PATH_MAX];
    int fd, ret;

    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
        snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name) >= (int)sizeof(tmp)) {
        snprintf(err, errlen, "--out-dir: path too long");
        return -ENAMETOOLONG;
    }
    if (force)
        fd = mkstemp(tmp);
    else
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, secret ? 0600 : 0644);
    if (fd < 0) {
        ret = -errno;
        if (ret == -EEXIST)
            snprintf(err, errlen, "%s already exists: use --force to replace it", path);
        else
            snprintf(err, errlen, "cannot create %s: %s", force ? tmp : path, strerror(-ret));
        return ret;
    }
    ret = 0;
    if (force && !secret && fchmod(fd, 0644) < 0)
        ret = -errno;
    if (!ret)
        ret = write_all(fd, data, len);
    if (close(fd) < 0 && !ret)
        ret = -errno;
    if (!ret && force && rename(tmp, path) < 0)
        ret = -errno;
    if (ret) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(-ret));
        unlink(force ? tmp : path);
    }
    return ret;
}

static void unlink_in(const char *dir, const char *name)
{
    char path[PATH_MAX];

    if (snprintf(path, sizeof(path), "%s/%s", dir, name) < (int)sizeof(path))
        unlink(path);
}

/* Without force, refuses before writing anything when any of the four files exists. */
static int check_free(const char *dir, char *err, size_t errlen)
{
    char path[PATH_MAX];
    struct stat st;

    for (size_t i = 0; i < NFILES; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, file_names[i]);
        if (lstat(path, &st) == 0) {
            snprintf(err, errlen, "%s already exists: use --force to replace it", path);
            return -EEXIST;
        }
    }
    return 0;
}

/* ---- the whole job ----------------------------------------------------------------------- */

int tg_certs_generate(const struct tg_certs_opts *o, char **ca_bundle, char *err, size_t errlen)
{
    const struct tg_x509_api *api;
    struct tg_x509_pems pems;
    int ret;

    if (ca_bundle)
        *ca_bundle = NULL;
    if ((ret = tg_certs_validate(o, err, errlen)) < 0)
        return ret;
    if (!(api = tg_x509(err, errlen)))
        return -ENOENT;
    if ((ret = make_dirs(o->out_dir, err, errlen)) < 0)
        return ret;
    if (!o->force && (ret = check_free(o->out_dir, err, errlen)) < 0)
        return ret;
    if ((ret = api->make(o, &pems, err, errlen)) < 0)
        return ret;
    for (size_t i = 0; i < NFILES; i++) {
        bool secret = i == TG_X509_CA_KEY || i == TG_X509_TLS_KEY;
        if ((ret = write_file(o->out_dir, file_names[i], pems.data[i], pems.len[i], secret,
                              o->force, err, errlen)) < 0) {
            /* without --force the files written so far are this run's own (O_EXCL): remove them
             * so that a retry is not refused; with --force they replaced good files already */
            while (!o->force && i-- > 0)
                unlink_in(o->out_dir, file_names[i]);
            goto out;
        }
    }
    if (ca_bundle &&
        !(*ca_bundle = tg_base64_encode((const unsigned char *)pems.data[TG_X509_CA_CRT],
                                        pems.len[TG_X509_CA_CRT]))) {
        snprintf(err, errlen, "out of memory");
        ret = -ENOMEM;
    }
out:
    api->release(&pems);
    return ret;
}

/* ---- command line ------------------------------------------------------------------------ */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: trainguard certs --out-dir DIR --service NAME --namespace NS [--dns NAME]...\n"
            "                        [--ip IP]... [--key-type ecdsa|rsa] [--days N] [--force]\n"
            "\n"
            "Makes a CA and a webhook serving certificate signed by it, and writes ca.crt,\n"
            "ca.key, tls.crt and tls.key into DIR (keys mode 0600). Prints the base64 of ca.crt\n"
            "(the webhook's clientConfig.caBundle) on stdout.\n"
            "\n"
            "  --out-dir DIR     where the files go; created when missing\n"
            "  --service NAME    the webhook's Service; the certificate names NAME, NAME.NS,\n"
            "                    NAME.NS.svc and NAME.NS.svc.cluster.local\n"
            "  --namespace NS    the Service's namespace\n"
            "  --dns NAME        an extra DNS name (repeatable), e.g. localhost\n"
            "  --ip IP           an extra IPv4 or IPv6 address (repeatable), e.g. 127.0.0.1\n"
            "  --key-type TYPE   ecdsa (P-256, default) or rsa (2048 bits)\n"
            "  --days N          serving certificate lifetime, 1..%d (default %d); the CA lives\n"
            "                    %d days; both start 1 hour in the past (clock skew)\n"
            "  --force           replace existing files (default: refuse and name the file)\n"
            "\n"
            "Exit status: 0 written, 1 could not write (existing files, I/O), 2 bad usage.\n",
            TG_CERTS_MAX_DAYS, TG_CERTS_DEFAULT_DAYS, TG_CERTS_CA_DAYS);
}

/* Matches argv[*i] against --name VALUE or --name=VALUE. 1 with *val set (and *i moved past a
 * separate value), 0 when it is another flag, -EINVAL when the value is missing. */
static int take_value(int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(name);

    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -EINVAL;
    *val = argv[++*i];
    return 1;
}

static int parse_days(const char *s, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0')
        return -EINVAL;
    *out = v;
    return 0;
}

/* Fills o from argv; 1 = --help asked, 0 = ok, -EINVAL with a message in err. */
static int parse_args(int argc, char **argv, struct tg_certs_opts *o, char *err, size_t errlen)
{
    static const char *const flags[] = {"--out-dir", "--service",  "--namespace", "--dns",
                                        "--ip",      "--key-type", "--days"};
    const char *val = NULL;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = 0;
        size_t f;

        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return 1;
        if (!strcmp(a, "--force")) {
            o->force = true;
            continue;
        }
        for (f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
            if ((r = take_value(argc, argv, &i, flags[f], &val)) != 0)
                break;
        }
        if (r < 0) {
            snprintf(err, errlen, "%s needs a value", flags[f]);
            return -EINVAL;
        }
        if (r == 0) {
            snprintf(err, errlen, "%s '%s'", a[0] == '-' ? "unknown option" : "unexpected argument",
                     a);
            return -EINVAL;
        }
        switch (f) {
        case 0:
            o->out_dir = val;
            break;
        case 1:
            o->service = val;
            break;
        case 2:
            o->ns = val;
            break;
        case 3:
            o->dns[o->ndns++] = val;
            break;
        case 4:
            o->ips[o->nips++] = val;
            break;
        case 5:
            if (!strcmp(val, "ecdsa")) {
                o->key_type = TG_KEY_ECDSA;
            } else if (!strcmp(val, "rsa")) {
                o->key_type = TG_KEY_RSA;
            } else {
                snprintf(err, errlen, "--key-type '%s': give ecdsa or rsa", val);
                return -EINVAL;
            }
            break;
        default:
            if (parse_days(val, &o->days) < 0) {
                snprintf(err, errlen, "--days '%s' is not a whole number of days (1 to %d)", val,
                         TG_CERTS_MAX_DAYS);
                return -EINVAL;
            }
            break;
        }
    }
    return tg_certs_validate(o, err, errlen);
}

int tg_cmd_certs(int argc, char **argv)
{
    struct tg_certs_opts o;
    char err[512] = "";
    char *bundle = NULL;
    int ret, code = 2;

    tg_certs_opts_init(&o);
    /* every argument could be a --dns or an --ip: size the lists for the worst case */
    o.dns = calloc((size_t)argc + 1, sizeof(*o.dns));
    o.ips = calloc((size_t)argc + 1, sizeof(*o.ips));
    if (!o.dns || !o.ips) {
        fprintf(stderr, "trainguard certs: out of memory\n");
        code = 1;
        goto out;
    }
    ret = parse_args(argc, argv, &o, err, sizeof(err));
    if (ret == 1) {
        usage(stdout);
        code = 0;
        goto out;
    }
    if (ret < 0) {
        fprintf(stderr, "trainguard certs: %s\nRun 'trainguard certs --help' for usage.\n", err);
        goto out;
    }
    ret = tg_certs_generate(&o, &bundle, err, sizeof(err));
    if (ret < 0) {
        fprintf(stderr, "trainguard certs: %s\n", err);
        code = ret == -EINVAL ? 2 : 1;
        goto out;
    }
    printf("%s\n", bundle);
    fprintf(stderr,
            "trainguard certs: wrote %s/{ca.crt,ca.key,tls.crt,tls.key} (%s; serving certificate "
            "for %s.%s.svc valid %ld days, CA %d days); caBundle on stdout\n",
            o.out_dir, o.key_type == TG_KEY_RSA ? "RSA 2048" : "ECDSA P-256", o.service, o.ns,
            o.days, TG_CERTS_CA_DAYS);
    code = 0;
out:
    free(bundle);
    free(o.dns);
    free(o.ips);
    return code;
}
