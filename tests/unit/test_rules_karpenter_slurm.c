/* test_rules_karpenter_slurm.c -- the karpenter.* and slurm.* rules, table-driven: our own cases
 * (fixtures/karpenter, fixtures/slurm) and the second author's cases written from the Karpenter
 * and slurm-operator sources (fixtures/upstream/karpenter.yaml, slurm-controller.yaml). */
#include "support/cases.h"

Suite *tg_test_rules_karpenter_suite(void);
Suite *tg_test_rules_karpenter_suite(void)
{
    Suite *s = suite_create("rules_karpenter");
    TCase *tc = tcase_create("cases");
    tg_cases_add(tc, "fixtures/karpenter/cases.yaml");
    tg_cases_add(tc, "fixtures/upstream/karpenter.yaml");
    suite_add_tcase(s, tc);
    return s;
}

Suite *tg_test_rules_slurm_suite(void);
Suite *tg_test_rules_slurm_suite(void)
{
    Suite *s = suite_create("rules_slurm");
    TCase *tc = tcase_create("cases");
    tg_cases_add(tc, "fixtures/slurm/cases.yaml");
    tg_cases_add(tc, "fixtures/upstream/slurm-controller.yaml");
    suite_add_tcase(s, tc);
    return s;
}
