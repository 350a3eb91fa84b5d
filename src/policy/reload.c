/* reload.c -- re-reads the policy file when its bytes change or on SIGHUP; a bad file keeps the
 * published policy.
 *
 * ConfigMap volumes update a file by swapping a symlink (..data -> ..<timestamp>), so the file is
 * read through its path on every poll and its bytes are compared with the last bytes seen: no
 * inotify watch on a directory that is replaced, no trust in mtimes (cert-manager's
 * pkg/server/tls/file_source.go polls and compares bytes the same way). The bytes that were
 * compared are the bytes that are parsed, so a swap between the two cannot slip through.
 *
 * SIGHUP wiring for the server: from a signal handler call tg_policy_reload_request() (it only
 * writes one byte to a pipe); from a thread that may block (a sigwait loop) tg_policy_reload_now().
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tg/arena.h"
#include "tg/policy_yaml.h"
#include "tg/reload.h"

/* Error text of one load: up to 20 lines of "file: line L, column C: path: reason". */
#define ERR_LEN 4096

/* All state of the one reloader. `lock` serialises reloads (poller, reload_now) and guards every
 * field; the published policy has its own lock in policy.c. */
static struct {
    pthread_mutex_t lock;
    bool running, stopping;
    pthread_t thread;
    int wake[2]; /* self-pipe: 'h' reload now, 's' stop */
    char *path;
    unsigned interval_ms;
    bool have_override;
    enum tg_mode override;
    char *last; /* bytes of the last read (valid or not) */
    size_t last_len;
    int last_errno; /* errno of the last failed read, 0 after a successful read */
    unsigned long long ok, failed;
    double last_success;
    bool last_failed; /* the latest load failed, and none succeeded since */
} R = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = {-1, -1}};

static double now_unix(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One JSON line on stderr: {"ts":..., "level":..., "msg":..., "path":..., "error":...}. */
static void log_line(const char *level, const char *msg, const char *path, const char *error,
                     const char *mode)
{
    struct timespec ts;
    struct tm tm;
    char when[40];
    json_t *o;
    char *line;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + strlen(when), sizeof when - strlen(when), ".%03dZ",
             (int)(ts.tv_nsec / 1000000));
    o = json_pack("{s:s, s:s, s:s, s:s?}", "ts", when, "level", level, "msg", msg, "path", path);
    if (!o)
        return;
    if (error)
        json_object_set_new(o, "error", json_string(error));
    if (mode)
        json_object_set_new(o, "mode", json_string(mode));
    line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (line) {
        fprintf(stderr, "%s\n", line);
        tg_json_free(line);
    }
    json_decref(o);
}

/* Reads, compares, loads and publishes. Caller holds R.lock. force: load even when the bytes are
 * the same as last time (SIGHUP). Returns 0 published or unchanged, -EINVAL invalid, -errno. */
static int reload_locked(bool force)
{
    char err[ERR_LEN];
    struct tg_policy *p;
    const char *mode;
    size_t len = 0;
    char *buf = tg_policy_read_file(R.path, &len, err, sizeof err);
    int e;

    if (!buf) {
        e = errno ? errno : EIO;
        /* Logged and counted once per state, not once per poll. */
        if (force || R.last_errno != e) {
            log_line("error", "policy file unreadable; keeping the previous policy", R.path, err,
                     NULL);
            R.failed++;
        }
        R.last_failed = true;
        R.last_errno = e;
        free(R.last);
        R.last = NULL;
        R.last_len = 0;
        return -e;
    }
    if (!force && R.last && !R.last_errno && len == R.last_len && !memcmp(buf, R.last, len)) {
        free(buf);
        return 0;
    }
    free(R.last);
    R.last = buf;
    R.last_len = len;
    R.last_errno = 0;
    p = tg_policy_load_bytes(buf, len, R.path, err, sizeof err);
    if (!p) {
        log_line("error", "policy file invalid; keeping the previous policy", R.path, err, NULL);
        R.failed++;
        R.last_failed = true;
        return -EINVAL;
    }
    if (R.have_override)
        p->mode = R.override;
    mode = tg_mode_name(p->mode);
    tg_policy_publish(p);
    R.ok++;
    R.last_success = now_unix();
    R.last_failed = false;
    log_line("info", "policy reloaded", R.path, NULL, mode);
    return 0;
}

/* Drains the self-pipe; returns what was asked ('s' wins over 'h'), or 0. */
static char drain_wake(void)
{
    char buf[64], want = 0;
    ssize_t n;
    while ((n = read(R.wake[0], buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            if (want != 's')
                want = buf[i];
    }
    return want;
}

static void *poller(void *arg)
{
    (void)arg;
    for (;;) {
        struct pollfd pfd = {.fd = R.wake[0], .events = POLLIN};
        int timeout = R.interval_ms ? (int)R.interval_ms : -1;
        char want = 0;
        int rc = poll(&pfd, 1, timeout);
        if (rc > 0)
            want = drain_wake();
        pthread_mutex_lock(&R.lock);
        if (R.stopping || want == 's') {
            pthread_mutex_unlock(&R.lock);
            break;
        }
        if (rc == 0 || want == 'h')
            reload_locked(want == 'h');
        pthread_mutex_unlock(&R.lock);
    }
    return NULL;
}

static void forget_locked(void)
{
    free(R.path);
    R.path = NULL;
    free(R.last);
    R.last = NULL;
    R.last_len = 0;
    R.last_errno = 0;
    R.last_failed = false;
    for (int i = 1; i >= 0; i--) {
        int fd = __atomic_exchange_n(&R.wake[i], -1, __ATOMIC_ACQ_REL);
        if (fd >= 0)
            close(fd);
    }
}

int tg_policy_reloader_start(const char *path, unsigned interval_ms,
                             const enum tg_mode *mode_override, char *err, size_t errlen)
{
    struct tg_policy *p;
    int rc = 0, fds[2];

    pthread_mutex_lock(&R.lock);
    if (R.running || R.path) {
        rc = -EALREADY;
        snprintf(err, errlen, "policy reloader already running");
        goto out_unlock;
    }
    if (!(R.path = strdup(path))) {
        rc = -ENOMEM;
        snprintf(err, errlen, "out of memory");
        goto out_unlock;
    }
    R.last = tg_policy_read_file(path, &R.last_len, err, errlen);
    if (!R.last) {
        rc = errno ? -errno : -EIO;
        goto out_forget;
    }
    p = tg_policy_load_bytes(R.last, R.last_len, path, err, errlen);
    if (!p) {
        rc = -EINVAL;
        goto out_forget;
    }
    R.have_override = mode_override != NULL;
    if (mode_override) {
        R.override = *mode_override;
        p->mode = *mode_override;
    }
    tg_policy_publish(p);
    R.last_success = now_unix();
    R.last_failed = false;
    R.interval_ms = interval_ms;
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        rc = -errno;
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        goto out_forget;
    }
    R.wake[0] = fds[0];
    __atomic_store_n(&R.wake[1], fds[1], __ATOMIC_RELEASE);
    R.stopping = false;
    rc = -pthread_create(&R.thread, NULL, poller, NULL);
    if (rc) {
        snprintf(err, errlen, "cannot start the policy reloader: %s", strerror(-rc));
        goto out_forget;
    }
    R.running = true;
    goto out_unlock;
out_forget:
    forget_locked();
out_unlock:
    pthread_mutex_unlock(&R.lock);
    return rc;
}

int tg_policy_reload_now(void)
{
    int rc;
    pthread_mutex_lock(&R.lock);
    rc = R.path ? reload_locked(true) : -ESRCH;
    pthread_mutex_unlock(&R.lock);
    return rc;
}

void tg_policy_reload_request(void)
{
    int saved = errno, fd = __atomic_load_n(&R.wake[1], __ATOMIC_ACQUIRE);
    if (fd >= 0) {
        ssize_t n = write(fd, "h", 1);
        (void)n;
    }
    errno = saved;
}

void tg_policy_reloader_stop(void)
{
    bool join;
    pthread_mutex_lock(&R.lock);
    join = R.running;
    R.stopping = true;
    if (R.wake[1] >= 0) {
        ssize_t n = write(R.wake[1], "s", 1);
        (void)n;
    }
    pthread_mutex_unlock(&R.lock);
    if (join)
        pthread_join(R.thread, NULL);
    pthread_mutex_lock(&R.lock);
    R.running = false;
    forget_locked();
    pthread_mutex_unlock(&R.lock);
}

void tg_policy_reload_counts(unsigned long long *ok, unsigned long long *failed,
                             double *last_success)
{
    pthread_mutex_lock(&R.lock);
    if (ok)
        *ok = R.ok;
    if (failed)
        *failed = R.failed;
    if (last_success)
        *last_success = R.last_success;
    pthread_mutex_unlock(&R.lock);
}

bool tg_policy_reload_ok(void)
{
    bool failed;
    pthread_mutex_lock(&R.lock);
    failed = R.last_failed;
    pthread_mutex_unlock(&R.lock);
    return !failed;
}
