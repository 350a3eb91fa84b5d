/* test_smoke.c -- the test harness itself runs. */
#include <check.h>

START_TEST(harness_runs)
{
    ck_assert_int_eq(1 + 1, 2);
}
END_TEST

Suite *tg_test_smoke_suite(void);
Suite *tg_test_smoke_suite(void)
{
    Suite *s = suite_create("smoke");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, harness_runs);
    suite_add_tcase(s, tc);
    return s;
}
