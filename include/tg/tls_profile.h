/* tls_profile.h -- the webhook's TLS profile: `serve --tls-min-version` and `--tls-cipher-suites`
 * (the names and meaning kube-apiserver's flags of the same name use, Go crypto/tls suite names)
 * turned into a GnuTLS priority string for MHD_OPTION_HTTPS_PRIORITIES.
 *
 * Only ECDHE key exchange with an AEAD cipher (AES-GCM, ChaCha20-Poly1305) is ever offered for
 * TLS 1.2 (SPEC 13); TLS 1.3 suites are AEAD by design. The default profile is TLS 1.2 and 1.3
 * with every such suite: the ECDHE part of Mozilla's "intermediate" profile. */
#ifndef TG_TLS_PROFILE_H
#define TG_TLS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

/* Room for any priority string this module builds, and for its note. */
#define TG_TLS_PRIORITIES_MAX 256
#define TG_TLS_NOTE_MAX 256

struct tg_tls_profile {
    bool tls13_only;                        /* --tls-min-version VersionTLS13 */
    char priorities[TG_TLS_PRIORITIES_MAX]; /* GnuTLS priority string */
    char note[TG_TLS_NOTE_MAX]; /* something to log at start (a flag without effect), or "" */
};

/* Builds the profile. min_version: NULL or "" means VersionTLS12; otherwise "VersionTLS12" or
 * "VersionTLS13". cipher_suites: NULL or "" means the default suites; otherwise comma-separated
 * Go/IANA names (spaces around names ignored). Refused with -EINVAL and the reason in err: an
 * unknown version or name, a suite without ECDHE or without AEAD, an empty entry, a TLS 1.2 list
 * GnuTLS cannot express exactly (it pairs every listed key exchange with every listed cipher, so
 * the list must hold all those pairs), or, with TLS 1.2 allowed, a list with no TLS 1.2 suite.
 * TLS 1.3 names are accepted and, as in Go, do not configure anything. */
int tg_tls_profile_build(const char *min_version, const char *cipher_suites,
                         struct tg_tls_profile *out, char *err, size_t errlen);

#endif
