/* exempt.h -- exceptions for one object (SPEC 12, 13): the annotation
 * trainguard.dev/exempt-rules: "rule-id, rule-id" on the object's own metadata (never on a pod
 * template inside it) turns those rules off for that object, only in the namespaces the policy
 * lists under exceptionNamespaces and never for a cluster-scoped object. Spaces around the commas
 * are ignored. An id that is not in the catalogue exempts nothing and is reported by the rule
 * exempt.unknown-rule (warn), wherever the annotation appears. The pipeline logs, counts and
 * writes every use to the audit annotation `exempted`. */
#ifndef TG_EXEMPT_H
#define TG_EXEMPT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "tg/eval.h"

struct tg_exemption {
    int rules[TG_RULE_COUNT]; /* indices of the rules turned off, in annotation order, no repeat */
    size_t n;
    char unknown[TG_MSG_MAX]; /* the finding's message for unknown ids, "" when there are none */
};

/* Reads the annotation of obj. allowed: the policy lets this object exempt itself (its namespace
 * is an exception namespace and its kind is namespaced); when false no rule is turned off, but
 * unknown ids are still collected. */
void tg_exemption_read(json_t *obj, bool allowed, struct tg_exemption *ex);

/* Turns the exempted rules off in actions (TG_RULE_COUNT entries). */
void tg_exemption_apply(const struct tg_exemption *ex, enum tg_action *actions);

/* Reports the unknown ids (exempt.unknown-rule) into ev's sink, under ev's actions. */
void tg_exemption_report(const struct tg_exemption *ex, struct tg_eval *ev);

#endif
