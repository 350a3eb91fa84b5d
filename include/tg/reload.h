/* reload.h -- the process-wide policy reloader (file polling, SIGHUP). */
#ifndef TG_RELOAD_H
#define TG_RELOAD_H

#include <stdbool.h>

#include "tg/policy.h"

/* One process-wide reloader. It loads `path` now and publishes it (an invalid file is an error
 * returned to the caller: a startup error), then a thread re-reads the file through its path every
 * interval_ms (0: only on request) and reloads when the bytes change, so a ConfigMap volume's
 * symlink swap is seen. An invalid or unreadable new file keeps the published policy, logs one JSON
 * line on stderr and counts a failure; a good one is published (readers holding the old snapshot
 * keep it until they release it). mode_override, when not NULL, replaces the mode of every policy
 * it loads (`serve --mode`). Returns 0, -EINVAL (err says why), -EALREADY, or -errno. */
int tg_policy_reloader_start(const char *path, unsigned interval_ms,
                             const enum tg_mode *mode_override, char *err, size_t errlen);
/* Reloads now, also when the bytes did not change (for SIGHUP from a thread that may block, such
 * as a sigwait loop; not async-signal-safe). 0 published, -EINVAL invalid (old policy kept),
 * -errno unreadable, -ESRCH when no reloader runs. */
int tg_policy_reload_now(void);
/* Async-signal-safe: asks the reloader thread to reload now (call it from a SIGHUP handler). */
void tg_policy_reload_request(void);
/* Stops the thread and forgets the path (the published policy stays). Safe when not started. */
void tg_policy_reloader_stop(void);
/* For /metrics: reloads that published a policy, reloads that failed (each failure counted once
 * per change of the file), and the unix time of the last successful load (start included; 0 when
 * none). Any pointer may be NULL. */
void tg_policy_reload_counts(unsigned long long *ok, unsigned long long *failed,
                             double *last_success);

/* For trainguard_policy_last_reload_successful: false from a failed load or reload (unreadable or
 * invalid file) until a later one publishes a policy; true otherwise, also when no reloader runs
 * (the embedded default) and after the reloader stopped. */
bool tg_policy_reload_ok(void);

#endif
