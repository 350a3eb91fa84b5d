/* test_tls_profile.c -- --tls-min-version / --tls-cipher-suites to GnuTLS priorities, checked by
 * asking GnuTLS itself which suites a priority string enables. */
#include <check.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/tls_profile.h"

/* The suites GnuTLS enables for prio, as "NAME/VERSION" lines in GnuTLS's names, sorted. */
static void suites_of(const char *prio, char *out, size_t outlen)
{
    gnutls_priority_t pc;
    const char *where = NULL;
    char names[32][64];
    int n = 0;

    ck_assert_msg(gnutls_priority_init(&pc, prio, &where) == 0, "GnuTLS refuses %s at %s", prio,
                  where ? where : "?");
    for (unsigned i = 0; n < 32; i++) {
        unsigned idx;
        gnutls_protocol_t min;
        int r = gnutls_priority_get_cipher_suite_index(pc, i, &idx);
        if (r == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
            break;
        if (r < 0)
            continue;
        const char *name = gnutls_cipher_suite_info(idx, NULL, NULL, NULL, NULL, &min);
        snprintf(names[n++], sizeof names[0], "%s", name);
    }
    gnutls_priority_deinit(pc);
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        strncat(out, names[i], outlen - strlen(out) - 1);
        strncat(out, "\n", outlen - strlen(out) - 1);
    }
}

static void build_ok(const char *min, const char *list, struct tg_tls_profile *p)
{
    char err[512] = "";
    ck_assert_msg(tg_tls_profile_build(min, list, p, err, sizeof err) == 0, "refused: %s", err);
}

START_TEST(default_profile_is_ecdhe_aead_and_tls13)
{
    struct tg_tls_profile p;
    char got[2048];

    build_ok(NULL, NULL, &p);
    ck_assert(!p.tls13_only);
    ck_assert_str_eq(p.note, "");
    suites_of(p.priorities, got, sizeof got);
    ck_assert_str_eq(got, "TLS_AES_128_GCM_SHA256\n"
                          "TLS_AES_256_GCM_SHA384\n"
                          "TLS_CHACHA20_POLY1305_SHA256\n"
                          "TLS_ECDHE_ECDSA_AES_128_GCM_SHA256\n"
                          "TLS_ECDHE_ECDSA_AES_256_GCM_SHA384\n"
                          "TLS_ECDHE_ECDSA_CHACHA20_POLY1305\n"
                          "TLS_ECDHE_RSA_AES_128_GCM_SHA256\n"
                          "TLS_ECDHE_RSA_AES_256_GCM_SHA384\n"
                          "TLS_ECDHE_RSA_CHACHA20_POLY1305\n");
    /* "" is the default too, and VersionTLS12 is the default version */
    struct tg_tls_profile q;
    build_ok("VersionTLS12", "", &q);
    ck_assert_str_eq(q.priorities, p.priorities);
}
END_TEST

START_TEST(tls13_only_offers_the_three_tls13_suites)
{
    struct tg_tls_profile p;
    char got[1024];

    build_ok("VersionTLS13", NULL, &p);
    ck_assert(p.tls13_only);
    ck_assert_ptr_null(strstr(p.priorities, "TLS1.2"));
    suites_of(p.priorities, got, sizeof got);
    ck_assert_str_eq(got, "TLS_AES_128_GCM_SHA256\nTLS_AES_256_GCM_SHA384\n"
                          "TLS_CHACHA20_POLY1305_SHA256\n");
    /* a suite list configures nothing for TLS 1.3 (as in Go), and says so */
    build_ok("VersionTLS13", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", &p);
    suites_of(p.priorities, got, sizeof got);
    ck_assert_str_eq(got, "TLS_AES_128_GCM_SHA256\nTLS_AES_256_GCM_SHA384\n"
                          "TLS_CHACHA20_POLY1305_SHA256\n");
    ck_assert_ptr_nonnull(strstr(p.note, "no effect"));
}
END_TEST

START_TEST(a_list_enables_exactly_its_suites)
{
    struct tg_tls_profile p;
    char got[1024];

    build_ok(NULL,
             " TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 , TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
             &p);
    suites_of(p.priorities, got, sizeof got);
    ck_assert_str_eq(got, "TLS_AES_128_GCM_SHA256\nTLS_AES_256_GCM_SHA384\n"
                          "TLS_ECDHE_ECDSA_AES_128_GCM_SHA256\n"
                          "TLS_ECDHE_ECDSA_AES_256_GCM_SHA384\n");
    ck_assert_ptr_nonnull(strstr(p.note, "TLS 1.3 offers only the suites of the listed ciphers"));

    /* Go's and component-base's legacy ChaCha20 names both work */
    build_ok(NULL,
             "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
             &p);
    suites_of(p.priorities, got, sizeof got);
    ck_assert_str_eq(got, "TLS_CHACHA20_POLY1305_SHA256\nTLS_ECDHE_ECDSA_CHACHA20_POLY1305\n"
                          "TLS_ECDHE_RSA_CHACHA20_POLY1305\n");

    /* TLS 1.3 names are accepted beside TLS 1.2 ones, and noted */
    build_ok(NULL, "TLS_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", &p);
    ck_assert_ptr_nonnull(strstr(p.note, "configure nothing"));
    suites_of(p.priorities, got, sizeof got);
    ck_assert_str_eq(got, "TLS_AES_128_GCM_SHA256\nTLS_ECDHE_RSA_AES_128_GCM_SHA256\n");
}
END_TEST

START_TEST(bad_flags_are_refused_with_the_reason)
{
    static const struct {
        const char *min, *list, *says;
    } cases[] = {
        {"VersionTLS11", NULL, "VersionTLS11 is not allowed"},
        {"VersionTLS10", NULL, "VersionTLS10 is not allowed"},
        {"TLS1.2", NULL, "unknown version 'TLS1.2'"},
        {NULL, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "AES-CBC with HMAC-SHA1 is not an AEAD"},
        {NULL, "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "not an AEAD"},
        {NULL, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "HMAC-SHA256 is not an AEAD"},
        {NULL, "TLS_RSA_WITH_AES_128_GCM_SHA256", "no forward secrecy"},
        {NULL, "TLS_ECDHE_RSA_WITH_RC4_128_SHA", "RC4"},
        {NULL, "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "3DES"},
        {NULL, "ECDHE-ECDSA-AES128-GCM-SHA256", "unknown cipher suite 'ECDHE-ECDSA-AES128-GCM"},
        {NULL, "tls_ecdhe_ecdsa_with_aes_128_gcm_sha256", "unknown cipher suite"},
        {NULL, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,", "empty entry"},
        {NULL, ",TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "empty entry"},
        {NULL, "TLS_AES_128_GCM_SHA256", "lists no TLS 1.2 suite"},
        /* GnuTLS would also enable ECDHE-RSA with AES-256-GCM and ECDHE-ECDSA with AES-128 */
        {NULL, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
         "would also enable TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct tg_tls_profile p;
        char err[512] = "";
        int rc = tg_tls_profile_build(cases[i].min, cases[i].list, &p, err, sizeof err);
        ck_assert_msg(rc == -EINVAL, "case %zu accepted", i);
        ck_assert_msg(strstr(err, cases[i].says), "case %zu: %s", i, err);
    }
}
END_TEST

/* Every priority string built here is one GnuTLS accepts and that fits its buffer. */
START_TEST(every_allowed_list_parses_in_gnutls)
{
    static const char *const names[] = {
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    };
    char list[512], got[2048];

    list[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct tg_tls_profile p;
        if (i)
            strcat(list, ",");
        strcat(list, names[i]);
        char err[512];
        /* products only: single suites, and the whole list */
        if (tg_tls_profile_build(NULL, names[i], &p, err, sizeof err) == 0) {
            suites_of(p.priorities, got, sizeof got);
            ck_assert_int_eq(strlen(got) > 0, 1);
        } else {
            ck_abort_msg("%s refused: %s", names[i], err);
        }
    }
    struct tg_tls_profile all, def;
    build_ok(NULL, list, &all);
    build_ok(NULL, NULL, &def);
    ck_assert_str_eq(all.priorities, def.priorities);
}
END_TEST

Suite *tg_test_tls_profile_suite(void);
Suite *tg_test_tls_profile_suite(void)
{
    Suite *s = suite_create("tls_profile");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, default_profile_is_ecdhe_aead_and_tls13);
    tcase_add_test(tc, tls13_only_offers_the_three_tls13_suites);
    tcase_add_test(tc, a_list_enables_exactly_its_suites);
    tcase_add_test(tc, bad_flags_are_refused_with_the_reason);
    tcase_add_test(tc, every_allowed_list_parses_in_gnutls);
    suite_add_tcase(s, tc);
    return s;
}
