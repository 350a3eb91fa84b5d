/* test_rules_zone.c -- the zone.* rules, table-driven from fixtures/zone/cases.yaml, plus the
 * cases that need a policy other than the default (single-zone node labels, narrower keys). */
#include <check.h>
#include <string.h>

#include "support/cases.h"
#include "tg/pipeline.h"
#include "tg/yaml_json.h"

/* One object under one policy: the zone.* findings must be exactly {rule at field} (or none). */
#define POLICY_HEAD "apiVersion: trainguard.dev/v1alpha1\nkind: Policy\n"
#define NODEPOOL_A                                                                                 \
    POLICY_HEAD "singleZoneNodeLabels:\n"                                                          \
                "  - {key: karpenter.sh/nodepool, values: [p5-use1a], zone: us-east-1a}\n"         \
                "  - {key: eks.amazonaws.com/nodegroup}\n"
#define EFA_C                                                                                      \
    "containers: [{name: w, image: x, resources: {limits: {vpc.amazonaws.com/efa: 32, "            \
    "hugepages-2Mi: 1Gi}}}]"
/* A Pod in a PodGroup that no judged workload owns: zone-judged (SPEC 13 "Pods at admission"). */
#define GANG                                                                                       \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {scheduling.k8s.io/group-name: "  \
    "pg}}\n"

static const struct tg_policy_case cases[] = {
    {"Should admit a nodeSelector on a single-zone NodePool label of the policy", NODEPOOL_A,
     GANG "spec: {nodeSelector: {karpenter.sh/nodepool: p5-use1a}, " EFA_C "}", NULL, NULL},
    {"Should deny a NodePool value the policy does not list as single-zone", NODEPOOL_A,
     GANG "spec: {nodeSelector: {karpenter.sh/nodepool: p5-any}, " EFA_C "}", "zone.missing",
     "spec"},
    {"Should admit any value of a single-zone label listed without values", NODEPOOL_A,
     GANG "spec: {nodeSelector: {eks.amazonaws.com/nodegroup: ng-1}, " EFA_C "}", NULL, NULL},
    {"Should deny a single-zone NodePool in us-east-1a with a zone nodeSelector us-east-1b",
     NODEPOOL_A,
     GANG "spec: {nodeSelector: {karpenter.sh/nodepool: p5-use1a, topology.kubernetes.io/zone: "
          "us-east-1b}, " EFA_C "}",
     "zone.conflict", "spec.nodeSelector[karpenter.sh/nodepool]"},
    {"Should deny a single-zone NodePool whose zone required node affinity does not allow",
     NODEPOOL_A,
     GANG
     "spec: {nodeSelector: {karpenter.sh/nodepool: p5-use1a}, affinity: {nodeAffinity: "
     "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: "
     "[{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1c, "
     "us-east-1d]}]}]}}}, " EFA_C "}",
     "zone.conflict", "spec.nodeSelector[karpenter.sh/nodepool]"},
    {"Should deny an EFA MPIJob launcher on the us-east-1a NodePool and Workers in us-east-1b",
     NODEPOOL_A,
     "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: j}\nspec:\n"
     "  mpiReplicaSpecs:\n"
     "    Launcher: {replicas: 1, template: {spec: {nodeSelector: {karpenter.sh/nodepool: "
     "p5-use1a}, " EFA_C "}}}\n"
     "    Worker: {replicas: 2, template: {spec: {nodeSelector: {topology.kubernetes.io/zone: "
     "us-east-1b}, " EFA_C "}}}\n",
     "zone.conflict",
     "spec.mpiReplicaSpecs.Worker.template.spec.nodeSelector[topology.kubernetes.io/zone]"},
    /* SPEC 9: zone.conflict applies to templates that request EFA only. */
    {"Should admit a launcher without EFA on the us-east-1a NodePool and Workers in us-east-1b",
     NODEPOOL_A,
     "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: j}\nspec:\n"
     "  mpiReplicaSpecs:\n"
     "    Launcher: {replicas: 1, template: {spec: {nodeSelector: {karpenter.sh/nodepool: "
     "p5-use1a}, containers: [{name: l, image: x}]}}}\n"
     "    Worker: {replicas: 2, template: {spec: {nodeSelector: {topology.kubernetes.io/zone: "
     "us-east-1b}, " EFA_C "}}}\n",
     NULL, NULL},
    {"Should admit a required pod affinity on a narrower key the policy adds",
     POLICY_HEAD "narrowTopologyKeys: [example.com/rack]\n",
     GANG "spec: {affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
          "[{labelSelector: {matchLabels: {a: b}}, topologyKey: example.com/rack}]}}, " EFA_C "}",
     NULL, NULL},
    {"Should deny a custom zone label only when the policy does not list it",
     POLICY_HEAD "zoneLabels: [example.com/az]\n",
     GANG "spec: {nodeSelector: {topology.kubernetes.io/zone: us-east-1a}, " EFA_C "}",
     "zone.missing", "spec"},
    {"Should admit a custom zone label the policy lists",
     POLICY_HEAD "zoneLabels: [example.com/az]\n",
     GANG "spec: {nodeSelector: {example.com/az: use1-az1}, " EFA_C "}", NULL, NULL},
};

START_TEST(policy_case)
{
    tg_run_policy_case(&cases[_i], "zone.");
}
END_TEST

Suite *tg_test_rules_zone_suite(void);
Suite *tg_test_rules_zone_suite(void)
{
    Suite *s = suite_create("rules_zone");
    TCase *tc = tcase_create("cases");
    tg_cases_add(tc, "fixtures/zone/cases.yaml");
    suite_add_tcase(s, tc);
    TCase *pt = tcase_create("policy");
    tcase_add_loop_test(pt, policy_case, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    suite_add_tcase(s, pt);
    return s;
}
