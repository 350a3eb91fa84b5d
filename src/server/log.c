/* log.c -- JSON log lines on stderr (one per event) and the admission decision line. */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "tg/arena.h"
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
    if (o)
        emit(o);
}

static json_t *str_or_empty(const char *s)
{
    json_t *j = json_string(s ? s : "");
    return j ? j : json_string("?");
}

static json_t *decision_json(const struct tg_decision *d)
{
    json_t *o = base_line(TG_LOG_INFO, "admission");
    json_t *rules = json_array();

    if (!o || !rules) {
        json_decref(o);
        json_decref(rules);
        return NULL;
    }
    json_object_set_new(o, "endpoint", str_or_empty(d->endpoint));
    json_object_set_new(o, "uid", str_or_empty(d->uid));
    json_object_set_new(o, "kind", str_or_empty(d->kind));
    json_object_set_new(o, "namespace", str_or_empty(d->namespace));
    json_object_set_new(o, "name", str_or_empty(d->name));
    json_object_set_new(o, "operation", str_or_empty(d->operation));
    json_object_set_new(o, "user", str_or_empty(d->user));
    json_object_set_new(o, "dryRun", json_boolean(d->dry_run));
    json_object_set_new(o, "mode", str_or_empty(d->mode));
    json_object_set_new(o, "verdict", str_or_empty(d->verdict));
    for (size_t i = 0; i < d->nrules; i++)
        json_array_append_new(rules, str_or_empty(d->rules[i]));
    json_object_set_new(o, "rules", rules);
    if (d->nexempted) {
        json_t *ex = json_array();
        for (size_t i = 0; ex && i < d->nexempted; i++)
            json_array_append_new(ex, str_or_empty(d->exempted[i]));
        json_object_set_new(o, "exempted", ex ? ex : json_null());
    }
    if (d->nratcheted)
        json_object_set_new(o, "ratcheted", json_integer((json_int_t)d->nratcheted));
    json_object_set_new(o, "patched", json_boolean(d->patched));
    /* Printed with 6 significant digits (JSON_REAL_PRECISION below): short and plenty. */
    json_object_set_new(o, "latency_ms", json_real(d->latency_ms));
    return o;
}

int tg_log_decision(const struct tg_decision *d)
{
    if (!tg_log_enabled(TG_LOG_INFO))
        return 0;
    json_t *o = decision_json(d);
    return o ? emit(o) : -ENOMEM;
}

char *tg_log_decision_format(const struct tg_decision *d)
{
    json_t *o = decision_json(d);
    char *s;

    if (!o)
        return NULL;
    s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    json_decref(o);
    /* The caller frees with free(): hand it a malloc'd copy (json_dumps may use the arena). */
    char *copy = s ? strdup(s) : NULL;
    tg_json_free(s);
    return copy;
}
