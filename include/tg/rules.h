/* rules.h -- the rule table, the evaluation context that rules and mutators receive, and the
 * typed accessors they read objects with. Rules are pure: (view, policy) in, findings out. */
#ifndef TG_RULES_H
#define TG_RULES_H

#include <jansson.h>
#include <stdbool.h>

#include "tg/finding.h"
#include "tg/launch.h"
#include "tg/patch.h"
#include "tg/path.h"
#include "tg/policy.h"
#include "tg/review.h"
#include "tg/workload.h"

/* One row per rule id (SPEC section 4), in the order findings are reported. */
struct tg_rule_def {
    const char *id;
    enum tg_action default_action;
    const char *summary;
};
extern const struct tg_rule_def tg_rule_defs[];
extern const size_t tg_rule_count;

/* Index of a rule id in tg_rule_defs[], or -1. */
int tg_rule_index(const char *id);

/* What rules and mutators get. Everything is borrowed for the duration of one evaluation. */
struct tg_eval {
    const struct tg_policy *policy;
    const struct tg_review *review;
    struct tg_workload *wl;
    struct tg_findings *findings;
    struct tg_patch *patch; /* mutators only; NULL for validators */
    json_t *notes;          /* array of strings: mutator remarks that become warnings */
    bool offline;           /* `trainguard check`: the manifest as written, no defaulting */
    struct tg_launch_memo *launches; /* parsed launcher command lines, owned by the pipeline */
    int error;                       /* first -errno a rule hit (-ENOMEM); evaluation then fails */
};

/* Reports a finding for rule `id` at `field`. Drops it when the policy turns the rule off. An
 * unknown id is a programming error: it is reported as a finding of rule "internal". */
void tg_report(struct tg_eval *ev, const char *id, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The launcher command line of container c read for `impl`, parsed once per evaluation and shared
 * by every rule and mutator that asks (it is the costliest read on the request path). The first
 * read also reports command/args of the wrong type (tg_check_command_types), so no caller has to.
 * *out is borrowed until the evaluation ends. Returns 0 or -ENOMEM. */
int tg_eval_launch(struct tg_eval *ev, const struct tg_container *c, enum tg_mpi_impl impl,
                   const struct tg_launch **out);
/* Frees the memo (the pipeline calls it). */
void tg_eval_launch_release(struct tg_eval *ev);

/* Like tg_report, but the finding's action is at most `cap` (a rule that denies in one situation
 * and only warns in a milder one, e.g. efa.exceeds-instance when the count fits only some of the
 * pinned instance types). */
void tg_report_capped(struct tg_eval *ev, const char *id, enum tg_action cap, const char *field,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* A validator or mutator family: runs every rule of the family on ev. kinds is a mask of
 * TG_KIND_BIT(); ops a mask of enum tg_op. Returns 0, or a negative errno when it could not
 * decide (the request then gets an error, never a silent allow). */
struct tg_validator {
    const char *name;
    unsigned kinds;
    unsigned ops;
    int (*run)(struct tg_eval *ev);
};

extern const struct tg_validator tg_validators[];
extern const size_t tg_validator_count;
extern const struct tg_validator tg_mutators[];
extern const size_t tg_mutator_count;

/* Family entry points (src/rules/<family>.c, src/mutators/<name>.c). */
int tg_rules_efa(struct tg_eval *ev);
int tg_rules_zone(struct tg_eval *ev);
int tg_rules_mpi(struct tg_eval *ev);
int tg_rules_gang(struct tg_eval *ev);
int tg_rules_nodeset(struct tg_eval *ev);
int tg_mutate_efa_env(struct tg_eval *ev);

/* `command` and `args` must be lists of strings, or the line is not read at all (mpirun -np goes
 * unchecked). tg_eval_launch calls this for every container it reads; call it directly only for
 * containers no rule reads but that must still be checked (the MPI Launcher's other containers).
 * Reports object.invalid-field at c's command/args when one is not a list, and at each item
 * (command[i], args[i]) that is not a string. Returns true when both are usable (absent counts).
 * Repeated calls are harmless: findings are deduplicated by rule and field.
 * (src/rules/launch_memo.c) */
bool tg_check_command_types(struct tg_eval *ev, const struct tg_container *c);

/* ---- typed accessors (src/k8s/obj.c) ----------------------------------------------------------
 * Each returns the member `key` of `parent` (an object; a NULL parent gives NULL). Absent and JSON
 * null count as absent. A member of the wrong JSON type is reported as object.invalid-field at
 * `path`.key and treated as absent. All returned json_t are borrowed. */
json_t *tg_get_object(struct tg_eval *ev, json_t *parent, const struct tg_path *path,
                      const char *key);
json_t *tg_get_array(struct tg_eval *ev, json_t *parent, const struct tg_path *path,
                     const char *key);
const char *tg_get_string(struct tg_eval *ev, json_t *parent, const struct tg_path *path,
                          const char *key); /* NULL when absent */
/* Integer member: 1 and sets *out when present and an integer (a float with no fraction counts,
 * as Kubernetes decodes 2.0 as 2); 0 when absent; -1 when of the wrong type (reported). */
int tg_get_int(struct tg_eval *ev, json_t *parent, const struct tg_path *path, const char *key,
               long long *out);
/* Boolean member: 1 and *out, 0 absent, -1 wrong type (reported). */
int tg_get_bool(struct tg_eval *ev, json_t *parent, const struct tg_path *path, const char *key,
                bool *out);

/* Env of one container: the literal value of variable `name` (last definition wins, as the
 * kubelet does), or NULL. *defined is set when the name appears at all (value or valueFrom). */
const char *tg_env_value(json_t *container, const char *name, bool *defined);

#endif
