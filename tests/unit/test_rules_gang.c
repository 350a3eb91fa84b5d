/* test_rules_gang.c -- the gang.* rules, table-driven from fixtures/gang/cases.yaml. */
#include "support/cases.h"

Suite *tg_test_rules_gang_suite(void);
Suite *tg_test_rules_gang_suite(void)
{
    Suite *s = suite_create("rules_gang");
    TCase *tc = tcase_create("cases");
    tg_cases_add(tc, "fixtures/gang/cases.yaml");
    suite_add_tcase(s, tc);
    return s;
}
