/* test_tls.c -- serving certificate checks (OpenSSL) and the reloadable GnuTLS snapshot, on
 * certificates made in the test with OpenSSL's API. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tg/tls.h"

struct pem {
    char cert[8192];
    char key[4096];
};

static void bio_to(BIO *b, char *dst, size_t len)
{
    char *data;
    long n = BIO_get_mem_data(b, &data);
    ck_assert(n > 0 && (size_t)n < len);
    memcpy(dst, data, (size_t)n);
    dst[n] = '\0';
}

/* A self-signed EC P-256 certificate valid from now+nb to now+na seconds, with SAN san (or
 * none), signed by itself or by (ca, ca_key) when given. */
static EVP_PKEY *make_cert(struct pem *out, long nb, long na, const char *cn, const char *san,
                           X509 *ca, EVP_PKEY *ca_key, X509 **cert_out)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    BIO *b;
    X509V3_CTX ctx;

    ck_assert_ptr_nonnull(key);
    ck_assert_ptr_nonnull(x);
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), (long)(rand() & 0xffffff) + 1);
    X509_gmtime_adj(X509_getm_notBefore(x), nb);
    X509_gmtime_adj(X509_getm_notAfter(x), na);
    X509_set_pubkey(x, key);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
                               (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, ca ? X509_get_subject_name(ca) : X509_get_subject_name(x));
    X509V3_set_ctx(&ctx, ca ? ca : x, x, NULL, NULL, 0);
    if (san) {
        X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name, san);
        ck_assert_ptr_nonnull(e);
        X509_add_ext(x, e, -1);
        X509_EXTENSION_free(e);
    }
    ck_assert_int_gt(X509_sign(x, ca_key ? ca_key : key, EVP_sha256()), 0);

    b = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(b, x);
    if (ca)
        PEM_write_bio_X509(b, ca);
    bio_to(b, out->cert, sizeof(out->cert));
    BIO_free(b);
    b = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL);
    bio_to(b, out->key, sizeof(out->key));
    BIO_free(b);
    if (cert_out)
        *cert_out = x;
    else
        X509_free(x);
    return key;
}

static struct pem good, other, expired, future;

static void make_all(void)
{
    static bool made;

    if (made)
        return;
    made = true;
    EVP_PKEY_free(make_cert(&good, -60, 86400, "trainguard.trainguard.svc",
                            "DNS:trainguard.trainguard.svc,DNS:localhost,IP:127.0.0.1", NULL, NULL,
                            NULL));
    EVP_PKEY_free(make_cert(&other, -60, 2 * 86400, "other", "DNS:other", NULL, NULL, NULL));
    EVP_PKEY_free(make_cert(&expired, -2 * 86400, -86400, "old", "DNS:old", NULL, NULL, NULL));
    EVP_PKEY_free(make_cert(&future, 86400, 2 * 86400, "new", "DNS:new", NULL, NULL, NULL));
}

static int check(const struct pem *c, const struct pem *k, struct tg_tls_info *info, char *err,
                 size_t errlen)
{
    return tg_tls_check_pair("tls.crt", c->cert, strlen(c->cert), "tls.key", k->key, strlen(k->key),
                             time(NULL), info, err, errlen);
}

START_TEST(good_pair_is_accepted_and_described)
{
    struct tg_tls_info info;
    char err[512] = "";

    ck_assert_int_eq(check(&good, &good, &info, err, sizeof(err)), 0);
    ck_assert_str_eq(info.subject, "CN=trainguard.trainguard.svc");
    ck_assert_str_eq(info.sans, "DNS:trainguard.trainguard.svc, DNS:localhost, IP:127.0.0.1");
    ck_assert_int_eq(info.chain_len, 1);
    long long now = (long long)time(NULL);
    ck_assert(info.not_after > now + 86000 && info.not_after <= now + 86401);
    ck_assert(info.not_before <= now);
}
END_TEST

START_TEST(mismatched_key_names_both_files)
{
    struct tg_tls_info info;
    char err[512] = "";

    ck_assert_int_eq(check(&good, &other, &info, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "tls.key: private key does not match the certificate in "
                                      "tls.crt"));
}
END_TEST

START_TEST(expired_certificate_is_refused)
{
    struct tg_tls_info info;
    char err[512] = "";

    ck_assert_int_eq(check(&expired, &expired, &info, err, sizeof(err)), -EINVAL);
    ck_assert_msg(!strncmp(err, "tls.crt: certificate expired on ", 32), "%s", err);
}
END_TEST

START_TEST(not_yet_valid_certificate_is_refused)
{
    struct tg_tls_info info;
    char err[512] = "";

    ck_assert_int_eq(check(&future, &future, &info, err, sizeof(err)), -EINVAL);
    ck_assert_msg(!strncmp(err, "tls.crt: certificate is not valid before ", 41), "%s", err);
}
END_TEST

static const char *const garbage[] = {
    "",
    "hello",
    "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    "{\"not\": \"pem\"}",
};

START_TEST(garbage_certificate_names_the_certificate_file)
{
    struct tg_tls_info info;
    char err[512] = "";

    ck_assert_int_eq(tg_tls_check_pair("c.pem", garbage[_i], strlen(garbage[_i]), "k.pem", good.key,
                                       strlen(good.key), time(NULL), &info, err, sizeof(err)),
                     -EINVAL);
    ck_assert_msg(!strncmp(err, "c.pem: no PEM certificate could be read", 39), "%s", err);
}
END_TEST

START_TEST(garbage_key_names_the_key_file)
{
    struct tg_tls_info info;
    char err[512] = "";

    ck_assert_int_eq(tg_tls_check_pair("c.pem", good.cert, strlen(good.cert), "k.pem", garbage[_i],
                                       strlen(garbage[_i]), time(NULL), &info, err, sizeof(err)),
                     -EINVAL);
    ck_assert_msg(!strncmp(err, "k.pem: no PEM private key could be read", 39), "%s", err);
}
END_TEST

START_TEST(key_in_place_of_certificate_is_refused)
{
    struct tg_tls_info info;
    char err[512] = "";

    /* Swapped files: the key file given as the certificate. */
    ck_assert_int_eq(tg_tls_check_pair("tls.crt", good.key, strlen(good.key), "tls.key", good.cert,
                                       strlen(good.cert), time(NULL), &info, err, sizeof(err)),
                     -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "tls.crt: no PEM certificate"));
}
END_TEST

START_TEST(chain_is_counted)
{
    struct pem ca, leaf;
    X509 *cax;
    EVP_PKEY *cak = make_cert(&ca, -60, 86400, "ca", NULL, NULL, NULL, &cax);
    struct tg_tls_info info;
    char err[512] = "";

    EVP_PKEY_free(make_cert(&leaf, -60, 3600, "leaf", "DNS:leaf", cax, cak, NULL));
    ck_assert_int_eq(check(&leaf, &leaf, &info, err, sizeof(err)), 0);
    ck_assert_int_eq(info.chain_len, 2);
    ck_assert_str_eq(info.subject, "CN=leaf");
    X509_free(cax);
    EVP_PKEY_free(cak);
}
END_TEST

START_TEST(certificate_without_san_is_accepted_with_empty_sans)
{
    struct pem p;
    struct tg_tls_info info;
    char err[512] = "";

    EVP_PKEY_free(make_cert(&p, -60, 3600, "cn-only", NULL, NULL, NULL, NULL));
    ck_assert_int_eq(check(&p, &p, &info, err, sizeof(err)), 0);
    ck_assert_str_eq(info.sans, "");
}
END_TEST

/* ---- files and reload -------------------------------------------------------------------- */

static char dir[64], crt_path[128], key_path[128];

static void write_file(const char *path, const char *text)
{
    char tmp[160];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    ck_assert_int_eq(rename(tmp, path), 0); /* atomic, like a Secret volume update */
}

static void files_setup(void)
{
    make_all();
    snprintf(dir, sizeof(dir), "/tmp/tg-tls-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(crt_path, sizeof(crt_path), "%s/tls.crt", dir);
    snprintf(key_path, sizeof(key_path), "%s/tls.key", dir);
}

static void files_teardown(void)
{
    tg_tls_shutdown();
    unlink(crt_path);
    unlink(key_path);
    rmdir(dir);
}

START_TEST(read_file_reports_missing_and_empty_files)
{
    char *buf = NULL;
    size_t len;
    char err[512];

    ck_assert_int_eq(tg_tls_read_file(crt_path, &buf, &len, err, sizeof(err)), -ENOENT);
    ck_assert_ptr_null(buf);
    ck_assert_ptr_nonnull(strstr(err, crt_path));
    ck_assert_ptr_nonnull(strstr(err, "cannot open"));
    write_file(crt_path, "");
    ck_assert_int_eq(tg_tls_read_file(crt_path, &buf, &len, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "empty"));
    ck_assert_int_eq(tg_tls_read_file(dir, &buf, &len, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
    write_file(crt_path, good.cert);
    ck_assert_int_eq(tg_tls_read_file(crt_path, &buf, &len, err, sizeof(err)), 0);
    ck_assert_uint_eq(len, strlen(good.cert));
    ck_assert_str_eq(buf, good.cert);
    free(buf);
}
END_TEST

START_TEST(init_fails_on_bad_files_and_loads_nothing)
{
    struct tg_tls_info info;
    char err[512];

    ck_assert_int_lt(tg_tls_init(crt_path, key_path, &info, err, sizeof(err)), 0);
    ck_assert_ptr_nonnull(strstr(err, crt_path));
    ck_assert(!tg_tls_loaded());
    write_file(crt_path, good.cert);
    write_file(key_path, other.key);
    ck_assert_int_lt(tg_tls_init(crt_path, key_path, &info, err, sizeof(err)), 0);
    ck_assert_ptr_nonnull(strstr(err, "does not match"));
    ck_assert(!tg_tls_loaded());
}
END_TEST

static long long served_not_after_serial(gnutls_pcert_st **pc, unsigned int *n)
{
    gnutls_privkey_t k = NULL;
    ck_assert_int_eq(tg_tls_cert_callback(NULL, NULL, 0, NULL, 0, pc, n, &k), 0);
    ck_assert_ptr_nonnull(k);
    ck_assert_uint_ge(*n, 1);
    gnutls_x509_crt_t crt;
    gnutls_x509_crt_init(&crt);
    ck_assert_int_eq(gnutls_x509_crt_import(crt, &(*pc)[0].cert, GNUTLS_X509_FMT_DER), 0);
    long long t = (long long)gnutls_x509_crt_get_expiration_time(crt);
    gnutls_x509_crt_deinit(crt);
    return t;
}

START_TEST(reload_swaps_good_pairs_and_keeps_the_old_on_bad_ones)
{
    struct tg_tls_info info;
    char err[512];
    gnutls_pcert_st *pc;
    unsigned int n;
    long long first, second;

    write_file(crt_path, good.cert);
    write_file(key_path, good.key);
    ck_assert_int_eq(tg_tls_init(crt_path, key_path, &info, err, sizeof(err)), 0);
    ck_assert(tg_tls_loaded());
    ck_assert_str_eq(info.subject, "CN=trainguard.trainguard.svc");
    first = tg_tls_not_after();
    ck_assert_int_eq(served_not_after_serial(&pc, &n), first);

    /* Same bytes: nothing to do, also when forced. */
    ck_assert(tg_tls_reload_ok());
    ck_assert_int_eq(tg_tls_reload(false, &info, err, sizeof(err)), 0);
    ck_assert_int_eq(tg_tls_reload(true, &info, err, sizeof(err)), 0);
    ck_assert(tg_tls_reload_ok());

    /* A rotation: both files replaced. */
    write_file(crt_path, other.cert);
    write_file(key_path, other.key);
    ck_assert_int_eq(tg_tls_reload(false, &info, err, sizeof(err)), 1);
    second = tg_tls_not_after();
    ck_assert_int_eq(info.not_after, second);
    ck_assert(second > first);
    ck_assert_int_eq(served_not_after_serial(&pc, &n), second);

    /* Half a rotation (new certificate, old key): refused once, old pair kept. */
    write_file(crt_path, good.cert);
    ck_assert_int_eq(tg_tls_reload(false, &info, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "does not match"));
    ck_assert(!tg_tls_reload_ok());
    ck_assert_int_eq(tg_tls_reload(false, &info, err, sizeof(err)), 0); /* reported once */
    ck_assert(!tg_tls_reload_ok());                                     /* ... and still failing */
    ck_assert_int_eq(tg_tls_reload(true, &info, err, sizeof(err)), -EINVAL); /* SIGHUP re-reports */
    ck_assert_int_eq(tg_tls_not_after(), second);
    ck_assert_int_eq(served_not_after_serial(&pc, &n), second);

    /* The old key put back: the files are the pair in use again, which is healthy. */
    write_file(crt_path, other.cert);
    ck_assert_int_eq(tg_tls_reload(false, &info, err, sizeof(err)), 0);
    ck_assert(tg_tls_reload_ok());

    /* An expired pair and a vanished file are refused too. */
    write_file(crt_path, expired.cert);
    write_file(key_path, expired.key);
    ck_assert_int_eq(tg_tls_reload(false, &info, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "expired"));
    unlink(key_path);
    ck_assert_int_eq(tg_tls_reload(false, &info, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "cannot open"));
    ck_assert_int_eq(tg_tls_not_after(), second);
    ck_assert(!tg_tls_reload_ok());

    /* The next rotation is good again. */
    write_file(crt_path, good.cert);
    write_file(key_path, good.key);
    ck_assert_int_eq(tg_tls_reload(false, &info, err, sizeof(err)), 1);
    ck_assert_int_eq(tg_tls_not_after(), first);
    ck_assert(tg_tls_reload_ok());
}
END_TEST

/* ---- the checker process ------------------------------------------------------------------ */

/* A checker script in the test directory; "$REAL" runs the real one (this binary). */
static void set_script_checker(const char *body, int timeout_ms)
{
    char path[160], real[512], text[1024];
    ssize_t n = readlink("/proc/self/exe", real, sizeof(real) - 1);

    ck_assert_int_gt(n, 0);
    real[n] = '\0';
    snprintf(path, sizeof(path), "%s/checker.sh", dir);
    snprintf(text, sizeof(text), "#!/bin/sh\nREAL='%s'\n%s\n", real, body);
    write_file(path, text);
    ck_assert_int_eq(chmod(path, 0700), 0);
    tg_tls_set_checker(path, timeout_ms);
}

static void checker_teardown(void)
{
    char path[160];

    tg_tls_set_checker(NULL, 0);
    snprintf(path, sizeof(path), "%s/checker.sh", dir);
    unlink(path);
    files_teardown();
}

/* A check that fails to run says why, keeps the served pair, and is not held against the
 * files: the same bytes are checked again at the next reload and then swapped in. */
START_TEST(failed_checks_keep_the_pair_and_are_retried)
{
    static const struct {
        const char *script, *says;
    } cases[] = {
        {"exit 3", "gave no answer (exit status 3)"},
        {"kill -SEGV $$", "crashed (signal 11)"},
        {"exec sleep 5", "did not finish within 300 ms"},
        /* a rotation landing between the server's read and the checker's */
        {"printf '\\n' >> \"$3\"\nexec \"$REAL\" \"$@\"", "changed during the certificate check"},
        /* the child cannot read what the server could */
        {"exec \"$REAL\" \"$1\" /nonexistent/tls.crt \"$3\"",
         "could not read the files: /nonexistent/tls.crt: cannot open"},
        /* an answer of the wrong shape (another build) */
        {"head -c 4096 /dev/zero", "answered in another format"},
    };
    struct tg_tls_info info;
    char err[512];

    write_file(crt_path, good.cert);
    write_file(key_path, good.key);
    ck_assert_int_eq(tg_tls_init(crt_path, key_path, &info, err, sizeof(err)), 0);
    long long first = tg_tls_not_after();
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        write_file(crt_path, other.cert);
        write_file(key_path, other.key);
        set_script_checker(cases[i].script, 300);
        time_t t0 = time(NULL);
        ck_assert_int_eq(tg_tls_reload(false, &info, err, sizeof(err)), -EAGAIN);
        ck_assert_msg(strstr(err, cases[i].says), "case %zu: %s", i, err);
        ck_assert_int_le(time(NULL) - t0, 3);
        ck_assert_int_eq(tg_tls_not_after(), first);
        ck_assert(!tg_tls_reload_ok()); /* a check that could not be done is a failed reload */
        tg_tls_set_checker(NULL, 0);
        ck_assert_int_eq(tg_tls_reload(false, &info, err, sizeof(err)), 1);
        ck_assert_int_gt(tg_tls_not_after(), first);
        ck_assert(tg_tls_reload_ok());
        /* back to the first pair for the next case */
        write_file(crt_path, good.cert);
        write_file(key_path, good.key);
        ck_assert_int_eq(tg_tls_reload(false, &info, err, sizeof(err)), 1);
        ck_assert_int_eq(tg_tls_not_after(), first);
    }
    /* A checker that cannot be started at all. */
    tg_tls_set_checker("/nonexistent/trainguard", 300);
    write_file(crt_path, other.cert);
    write_file(key_path, other.key);
    ck_assert_int_eq(tg_tls_reload(false, &info, err, sizeof(err)), -EAGAIN);
    ck_assert_ptr_nonnull(strstr(err, "cannot start the certificate check"));
    ck_assert_int_eq(tg_tls_not_after(), first);
}
END_TEST

/* A checker that answers and then lingers does not hold the reload: it is killed once it has
 * answered. */
START_TEST(a_lingering_checker_does_not_hold_the_reload)
{
    struct tg_tls_info info;
    char err[512];

    write_file(crt_path, good.cert);
    write_file(key_path, good.key);
    ck_assert_int_eq(tg_tls_init(crt_path, key_path, &info, err, sizeof(err)), 0);
    write_file(crt_path, other.cert);
    write_file(key_path, other.key);
    set_script_checker("\"$REAL\" \"$@\"\nexec sleep 5", 4000);
    time_t t0 = time(NULL);
    ck_assert_int_eq(tg_tls_reload(false, &info, err, sizeof(err)), 1);
    ck_assert_int_le(time(NULL) - t0, 2);
}
END_TEST

/* A SIGTERM pending (blocked, as the server blocks it for its signal loop) cuts a slow check
 * short, and is left for the signal loop to take. */
START_TEST(a_pending_sigterm_abandons_the_check)
{
    struct tg_tls_info info;
    char err[512];
    sigset_t term, old;
    struct timespec zero = {0, 0};

    write_file(crt_path, good.cert);
    write_file(key_path, good.key);
    ck_assert_int_eq(tg_tls_init(crt_path, key_path, &info, err, sizeof(err)), 0);
    long long first = tg_tls_not_after();
    write_file(crt_path, other.cert);
    write_file(key_path, other.key);
    set_script_checker("exec sleep 5", 8000);
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &term, &old), 0);
    ck_assert_int_eq(raise(SIGTERM), 0);
    time_t t0 = time(NULL);
    ck_assert_int_eq(tg_tls_reload(false, &info, err, sizeof(err)), -EINTR);
    ck_assert_int_le(time(NULL) - t0, 2);
    ck_assert_ptr_nonnull(strstr(err, "the server is stopping"));
    ck_assert_int_eq(tg_tls_not_after(), first);
    ck_assert_int_eq(sigtimedwait(&term, NULL, &zero), SIGTERM); /* still there for the loop */
    ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
}
END_TEST

START_TEST(retired_pairs_are_freed_after_the_grace_period)
{
    struct tg_tls_info info;
    char err[512];

    tg_tls_set_grace(0);
    write_file(crt_path, good.cert);
    write_file(key_path, good.key);
    ck_assert_int_eq(tg_tls_init(crt_path, key_path, &info, err, sizeof(err)), 0);
    for (int i = 0; i < 4; i++) {
        const struct pem *p = (i % 2) ? &good : &other;
        write_file(crt_path, p->cert);
        write_file(key_path, p->key);
        ck_assert_int_eq(tg_tls_reload(false, &info, err, sizeof(err)), 1);
    }
    tg_tls_set_grace(300);
    /* Leaks would show under valgrind/ASan; the served pair is the last one. */
    ck_assert_int_eq(tg_tls_not_after(), info.not_after);
}
END_TEST

START_TEST(callback_without_a_pair_fails)
{
    gnutls_pcert_st *pc = NULL;
    unsigned int n = 0;
    gnutls_privkey_t k = NULL;

    tg_tls_shutdown();
    ck_assert(!tg_tls_loaded());
    ck_assert_int_eq(tg_tls_cert_callback(NULL, NULL, 0, NULL, 0, &pc, &n, &k), -1);
}
END_TEST

START_TEST(client_verification_without_a_session_is_refused)
{
    char err[256];

    ck_assert_int_eq(tg_tls_verify_client(NULL, err, sizeof(err)), -EACCES);
    ck_assert_str_eq(err, "not a TLS connection");
}
END_TEST

Suite *tg_test_tls_suite(void);
Suite *tg_test_tls_suite(void)
{
    Suite *s = suite_create("tls");
    TCase *tc = tcase_create("check");
    tcase_add_checked_fixture(tc, make_all, NULL);
    tcase_add_test(tc, good_pair_is_accepted_and_described);
    tcase_add_test(tc, mismatched_key_names_both_files);
    tcase_add_test(tc, expired_certificate_is_refused);
    tcase_add_test(tc, not_yet_valid_certificate_is_refused);
    tcase_add_loop_test(tc, garbage_certificate_names_the_certificate_file, 0,
                        sizeof(garbage) / sizeof(garbage[0]));
    tcase_add_loop_test(tc, garbage_key_names_the_key_file, 0,
                        sizeof(garbage) / sizeof(garbage[0]));
    tcase_add_test(tc, key_in_place_of_certificate_is_refused);
    tcase_add_test(tc, chain_is_counted);
    tcase_add_test(tc, certificate_without_san_is_accepted_with_empty_sans);
    suite_add_tcase(s, tc);

    tc = tcase_create("reload");
    tcase_add_checked_fixture(tc, files_setup, files_teardown);
    tcase_add_test(tc, read_file_reports_missing_and_empty_files);
    tcase_add_test(tc, init_fails_on_bad_files_and_loads_nothing);
    tcase_add_test(tc, reload_swaps_good_pairs_and_keeps_the_old_on_bad_ones);
    tcase_add_test(tc, retired_pairs_are_freed_after_the_grace_period);
    tcase_add_test(tc, callback_without_a_pair_fails);
    tcase_add_test(tc, client_verification_without_a_session_is_refused);
    suite_add_tcase(s, tc);

    tc = tcase_create("checker");
    tcase_add_checked_fixture(tc, files_setup, checker_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, failed_checks_keep_the_pair_and_are_retried);
    tcase_add_test(tc, a_lingering_checker_does_not_hold_the_reload);
    tcase_add_test(tc, a_pending_sigterm_abandons_the_check);
    suite_add_tcase(s, tc);
    return s;
}
