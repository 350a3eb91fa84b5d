/* test_dnsname.c -- the one DNS-1123 checker (include/tg/dnsname.h) that the policy loader, the
 * certs command and the namespace label of the metrics call. */
#include <check.h>
#include <string.h>

#include "tg/dnsname.h"

START_TEST(labels)
{
    char s63[64], s64[65];

    memset(s63, 'a', 63);
    s63[63] = '\0';
    memset(s64, 'a', 64);
    s64[64] = '\0';
    ck_assert(tg_dns1123_label("kube-system"));
    ck_assert(tg_dns1123_label("0team"));
    ck_assert(tg_dns1123_label("a"));
    ck_assert(tg_dns1123_label(s63));
    ck_assert(!tg_dns1123_label(s64));
    ck_assert(!tg_dns1123_label(""));
    ck_assert(!tg_dns1123_label("-a"));
    ck_assert(!tg_dns1123_label("a-"));
    ck_assert(!tg_dns1123_label("Team"));
    ck_assert(!tg_dns1123_label("a.b"));
    ck_assert(!tg_dns1123_label("a_b"));
    ck_assert(!tg_dns1123_label("a\"b"));
}
END_TEST

START_TEST(subdomains)
{
    const char *ok[] = {"trainguard.dev", "a", "a-b.c0", "kubernetes.io"};
    const char *bad[] = {"", ".a", "a.", "a..b", "a.-b", "a-.b", "A.b", "a/b"};

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        ck_assert_msg(tg_dns1123_subdomain(ok[i], strlen(ok[i])), "%s", ok[i]);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(!tg_dns1123_subdomain(bad[i], strlen(bad[i])), "%s", bad[i]);
    /* the length given counts, not the terminator: the prefix of "a.b/c" before the slash */
    ck_assert(tg_dns1123_subdomain("a.b/c", 3));
    char s254[255];
    memset(s254, 'a', 254);
    s254[254] = '\0';
    ck_assert(tg_dns1123_subdomain(s254, 253));
    ck_assert(!tg_dns1123_subdomain(s254, 254));
}
END_TEST

Suite *tg_test_dnsname_suite(void);
Suite *tg_test_dnsname_suite(void)
{
    Suite *s = suite_create("dnsname");
    TCase *tc = tcase_create("dnsname");
    tcase_add_test(tc, labels);
    tcase_add_test(tc, subdomains);
    suite_add_tcase(s, tc);
    return s;
}
