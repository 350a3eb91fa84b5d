/* test_rules_efa.c -- the efa.* rules, table-driven from fixtures/efa/cases.yaml, plus the cases
 * that need a policy other than the default (instance types added or overridden). */
#include <check.h>
#include <string.h>

#include "support/cases.h"
#include "tg/pipeline.h"
#include "tg/yaml_json.h"

/* One object under one policy: the efa.* findings must be exactly {rule at field} (or none). */
#define POLICY_HEAD "apiVersion: trainguard.dev/v1alpha1\nkind: Policy\n"
#define POD(type, res)                                                                             \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeSelector: "                        \
    "{node.kubernetes.io/instance-type: " type "}, containers: [{name: c, image: x, resources: "   \
    "{limits: {" res ", hugepages-2Mi: 1Gi}}}]}"
#define EFA_FIELD "spec.containers[0].resources.limits[vpc.amazonaws.com/efa]"

static const struct tg_policy_case cases[] = {
    {"Should deny 32 EFA on p5.48xlarge when the policy says its nodes have 16",
     POLICY_HEAD "instanceTypes:\n  p5.48xlarge: {efa: 16}\n",
     POD("p5.48xlarge", "vpc.amazonaws.com/efa: 32, nvidia.com/gpu: 8"), "efa.exceeds-instance",
     EFA_FIELD},
    {"Should admit 16 EFA with all 8 GPUs of p5.48xlarge overridden to 16 EFA (no below-instance)",
     POLICY_HEAD "instanceTypes:\n  p5.48xlarge: {efa: 16}\n",
     POD("p5.48xlarge", "vpc.amazonaws.com/efa: 16, nvidia.com/gpu: 8"), NULL, NULL},
    {"Should deny 8 EFA on a type the policy adds with 4",
     POLICY_HEAD "instanceTypes:\n  p6e-gb200.36xlarge: {efa: 4, gpus: 4}\n",
     POD("p6e-gb200.36xlarge", "vpc.amazonaws.com/efa: 8, nvidia.com/gpu: 4"),
     "efa.exceeds-instance", EFA_FIELD},
    {"Should warn 2 EFA with all 4 GPUs on a type the policy adds with 4 EFA",
     POLICY_HEAD "instanceTypes:\n  p6e-gb200.36xlarge: {efa: 4, gpus: 4}\n",
     POD("p6e-gb200.36xlarge", "vpc.amazonaws.com/efa: 2, nvidia.com/gpu: 4"), "efa.below-instance",
     EFA_FIELD},
    {"Should admit 8 EFA on that type under the default policy (unknown type: no finding)",
     POLICY_HEAD, POD("p6e-gb200.36xlarge", "vpc.amazonaws.com/efa: 8, nvidia.com/gpu: 4"), NULL,
     NULL},
    {"Should drop efa.exceeds-instance when the policy turns it off",
     POLICY_HEAD "rules: {efa.exceeds-instance: \"off\"}\n",
     POD("p5.48xlarge", "vpc.amazonaws.com/efa: 64, nvidia.com/gpu: 8"), NULL, NULL},
};

START_TEST(policy_case)
{
    tg_run_policy_case(&cases[_i], "efa.");
}
END_TEST

Suite *tg_test_rules_efa_suite(void);
Suite *tg_test_rules_efa_suite(void)
{
    Suite *s = suite_create("rules_efa");
    TCase *tc = tcase_create("cases");
    tg_cases_add(tc, "fixtures/efa/cases.yaml");
    suite_add_tcase(s, tc);
    TCase *pt = tcase_create("policy");
    tcase_add_loop_test(pt, policy_case, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    suite_add_tcase(s, pt);
    return s;
}
