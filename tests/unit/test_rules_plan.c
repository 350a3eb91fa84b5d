/* test_rules_plan.c -- the plan.* rules, table-driven from fixtures/plan/cases.yaml (our own
 * cases: messages, mpirun ranks, scripts, versions, DeepSpeed's arithmetic); the upstream plan
 * files run in test_upstream.c. */
#include <check.h>

#include "support/cases.h"

Suite *tg_test_rules_plan_suite(void);
Suite *tg_test_rules_plan_suite(void)
{
    Suite *s = suite_create("rules_plan");
    TCase *tc = tcase_create("cases");
    tg_cases_add(tc, "fixtures/plan/cases.yaml");
    suite_add_tcase(s, tc);
    return s;
}
