/* test_rules_zone.c -- the zone.* rules, table-driven from fixtures/zone/cases.yaml. */
#include "support/cases.h"

Suite *tg_test_rules_zone_suite(void);
Suite *tg_test_rules_zone_suite(void)
{
    Suite *s = suite_create("rules_zone");
    TCase *tc = tcase_create("cases");
    tg_cases_add(tc, "fixtures/zone/cases.yaml");
    suite_add_tcase(s, tc);
    return s;
}
