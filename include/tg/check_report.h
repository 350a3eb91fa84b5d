/* check_report.h -- the trainguard.dev/v1 CheckReport of `trainguard check` (SPEC sections 12 and
 * 13; docs/check.md; docs/schemas/checkreport-v1.schema.json): the results, errors and counts
 * gathered while checking, and the one JSON document every output format is made from.
 *
 * Invariants: results, errors and ignored are arrays (never NULL after init) in input order;
 * objects == evaluated + skipped + the objects the engine failed on (each also an error). */
#ifndef TG_CHECK_REPORT_H
#define TG_CHECK_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "tg/finding.h"
#include "tg/pipeline.h"

#define TG_CHECK_API_VERSION "trainguard.dev/v1"
#define TG_CHECK_KIND "CheckReport"
/* The file name results from standard input carry. */
#define TG_CHECK_STDIN "<stdin>"

/* Where a document or List item sits in the input. */
struct tg_check_where {
    const char *file;
    size_t doc;         /* 1-based document index; 0 for the file as a whole */
    long item;          /* index in the document's List items; -1 for the document itself */
    char item_path[96]; /* "items[2].items[0]" for a List nested in a List, else "" */
    int line;           /* 1-based line where the document starts; 0 when unknown */
};

struct tg_check_report {
    json_t *results, *errors, *ignored;
    unsigned files, readable, documents, objects, evaluated, skipped, denied;
    unsigned shown_deny, shown_warn, shown_audit; /* findings as the mode shows them */
    unsigned rule_deny, rule_warn; /* findings by the rule's effective action (--fail-on) */
};

/* 0 or -ENOMEM. */
int tg_check_report_init(struct tg_check_report *r);
void tg_check_report_release(struct tg_check_report *r);

/* Records the verdict on obj (borrowed). Returns the new results entry, borrowed from the report,
 * so that the caller can add members (--mutate: patch, mutated); NULL on ENOMEM. */
json_t *tg_check_report_add_result(struct tg_check_report *r, const struct tg_check_where *w,
                                   json_t *obj, const struct tg_result *res);

/* Records an error (it makes the exit status 2). A message that starts with
 * "line L, column C: " (a YAML error) is split into line, column and the rest. 0 or -ENOMEM. */
int tg_check_report_add_error(struct tg_check_report *r, const struct tg_check_where *w,
                              const char *msg);

/* Records a document or item that is not a Kubernetes object (a Helm values file, a scalar):
 * nothing to check, not an error. 0 or -ENOMEM. */
int tg_check_report_add_ignored(struct tg_check_report *r, const struct tg_check_where *w,
                                const char *why);

/* The CheckReport (new reference): apiVersion, kind, summary, results, errors, ignored. NULL on
 * ENOMEM. */
json_t *tg_check_report_json(const struct tg_check_report *r);

/* How a finding shows under the evaluation's mode: "deny" (enforce), "warn" (a warn rule, or any
 * rule in warn mode), "audit" (audit mode). */
const char *tg_check_shown_action(const struct tg_result *res, const struct tg_finding *f);

/* Whether a finding whose rule acts at `action` fails the run under --fail-on `fail_on`
 * (TG_ACTION_DENY or TG_ACTION_WARN). The mode plays no part (SPEC 12). */
bool tg_check_fails(enum tg_action action, enum tg_action fail_on);

/* The effective rule action a report finding records ("ruleAction"): TG_ACTION_DENY or
 * TG_ACTION_WARN. */
enum tg_action tg_check_finding_rule_action(const json_t *finding);

/* "file:doc", "file:doc.items[N]" (the label text output and JUnit use) into buf. */
const char *tg_check_label(const json_t *entry, char *buf, size_t len);

/* The "[id]" a warning of the engine starts with names a mutator (a note, SPEC 12 --mutate),
 * not a rule finding. */
bool tg_check_is_note(const char *warning);

#endif
