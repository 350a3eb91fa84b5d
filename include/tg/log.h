/* log.h -- JSON log lines on stderr: one object per line, and the admission decision line.
 * Lines are written with a single fwrite under the stdio lock, so threads never interleave.
 * Decision lines are buffered per thread once tg_log_buffering_start has run (the server):
 * written within a few milliseconds, before any other log line, and on every exit path. */
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

/* --log-decisions (SPEC 13): which decisions get a line. */
enum tg_log_decisions {
    TG_LOG_DECISIONS_ALL = 0,      /* every decision (the default) */
    TG_LOG_DECISIONS_FINDINGS = 1, /* a finding, an exemption, a ratchet, or not allowed */
    TG_LOG_DECISIONS_NONE = 2,
};

/* "all", "findings", "none" -> 0; anything else -EINVAL. */
int tg_log_decisions_parse(const char *s, enum tg_log_decisions *out);
void tg_log_set_decisions(enum tg_log_decisions v);
/* Does d get a line under the setting and the log level (decision lines are info)? */
bool tg_log_decision_wanted(const struct tg_decision *d);

/* Writes the decision line (level info; "msg":"admission") when tg_log_decision_wanted: into
 * this thread's buffer while buffering is on, else at once. Returns 0 or -ENOMEM. */
int tg_log_decision(const struct tg_decision *d);

/* Buffering of decision lines: a flusher thread writes every thread's buffer with one write(2)
 * each, at most a few milliseconds after a line went in; tg_log lines, exit() and fatal signals
 * (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT: best effort, then the previous handler runs) flush
 * first. Start before the threads that log (it blocks no signal itself: the caller's mask is
 * inherited). start: 0 or -EAGAIN; stop flushes, joins the flusher and frees the buffers (call
 * once no thread logs decisions any more). */
int tg_log_buffering_start(void);
void tg_log_buffering_stop(void);
/* Writes every buffered decision line now. */
void tg_log_flush(void);

/* Formats the decision line into a malloc'd string without the trailing newline (for tests);
 * NULL on ENOMEM. */
char *tg_log_decision_format(const struct tg_decision *d);
/* v as json_dumps writes a real with JSON_REAL_PRECISION(6) (the decision line's latency_ms),
 * into num; returns its length. No printf for 1e-4 <= v < 1e6. */
size_t tg_log_real_text(double v, char num[40]);

#endif
