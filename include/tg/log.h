/* log.h -- JSON log lines on stderr: one object per line, and the admission decision line.
 * Lines are written with a single fwrite under the stdio lock, so threads never interleave. */
#ifndef TG_LOG_H
#define TG_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum tg_log_level {
    TG_LOG_DEBUG = 0,
    TG_LOG_INFO = 1,
    TG_LOG_WARN = 2,
    TG_LOG_ERROR = 3,
};

/* "debug", "info", "warn" (or "warning"), "error" -> 0; anything else -EINVAL. */
int tg_log_level_parse(const char *s, enum tg_log_level *out);
const char *tg_log_level_name(enum tg_log_level l);
void tg_log_set_level(enum tg_log_level l);
bool tg_log_enabled(enum tg_log_level l);

/* {"ts":"2026-01-02T03:04:05.678Z","level":"info","msg":"<formatted>"}. The message is escaped. */
void tg_log(enum tg_log_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One admission decision. Strings may be NULL (written as ""); rules are the rule ids of the
 * findings (static strings), never object content. */
struct tg_decision {
    const char *endpoint; /* "validate" or "mutate" */
    const char *uid;
    const char *kind;
    const char *namespace;
    const char *name;
    const char *operation;
    const char *user;
    bool dry_run;
    const char *mode;    /* "enforce", "warn", "audit" */
    const char *verdict; /* "allowed", "denied", "error" */
    const char *const *rules;
    size_t nrules;
    const char *const *exempted; /* rules the object turned off (trainguard.dev/exempt-rules) */
    size_t nexempted;
    size_t nratcheted; /* deny findings reported at warn: the old object had them (UPDATE) */
    bool patched;
    double latency_ms;
};

/* Writes the decision line (level info; "msg":"admission"). Returns 0 or -ENOMEM. */
int tg_log_decision(const struct tg_decision *d);

/* Formats the decision line into a malloc'd string without the trailing newline (for tests);
 * NULL on ENOMEM. */
char *tg_log_decision_format(const struct tg_decision *d);

#endif
