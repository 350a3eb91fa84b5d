/* finding.h -- one finding of a rule, and the ordered list of findings of one evaluation. */
#ifndef TG_FINDING_H
#define TG_FINDING_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "tg/catalogue.h"

/* Field paths are Kubernetes style: spec.containers[0].resources.limits[vpc.amazonaws.com/efa].
 * 256 bytes holds the deepest path we build (a NodeSet template volume mount) with room to spare.
 */
#define TG_FIELD_MAX 256
/* Message text after "[rule] field: ". Long enough for the longest hint we write. */
#define TG_MSG_MAX 400

struct tg_finding {
    const char *rule;      /* static storage: the id in the rule table */
    int rule_index;        /* enum tg_rule_id: position in tg_rule_defs[], for stable ordering */
    enum tg_action action; /* the policy's action for this rule (never OFF in a list) */
    char field[TG_FIELD_MAX];
    char message[TG_MSG_MAX];
};

/* Invariant: v[0..n) are findings in the order they were added; (rule, field) pairs are unique. */
struct tg_findings {
    struct tg_finding *v;
    size_t n, cap;
};

void tg_findings_init(struct tg_findings *fs);
void tg_findings_release(struct tg_findings *fs);

/* Appends a finding unless one with the same rule and field is already there (then returns 0 and
 * keeps the first). Returns 0 or -ENOMEM. The text is truncated (never split in a UTF-8 sequence)
 * when it exceeds the buffers. */
int tg_findings_add(struct tg_findings *fs, const char *rule, int rule_index, enum tg_action action,
                    const char *field, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
int tg_findings_vadd(struct tg_findings *fs, const char *rule, int rule_index,
                     enum tg_action action, const char *field, const char *fmt, va_list ap)
    __attribute__((format(printf, 6, 0)));

/* Sorts by rule table position, then by insertion order (stable). */
void tg_findings_sort(struct tg_findings *fs);

/* Writes "[rule] field: message" into buf (always NUL-terminated). Returns the full length. */
size_t tg_finding_format(const struct tg_finding *f, char *buf, size_t len);

/* Copies src to dst, cut to at most max_runes UTF-8 code points, control characters replaced by a
 * space, invalid UTF-8 bytes replaced by '?'. When cut, the last rune is "..." (three dots). */
void tg_text_sanitize(const char *src, char *dst, size_t dstlen, size_t max_runes);

#endif
