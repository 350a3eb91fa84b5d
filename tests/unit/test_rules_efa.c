/* test_rules_efa.c -- the efa.* rules, table-driven from fixtures/efa/cases.yaml. */
#include "support/cases.h"

Suite *tg_test_rules_efa_suite(void);
Suite *tg_test_rules_efa_suite(void)
{
    Suite *s = suite_create("rules_efa");
    TCase *tc = tcase_create("cases");
    tg_cases_add(tc, "fixtures/efa/cases.yaml");
    suite_add_tcase(s, tc);
    return s;
}
