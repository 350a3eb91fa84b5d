/* log.c -- JSON log lines on stderr (one per event) and the admission decision line, buffered
 * per thread on the request path. */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "tg/arena.h"
#include "tg/jsonw.h"
#include "tg/log.h"

static _Atomic int log_level = TG_LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

int tg_log_level_parse(const char *s, enum tg_log_level *out)
{
    if (!s)
        return -EINVAL;
    for (int i = 0; i < 4; i++) {
        if (!strcasecmp(s, level_names[i])) {
            *out = (enum tg_log_level)i;
            return 0;
        }
    }
    if (!strcasecmp(s, "warning")) {
        *out = TG_LOG_WARN;
        return 0;
    }
    return -EINVAL;
}

const char *tg_log_level_name(enum tg_log_level l)
{
    return (l >= TG_LOG_DEBUG && l <= TG_LOG_ERROR) ? level_names[l] : "info";
}

void tg_log_set_level(enum tg_log_level l)
{
    atomic_store(&log_level, (int)l);
}

bool tg_log_enabled(enum tg_log_level l)
{
    return (int)l >= atomic_load(&log_level);
}

/* RFC 3339 UTC with milliseconds: "2026-01-02T03:04:05.678Z". */
static void format_ts(char *buf, size_t len)
{
    struct timespec ts;
    struct tm tm;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03dZ", (int)(ts.tv_nsec / 1000000) % 1000);
}

/* Writes obj as one line; consumes the reference. */
static int emit(json_t *obj)
{
    char *s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));

    json_decref(obj);
    if (!s)
        return -ENOMEM;
    size_t n = strlen(s);
    flockfile(stderr);
    fwrite_unlocked(s, 1, n, stderr);
    fputc_unlocked('\n', stderr);
    fflush_unlocked(stderr);
    funlockfile(stderr);
    tg_json_free(s);
    return 0;
}

static json_t *base_line(enum tg_log_level l, const char *msg)
{
    char ts[64];
    json_t *o = json_object();

    if (!o)
        return NULL;
    format_ts(ts, sizeof(ts));
    json_object_set_new(o, "ts", json_string(ts));
    json_object_set_new(o, "level", json_string(tg_log_level_name(l)));
    /* json_string rejects invalid UTF-8; a log line must never vanish for that. */
    json_t *m = json_string(msg);
    json_object_set_new(o, "msg", m ? m : json_string("(message not valid UTF-8)"));
    return o;
}

void tg_log(enum tg_log_level l, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    if (!tg_log_enabled(l))
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    json_t *o = base_line(l, msg);
    if (o) {
        /* Buffered decision lines first, so that the log keeps its order around an event. */
        tg_log_flush();
        emit(o);
    }
}

/* ---- the decision line ------------------------------------------------------------------ */

static _Atomic int decisions_setting = TG_LOG_DECISIONS_ALL;

int tg_log_decisions_parse(const char *s, enum tg_log_decisions *out)
{
    static const char *const names[] = {"all", "findings", "none"};

    for (int i = 0; s && i < 3; i++) {
        if (!strcmp(s, names[i])) {
            *out = (enum tg_log_decisions)i;
            return 0;
        }
    }
    return -EINVAL;
}

void tg_log_set_decisions(enum tg_log_decisions v)
{
    atomic_store(&decisions_setting, (int)v);
}

bool tg_log_decision_wanted(const struct tg_decision *d)
{
    int v = atomic_load(&decisions_setting);

    if (v == TG_LOG_DECISIONS_NONE || !tg_log_enabled(TG_LOG_INFO))
        return false;
    if (v == TG_LOG_DECISIONS_ALL)
        return true;
    /* findings: what an operator acts on; a plain allow with nothing found is left out. */
    return d->nrules > 0 || d->nexempted > 0 || d->nratcheted > 0 ||
           (d->verdict && strcmp(d->verdict, "allowed") != 0);
}

/* Is s (NUL-terminated) valid UTF-8 as jansson's json_string requires (no overlong forms, no
 * surrogates, nothing past U+10FFFF)? */
static bool utf8_valid(const unsigned char *s)
{
    while (*s) {
        unsigned char c = *s++;
        int n;
        unsigned int cp;
        if (c < 0x80)
            continue;
        if (c >= 0xC2 && c <= 0xDF)
            n = 1, cp = c & 0x1F;
        else if (c >= 0xE0 && c <= 0xEF)
            n = 2, cp = c & 0x0F;
        else if (c >= 0xF0 && c <= 0xF4)
            n = 3, cp = c & 0x07;
        else
            return false;
        for (int i = 0; i < n; i++, s++) {
            if ((*s & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (*s & 0x3F);
        }
        if ((n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return false;
    }
    return true;
}

/* Worst case of one string in the line: every byte escaped as \u00XX, plus quotes and comma. */
static size_t str_bound(const char *s)
{
    return (s ? strlen(s) * 6 : 0) + 4;
}

/* Writes s as a JSON string the way json_dumps does (NULL as "", invalid UTF-8 as "?", the
 * same escapes as tg_buf_json_string); p has room for str_bound(s). Returns the end. */
static char *put_str(char *p, const char *s)
{
    if (!s)
        s = "";
    else if (!utf8_valid((const unsigned char *)s))
        s = "?";
    *p++ = '"';
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\') {
            *p++ = (char)c;
            continue;
        }
        p += tg_json_escape_byte(c, p);
    }
    *p++ = '"';
    return p;
}

static char *put_lit(char *p, const char *lit)
{
    size_t n = strlen(lit);
    memcpy(p, lit, n);
    return p + n;
}

#define TG_DECISION_FIXED 512 /* field names, ts, booleans and the latency: well under this */

/* v with 6 significant digits as jansson writes a real (JSON_REAL_PRECISION(6)): "%.6g", then
 * ".0" when that shows neither a point nor an exponent, and an exponent without '+' and without
 * leading zeros ("1e-6", "1.23457e7"). */
static size_t real_text_printf(double v, char num[40])
{
    char *e;
    int n = snprintf(num, 40, "%.6g", v);

    if (n <= 0 || n >= 40 - 2)
        return (size_t)snprintf(num, 40, "0.0");
    e = strchr(num, 'e');
    if (!e) {
        if (!strchr(num, '.'))
            memcpy(num + n, ".0", 3);
        return strlen(num);
    }
    char *q = e + 1, *digits;
    if (*q == '+')
        memmove(q, q + 1, strlen(q)); /* the exponent's '+' goes */
    else if (*q == '-')
        q++;
    digits = q;
    while (*digits == '0' && digits[1])
        digits++;
    memmove(q, digits, strlen(digits) + 1);
    return strlen(num);
}

/* The same text without printf for the values a latency takes (1e-4 <= v < 1e6, where "%.6g"
 * writes no exponent): v scaled to six integer digits, rounded, and written with its point.
 * Scaling costs at most an ulp (2.3e-10 at 1e6), so a fraction that far from one half rounds as
 * printf rounds the exact value; one closer, or a rounding that carries into a seventh digit,
 * goes to printf. */
size_t tg_log_real_text(double v, char num[40])
{
    static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
    static const double lower[] = {1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3, 1e4, 1e5};
    if (!(v >= 1e-4 && v < 1e6))
        return real_text_printf(v, num);
    int e = 5; /* v's decimal exponent: lower[e + 4] <= v */
    while (v < lower[e + 4])
        e--;
    double scaled = v * pow10[5 - e];
    double whole = (double)(long long)scaled;
    double frac = scaled - whole;
    if (frac > 0.5 - 1e-9 && frac < 0.5 + 1e-9)
        return real_text_printf(v, num);
    long long m = (long long)whole + (frac > 0.5);
    if (m < 100000 || m > 999999)
        return real_text_printf(v, num);
    char digits[6];
    for (int i = 5; i >= 0; i--, m /= 10)
        digits[i] = (char)('0' + m % 10);
    int nd = 6; /* significant digits left once trailing zeros go */
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    char *p = num;
    if (e >= 0) {
        memcpy(p, digits, (size_t)e + 1);
        p += e + 1;
        *p++ = '.';
        if (nd > e + 1) {
            memcpy(p, digits + e + 1, (size_t)(nd - e - 1));
            p += nd - e - 1;
        } else {
            *p++ = '0'; /* "%.6g" shows no point; jansson then adds ".0" */
        }
    } else {
        *p++ = '0';
        *p++ = '.';
        for (int z = -1; z > e; z--)
            *p++ = '0';
        memcpy(p, digits, (size_t)nd);
        p += nd;
    }
    *p = '\0';
    return (size_t)(p - num);
}

static char *put_real(char *p, double v)
{
    char num[40];
    size_t n = tg_log_real_text(v, num);
    memcpy(p, num, n);
    return p + n;
}

/* An upper bound on the length of d's line, newline included. */
static size_t decision_bound(const struct tg_decision *d)
{
    size_t n = TG_DECISION_FIXED;
    const char *const strs[] = {d->endpoint,  d->uid,  d->kind, d->namespace, d->name,
                                d->operation, d->user, d->mode, d->verdict};

    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        n += str_bound(strs[i]);
    for (size_t i = 0; i < d->nrules; i++)
        n += str_bound(d->rules[i]);
    for (size_t i = 0; i < d->nexempted; i++)
        n += str_bound(d->exempted[i]);
    return n;
}

/* "2026-01-02T03:04:05" of the current second, formatted once per second per thread. */
static _Thread_local struct {
    time_t sec;
    char text[32];
} ts_cache = {-1, ""};

/* The line of json_dumps(JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) on the
 * object the older code built, field for field, plus '\n', stamped ts (CLOCK_REALTIME); out
 * has decision_bound(d) bytes. Returns the length. */
static size_t format_decision(char *out, const struct tg_decision *d, struct timespec ts)
{
    char *p = out;
    char num[24];

    if (ts.tv_sec != ts_cache.sec) {
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        strftime(ts_cache.text, sizeof(ts_cache.text), "%Y-%m-%dT%H:%M:%S", &tm);
        ts_cache.sec = ts.tv_sec;
    }
    p = put_lit(p, "{\"ts\":\"");
    p = put_lit(p, ts_cache.text);
    int ms = (int)(ts.tv_nsec / 1000000) % 1000;
    *p++ = '.';
    *p++ = (char)('0' + ms / 100);
    *p++ = (char)('0' + ms / 10 % 10);
    *p++ = (char)('0' + ms % 10);
    p = put_lit(p, "Z\",\"level\":\"info\",\"msg\":\"admission\",\"endpoint\":");
    p = put_str(p, d->endpoint);
    p = put_str(put_lit(p, ",\"uid\":"), d->uid);
    p = put_str(put_lit(p, ",\"kind\":"), d->kind);
    p = put_str(put_lit(p, ",\"namespace\":"), d->namespace);
    p = put_str(put_lit(p, ",\"name\":"), d->name);
    p = put_str(put_lit(p, ",\"operation\":"), d->operation);
    p = put_str(put_lit(p, ",\"user\":"), d->user);
    p = put_lit(p, d->dry_run ? ",\"dryRun\":true" : ",\"dryRun\":false");
    p = put_str(put_lit(p, ",\"mode\":"), d->mode);
    p = put_str(put_lit(p, ",\"verdict\":"), d->verdict);
    p = put_lit(p, ",\"rules\":[");
    for (size_t i = 0; i < d->nrules; i++)
        p = put_str(i ? put_lit(p, ",") : p, d->rules[i]);
    *p++ = ']';
    if (d->nexempted) {
        p = put_lit(p, ",\"exempted\":[");
        for (size_t i = 0; i < d->nexempted; i++)
            p = put_str(i ? put_lit(p, ",") : p, d->exempted[i]);
        *p++ = ']';
    }
    if (d->nratcheted) {
        snprintf(num, sizeof(num), "%zu", d->nratcheted);
        p = put_lit(put_lit(p, ",\"ratcheted\":"), num);
    }
    p = put_lit(p, d->patched ? ",\"patched\":true" : ",\"patched\":false");
    p = put_real(put_lit(p, ",\"latency_ms\":"), d->latency_ms);
    *p++ = '}';
    *p++ = '\n';
    return (size_t)(p - out);
}

char *tg_log_decision_format(const struct tg_decision *d)
{
    char *s = malloc(decision_bound(d));
    struct timespec ts;
    size_t n;

    if (!s)
        return NULL;
    clock_gettime(CLOCK_REALTIME, &ts);
    n = format_decision(s, d, ts);
    s[n - 1] = '\0'; /* no trailing newline */
    return s;
}

/* ---- buffered decision lines --------------------------------------------------------------- */

/* Each thread that logs decisions formats them into its own buffer; a flusher thread writes
 * every buffer to stderr, one write(2) each, every TG_LOG_FLUSH_MS while there are lines. So a
 * request costs no syscall, no wake-up and no lock anyone else holds, and a busy server makes
 * one write per thread per period, not one per request. Only the first line after a quiet
 * period wakes the flusher (it waits while it finds nothing); a worker writes its own buffer
 * when its oldest line has waited twice the period (the flusher is starved). */
#define TG_LOG_FLUSH_MS 4
/* At 20,000 decisions a second on one thread (about 400 bytes each), 4 ms of lines are 32 KiB:
 * twice that means the worker itself rarely has to write when the flusher is late. */
#define TG_LOG_BUF_SIZE ((size_t)64 * 1024)

struct log_buf {
    pthread_mutex_t mu;
    size_t len;
    long long first_ms; /* CLOCK_REALTIME of the oldest line in data, when len > 0 */
    struct log_buf *next;
    char data[TG_LOG_BUF_SIZE];
};

static struct {
    pthread_mutex_t mu; /* the list, the flusher's wait */
    pthread_cond_t cv;
    pthread_t thread;
    _Atomic(struct log_buf *) head;
    atomic_bool active;
    atomic_bool armed; /* the flusher runs every period (else it waits for a signal) */
    bool stopping;
    atomic_uint generation; /* bumped by stop: threads then take a new buffer */
    bool atexit_done;
    struct sigaction old[NSIG];
} lb = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static _Thread_local struct log_buf *my_buf;
static _Thread_local unsigned int my_generation;

/* write(2) all of it (stderr may be a pipe that takes it in pieces); errors are dropped: there
 * is nowhere left to report them. */
static void write_all(const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(STDERR_FILENO, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* Writes b's lines; the caller holds b->mu. */
static void buf_drain(struct log_buf *b)
{
    write_all(b->data, b->len);
    b->len = 0;
}

void tg_log_flush(void)
{
    for (struct log_buf *b = atomic_load(&lb.head); b; b = b->next) {
        pthread_mutex_lock(&b->mu);
        buf_drain(b);
        pthread_mutex_unlock(&b->mu);
    }
}

static struct log_buf *thread_buf(void)
{
    if (my_buf && my_generation == atomic_load(&lb.generation))
        return my_buf;
    struct log_buf *b = malloc(sizeof(*b));
    if (!b)
        return NULL;
    pthread_mutex_init(&b->mu, NULL);
    b->len = 0;
    pthread_mutex_lock(&lb.mu);
    b->next = atomic_load(&lb.head);
    atomic_store(&lb.head, b);
    my_generation = atomic_load(&lb.generation);
    pthread_mutex_unlock(&lb.mu);
    my_buf = b;
    return b;
}

/* Writes every buffer; true when any had lines. */
static bool flush_some(void)
{
    bool any = false;

    for (struct log_buf *b = atomic_load(&lb.head); b; b = b->next) {
        pthread_mutex_lock(&b->mu);
        any |= b->len > 0;
        buf_drain(b);
        pthread_mutex_unlock(&b->mu);
    }
    return any;
}

static void *flusher(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lb.mu);
    while (!lb.stopping) {
        if (!atomic_load(&lb.armed)) {
            pthread_cond_wait(&lb.cv, &lb.mu);
            continue;
        }
        pthread_mutex_unlock(&lb.mu);
        nanosleep(&(struct timespec){0, TG_LOG_FLUSH_MS * 1000 * 1000}, NULL);
        /* Disarmed before the buffers are read: a worker that adds a line after its buffer was
         * read sees the flusher disarmed and signals it. */
        atomic_store(&lb.armed, false);
        if (flush_some())
            atomic_store(&lb.armed, true);
        pthread_mutex_lock(&lb.mu);
    }
    pthread_mutex_unlock(&lb.mu);
    return NULL;
}

/* A crash (or abort) writes what is buffered, without locks (best effort: the crashing thread
 * may hold one), then the signal goes to what was installed before (the default action, or a
 * sanitizer's report): returning re-runs a faulting instruction with it; a signal sent by
 * kill(2) or raise(3) is raised again, delivered as soon as this handler returns. */
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    for (struct log_buf *b = atomic_load(&lb.head); b; b = b->next) {
        size_t n = b->len;
        write_all(b->data, n < TG_LOG_BUF_SIZE ? n : TG_LOG_BUF_SIZE);
        b->len = 0;
    }
    sigaction(sig, &lb.old[sig], NULL);
    if (si->si_code <= 0) /* SI_USER, SI_TKILL, SI_QUEUE: not a fault */
        raise(sig);
}

int tg_log_buffering_start(void)
{
    struct sigaction sa;

    if (atomic_load(&lb.active))
        return 0;
    lb.stopping = false;
    atomic_store(&lb.armed, false);
    if (pthread_create(&lb.thread, NULL, flusher, NULL) != 0)
        return -EAGAIN;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
        sigaction(fatal_signals[i], &sa, &lb.old[fatal_signals[i]]);
    if (!lb.atexit_done)
        lb.atexit_done = atexit(tg_log_flush) == 0;
    atomic_store(&lb.active, true);
    return 0;
}

void tg_log_buffering_stop(void)
{
    struct log_buf *b;

    if (!atomic_load(&lb.active))
        return;
    atomic_store(&lb.active, false);
    pthread_mutex_lock(&lb.mu);
    lb.stopping = true;
    pthread_cond_signal(&lb.cv);
    pthread_mutex_unlock(&lb.mu);
    pthread_join(lb.thread, NULL);
    for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
        sigaction(fatal_signals[i], &lb.old[fatal_signals[i]], NULL);
    tg_log_flush();
    /* No thread logs decisions any more (the daemons have stopped): free the buffers. */
    pthread_mutex_lock(&lb.mu);
    b = atomic_exchange(&lb.head, NULL);
    atomic_fetch_add(&lb.generation, 1);
    pthread_mutex_unlock(&lb.mu);
    while (b) {
        struct log_buf *next = b->next;
        pthread_mutex_destroy(&b->mu);
        free(b);
        b = next;
    }
}

/* Unbuffered: the line as one write under the stdio lock (the CLI, tests, huge lines). */
static int write_direct(const struct tg_decision *d)
{
    char *s = malloc(decision_bound(d));

    if (!s)
        return -ENOMEM;
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    size_t n = format_decision(s, d, ts);
    flockfile(stderr);
    fwrite_unlocked(s, 1, n, stderr);
    fflush_unlocked(stderr);
    funlockfile(stderr);
    free(s);
    return 0;
}

int tg_log_decision(const struct tg_decision *d)
{
    struct timespec ts;
    struct log_buf *b;
    long long now_ms;
    size_t need;

    if (!tg_log_decision_wanted(d))
        return 0;
    need = decision_bound(d);
    b = atomic_load(&lb.active) && need <= TG_LOG_BUF_SIZE ? thread_buf() : NULL;
    if (!b)
        return write_direct(d);
    clock_gettime(CLOCK_REALTIME, &ts);
    now_ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    pthread_mutex_lock(&b->mu);
    if (b->len + need > TG_LOG_BUF_SIZE)
        buf_drain(b); /* the flusher is behind: this thread writes its own lines */
    if (!b->len)
        b->first_ms = now_ms;
    b->len += format_decision(b->data + b->len, d, ts);
    if (now_ms - b->first_ms >= 2 * TG_LOG_FLUSH_MS)
        buf_drain(b);
    pthread_mutex_unlock(&b->mu);
    if (!atomic_load_explicit(&lb.armed, memory_order_relaxed) &&
        !atomic_exchange(&lb.armed, true)) {
        pthread_mutex_lock(&lb.mu);
        pthread_cond_signal(&lb.cv);
        pthread_mutex_unlock(&lb.mu);
    }
    return 0;
}
