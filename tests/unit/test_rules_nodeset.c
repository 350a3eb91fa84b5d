/* test_rules_nodeset.c -- the nodeset.* rules, table-driven from fixtures/nodeset/cases.yaml. */
#include "support/cases.h"

Suite *tg_test_rules_nodeset_suite(void);
Suite *tg_test_rules_nodeset_suite(void)
{
    Suite *s = suite_create("rules_nodeset");
    TCase *tc = tcase_create("cases");
    tg_cases_add(tc, "fixtures/nodeset/cases.yaml");
    suite_add_tcase(s, tc);
    return s;
}
