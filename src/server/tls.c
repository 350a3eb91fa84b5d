/* tls.c -- serving certificate: OpenSSL checks (in a child process), a GnuTLS snapshot swapped on
 * reload, and client certificate verification for --client-ca-file. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
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

static unsigned long long fnv1a(const char *s, size_t n, unsigned long long h)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
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

/* What a checking child sends back through its pipe. */
struct check_reply {
    int rc;
    struct tg_tls_info info;
    char err[512];
};

static bool read_all(int fd, void *buf, size_t len)
{
    size_t got = 0;

    while (got < len) {
        ssize_t r = read(fd, (char *)buf + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        got += (size_t)r;
    }
    return true;
}

/* A check that has not answered by then is killed (OpenSSL on a few KiB takes milliseconds). */
#define CHECK_TIMEOUT_MS 30000

/* tg_tls_check_pair on the serving files, run in a short-lived child process: trainguard-x509.so
 * and libcrypto are then loaded and paged in by the child only, never by the long-running server
 * (about 3.8 MiB of resident memory otherwise, /proc/PID/smaps under load), and a certificate
 * that crashed OpenSSL would take down the child, not the server. The parent never calls OpenSSL,
 * so no OpenSSL lock can be held at fork time, and glibc keeps malloc usable in the child. Only
 * when no child can be made (pipe or fork fails) does the check run in this process. */
static int check_pair_isolated(const char *c, size_t cl, const char *k, size_t kl,
                               struct tg_tls_info *info, char *err, size_t errlen)
{
    struct check_reply rep;
    struct pollfd pfd;
    int fds[2], status = 0, ready;
    pid_t pid;
    bool ok = false;

    if (pipe2(fds, O_CLOEXEC) < 0)
        goto in_process;
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        goto in_process;
    }
    if (pid == 0) {
        close(fds[0]);
        memset(&rep, 0, sizeof(rep));
        rep.rc = tg_tls_check_pair(cert_file, c, cl, key_file, k, kl, time(NULL), &rep.info,
                                   rep.err, sizeof(rep.err));
        _exit(write(fds[1], &rep, sizeof(rep)) == (ssize_t)sizeof(rep) ? 0 : 1);
    }
    close(fds[1]);
    pfd.fd = fds[0];
    pfd.events = POLLIN;
    do
        ready = poll(&pfd, 1, CHECK_TIMEOUT_MS);
    while (ready < 0 && errno == EINTR);
    if (ready > 0)
        ok = read_all(fds[0], &rep, sizeof(rep));
    else
        kill(pid, SIGKILL);
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!ok) {
        memset(info, 0, sizeof(*info));
        if (ready <= 0)
            snprintf(err, errlen, "%s: the certificate check did not finish within %d s", cert_file,
                     CHECK_TIMEOUT_MS / 1000);
        else if (WIFSIGNALED(status))
            snprintf(err, errlen, "%s: the certificate check crashed (signal %d)", cert_file,
                     WTERMSIG(status));
        else
            snprintf(err, errlen, "%s: the certificate check failed (exit status %d)", cert_file,
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return -EIO;
    }
    *info = rep.info;
    snprintf(err, errlen, "%s", rep.err);
    return rep.rc;
in_process:
    return tg_tls_check_pair(cert_file, c, cl, key_file, k, kl, time(NULL), info, err, errlen);
}

/* Reads and checks the files; on success returns a new pair (not yet published). */
static struct tls_pair *load_pair(struct tg_tls_info *info, unsigned long long *fingerprint,
                                  bool *unchanged, char *err, size_t errlen)
{
    char *c = NULL, *k = NULL;
    size_t cl = 0, kl = 0;
    int rc;

    *unchanged = false;
    *fingerprint = 0;
    rc = tg_tls_read_file(cert_file, &c, &cl, err, errlen);
    if (rc == 0)
        rc = tg_tls_read_file(key_file, &k, &kl, err, errlen);
    if (rc < 0) {
        *fingerprint = fnv1a(err, strlen(err), 14695981039346656037ULL);
        goto fail;
    }
    *fingerprint = fnv1a(k, kl, fnv1a(c, cl, 14695981039346656037ULL));
    pthread_mutex_lock(&tls_lock);
    *unchanged = current && current->cert_len == cl && current->key_len == kl &&
                 !memcmp(current->cert_pem, c, cl) && !memcmp(current->key_pem, k, kl);
    pthread_mutex_unlock(&tls_lock);
    if (*unchanged)
        goto fail;
    rc = check_pair_isolated(c, cl, k, kl, info, err, errlen);
    if (rc < 0)
        goto fail;
    return pair_new(c, cl, k, kl, info->not_after, err, errlen);
fail:
    free(c);
    free(k);
    return NULL;
}

int tg_tls_init(const char *cert_path, const char *key_path, struct tg_tls_info *info, char *err,
                size_t errlen)
{
    if (snprintf(cert_file, sizeof(cert_file), "%s", cert_path) >= (int)sizeof(cert_file) ||
        snprintf(key_file, sizeof(key_file), "%s", key_path) >= (int)sizeof(key_file)) {
        snprintf(err, errlen, "certificate or key path too long");
        return -ENAMETOOLONG;
    }
    tg_tls_shutdown();
    return tg_tls_reload(true, info, err, errlen) == 1 ? 0 : -EINVAL;
}

int tg_tls_reload(bool force, struct tg_tls_info *info, char *err, size_t errlen)
{
    unsigned long long fp;
    bool unchanged;
    struct tls_pair *p, *dead;
    time_t now = time(NULL);

    p = load_pair(info, &fp, &unchanged, err, errlen);
    pthread_mutex_lock(&tls_lock);
    dead = take_expired_locked(now);
    if (!p) {
        bool repeat = have_bad && fp == bad_fingerprint;
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
