/* pipeline.h -- review -> view -> rules and mutators -> verdict. The one engine behind both
 * `serve` (/validate, /mutate) and `check`. */
#ifndef TG_PIPELINE_H
#define TG_PIPELINE_H

#include <jansson.h>
#include <stdbool.h>

#include "tg/finding.h"
#include "tg/patch.h"
#include "tg/policy.h"
#include "tg/registry.h"
#include "tg/review.h"

/* The verdict of one evaluation, ready to encode. */
struct tg_result {
    bool allowed;
    bool evaluated;          /* false: unknown kind, exempt namespace, DELETE/CONNECT */
    const char *skip_reason; /* why not evaluated (static string), or NULL */
    enum tg_mode mode;
    enum tg_kind kind;
    int code;              /* 200, or 403 on deny */
    char *message;         /* deny message (malloc'd, one finding per line) or NULL */
    json_t *warnings;      /* array of strings, already sanitized; never NULL */
    json_t *audit;         /* object: auditAnnotations; never NULL (may be empty) */
    struct tg_patch patch; /* ops to return (empty when none, and always in audit mode) */
    json_t *would_patch;   /* array of the pointers that would change (audit), or NULL */
    json_t *explain;       /* the parallel plan per role (object), or NULL: none read */
    json_t *unresolved;    /* array of {what, why} the rules could not read, or NULL */
    struct tg_findings findings;
    /* The rules the object turned off for itself (trainguard.dev/exempt-rules, SPEC 12), as
     * static rule ids; recorded on /validate in the audit annotation `exempted`. */
    const char *exempted[TG_RULE_COUNT];
    size_t nexempted;
    size_t nratcheted; /* UPDATE: deny findings reported at warn, the old object had them too */
};

struct tg_pipeline_opts {
    bool mutate;          /* run mutators and return a patch (/mutate, check --mutate) */
    bool skip_validation; /* /mutate: only mutators run; /validate judges the result */
    bool offline;         /* check: manifest as written */
    bool has_mode_override;
    enum tg_mode mode_override; /* --mode */
    /* The webhook: the plan per role and the values the rules could not read (res->explain,
     * res->unresolved) are not built; only `check` prints them. Findings are the same. */
    bool no_plan_view;
    /* Custom tables (tests); NULL means the built-in tg_validators / tg_mutators. */
    const struct tg_validator *validators;
    size_t nvalidators;
    const struct tg_validator *mutators;
    size_t nmutators;
};

/* Evaluates rv under policy. Returns 0 with res filled (release with tg_result_release), or a
 * negative errno when the webhook could not decide (-ENOMEM, or a rule's error). */
int tg_pipeline_run(const struct tg_policy *policy, const struct tg_review *rv,
                    const struct tg_pipeline_opts *opts, struct tg_result *res);
void tg_result_release(struct tg_result *res);

#endif
