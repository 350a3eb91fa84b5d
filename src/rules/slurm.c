/* slurm.c -- slurm.state-not-persistent on a slurm-operator Controller (SPEC 11 "Node pools and
 * the Slurm controller"). slurmctld keeps the state of running and queued jobs, nodes and
 * partitions in StateSaveLocation, which the operator sets to /var/spool/slurmctld/<cluster> and
 * mounts there from the `statesave` volume: a PVC (spec.persistence, or its existingClaim), or an
 * emptyDir when persistence is off. extraConf is appended after the operator's lines, so its last
 * StateSaveLocation wins. An external Controller runs no slurmctld and gets neither line.
 * Facts and sources: docs/references-slurm-operator.md. Judged on CREATE (registry.c). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tg/registry.h"
#include "tg/workload.h"

#define SPOOL_DIR "/var/spool/slurmctld"
#define VALUE_MAX 256

/* ---- reading extraConf as slurm.conf (SchedMD/slurm src/common/parse_config.c) --------------- */

/* Cuts a physical line at its first '#' that follows an even number of backslashes
 * (_strip_comments). */
static void strip_comment(char *line)
{
    size_t bs = 0;
    for (char *p = line; *p; p++) {
        if (*p == '#' && bs % 2 == 0) {
            *p = '\0';
            return;
        }
        bs = *p == '\\' ? bs + 1 : 0;
    }
}

/* A line ending (before trailing spaces) in an odd number of backslashes continues on the next
 * one: the last backslash and what follows it are cut (_strip_continuation). */
static bool strip_continuation(char *line)
{
    size_t n = strlen(line), bs = 0;
    char *p = line + n;
    while (p > line && isspace((unsigned char)p[-1]))
        p--;
    while (p > line && p[-1] == '\\') {
        p--;
        bs++;
    }
    if (bs % 2 == 0)
        return false;
    line[(size_t)(p - line) + bs - 1] = '\0';
    return true;
}

/* Drops each escaping backslash: "\x" -> "x" (_strip_escapes). */
static void strip_escapes(char *line)
{
    char *out = line;
    for (char *p = line; *p; p++) {
        if (*p == '\\' && p[1])
            p++;
        *out++ = *p;
    }
    *out = '\0';
}

/* The value of a `StateSaveLocation = value` line (keyvalue_pattern: a case-insensitive key of
 * [[:alnum:]_.], an optional operator before '=', then a quoted value or one without spaces). */
static bool state_save_value(const char *line, char *buf, size_t len)
{
    static const char key[] = "StateSaveLocation";
    const char *p = line, *v;
    while (isspace((unsigned char)*p))
        p++;
    const char *k = p;
    while (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
        p++;
    if ((size_t)(p - k) != sizeof(key) - 1 || strncasecmp(k, key, sizeof(key) - 1))
        return false;
    while (isspace((unsigned char)*p))
        p++;
    if (*p && strchr("-*+/", *p) && p[1] == '=')
        p++;
    if (*p++ != '=')
        return false;
    while (isspace((unsigned char)*p))
        p++;
    const char *close = *p == '"' ? strchr(p + 1, '"') : NULL;
    if (close && (!close[1] || isspace((unsigned char)close[1]))) {
        snprintf(buf, len, "%.*s", (int)(close - p - 1), p + 1);
        return true;
    }
    for (v = p; *v && !isspace((unsigned char)*v); v++)
        ;
    if (v == p)
        return false;
    snprintf(buf, len, "%.*s", (int)(v - p), p);
    return true;
}

/* The last StateSaveLocation that conf sets, into buf. 1 when set, 0 when not, -ENOMEM. */
static int last_state_save(const char *conf, char *buf, size_t len)
{
    size_t cap = strlen(conf) + 1, at = 0;
    char *logical = malloc(cap);
    int found = 0;
    if (!logical)
        return -ENOMEM;
    for (const char *p = conf; *p || at;) {
        size_t n = strcspn(p, "\n");
        memcpy(logical + at, p, n);
        logical[at + n] = '\0';
        p += n + (p[n] == '\n');
        strip_comment(logical + at);
        if (strip_continuation(logical + at) && *p) {
            at = strlen(logical);
            continue;
        }
        at = 0;
        strip_escapes(logical);
        if (state_save_value(logical, buf, len))
            found = 1;
    }
    free(logical);
    return found;
}

/* ---- where the statesave volume is ---------------------------------------------------------- */

/* path made absolute-canonical in buf ("//a/./b/../c/" -> "/a/c"); false for a relative path. */
static bool canonical(const char *path, char *buf, size_t len)
{
    size_t at = 0;
    if (path[0] != '/' || len < 2)
        return false;
    buf[0] = '\0';
    for (const char *p = path; *p;) {
        while (*p == '/')
            p++;
        size_t n = strcspn(p, "/");
        if (n == 0 || (n == 1 && p[0] == '.')) {
            p += n;
            continue;
        }
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            while (at > 0 && buf[--at] != '/')
                ;
            buf[at] = '\0';
        } else if (at + n + 2 <= len) {
            buf[at++] = '/';
            memcpy(buf + at, p, n);
            at += n;
            buf[at] = '\0';
        }
        p += n;
    }
    if (at == 0)
        snprintf(buf, len, "/");
    return true;
}

/* Whether path is the statesave mount /var/spool/slurmctld/<cluster> or below it. cluster NULL:
 * the namespace is unknown (a manifest without one), so any "<namespace>_<name>" directory is the
 * operator's (api/v1beta1/controller_keys.go ClusterName). */
static bool on_volume(const char *path, const char *cluster, const char *name)
{
    char canon[VALUE_MAX];
    const char *dir = SPOOL_DIR "/";
    if (!canonical(path, canon, sizeof(canon)) || strncmp(canon, dir, strlen(dir)))
        return false;
    const char *seg = canon + strlen(dir);
    size_t n = strcspn(seg, "/");
    if (cluster)
        return n == strlen(cluster) && !strncmp(seg, cluster, n);
    size_t m = strlen(name);
    return n > m + 1 && seg[n - m - 1] == '_' && !strncmp(seg + n - m, name, m);
}

static int state_not_persistent(struct tg_eval *ev)
{
    const struct tg_workload *wl = ev->wl;
    const struct tg_slurm_controller *c = &wl->ctl;
    char value[VALUE_MAX], cluster[VALUE_MAX];
    const char *ns = wl->namespace[0] ? wl->namespace : wl->req_namespace;
    bool known = c->cluster_name || (ns && *ns);
    int rc;
    if (c->external)
        return 0;
    if (!c->persistence) {
        tg_report(ev, TG_RULE_SLURM_STATE_NOT_PERSISTENT, "spec.persistence.enabled",
                  "is false%s: running jobs, nodes and partitions are saved to an emptyDir and "
                  "lost when slurmctld restarts; enable it (slurmdbd's accounting does not "
                  "replace this state)",
                  c->existing_claim[0] ? " (existingClaim unused)" : "");
        return 0;
    }
    if (!c->extra_conf || (rc = last_state_save(c->extra_conf, value, sizeof(value))) == 0)
        return 0;
    if (rc < 0)
        return rc;
    if (c->cluster_name)
        snprintf(cluster, sizeof(cluster), "%s", c->cluster_name);
    else
        snprintf(cluster, sizeof(cluster), "%s_%s", known ? ns : "<namespace>", wl->name);
    if (on_volume(value, known ? cluster : NULL, wl->name))
        return 0;
    tg_report(ev, TG_RULE_SLURM_STATE_NOT_PERSISTENT, "spec.extraConf",
              "StateSaveLocation=%.48s is not on the statesave volume (" SPOOL_DIR "/%.36s): a "
              "slurmctld restart can lose running jobs; remove the line",
              value, cluster);
    return 0;
}

int tg_rules_slurm(struct tg_eval *ev)
{
    if (ev->wl->kind != TG_KIND_SLURM_CONTROLLER)
        return 0;
    int rc = state_not_persistent(ev);
    return rc < 0 ? rc : ev->error;
}
