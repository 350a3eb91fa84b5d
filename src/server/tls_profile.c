/* tls_profile.c -- --tls-min-version and --tls-cipher-suites (Go crypto/tls names, as the
 * Kubernetes components take them) to a GnuTLS priority string. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tg/tls_profile.h"

enum { KX_ECDSA = 0, KX_RSA, KX_COUNT };
enum { C_AES128GCM = 0, C_AES256GCM, C_CHACHA20, C_COUNT };
#define TLS13 (-1)

static const char *const kx_prio[KX_COUNT] = {"ECDHE-ECDSA", "ECDHE-RSA"};
static const char *const cipher_prio[C_COUNT] = {"AES-128-GCM", "AES-256-GCM", "CHACHA20-POLY1305"};

/* The suites trainguard serves. Names are Go's (crypto/tls CipherSuites()), plus the two legacy
 * ChaCha20 names that k8s.io/component-base/cli/flag keeps for backward compatibility. */
static const struct suite {
    const char *name;
    int kx; /* TLS13: a TLS 1.3 suite (key exchange by key share, not configurable in Go) */
    int cipher;
} suites[] = {
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", KX_ECDSA, C_AES128GCM},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", KX_ECDSA, C_AES256GCM},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", KX_ECDSA, C_CHACHA20},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", KX_ECDSA, C_CHACHA20},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", KX_RSA, C_AES128GCM},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", KX_RSA, C_AES256GCM},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", KX_RSA, C_CHACHA20},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", KX_RSA, C_CHACHA20},
    {"TLS_AES_128_GCM_SHA256", TLS13, C_AES128GCM},
    {"TLS_AES_256_GCM_SHA384", TLS13, C_AES256GCM},
    {"TLS_CHACHA20_POLY1305_SHA256", TLS13, C_CHACHA20},
};
#define NSUITES (sizeof(suites) / sizeof(suites[0]))

/* The other names kube-apiserver accepts (Go's CipherSuites() and InsecureCipherSuites()): known,
 * and refused here with the reason. */
static const struct refused {
    const char *name;
    const char *why;
} refused[] = {
    {"TLS_RSA_WITH_RC4_128_SHA", "RSA key exchange (no forward secrecy) and RC4"},
    {"TLS_RSA_WITH_3DES_EDE_CBC_SHA", "RSA key exchange (no forward secrecy) and 3DES-CBC"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "RSA key exchange (no forward secrecy) and CBC"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "RSA key exchange (no forward secrecy) and CBC"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA256", "RSA key exchange (no forward secrecy) and CBC"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "RSA key exchange (no forward secrecy)"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "RSA key exchange (no forward secrecy)"},
    {"TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", "RC4 is not an AEAD cipher"},
    {"TLS_ECDHE_RSA_WITH_RC4_128_SHA", "RC4 is not an AEAD cipher"},
    {"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "3DES-CBC with HMAC-SHA1 is not an AEAD cipher"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "AES-CBC with HMAC-SHA1 is not an AEAD cipher"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "AES-CBC with HMAC-SHA1 is not an AEAD cipher"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "AES-CBC with HMAC-SHA1 is not an AEAD cipher"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "AES-CBC with HMAC-SHA1 is not an AEAD cipher"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "AES-CBC with HMAC-SHA256 is not an AEAD cipher"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "AES-CBC with HMAC-SHA256 is not an AEAD cipher"},
};
#define NREFUSED (sizeof(refused) / sizeof(refused[0]))

/* What a list selects: TLS 1.2 pairs, and the TLS 1.3 names it mentions. */
struct selection {
    bool pair[KX_COUNT][C_COUNT];
    bool kx[KX_COUNT];
    bool cipher[C_COUNT];
    bool any12, any13;
};

static int parse_version(const char *s, bool *tls13_only, char *err, size_t errlen)
{
    if (!s || !*s || !strcmp(s, "VersionTLS12")) {
        *tls13_only = false;
        return 0;
    }
    if (!strcmp(s, "VersionTLS13")) {
        *tls13_only = true;
        return 0;
    }
    if (!strcmp(s, "VersionTLS10") || !strcmp(s, "VersionTLS11"))
        snprintf(err, errlen,
                 "--tls-min-version: %s is not allowed: trainguard serves TLS 1.2 and 1.3 only "
                 "(use VersionTLS12 or VersionTLS13)",
                 s);
    else
        snprintf(err, errlen,
                 "--tls-min-version: unknown version '%s' (expected VersionTLS12 or "
                 "VersionTLS13)",
                 s);
    return -EINVAL;
}

/* One name of the list (len bytes at name, trimmed) into sel. */
static int add_name(const char *name, size_t len, struct selection *sel, char *err, size_t errlen)
{
    for (size_t i = 0; i < NSUITES; i++) {
        const struct suite *s = &suites[i];
        if (strlen(s->name) != len || memcmp(s->name, name, len) != 0)
            continue;
        if (s->kx == TLS13) {
            sel->any13 = true;
            return 0;
        }
        sel->pair[s->kx][s->cipher] = true;
        sel->kx[s->kx] = true;
        sel->cipher[s->cipher] = true;
        sel->any12 = true;
        return 0;
    }
    for (size_t i = 0; i < NREFUSED; i++) {
        if (strlen(refused[i].name) == len && !memcmp(refused[i].name, name, len)) {
            snprintf(err, errlen,
                     "--tls-cipher-suites: %s is not allowed: %s; trainguard serves only ECDHE "
                     "key exchange with AES-GCM or ChaCha20-Poly1305",
                     refused[i].name, refused[i].why);
            return -EINVAL;
        }
    }
    snprintf(err, errlen,
             "--tls-cipher-suites: unknown cipher suite '%.*s' (names as Go's crypto/tls and "
             "kube-apiserver spell them, such as TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)",
             (int)(len > 80 ? 80 : len), name);
    return -EINVAL;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

static int parse_list(const char *list, struct selection *sel, char *err, size_t errlen)
{
    const char *p = list;

    memset(sel, 0, sizeof(*sel));
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len && is_space(*p)) {
            p++;
            len--;
        }
        while (len && is_space(p[len - 1]))
            len--;
        if (len == 0) {
            snprintf(err, errlen, "--tls-cipher-suites: empty entry in '%s'", list);
            return -EINVAL;
        }
        if (add_name(p, len, sel, err, errlen) < 0)
            return -EINVAL;
        if (!end)
            return 0;
        p = end + 1;
    }
}

/* GnuTLS enables every listed key exchange with every listed cipher: the TLS 1.2 pairs must be
 * exactly that product, else the server would offer suites the operator did not list. */
static int check_product(const struct selection *sel, char *err, size_t errlen)
{
    for (int k = 0; k < KX_COUNT; k++)
        for (int c = 0; c < C_COUNT; c++) {
            if (!sel->kx[k] || !sel->cipher[c] || sel->pair[k][c])
                continue;
            for (size_t i = 0; i < NSUITES; i++) {
                if (suites[i].kx != k || suites[i].cipher != c)
                    continue;
                snprintf(err, errlen,
                         "--tls-cipher-suites: GnuTLS pairs every listed key exchange with every "
                         "listed cipher, so this list would also enable %s: add it, or list "
                         "fewer key exchanges or ciphers",
                         suites[i].name);
                break;
            }
            return -EINVAL;
        }
    return 0;
}

static void append(char *out, size_t outlen, const char *piece)
{
    size_t n = strlen(out);
    snprintf(out + n, outlen - n, "%s", piece);
}

/* NORMAL, then exactly the versions, key exchanges, ciphers and the AEAD "MAC" wanted. */
static void priorities(const struct selection *sel, bool tls13_only, char *out, size_t outlen)
{
    out[0] = '\0';
    append(out, outlen, "NORMAL:-VERS-ALL:+VERS-TLS1.3");
    if (!tls13_only)
        append(out, outlen, ":+VERS-TLS1.2");
    append(out, outlen, ":-KX-ALL");
    for (int k = 0; k < KX_COUNT; k++)
        if (sel->kx[k]) {
            append(out, outlen, ":+");
            append(out, outlen, kx_prio[k]);
        }
    append(out, outlen, ":-CIPHER-ALL");
    for (int c = 0; c < C_COUNT; c++)
        if (sel->cipher[c]) {
            append(out, outlen, ":+");
            append(out, outlen, cipher_prio[c]);
        }
    append(out, outlen, ":-MAC-ALL:+AEAD");
}

/* What a TLS 1.2 list means for TLS 1.3: its TLS 1.3 names configure nothing (as in Go), and
 * GnuTLS selects ciphers for both versions at once, so TLS 1.3 keeps only the listed ciphers. */
static void note_tls13(const struct selection *sel, char *out, size_t outlen)
{
    bool narrowed = false;

    for (int c = 0; c < C_COUNT; c++)
        narrowed |= !sel->cipher[c];
    if (sel->any13)
        append(out, outlen, "TLS 1.3 names in --tls-cipher-suites configure nothing (as in Go)");
    if (sel->any13 && narrowed)
        append(out, outlen, "; ");
    if (narrowed)
        append(out, outlen,
               "TLS 1.3 offers only the suites of the listed ciphers (GnuTLS selects ciphers for "
               "TLS 1.2 and 1.3 at once)");
}

int tg_tls_profile_build(const char *min_version, const char *cipher_suites,
                         struct tg_tls_profile *out, char *err, size_t errlen)
{
    struct selection sel, all;

    memset(out, 0, sizeof(*out));
    memset(&all, 0, sizeof(all));
    for (int k = 0; k < KX_COUNT; k++)
        all.kx[k] = true;
    for (int c = 0; c < C_COUNT; c++)
        all.cipher[c] = true;
    if (parse_version(min_version, &out->tls13_only, err, errlen) < 0)
        return -EINVAL;
    if (!cipher_suites || !*cipher_suites) {
        priorities(&all, out->tls13_only, out->priorities, sizeof(out->priorities));
        return 0;
    }
    if (parse_list(cipher_suites, &sel, err, errlen) < 0)
        return -EINVAL;
    if (out->tls13_only) {
        /* Go ignores CipherSuites for TLS 1.3; so does trainguard. */
        snprintf(out->note, sizeof(out->note),
                 "--tls-cipher-suites has no effect with --tls-min-version VersionTLS13 (TLS 1.3 "
                 "suites are not configurable, as in Go)");
        priorities(&all, true, out->priorities, sizeof(out->priorities));
        return 0;
    }
    if (!sel.any12) {
        snprintf(err, errlen,
                 "--tls-cipher-suites lists no TLS 1.2 suite, so every TLS 1.2 client would be "
                 "refused: add one, or set --tls-min-version VersionTLS13");
        return -EINVAL;
    }
    if (check_product(&sel, err, errlen) < 0)
        return -EINVAL;
    note_tls13(&sel, out->note, sizeof(out->note));
    priorities(&sel, false, out->priorities, sizeof(out->priorities));
    return 0;
}
