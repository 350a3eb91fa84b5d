/* test_rules_mpi.c -- the mpi.* rules, table-driven from fixtures/mpi/cases.yaml and
 * fixtures/mpi/command-types.yaml through the real review decoder and pipeline with the default
 * policy. */
#include "support/cases.h"

Suite *tg_test_rules_mpi_suite(void);
Suite *tg_test_rules_mpi_suite(void)
{
    Suite *s = suite_create("rules_mpi");
    TCase *tc = tcase_create("cases");
    tg_cases_add(tc, "fixtures/mpi/cases.yaml");
    tg_cases_add(tc, "fixtures/mpi/command-types.yaml");
    suite_add_tcase(s, tc);
    return s;
}
