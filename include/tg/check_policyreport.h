/* check_policyreport.h -- `trainguard check --output policyreport`: the CheckReport as
 * wgpolicyk8s.io/v1alpha2 PolicyReport and ClusterPolicyReport objects (the Kubernetes Policy WG's
 * report API, kubernetes-sigs/wg-policy-prototypes policy-report/crd/v1alpha2; copies in
 * tests/schemas/), read by Policy Reporter and kept in the cluster like Kyverno's reports.
 *
 * The output is a v1 List, ready for `kubectl apply -f -`, of one PolicyReport per namespace of
 * the evaluated objects (sorted; objects without metadata.namespace share one report without a
 * namespace, which lands where kubectl puts them), then one ClusterPolicyReport for objects of
 * cluster-scoped kinds. Each report is named "trainguard" and labelled
 * app.kubernetes.io/managed-by=trainguard. Results: one per finding (policy "trainguard", rule =
 * rule id, category = its family, result "fail" for a rule acting at deny and "warn" at warn,
 * severity high/medium, message, the object in resources, scored, source "trainguard", the field in
 * properties) and one "pass" per evaluated object without findings; summary counts them. Objects
 * the rules do not judge (unknown kinds, exempt namespaces) and errors are left out: errors still
 * make the exit status 2. */
#ifndef TG_CHECK_POLICYREPORT_H
#define TG_CHECK_POLICYREPORT_H

#include <jansson.h>
#include <stdbool.h>

/* Whether objects of this apiVersion ("group/version" or "version") and kind live outside
 * namespaces, as the catalogue's API rows say (src/catalogue/kinds.def); false for a kind the
 * catalogue does not list (never evaluated, so never in a PolicyReport). */
bool tg_check_cluster_scoped(const char *api_version, const char *kind);

/* The List of reports for report (a CheckReport, borrowed): a new reference, NULL on ENOMEM.
 * cluster_scoped decides which objects go to the ClusterPolicyReport; NULL means
 * tg_check_cluster_scoped. */
json_t *tg_check_policyreport(const json_t *report,
                              bool (*cluster_scoped)(const char *api_version, const char *kind));

#endif
