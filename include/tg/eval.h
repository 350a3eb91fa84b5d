/* eval.h -- the evaluation context that decoders, rules and mutators receive, and the findings
 * sink they report into.
 *
 * Contract:
 * - Everything a struct tg_eval points to is borrowed for the duration of one evaluation.
 * - tg_report() files a finding under the rule's effective action: ev->actions[id] when set (the
 *   policy's actions after its caps), else the catalogue default; an OFF action drops it. The
 *   first allocation failure is kept in ev->error (the evaluation then fails; never a silent
 *   allow).
 * - This header knows no higher layer: the policy, the workload view and the launch memo are
 *   opaque here (their owners are src/policy, src/k8s and src/rules). */
#ifndef TG_EVAL_H
#define TG_EVAL_H

#include <jansson.h>
#include <stdbool.h>

#include "tg/catalogue.h"
#include "tg/finding.h"

struct tg_policy;
struct tg_workload;
struct tg_patch;
struct tg_launch_memo;

struct tg_eval {
    const struct tg_policy *policy; /* read by rules and mutators (NULL in some unit tests) */
    struct tg_workload *wl;         /* the view being judged */
    struct tg_findings *findings;   /* the sink */
    const enum tg_action *actions;  /* TG_RULE_COUNT effective actions; NULL: catalogue defaults */
    struct tg_patch *patch;         /* mutators only; NULL for validators */
    json_t *notes;                  /* array of strings: mutator remarks that become warnings */
    bool offline;                   /* `trainguard check`: the manifest as written, no defaulting */
    struct tg_launch_memo *launches; /* parsed launcher command lines (src/rules/launch_memo.c) */
    /* The parallel plan as the plan rules read it (src/rules/plan.c), for `check --explain` and
     * the report; NULL until a rule fills them, owned by the evaluation's caller. */
    json_t *explain;    /* object: role name -> the plan of that role */
    json_t *unresolved; /* array of {what, why}: values the rules could not read */
    bool no_plan_view;  /* leave explain and unresolved NULL (tg_pipeline_opts.no_plan_view) */
    int error;          /* first -errno hit (-ENOMEM); evaluation then fails */
};

/* Reports a finding of rule id at `field` (a Kubernetes field path). */
void tg_report(struct tg_eval *ev, enum tg_rule_id id, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Like tg_report, but the finding's action is at most `cap` (a rule that denies in one situation
 * and only warns in a milder one, e.g. efa.exceeds-instance when the count fits only some of the
 * pinned instance types). */
void tg_report_capped(struct tg_eval *ev, enum tg_rule_id id, enum tg_action cap, const char *field,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The effective action of rule id in ev (what tg_report would file it under). */
enum tg_action tg_eval_action(const struct tg_eval *ev, enum tg_rule_id id);

#endif
