/* metrics.h -- the server's Prometheus metrics (prefix trainguard_) and their text exposition
 * (format 0.0.4). Every label set is known at start (endpoints, kinds, operations, verdicts, rule
 * ids, result, HTTP codes), so counters are fixed arrays of atomics: no allocation, no lock on the
 * request path. Only tg_metrics_init allocates (the per-rule table). */
#ifndef TG_METRICS_H
#define TG_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "tg/catalogue.h"
#include "tg/policy.h"

enum tg_metric_endpoint { TG_EP_VALIDATE = 0, TG_EP_MUTATE, TG_EP_COUNT };
enum tg_metric_verdict {
    TG_VERDICT_ALLOWED = 0,
    TG_VERDICT_DENIED,
    TG_VERDICT_ERROR,
    TG_VERDICT_COUNT
};
/* Effective action of a finding after the mode: deny (enforced), warn (warning), audit. */
enum tg_metric_action { TG_MACTION_DENY = 0, TG_MACTION_WARN, TG_MACTION_AUDIT, TG_MACTION_COUNT };
enum tg_metric_result { TG_RESULT_SUCCESS = 0, TG_RESULT_FAILURE, TG_RESULT_COUNT };

/* Sets up the metrics for the given rule table (borrowed; must outlive the metrics) and zeroes
 * every counter. Returns 0 or -ENOMEM. Safe to call again (tests): resets everything. */
int tg_metrics_init(const struct tg_rule_def *rules, size_t nrules, const char *version);
void tg_metrics_release(void);

/* Label lookups: the index of a known kind ("Pod", "MPIJob", "NodeSet", "PodGroup", "Job",
 * "SlurmNodeSet"), else "other"; NULL means "unknown" (no review decoded). Same idea for the
 * operation (CREATE, UPDATE, DELETE, CONNECT, else "unknown"). */
int tg_metrics_kind_index(const char *kind);
int tg_metrics_op_index(const char *op);

void tg_metrics_admission(enum tg_metric_endpoint ep, int kind_index, int op_index,
                          enum tg_metric_verdict v, double seconds);
/* The action label of a finding: audit in audit mode; deny only when enforced (enforce mode and
 * a deny action); warn otherwise (warn actions, and denies that warn mode downgrades). */
enum tg_metric_action tg_metrics_action_for(enum tg_mode mode, enum tg_action action);
/* rule_index is the position in the rule table; out of range is ignored. ns is the object's
 * namespace ("" or NULL for cluster-scoped objects); it is used only with the namespace label. */
void tg_metrics_finding(int rule_index, enum tg_metric_action a, const char *ns);
/* Turns on the namespace label of trainguard_findings_total (serve --metrics-namespace-label);
 * call after tg_metrics_init. One series per namespace, rule and action: at most
 * TG_METRICS_MAX_NAMESPACES namespaces are told apart, later ones and names that are no
 * Kubernetes namespace name count under namespace="_other". 0 or -ENOMEM. */
#define TG_METRICS_MAX_NAMESPACES 2000
int tg_metrics_namespace_label(void);
/* An object exempted itself from rule rule_index (trainguard.dev/exempt-rules). */
void tg_metrics_exemption(int rule_index);
/* n deny findings became warnings through the UPDATE ratchet. */
void tg_metrics_ratcheted(size_t n);
void tg_metrics_patch(int kind_index);
/* Policy reload totals, as counted by the policy reloader (tg_policy_reload_counts). */
void tg_metrics_policy_reloads(unsigned long long ok, unsigned long long failed);
void tg_metrics_cert_reload(enum tg_metric_result r);
/* The last_reload_successful gauges (tg_policy_reload_ok, tg_tls_reload_ok), set at scrape time. */
void tg_metrics_reload_state(bool policy_ok, bool certificate_ok);
/* trainguard_policy_info{mode,sha256}: the policy in force (copied; NULL clears). */
void tg_metrics_policy_info(const char *mode, const char *sha256);
void tg_metrics_cert_expiry(long long unix_seconds);
/* Counts an HTTP error response; codes outside the known list count as "other". */
void tg_metrics_http_error(int code);
void tg_metrics_inflight_add(int delta);
long tg_metrics_inflight(void);

/* The exposition text (Content-Type: text/plain; version=0.0.4; charset=utf-8), malloc'd, with
 * its length in *len. NULL on ENOMEM. */
char *tg_metrics_render(size_t *len);

#define TG_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
