/* tls.h -- the serving certificate: checked with OpenSSL, served to GnuTLS (inside libmicrohttpd)
 * from a snapshot that a reload swaps without closing the port; and client certificate checks.
 *
 * Invariants: after tg_tls_init succeeds there is always a current pair; a reload that fails
 * leaves it in place. A replaced pair stays allocated for a grace period (handshakes that picked it
 * may still be running), then is freed by a later reload or by tg_tls_shutdown. */
#ifndef TG_TLS_H
#define TG_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

#include "tg/x509.h"

/* Files above this size are refused: a serving certificate chain is a few KiB. */
#define TG_TLS_FILE_MAX (1024 * 1024)

/* Reads a whole file (at most TG_TLS_FILE_MAX bytes) into a malloc'd, NUL-terminated buffer.
 * 0, or a negative errno with "<path>: reason" in err. */
int tg_tls_read_file(const char *path, char **buf, size_t *len, char *err, size_t errlen);

/* Checks a PEM certificate (chain) and private key with OpenSSL (tg_x509()->check_pair, in this
 * process): both parse, the key matches the first certificate, and now lies within
 * notBefore..notAfter. The paths only name the files in messages. 0 with info filled, -EINVAL
 * with "<file>: problem" in err, or -ENOENT when trainguard-x509.so cannot be loaded. */
int tg_tls_check_pair(const char *cert_path, const char *cert_pem, size_t cert_len,
                      const char *key_path, const char *key_pem, size_t key_len, time_t now,
                      struct tg_tls_info *info, char *err, size_t errlen);

/* The hidden subcommand that checks a pair in a child process: `trainguard __check-pair CERT KEY`
 * reads both files, checks them (tg_tls_check_pair) and writes one binary reply to stdout for
 * the server that started it. Every serving check (start, rotation, SIGHUP) runs this way, so the
 * server process never loads OpenSSL; main() of any program that calls tg_tls_init must hand
 * this command to tg_tls_check_main. */
#define TG_TLS_CHECK_COMMAND "__check-pair"
int tg_tls_check_main(int argc, char **argv);

/* Where the checker is (NULL: this binary, as /proc/self/exe names it at the first check) and
 * how long it may take (0: 10000 ms). For tests. */
void tg_tls_set_checker(const char *path, int timeout_ms);

/* Loads, checks and installs the first pair (info filled). 0 or a negative errno with the reason
 * in err. */
int tg_tls_init(const char *cert_path, const char *key_path, struct tg_tls_info *info, char *err,
                size_t errlen);

/* Re-reads the files. Unchanged bytes: returns 0 (nothing done) unless force. Changed (or force):
 * checks the new pair and swaps it in: returns 1 with info filled. A bad pair returns a negative
 * errno with the reason in err and keeps the current pair; the same bad bytes are reported once
 * (later calls return 0) unless force. When the check itself failed (it could not start, timed
 * out, crashed, or the files changed meanwhile) it returns -EAGAIN, keeps the current pair and
 * tries the same bytes again next time; -EINTR when a pending SIGTERM or SIGINT cut it short. */
int tg_tls_reload(bool force, struct tg_tls_info *info, char *err, size_t errlen);

/* notAfter of the pair in use (unix seconds), 0 before init. */
long long tg_tls_not_after(void);
bool tg_tls_loaded(void);
/* For trainguard_certificate_last_reload_successful: false after a reload that refused the files
 * or could not check them, until a reload swaps a pair in or finds the files back to the pair in
 * use; true otherwise (also before init). */
bool tg_tls_reload_ok(void);

/* The gnutls_certificate_retrieve_function2 for MHD_OPTION_HTTPS_CERT_CALLBACK: hands GnuTLS the
 * current pair. GnuTLS never frees the pair (it stays ours), hence the grace period above. */
int tg_tls_cert_callback(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                         const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                         gnutls_pcert_st **pcert, unsigned int *pcert_length,
                         gnutls_privkey_t *privkey);

/* Verifies the client certificate of a TLS session against the trust list MHD loaded from
 * --client-ca-file (MHD_OPTION_HTTPS_MEM_TRUST; MHD then asks every client for a certificate).
 * 0 when valid; -ENOENT when the client sent none; -EACCES when it is not trusted (reason in
 * err). */
int tg_tls_verify_client(gnutls_session_t session, char *err, size_t errlen);

/* Frees every pair. Only after the daemon that used the callback has stopped. */
void tg_tls_shutdown(void);

/* How long a replaced pair is kept before it is freed (seconds). */
void tg_tls_set_grace(int seconds);

#endif
