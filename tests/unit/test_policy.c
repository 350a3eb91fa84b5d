/* test_policy.c -- the policy loader, the embedded default, reload and snapshots. */
#include <check.h>
#include <string.h>

#include "tg/policy.h"
#include "tg/rules.h"

START_TEST(default_loads)
{
    char err[2048];
    size_t len;
    const char *y = tg_policy_default_yaml(&len);
    struct tg_policy *p = tg_policy_load_yaml(y, len, "<embedded>", err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    tg_policy_unref(p);
}
END_TEST

Suite *tg_test_policy_suite(void);
Suite *tg_test_policy_suite(void)
{
    Suite *s = suite_create("policy");
    TCase *tc = tcase_create("load");
    tcase_add_test(tc, default_loads);
    suite_add_tcase(s, tc);
    return s;
}
