/* tls.c -- serving certificate: OpenSSL checks (in a child process), a GnuTLS snapshot swapped on
 * reload, and client certificate verification for --client-ca-file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tg/tls.h"
#include "tg/x509.h"

/* A serving chain longer than this is a configuration mistake (leaf + intermediates). */
#define CHAIN_MAX 8

/* One certificate/key pair as GnuTLS serves it; immutable once published. */
struct tls_pair {
    gnutls_pcert_st pcerts[CHAIN_MAX];
    unsigned int npcerts;
    gnutls_privkey_t key;
    char *cert_pem, *key_pem; /* the bytes it came from, to notice changes */
    size_t cert_len, key_len;
    long long not_after;
    time_t retired_at;
    struct tls_pair *next; /* retired list */
};

static pthread_mutex_t tls_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tls_pair *current;
static struct tls_pair *retired;
static char cert_file[PATH_MAX];
static char key_file[PATH_MAX];
static unsigned long long bad_fingerprint;
static bool have_bad;
/* The latest reload failed (bad pair, or a check that could not be done) and none succeeded or
 * found the files back to the pair in use since. */
static bool last_failed;
/* A handshake picks the pair under the lock and uses it until it completes; MHD's connection
 * timeout bounds that, and five minutes is far beyond any sane timeout. */
static int grace_seconds = 300;

int tg_tls_read_file(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
    int fd, rc = 0;
    struct stat st;
    char *b = NULL;
    size_t n = 0;

    *buf = NULL;
    *len = 0;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return rc;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        rc = -EINVAL;
        snprintf(err, errlen, "%s: not a regular file", path);
        goto out_close;
    }
    if (st.st_size > TG_TLS_FILE_MAX) {
        rc = -EFBIG;
        snprintf(err, errlen, "%s: larger than %d bytes", path, TG_TLS_FILE_MAX);
        goto out_close;
    }
    b = malloc((size_t)st.st_size + 1);
    if (!b) {
        rc = -ENOMEM;
        snprintf(err, errlen, "%s: out of memory", path);
        goto out_close;
    }
    while (n < (size_t)st.st_size) {
        ssize_t r = read(fd, b + n, (size_t)st.st_size - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = -errno;
            snprintf(err, errlen, "%s: read failed: %s", path, strerror(errno));
            goto out_free;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (n == 0) {
        rc = -EINVAL;
        snprintf(err, errlen, "%s: file is empty", path);
        goto out_free;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    goto out_close;
out_free:
    free(b);
out_close:
    close(fd);
    return rc;
}

/* ---- checks (OpenSSL, in trainguard-x509.so) ------------------------------------------- */

int tg_tls_check_pair(const char *cert_path, const char *cert_pem, size_t cert_len,
                      const char *key_path, const char *key_pem, size_t key_len, time_t now,
                      struct tg_tls_info *info, char *err, size_t errlen)
{
    const struct tg_x509_api *api = tg_x509(err, errlen);

    memset(info, 0, sizeof(*info));
    if (!api)
        return -ENOENT;
    return api->check_pair(cert_path, cert_pem, cert_len, key_path, key_pem, key_len, now, info,
                           err, errlen);
}

/* ---- GnuTLS snapshot --------------------------------------------------------------------- */

static void pair_free(struct tls_pair *p)
{
    if (!p)
        return;
    for (unsigned int i = 0; i < p->npcerts; i++)
        gnutls_pcert_deinit(&p->pcerts[i]);
    if (p->key)
        gnutls_privkey_deinit(p->key);
    free(p->cert_pem);
    free(p->key_pem);
    free(p);
}

/* Builds a pair from checked PEM bytes; takes ownership of both buffers (also on failure). */
static struct tls_pair *pair_new(char *cert_pem, size_t cert_len, char *key_pem, size_t key_len,
                                 long long not_after, char *err, size_t errlen)
{
    struct tls_pair *p = calloc(1, sizeof(*p));
    gnutls_datum_t d;
    int r;

    if (!p) {
        free(cert_pem);
        free(key_pem);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->cert_pem = cert_pem;
    p->cert_len = cert_len;
    p->key_pem = key_pem;
    p->key_len = key_len;
    p->not_after = not_after;
    p->npcerts = CHAIN_MAX;
    d.data = (unsigned char *)cert_pem;
    d.size = (unsigned int)cert_len;
    r = gnutls_pcert_list_import_x509_raw(p->pcerts, &p->npcerts, &d, GNUTLS_X509_FMT_PEM, 0);
    if (r < 0) {
        p->npcerts = 0;
        snprintf(err, errlen, "%s: GnuTLS cannot use the certificate chain: %s", cert_file,
                 gnutls_strerror(r));
        goto fail;
    }
    r = gnutls_privkey_init(&p->key);
    if (r >= 0) {
        d.data = (unsigned char *)key_pem;
        d.size = (unsigned int)key_len;
        r = gnutls_privkey_import_x509_raw(p->key, &d, GNUTLS_X509_FMT_PEM, NULL, 0);
    }
    if (r < 0) {
        snprintf(err, errlen, "%s: GnuTLS cannot use the private key: %s", key_file,
                 gnutls_strerror(r));
        goto fail;
    }
    return p;
fail:
    pair_free(p);
    return NULL;
}

/* Frees retired pairs whose grace period is over. Called with tls_lock held. */
static struct tls_pair *take_expired_locked(time_t now)
{
    struct tls_pair **pp = &retired, *dead = NULL;

    while (*pp) {
        struct tls_pair *p = *pp;
        if (now - p->retired_at >= grace_seconds) {
            *pp = p->next;
            p->next = dead;
            dead = p;
        } else {
            pp = &p->next;
        }
    }
    return dead;
}

static void free_list(struct tls_pair *p)
{
    while (p) {
        struct tls_pair *next = p->next;
        pair_free(p);
        p = next;
    }
}

/* ---- the check in a child process -------------------------------------------------------- */

/* The checker: this binary run again with TG_TLS_CHECK_COMMAND (posix_spawn, so nothing runs
 * between fork and exec in this multithreaded process: a lock another thread held at fork time,
 * such as glibc's tzset lock taken by every gmtime_r, cannot hang the check). Tests point it
 * elsewhere with tg_tls_set_checker; "" means this binary (checker_path). */
static char checker[PATH_MAX];
static bool checker_set;
static int check_timeout_ms = 10000;

#define REPLY_MAGIC 0x74676331u /* "tgc1" */

/* What the checker writes to its stdout: one struct, from the same build. */
struct check_reply {
    unsigned int magic;
    unsigned int size;
    int rc;
    int read_ok;                    /* both files were read (fingerprint is set) */
    unsigned long long fingerprint; /* of the bytes it read */
    struct tg_tls_info info;
    char err[512];
};

#define FNV_BASIS 14695981039346656037ULL

static unsigned long long fnv1a(const char *s, size_t n, unsigned long long h)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static bool write_all(int fd, const void *buf, size_t len)
{
    size_t done = 0;

    while (done < len) {
        ssize_t w = write(fd, (const char *)buf + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        done += (size_t)w;
    }
    return true;
}

int tg_tls_check_main(int argc, char **argv)
{
    struct check_reply rep;
    char *c = NULL, *k = NULL;
    size_t cl = 0, kl = 0;

    if (argc != 4) {
        fprintf(stderr, "usage: trainguard %s CERT_FILE KEY_FILE (internal)\n",
                TG_TLS_CHECK_COMMAND);
        return 2;
    }
    memset(&rep, 0, sizeof(rep));
    rep.magic = REPLY_MAGIC;
    rep.size = sizeof(rep);
    rep.rc = tg_tls_read_file(argv[2], &c, &cl, rep.err, sizeof(rep.err));
    if (rep.rc == 0)
        rep.rc = tg_tls_read_file(argv[3], &k, &kl, rep.err, sizeof(rep.err));
    if (rep.rc == 0) {
        rep.read_ok = 1;
        rep.fingerprint = fnv1a(k, kl, fnv1a(c, cl, FNV_BASIS));
        rep.rc = tg_tls_check_pair(argv[2], c, cl, argv[3], k, kl, time(NULL), &rep.info, rep.err,
                                   sizeof(rep.err));
    }
    free(c);
    free(k);
    return write_all(STDOUT_FILENO, &rep, sizeof(rep)) ? 0 : 1;
}

void tg_tls_set_checker(const char *path, int timeout_ms)
{
    checker_set = path != NULL;
    snprintf(checker, sizeof(checker), "%s", path ? path : "");
    check_timeout_ms = timeout_ms > 0 ? timeout_ms : 10000;
}

/* This binary's path, read once from /proc/self/exe (under valgrind that link names valgrind's
 * own tool, and readlink is what valgrind corrects); /proc/self/exe itself when unreadable. */
static const char *checker_path(void)
{
    if (!checker_set && !checker[0]) {
        ssize_t n = readlink("/proc/self/exe", checker, sizeof(checker));
        if (n <= 0 || (size_t)n >= sizeof(checker))
            snprintf(checker, sizeof(checker), "/proc/self/exe");
        else
            checker[n] = '\0';
    }
    return checker;
}

static bool stop_pending(void)
{
    sigset_t pending;

    return sigpending(&pending) == 0 &&
           (sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1);
}

/* Reads the reply from fd (non-blocking) until it is whole, the child closes its end, or the
 * deadline passes; in 200 ms slices, so that a SIGTERM or SIGINT arriving meanwhile (blocked
 * here, taken by the caller's sigtimedwait) is not kept waiting. 1 whole, 0 timed out, -EPIPE
 * closed early, -EINTR asked to stop, other -errno. */
static int read_reply(int fd, struct check_reply *rep)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    size_t got = 0;
    int left = check_timeout_ms;

    while (got < sizeof(*rep)) {
        int slice = left < 200 ? left : 200, r;
        if (left <= 0)
            return 0;
        if (stop_pending())
            return -EINTR;
        r = poll(&pfd, 1, slice);
        if (r < 0 && errno != EINTR)
            return -errno;
        if (r == 0)
            left -= slice;
        if (r <= 0)
            continue;
        ssize_t n = read(fd, (char *)rep + got, sizeof(*rep) - got);
        if (n > 0)
            got += (size_t)n;
        else if (n == 0)
            return -EPIPE;
        else if (errno != EINTR && errno != EAGAIN)
            return -errno;
    }
    return 1;
}

/* Starts the checker with stdout on out_w; 0 or a positive error number (posix_spawn style). */
static int spawn_checker(pid_t *pid, int out_w)
{
    char *const argv[] = {(char *)"trainguard", (char *)TG_TLS_CHECK_COMMAND, cert_file, key_file,
                          NULL};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, deflt;
    int r;

    sigemptyset(&none);
    sigemptyset(&deflt);
    sigaddset(&deflt, SIGPIPE);
    sigaddset(&deflt, SIGTERM);
    sigaddset(&deflt, SIGINT);
    sigaddset(&deflt, SIGHUP);
    if ((r = posix_spawn_file_actions_init(&fa)) != 0)
        return r;
    if ((r = posix_spawnattr_init(&attr)) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return r;
    }
    if (!(r = posix_spawn_file_actions_adddup2(&fa, out_w, STDOUT_FILENO)) &&
        !(r = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0)) &&
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
        /* whatever this process inherited without O_CLOEXEC stays out of the child */
        !(r = posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1)) &&
#endif
        !(r = posix_spawnattr_setsigmask(&attr, &none)) &&
        !(r = posix_spawnattr_setsigdefault(&attr, &deflt)) &&
        !(r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)))
        r = posix_spawn(pid, checker_path(), &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    return r;
}

/* Checks the serving files in a child process: this binary again, which loads
 * trainguard-x509.so (OpenSSL) itself, so the long-running server never maps libcrypto (3.7 MiB
 * of resident memory otherwise, /proc/PID/smaps under load), and a certificate that crashed
 * OpenSSL would take down the child only. The child reads the files again and returns the
 * fingerprint of what it read: a rotation landing between the two reads is caught. Failures of
 * the check itself (it cannot start, times out, crashes, answers garbage, cannot read the files,
 * or read other bytes) return -EAGAIN: nothing is known about the bytes the server holds, so the
 * next reload tries again. -EINTR when a SIGTERM or SIGINT came meanwhile. */
static int check_pair_isolated(unsigned long long fingerprint, struct tg_tls_info *info, char *err,
                               size_t errlen)
{
    struct check_reply rep;
    int out[2], status = 0, r;
    pid_t pid;

    memset(info, 0, sizeof(*info));
    memset(&rep, 0, sizeof(rep));
    if (pipe2(out, O_CLOEXEC | O_NONBLOCK) < 0) {
        snprintf(err, errlen, "%s: cannot start the certificate check: pipe: %s", cert_file,
                 strerror(errno));
        return -EAGAIN;
    }
    /* the child's end blocks as usual */
    r = fcntl(out[1], F_SETFL, 0) < 0 ? errno : spawn_checker(&pid, out[1]);
    close(out[1]);
    if (r != 0) {
        close(out[0]);
        snprintf(err, errlen, "%s: cannot start the certificate check (%s): %s", cert_file,
                 checker_path(), strerror(r));
        return -EAGAIN;
    }
    int got = read_reply(out[0], &rep);
    close(out[0]);
    /* Whatever it did, the child has nothing left to do: a lingering one must not hold us. */
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (got == -EINTR) {
        snprintf(err, errlen, "%s: certificate check abandoned: the server is stopping", cert_file);
        return -EINTR;
    }
    if (got == 0) {
        snprintf(err, errlen, "%s: the certificate check did not finish within %d ms", cert_file,
                 check_timeout_ms);
        return -EAGAIN;
    }
    if (got < 0) { /* closed early: how did it end? */
        if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
            snprintf(err, errlen, "%s: the certificate check crashed (signal %d)", cert_file,
                     WTERMSIG(status));
        else if (WIFEXITED(status) && WEXITSTATUS(status) == 127) /* exec failed */
            snprintf(err, errlen, "%s: cannot start the certificate check (%s): exit status 127",
                     cert_file, checker_path());
        else if (WIFEXITED(status))
            snprintf(err, errlen, "%s: the certificate check gave no answer (exit status %d)",
                     cert_file, WEXITSTATUS(status));
        else
            snprintf(err, errlen, "%s: the certificate check gave no answer (%s)", cert_file,
                     got == -EPIPE ? "killed" : strerror(-got));
        return -EAGAIN;
    }
    if (rep.magic != REPLY_MAGIC || rep.size != sizeof(rep)) {
        snprintf(err, errlen,
                 "%s: the certificate check answered in another format (%s replaced by another "
                 "build?)",
                 cert_file, checker_path());
        return -EAGAIN;
    }
    rep.err[sizeof(rep.err) - 1] = '\0';
    rep.info.subject[sizeof(rep.info.subject) - 1] = '\0';
    rep.info.sans[sizeof(rep.info.sans) - 1] = '\0';
    if (!rep.read_ok) {
        snprintf(err, errlen, "the certificate check could not read the files: %s", rep.err);
        return -EAGAIN;
    }
    if (rep.fingerprint != fingerprint) {
        snprintf(err, errlen, "%s or %s changed during the certificate check", cert_file, key_file);
        return -EAGAIN;
    }
    *info = rep.info;
    snprintf(err, errlen, "%s", rep.err);
    return rep.rc < 0 ? rep.rc : 0;
}

/* Reads and checks the files; on success returns a new pair (not yet published). */
static struct tls_pair *load_pair(struct tg_tls_info *info, unsigned long long *fingerprint,
                                  bool *unchanged, int *transient, char *err, size_t errlen)
{
    char *c = NULL, *k = NULL;
    size_t cl = 0, kl = 0;
    int rc;

    *unchanged = false;
    *transient = 0; /* or the -errno of a check that could not be done */
    *fingerprint = 0;
    rc = tg_tls_read_file(cert_file, &c, &cl, err, errlen);
    if (rc == 0)
        rc = tg_tls_read_file(key_file, &k, &kl, err, errlen);
    if (rc < 0) {
        *fingerprint = fnv1a(err, strlen(err), FNV_BASIS);
        goto fail;
    }
    *fingerprint = fnv1a(k, kl, fnv1a(c, cl, FNV_BASIS));
    pthread_mutex_lock(&tls_lock);
    *unchanged = current && current->cert_len == cl && current->key_len == kl &&
                 !memcmp(current->cert_pem, c, cl) && !memcmp(current->key_pem, k, kl);
    pthread_mutex_unlock(&tls_lock);
    if (*unchanged)
        goto fail;
    rc = check_pair_isolated(*fingerprint, info, err, errlen);
    if (rc < 0) {
        if (rc == -EAGAIN || rc == -EINTR)
            *transient = rc;
        goto fail;
    }
    return pair_new(c, cl, k, kl, info->not_after, err, errlen);
fail:
    free(c);
    free(k);
    return NULL;
}

int tg_tls_init(const char *cert_path, const char *key_path, struct tg_tls_info *info, char *err,
                size_t errlen)
{
    int rc;

    if (snprintf(cert_file, sizeof(cert_file), "%s", cert_path) >= (int)sizeof(cert_file) ||
        snprintf(key_file, sizeof(key_file), "%s", key_path) >= (int)sizeof(key_file)) {
        snprintf(err, errlen, "certificate or key path too long");
        return -ENAMETOOLONG;
    }
    tg_tls_shutdown();
    rc = tg_tls_reload(true, info, err, errlen);
    if (rc == -EAGAIN) /* a check that could not be done (a rotation racing the start): once more */
        rc = tg_tls_reload(true, info, err, errlen);
    return rc == 1 ? 0 : rc == -EINTR ? -EINTR : -EINVAL;
}

int tg_tls_reload(bool force, struct tg_tls_info *info, char *err, size_t errlen)
{
    unsigned long long fp;
    bool unchanged;
    int transient;
    struct tls_pair *p, *dead;
    time_t now = time(NULL);

    p = load_pair(info, &fp, &unchanged, &transient, err, errlen);
    pthread_mutex_lock(&tls_lock);
    dead = take_expired_locked(now);
    if (!p) {
        bool repeat = have_bad && fp == bad_fingerprint;
        if (transient != -EINTR) /* stopping tells nothing of the files */
            last_failed = !unchanged;
        if (transient) { /* nothing learnt about these bytes: report, and retry next time */
            pthread_mutex_unlock(&tls_lock);
            free_list(dead);
            return transient;
        }
        if (!unchanged) {
            have_bad = true;
            bad_fingerprint = fp;
        }
        pthread_mutex_unlock(&tls_lock);
        free_list(dead);
        if (unchanged || (repeat && !force))
            return 0;
        return -EINVAL;
    }
    if (current) {
        current->retired_at = now;
        current->next = retired;
        retired = current;
    }
    current = p;
    have_bad = false;
    last_failed = false;
    pthread_mutex_unlock(&tls_lock);
    free_list(dead);
    return 1;
}

long long tg_tls_not_after(void)
{
    long long t;

    pthread_mutex_lock(&tls_lock);
    t = current ? current->not_after : 0;
    pthread_mutex_unlock(&tls_lock);
    return t;
}

bool tg_tls_loaded(void)
{
    return tg_tls_not_after() != 0;
}

bool tg_tls_reload_ok(void)
{
    bool failed;

    pthread_mutex_lock(&tls_lock);
    failed = last_failed;
    pthread_mutex_unlock(&tls_lock);
    return !failed;
}

int tg_tls_cert_callback(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                         const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                         gnutls_pcert_st **pcert, unsigned int *pcert_length,
                         gnutls_privkey_t *privkey)
{
    struct tls_pair *p;

    (void)session;
    (void)req_ca_dn;
    (void)nreqs;
    (void)pk_algos;
    (void)pk_algos_length;
    pthread_mutex_lock(&tls_lock);
    p = current;
    pthread_mutex_unlock(&tls_lock);
    if (!p)
        return -1;
    *pcert = p->pcerts;
    *pcert_length = p->npcerts;
    *privkey = p->key;
    return 0;
}

int tg_tls_verify_client(gnutls_session_t session, char *err, size_t errlen)
{
    unsigned int status = 0;
    gnutls_datum_t out = {NULL, 0};
    int r;

    if (!session) {
        snprintf(err, errlen, "not a TLS connection");
        return -EACCES;
    }
    r = gnutls_certificate_verify_peers2(session, &status);
    if (r == GNUTLS_E_NO_CERTIFICATE_FOUND) {
        snprintf(err, errlen, "a client certificate is required");
        return -ENOENT;
    }
    if (r < 0) {
        snprintf(err, errlen, "client certificate cannot be verified: %s", gnutls_strerror(r));
        return -EACCES;
    }
    if (status != 0) {
        if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &out, 0) >= 0) {
            snprintf(err, errlen, "client certificate not trusted: %s", (const char *)out.data);
            gnutls_free(out.data);
        } else {
            snprintf(err, errlen, "client certificate not trusted (status 0x%x)", status);
        }
        return -EACCES;
    }
    return 0;
}

void tg_tls_shutdown(void)
{
    struct tls_pair *cur, *old;

    pthread_mutex_lock(&tls_lock);
    cur = current;
    old = retired;
    current = NULL;
    retired = NULL;
    have_bad = false;
    last_failed = false;
    pthread_mutex_unlock(&tls_lock);
    pair_free(cur);
    free_list(old);
}

void tg_tls_set_grace(int seconds)
{
    pthread_mutex_lock(&tls_lock);
    grace_seconds = seconds < 0 ? 0 : seconds;
    pthread_mutex_unlock(&tls_lock);
}
