/* policy_yaml.c -- reads a policy YAML file with libyaml and checks every key (docs/policy.md).
 *
 * A policy is built in three layers: the C tables (rule default actions from tg_rule_defs[], the
 * instance table from tg_instance_table[]), then the embedded default YAML
 * (src/policy/default_policy.embed.yaml, the single source of every other default), then the
 * operator's file. Each layer only changes the keys it names. Scalars are typed by the schema, not
 * by YAML 1.1 resolution, so `off` is the action off and never a boolean. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "tg/catalogue.h"
#include "tg/digest.h"
#include "tg/dnsname.h"
#include "tg/instances.h"
#include "tg/policy.h"
#include "tg/policy_yaml.h"

/* Generated from src/policy/default_policy.embed.yaml by scripts/embed.sh. */
extern const char tg_embed_default_policy[];
extern const size_t tg_embed_default_policy_len;

/* Past 20 errors the rest are usually consequences of the first ones (a wrong indent). */
#define MAX_ERRORS 20
/* Counts above this are typos (the largest instance today has 32 EFA interfaces). */
#define MAX_COUNT 1024
/* Key paths are short (instanceTypes.p6-b200.48xlarge.neuronCores); keys are cut at 64 runes. */
#define PATH_LEN 320

static const char *const api_version = "trainguard.dev/v1alpha1";

/* One load: the document being read, the policy being built, the error text. */
struct ld {
    yaml_document_t *doc;
    struct tg_policy *p;
    const char *prefix; /* written before each error line ("file: "), or "" */
    char *err;
    size_t errlen, used;
    int nerr;
    bool oom;
};

/* ---- text helpers ------------------------------------------------------------------------- */

/* Copies s into buf for a message: control characters and quotes become '?', cut at max bytes
 * (never inside a UTF-8 sequence), "..." appended when cut. */
static const char *clean(const char *s, char *buf, size_t len, size_t max)
{
    size_t i = 0, o = 0;
    if (max + 4 > len)
        max = len > 4 ? len - 4 : 0;
    for (; s[i] && o < max; i++)
        buf[o++] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f || s[i] == '"') ? '?' : s[i];
    if (s[i]) {
        /* o == i: back up while the next source byte continues a UTF-8 sequence. */
        while (o > 0 && ((unsigned char)s[o] & 0xC0) == 0x80)
            o--;
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

/* Case-insensitive edit distance of two short strings (SIZE_MAX when either is over 64 bytes). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[65], prev, tmp;
    if (la > 64 || lb > 64)
        return (size_t)-1;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            char ca = (char)(a[i - 1] | (a[i - 1] >= 'A' && a[i - 1] <= 'Z' ? 0x20 : 0));
            char cb = (char)(b[j - 1] | (b[j - 1] >= 'A' && b[j - 1] <= 'Z' ? 0x20 : 0));
            tmp = row[j];
            row[j] = prev + (ca != cb);
            if (row[j - 1] + 1 < row[j])
                row[j] = row[j - 1] + 1;
            if (tmp + 1 < row[j])
                row[j] = tmp + 1;
            prev = tmp;
        }
    }
    return row[lb];
}

/* Writes " (did you mean X?)" into buf when one of the n names is close to s, else "". */
static const char *suggest(const char *s, const char *(*name)(const void *ctx, size_t i),
                           const void *ctx, size_t n, char *buf, size_t len)
{
    size_t best = 3, d;
    const char *hit = NULL;
    for (size_t i = 0; i < n; i++) {
        d = edit_distance(s, name(ctx, i));
        if (d < best) {
            best = d;
            hit = name(ctx, i);
        }
    }
    buf[0] = '\0';
    if (hit)
        snprintf(buf, len, " (did you mean %s?)", hit);
    return buf;
}

/* ---- errors ------------------------------------------------------------------------------- */

/* Appends "line L, column C: path: message" (1-based) as one line of the error text. */
static void __attribute__((format(printf, 5, 6)))
error_at(struct ld *l, size_t line, size_t col, const char *path, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    int n;

    l->nerr++;
    if (!l->err || l->errlen == 0 || l->nerr > MAX_ERRORS + 1 || l->used + 1 >= l->errlen)
        return;
    if (l->nerr == MAX_ERRORS + 1) {
        snprintf(msg, sizeof msg, "(more errors not shown)");
    } else {
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
    }
    n = snprintf(l->err + l->used, l->errlen - l->used, "%s%s", l->used ? "\n" : "", l->prefix);
    if (n > 0)
        l->used += (size_t)n < l->errlen - l->used ? (size_t)n : l->errlen - l->used - 1;
    if (l->nerr == MAX_ERRORS + 1)
        n = snprintf(l->err + l->used, l->errlen - l->used, "%s", msg);
    else if (path && *path)
        n = snprintf(l->err + l->used, l->errlen - l->used, "line %zu, column %zu: %s: %s", line,
                     col, path, msg);
    else
        n = snprintf(l->err + l->used, l->errlen - l->used, "line %zu, column %zu: %s", line, col,
                     msg);
    if (n > 0)
        l->used += (size_t)n < l->errlen - l->used ? (size_t)n : l->errlen - l->used - 1;
}

#define ERR(l, node, path, ...)                                                                    \
    error_at((l), (node)->start_mark.line + 1, (node)->start_mark.column + 1, (path), __VA_ARGS__)

static void oom(struct ld *l)
{
    if (!l->oom)
        error_at(l, 1, 1, NULL, "out of memory");
    l->oom = true;
}

/* ---- node helpers ------------------------------------------------------------------------- */

static yaml_node_t *node_at(struct ld *l, int id)
{
    return yaml_document_get_node(l->doc, id);
}

static bool is_null(const yaml_node_t *n)
{
    const char *v;
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    v = (const char *)n->data.scalar.value;
    return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL");
}

/* "a mapping", "a list", "null" or the quoted scalar, for "expected X, got Y". */
static const char *describe(const yaml_node_t *n, char *buf, size_t len)
{
    char s[80];
    if (n->type == YAML_MAPPING_NODE)
        return "a mapping";
    if (n->type == YAML_SEQUENCE_NODE)
        return "a list";
    if (is_null(n))
        return "null";
    snprintf(buf, len, "%s\"%s\"",
             n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? "" : "the string ",
             clean((const char *)n->data.scalar.value, s, sizeof s, 60));
    return buf;
}

static bool expect_type(struct ld *l, yaml_node_t *n, const char *path, yaml_node_type_t type)
{
    char d[100];
    if (n->type == type && !(type == YAML_SCALAR_NODE && is_null(n)))
        return true;
    ERR(l, n, path, "expected %s, got %s",
        type == YAML_MAPPING_NODE    ? "a mapping"
        : type == YAML_SEQUENCE_NODE ? "a list"
                                     : "a string",
        describe(n, d, sizeof d));
    return false;
}

static void child_path(char *buf, const char *path, const char *key)
{
    char k[96];
    clean(key, k, sizeof k, 64);
    if (snprintf(buf, PATH_LEN, "%s%s%s", path, *path ? "." : "", k) >= PATH_LEN)
        memcpy(buf + PATH_LEN - 4, "...", 4);
}

static void index_path(char *buf, const char *path, size_t i)
{
    snprintf(buf, PATH_LEN, "%s[%zu]", path, i);
}

/* A string value: any non-null scalar, taken as written. NULL (reported) otherwise. */
static const char *get_str(struct ld *l, yaml_node_t *n, const char *path)
{
    if (!expect_type(l, n, path, YAML_SCALAR_NODE))
        return NULL;
    if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length) {
        ERR(l, n, path, "contains a NUL character");
        return NULL;
    }
    return (const char *)n->data.scalar.value;
}

/* A count: a plain decimal integer from 0 to MAX_COUNT. */
static bool get_count(struct ld *l, yaml_node_t *n, const char *path, int *out)
{
    char d[100];
    const char *s = n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : "";
    char *end;
    long v;

    if (n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
        s[0] == '-' && s[1] >= '0' && s[1] <= '9') {
        ERR(l, n, path, "must not be negative, got %s", clean(s, d, sizeof d, 40));
        return false;
    }
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
        !(s[0] >= '0' && s[0] <= '9')) {
        ERR(l, n, path, "expected a non-negative integer, got %s", describe(n, d, sizeof d));
        return false;
    }
    errno = 0;
    v = strtol(s, &end, 10);
    if (*end) {
        ERR(l, n, path, "expected a non-negative integer, got %s", describe(n, d, sizeof d));
        return false;
    }
    if (errno == ERANGE || v > MAX_COUNT) {
        ERR(l, n, path, "%s is too large (at most %d)", clean(s, d, sizeof d, 40), MAX_COUNT);
        return false;
    }
    *out = (int)v;
    return true;
}

static bool get_bool(struct ld *l, yaml_node_t *n, const char *path, bool *out)
{
    static const char *const yes[] = {"true", "True", "TRUE"};
    static const char *const no[] = {"false", "False", "FALSE"};
    char d[100];
    if (n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        for (size_t i = 0; i < 3; i++) {
            if (!strcmp((const char *)n->data.scalar.value, yes[i]) ||
                !strcmp((const char *)n->data.scalar.value, no[i])) {
                *out = !strcmp((const char *)n->data.scalar.value, yes[i]);
                return true;
            }
        }
    }
    ERR(l, n, path, "expected true or false, got %s", describe(n, d, sizeof d));
    return false;
}

/* ---- name checks: each returns NULL when s is valid, else what is wrong -------------------- */

static bool alnum(char c)
{
    return tg_dns_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* RFC 1123 label (a namespace name). */
static const char *check_dns_label(const char *s)
{
    return tg_dns1123_label(s)
               ? NULL
               : "is not a valid namespace name (lowercase letters, digits and '-', at most 63)";
}

static const char *check_dns_subdomain(const char *s)
{
    return tg_dns1123_subdomain(s, strlen(s))
               ? NULL
               : "is not a valid name (lowercase letters, digits, '-' and '.', at most 253)";
}

/* Kubernetes label name part: at most 63 of [A-Za-z0-9-_.], alphanumeric at both ends. */
static bool is_label_name(const char *s, size_t n, bool allow_empty)
{
    if (n == 0)
        return allow_empty;
    if (n > 63 || !alnum(s[0]) || !alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

static const char *check_label_key(const char *s)
{
    const char *slash = strchr(s, '/');
    bool ok = slash ? tg_dns1123_subdomain(s, (size_t)(slash - s)) &&
                          is_label_name(slash + 1, strlen(slash + 1), false)
                    : is_label_name(s, strlen(s), false);
    return ok ? NULL : "is not a valid label key ([prefix/]name, name at most 63 characters)";
}

static const char *check_label_value(const char *s)
{
    return is_label_name(s, strlen(s), true)
               ? NULL
               : "is not a valid label value (at most 63 of letters, digits, '-', '_' and '.')";
}

static const char *check_zone(const char *s)
{
    return *s ? check_label_value(s) : "must not be empty";
}

/* "p5.48xlarge", "p6-b200.48xlarge": lowercase family, one dot, size. */
static const char *check_instance_type(const char *s)
{
    const char *dot = strchr(s, '.');
    bool ok = dot && dot > s && dot[1] && !strchr(dot + 1, '.');
    for (const char *c = s; ok && *c; c++)
        ok = tg_dns_alnum(*c) || *c == '-' || *c == '.';
    return ok ? NULL : "is not an instance type name (family.size, lowercase: p5.48xlarge)";
}

static const char *check_family(const char *s)
{
    bool ok = *s != '\0';
    for (const char *c = s; ok && *c; c++)
        ok = tg_dns_alnum(*c) || *c == '-';
    return ok ? NULL : "is not an instance family (lowercase, no dot: p5, p4d, trn1)";
}

/* Kubernetes' env var name rule (C identifier plus '-' and '.'). */
static const char *check_env_name(const char *s)
{
    bool ok = *s && !(s[0] >= '0' && s[0] <= '9');
    for (const char *c = s; ok && *c; c++)
        ok = alnum(*c) || *c == '_' || *c == '-' || *c == '.';
    return ok ? NULL : "is not a valid env var name (letters, digits, '_', '-' and '.')";
}

/* ---- building blocks ---------------------------------------------------------------------- */

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

typedef void (*pair_fn)(struct ld *l, const char *key, yaml_node_t *k, yaml_node_t *v,
                        const char *path, void *ctx);

/* Calls fn for every pair of map whose key is a string not seen before; reports the others. */
static void each_pair(struct ld *l, yaml_node_t *map, const char *path, pair_fn fn, void *ctx)
{
    char cpath[PATH_LEN], d[100];
    yaml_node_pair_t *start = map->data.mapping.pairs.start;

    for (yaml_node_pair_t *pr = start; pr < map->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = node_at(l, pr->key), *v = node_at(l, pr->value), *first = NULL;
        if (!k || !v)
            continue;
        if (k->type != YAML_SCALAR_NODE || is_null(k)) {
            ERR(l, k, path, "keys must be strings, got %s", describe(k, d, sizeof d));
            continue;
        }
        for (yaml_node_pair_t *q = start; q < pr && !first; q++) {
            yaml_node_t *qk = node_at(l, q->key);
            if (qk && qk->type == YAML_SCALAR_NODE &&
                qk->data.scalar.length == k->data.scalar.length &&
                !memcmp(qk->data.scalar.value, k->data.scalar.value, k->data.scalar.length))
                first = qk;
        }
        child_path(cpath, path, (const char *)k->data.scalar.value);
        if (first) {
            ERR(l, k, cpath, "duplicate key (first at line %zu)", first->start_mark.line + 1);
            continue;
        }
        fn(l, (const char *)k->data.scalar.value, k, v, cpath, ctx);
    }
}

/* Reads a list of unique strings that pass check into a new array (only when every item is good,
 * so the previous value is replaced as a whole or not at all). */

/* A list-valued key: checks that v is a sequence and allocates one zeroed element of elem bytes per
 * item (at least one, so an empty list is not NULL). NULL after reporting the error. */
static void *seq_list(struct ld *l, yaml_node_t *v, const char *path, size_t elem, size_t *n)
{
    void *list;

    if (!expect_type(l, v, path, YAML_SEQUENCE_NODE))
        return NULL;
    *n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
    list = calloc(*n ? *n : 1, elem);
    if (!list)
        oom(l);
    return list;
}

static void read_str_list(struct ld *l, yaml_node_t *v, const char *path,
                          const char *(*check)(const char *), bool need_one, char ***out,
                          size_t *nout)
{
    char ipath[PATH_LEN], c[96];
    size_t n = 0, errs = (size_t)l->nerr;
    char **list;

    size_t cap = 0;
    if (!(list = seq_list(l, v, path, sizeof *list, &cap)))
        return;
    if (need_one && cap == 0) {
        ERR(l, v, path, "must list at least one entry");
        free(list);
        return;
    }
    for (size_t i = 0; i < cap; i++) {
        yaml_node_t *item = node_at(l, v->data.sequence.items.start[i]);
        const char *s, *why;
        index_path(ipath, path, i);
        if (!item || !(s = get_str(l, item, ipath)))
            continue;
        if (check && (why = check(s))) {
            ERR(l, item, ipath, "\"%s\" %s", clean(s, c, sizeof c, 64), why);
            continue;
        }
        for (size_t j = 0; j < n && s; j++)
            if (!strcmp(list[j], s)) {
                ERR(l, item, ipath, "duplicate entry \"%s\"", clean(s, c, sizeof c, 64));
                s = NULL;
            }
        if (s && !(list[n++] = strdup(s))) {
            n--;
            oom(l);
        }
    }
    if ((size_t)l->nerr != errs) {
        free_strv(list, n);
        return;
    }
    free_strv(*out, *nout);
    *out = list;
    *nout = n;
}

/* ---- top-level keys ----------------------------------------------------------------------- */

static void key_api_version(struct ld *l, yaml_node_t *v, const char *path)
{
    char c[96];
    const char *s = get_str(l, v, path);
    if (s && strcmp(s, api_version))
        ERR(l, v, path, "unsupported version \"%s\" (this trainguard reads %s)",
            clean(s, c, sizeof c, 64), api_version);
}

static void key_kind(struct ld *l, yaml_node_t *v, const char *path)
{
    char c[96];
    const char *s = get_str(l, v, path);
    if (s && strcmp(s, "Policy"))
        ERR(l, v, path, "expected Policy, got \"%s\"", clean(s, c, sizeof c, 64));
}

static bool read_mode(struct ld *l, yaml_node_t *v, const char *path, enum tg_mode *out)
{
    char c[96];
    const char *s = get_str(l, v, path);
    if (!s)
        return false;
    if (tg_mode_parse(s, out) == 0)
        return true;
    ERR(l, v, path, "unknown mode \"%s\" (enforce, warn or audit)", clean(s, c, sizeof c, 64));
    return false;
}

static void key_mode(struct ld *l, yaml_node_t *v, const char *path)
{
    enum tg_mode m;
    if (read_mode(l, v, path, &m))
        l->p->mode = m;
}

static const char *rule_name(const void *ctx, size_t i)
{
    (void)ctx;
    return tg_rule_defs[i].id;
}

static void rule_pair(struct ld *l, const char *key, yaml_node_t *k, yaml_node_t *v,
                      const char *path, void *ctx)
{
    char c[96], hint[128];
    int idx = tg_rule_index(key);
    enum tg_action a;
    const char *s;

    (void)ctx;
    if (idx < 0 || (size_t)idx >= l->p->nactions) {
        ERR(l, k, path, "unknown rule id%s",
            suggest(key, rule_name, NULL, tg_rule_count, hint, sizeof hint));
        return;
    }
    s = get_str(l, v, path);
    if (!s)
        return;
    if (tg_action_parse(s, &a) != 0) {
        ERR(l, v, path, "unknown action \"%s\" (deny, warn or off)", clean(s, c, sizeof c, 64));
        return;
    }
    l->p->actions[idx] = a;
}

static void key_rules(struct ld *l, yaml_node_t *v, const char *path)
{
    if (expect_type(l, v, path, YAML_MAPPING_NODE))
        each_pair(l, v, path, rule_pair, NULL);
}

static void key_exempt(struct ld *l, yaml_node_t *v, const char *path)
{
    read_str_list(l, v, path, check_dns_label, false, &l->p->exempt_namespaces, &l->p->nexempt);
}

static void key_exceptions(struct ld *l, yaml_node_t *v, const char *path)
{
    read_str_list(l, v, path, check_dns_label, false, &l->p->exception_namespaces,
                  &l->p->nexception);
}

/* "X.Y", as the catalogue writes the release that introduced each rule. */
static const char *check_release(const char *s)
{
    const char *c = s;
    bool ok = *c >= '0' && *c <= '9';
    while (*c >= '0' && *c <= '9')
        c++;
    ok = ok && *c++ == '.' && *c >= '0' && *c <= '9';
    while (ok && *c >= '0' && *c <= '9')
        c++;
    return ok && !*c && strlen(s) <= 16 ? NULL
                                        : "is not a release X.Y (quote it: rulesVersion: \"0.2\")";
}

static void read_checked_str(struct ld *l, yaml_node_t *v, const char *path,
                             const char *(*check)(const char *), char **out);

static void key_rules_version(struct ld *l, yaml_node_t *v, const char *path)
{
    read_checked_str(l, v, path, check_release, &l->p->rules_version);
}

static void key_zone_labels(struct ld *l, yaml_node_t *v, const char *path)
{
    read_str_list(l, v, path, check_label_key, true, &l->p->zone_labels, &l->p->nzone_labels);
}

static void key_zone_id_labels(struct ld *l, yaml_node_t *v, const char *path)
{
    read_str_list(l, v, path, check_label_key, false, &l->p->zone_id_labels,
                  &l->p->nzone_id_labels);
}

static void key_narrow(struct ld *l, yaml_node_t *v, const char *path)
{
    read_str_list(l, v, path, check_label_key, false, &l->p->narrow_topology_keys, &l->p->nnarrow);
}

static void key_volcano(struct ld *l, yaml_node_t *v, const char *path)
{
    read_str_list(l, v, path, check_dns_subdomain, true, &l->p->volcano_schedulers,
                  &l->p->nvolcano);
}

static void key_env_from(struct ld *l, yaml_node_t *v, const char *path)
{
    bool b;
    if (get_bool(l, v, path, &b))
        l->p->inject_with_env_from = b;
}

/* namespaceModes: built into a new array, replacing the previous one when it is all good. */
struct ns_modes {
    struct tg_ns_mode *v;
    size_t n;
};

static void ns_mode_pair(struct ld *l, const char *key, yaml_node_t *k, yaml_node_t *v,
                         const char *path, void *ctx)
{
    struct ns_modes *nm = ctx;
    const char *why = check_dns_label(key);
    char c[96];
    enum tg_mode m;

    if (why) {
        ERR(l, k, path, "\"%s\" %s", clean(key, c, sizeof c, 64), why);
        return;
    }
    if (!read_mode(l, v, path, &m))
        return;
    nm->v[nm->n].ns = strdup(key);
    if (!nm->v[nm->n].ns) {
        oom(l);
        return;
    }
    nm->v[nm->n++].mode = m;
}

static void free_ns_modes(struct tg_ns_mode *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].ns);
    free(v);
}

static void key_ns_modes(struct ld *l, yaml_node_t *v, const char *path)
{
    struct ns_modes nm = {NULL, 0};
    int errs = l->nerr;
    size_t cap;

    if (!expect_type(l, v, path, YAML_MAPPING_NODE))
        return;
    cap = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
    nm.v = calloc(cap ? cap : 1, sizeof *nm.v);
    if (!nm.v) {
        oom(l);
        return;
    }
    each_pair(l, v, path, ns_mode_pair, &nm);
    if (l->nerr != errs) {
        free_ns_modes(nm.v, nm.n);
        return;
    }
    free_ns_modes(l->p->ns_modes, l->p->nns_modes);
    l->p->ns_modes = nm.v;
    l->p->nns_modes = nm.n;
}

/* Fields of a mapping item: name, and where the field was found. */
struct field {
    const char *name;
    yaml_node_t *v;
};

static const char *field_name(const void *ctx, size_t i)
{
    return ((const struct field *)ctx)[i].name;
}

static void field_pair(struct ld *l, const char *key, yaml_node_t *k, yaml_node_t *v,
                       const char *path, void *ctx)
{
    struct field *f = ctx;
    char hint[128];
    size_t n;
    for (n = 0; f[n].name; n++) {
        if (!strcmp(f[n].name, key)) {
            f[n].v = v;
            return;
        }
    }
    ERR(l, k, path, "unknown key%s", suggest(key, field_name, f, n, hint, sizeof hint));
}

/* Splits map into the named fields of f (ended by a NULL name): f[i].v is the value or NULL.
 * Unknown and duplicate keys are reported. Returns false when map is not a mapping. */
static bool split_fields(struct ld *l, yaml_node_t *map, const char *path, struct field *f)
{
    if (!expect_type(l, map, path, YAML_MAPPING_NODE))
        return false;
    each_pair(l, map, path, field_pair, f);
    return true;
}

/* ---- singleZoneNodeLabels ----------------------------------------------------------------- */

static void free_zone_labels(struct tg_zone_label *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].key);
        free_strv(v[i].values, v[i].nvalues);
        free(v[i].zone);
    }
    free(v);
}

/* A string field that must pass check, copied into *out. */
static void read_checked_str(struct ld *l, yaml_node_t *v, const char *path,
                             const char *(*check)(const char *), char **out)
{
    char c[96];
    const char *s = get_str(l, v, path), *why;
    if (!s)
        return;
    if (check && (why = check(s))) {
        ERR(l, v, path, "\"%s\" %s", clean(s, c, sizeof c, 64), why);
        return;
    }
    free(*out);
    if (!(*out = strdup(s)))
        oom(l);
}

static void read_zone_label(struct ld *l, yaml_node_t *item, const char *path,
                            struct tg_zone_label *out)
{
    struct field f[] = {{"key", NULL}, {"values", NULL}, {"zone", NULL}, {NULL, NULL}};
    char fp[PATH_LEN];

    if (!split_fields(l, item, path, f))
        return;
    if (!f[0].v) {
        ERR(l, item, path, "key is required");
    } else {
        child_path(fp, path, "key");
        read_checked_str(l, f[0].v, fp, check_label_key, &out->key);
    }
    if (f[1].v) {
        child_path(fp, path, "values");
        read_str_list(l, f[1].v, fp, check_label_value, false, &out->values, &out->nvalues);
    }
    if (f[2].v) {
        child_path(fp, path, "zone");
        read_checked_str(l, f[2].v, fp, check_zone, &out->zone);
    }
}

static void key_single_zone(struct ld *l, yaml_node_t *v, const char *path)
{
    char ipath[PATH_LEN];
    struct tg_zone_label *list;
    size_t n;
    int errs = l->nerr;

    if (!(list = seq_list(l, v, path, sizeof *list, &n)))
        return;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = node_at(l, v->data.sequence.items.start[i]);
        index_path(ipath, path, i);
        if (item)
            read_zone_label(l, item, ipath, &list[i]);
    }
    if (l->nerr != errs) {
        free_zone_labels(list, n);
        return;
    }
    free_zone_labels(l->p->single_zone_labels, l->p->nsingle_zone);
    l->p->single_zone_labels = list;
    l->p->nsingle_zone = n;
}

/* ---- instanceTypes: merged field by field into the table ---------------------------------- */

static struct tg_instance *find_instance(struct tg_policy *p, const char *name)
{
    for (size_t i = 0; i < p->ninstances; i++)
        if (!strcmp(p->instances[i].name, name))
            return &p->instances[i];
    return NULL;
}

static void instance_pair(struct ld *l, const char *key, yaml_node_t *k, yaml_node_t *v,
                          const char *path, void *ctx)
{
    struct field f[] = {{"efa", NULL},
                        {"gpus", NULL},
                        {"neuron", NULL},
                        {"neuronCores", NULL},
                        {"gpuDirectRDMA", NULL},
                        {"rdmaRead", NULL},
                        {"logicalNeuronCoreConfig", NULL},
                        {NULL, NULL}};
    struct tg_instance *e = find_instance(l->p, key), t = {.rdma_read = TG_UNKNOWN}, *grown;
    int *counts[4] = {&t.efa, &t.gpus, &t.neuron, &t.neuron_cores};
    const char *why = check_instance_type(key);
    char fp[PATH_LEN], c[96];
    int errs = l->nerr;

    (void)ctx;
    if (why) {
        ERR(l, k, path, "\"%s\" %s", clean(key, c, sizeof c, 64), why);
        return;
    }
    if (!split_fields(l, v, path, f))
        return;
    if (e)
        t = *e;
    for (size_t i = 0; i < 4; i++) {
        child_path(fp, path, f[i].name);
        if (f[i].v)
            get_count(l, f[i].v, fp, counts[i]);
    }
    child_path(fp, path, "gpuDirectRDMA");
    if (f[4].v)
        get_bool(l, f[4].v, fp, &t.gdr);
    if (f[5].v) {
        bool rr = false;
        child_path(fp, path, "rdmaRead");
        get_bool(l, f[5].v, fp, &rr);
        t.rdma_read = rr ? TG_YES : TG_NO;
    }
    child_path(fp, path, "logicalNeuronCoreConfig");
    if (f[6].v)
        get_count(l, f[6].v, fp, &t.lnc);
    if (!e && !f[0].v)
        ERR(l, v, path, "efa is required for an instance type that is not built in");
    if (l->nerr != errs)
        return;
    if (e) {
        t.name = e->name;
        *e = t;
        return;
    }
    grown = realloc(l->p->instances, (l->p->ninstances + 1) * sizeof *grown);
    if (!grown) {
        oom(l);
        return;
    }
    l->p->instances = grown;
    if (!(t.name = strdup(key))) {
        oom(l);
        return;
    }
    l->p->instances[l->p->ninstances++] = t;
}

static void key_instances(struct ld *l, yaml_node_t *v, const char *path)
{
    if (expect_type(l, v, path, YAML_MAPPING_NODE))
        each_pair(l, v, path, instance_pair, NULL);
}

/* ---- injectEnv ---------------------------------------------------------------------------- */

static void free_env(struct tg_env_entry *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].value);
        free_strv(v[i].families, v[i].nfamilies);
    }
    free(v);
}

/* Reads one entry; returns the node of its name (for duplicate reports) or NULL. */
static yaml_node_t *read_env(struct ld *l, yaml_node_t *item, const char *path,
                             struct tg_env_entry *out)
{
    struct field f[] = {{"name", NULL},
                        {"value", NULL},
                        {"gpuDirectRDMAOnly", NULL},
                        {"instanceFamilies", NULL},
                        {"rdmaReadOnly", NULL},
                        {"hostNetworkOnly", NULL},
                        {NULL, NULL}};
    char fp[PATH_LEN];

    if (!split_fields(l, item, path, f))
        return NULL;
    if (!f[0].v) {
        ERR(l, item, path, "name is required");
    } else {
        child_path(fp, path, "name");
        read_checked_str(l, f[0].v, fp, check_env_name, &out->name);
    }
    if (!f[1].v) {
        ERR(l, item, path, "value is required");
    } else {
        child_path(fp, path, "value");
        read_checked_str(l, f[1].v, fp, NULL, &out->value);
    }
    if (f[2].v) {
        child_path(fp, path, "gpuDirectRDMAOnly");
        get_bool(l, f[2].v, fp, &out->gdr_only);
    }
    if (f[3].v) {
        child_path(fp, path, "instanceFamilies");
        read_str_list(l, f[3].v, fp, check_family, true, &out->families, &out->nfamilies);
    }
    if (f[4].v) {
        child_path(fp, path, "rdmaReadOnly");
        get_bool(l, f[4].v, fp, &out->rdma_read_only);
    }
    if (f[5].v) {
        child_path(fp, path, "hostNetworkOnly");
        get_bool(l, f[5].v, fp, &out->host_network_only);
    }
    return out->name ? f[0].v : NULL;
}

static void key_inject_env(struct ld *l, yaml_node_t *v, const char *path)
{
    char ipath[PATH_LEN], npath[PATH_LEN], c[96];
    struct tg_env_entry *list;
    size_t n;
    int errs = l->nerr;

    if (!(list = seq_list(l, v, path, sizeof *list, &n)))
        return;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = node_at(l, v->data.sequence.items.start[i]), *name;
        index_path(ipath, path, i);
        if (!item || !(name = read_env(l, item, ipath, &list[i])))
            continue;
        for (size_t j = 0; j < i; j++) {
            if (list[j].name && !strcmp(list[j].name, list[i].name)) {
                child_path(npath, ipath, "name");
                ERR(l, name, npath, "duplicate env var \"%s\" (also %s[%zu])",
                    clean(list[i].name, c, sizeof c, 64), path, j);
                break;
            }
        }
    }
    if (l->nerr != errs) {
        free_env(list, n);
        return;
    }
    free_env(l->p->inject_env, l->p->ninject);
    l->p->inject_env = list;
    l->p->ninject = n;
}

/* ---- the document ------------------------------------------------------------------------- */

struct top_key {
    const char *key;
    void (*fn)(struct ld *l, yaml_node_t *v, const char *path);
};

/* In the order docs/policy.md and the embedded default present them. */
static const struct top_key top_keys[] = {
    {"apiVersion", key_api_version},
    {"kind", key_kind},
    {"mode", key_mode},
    {"rulesVersion", key_rules_version},
    {"rules", key_rules},
    {"exemptNamespaces", key_exempt},
    {"exceptionNamespaces", key_exceptions},
    {"namespaceModes", key_ns_modes},
    {"zoneLabels", key_zone_labels},
    {"zoneIdLabels", key_zone_id_labels},
    {"narrowTopologyKeys", key_narrow},
    {"singleZoneNodeLabels", key_single_zone},
    {"volcanoSchedulerNames", key_volcano},
    {"instanceTypes", key_instances},
    {"injectEnv", key_inject_env},
    {"injectWithEnvFrom", key_env_from},
};
#define NTOP (sizeof top_keys / sizeof top_keys[0])

static const char *top_name(const void *ctx, size_t i)
{
    (void)ctx;
    return top_keys[i].key;
}

static void top_pair(struct ld *l, const char *key, yaml_node_t *k, yaml_node_t *v,
                     const char *path, void *ctx)
{
    char hint[128];
    (void)ctx;
    for (size_t i = 0; i < NTOP; i++) {
        if (!strcmp(top_keys[i].key, key)) {
            top_keys[i].fn(l, v, path);
            return;
        }
    }
    ERR(l, k, path, "unknown key%s", suggest(key, top_name, NULL, NTOP, hint, sizeof hint));
}

/* Reports a libyaml error (syntax, bad UTF-8, undefined alias) with its position. */
static void parser_error(struct ld *l, const yaml_parser_t *ps, const char *text, size_t len)
{
    size_t line = ps->problem_mark.line + 1, col = ps->problem_mark.column + 1;
    bool tab;

    if (ps->error == YAML_MEMORY_ERROR) {
        oom(l);
        return;
    }
    if (ps->error == YAML_READER_ERROR) {
        /* The reader reports a byte offset, not a mark. */
        line = 1;
        col = 1;
        for (size_t i = 0; i < ps->problem_offset && i < len; i++) {
            col++;
            if (text[i] == '\n') {
                line++;
                col = 1;
            }
        }
    }
    /* libyaml's words for a tab in indentation do not say "tab". */
    tab = ps->error == YAML_SCANNER_ERROR && ps->problem_mark.index < len &&
          text[ps->problem_mark.index] == '\t';
    error_at(l, line, col, NULL, "invalid YAML: %s%s%s%s", ps->problem ? ps->problem : "error",
             ps->context ? " " : "", ps->context ? ps->context : "",
             tab ? " (a tab: YAML indents with spaces only)" : "");
}

/* Applies one YAML text to p. Returns 0, or -EINVAL with the errors in err. */
static int apply_yaml(struct tg_policy *p, const char *text, size_t len, const char *prefix,
                      char *err, size_t errlen)
{
    struct ld l = {.p = p, .prefix = prefix, .err = err, .errlen = errlen};
    yaml_parser_t parser;
    yaml_document_t doc, extra;
    yaml_node_t *root;

    if (!yaml_parser_initialize(&parser)) {
        oom(&l);
        return -ENOMEM;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        parser_error(&l, &parser, text, len);
        goto out_parser;
    }
    l.doc = &doc;
    root = yaml_document_get_root_node(&doc);
    if (!root) {
        error_at(&l, 1, 1, NULL,
                 "the policy is empty: write at least `kind: Policy`, or run without a policy "
                 "file for the defaults");
        goto out_doc;
    }
    if (expect_type(&l, root, "", YAML_MAPPING_NODE))
        each_pair(&l, root, "", top_pair, NULL);
    if (!yaml_parser_load(&parser, &extra)) {
        parser_error(&l, &parser, text, len);
        goto out_doc;
    }
    if (yaml_document_get_root_node(&extra))
        error_at(&l, extra.start_mark.line + 1, extra.start_mark.column + 1, NULL,
                 "a second YAML document: a policy file holds exactly one");
    yaml_document_delete(&extra);
out_doc:
    yaml_document_delete(&doc);
out_parser:
    yaml_parser_delete(&parser);
    if (l.oom)
        return -ENOMEM;
    return l.nerr ? -EINVAL : 0;
}

/* ---- public ------------------------------------------------------------------------------- */

/* The layer under every policy: rule defaults and the built-in instance table. */
static struct tg_policy *new_base(const char *source)
{
    struct tg_policy *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->refcount = 1;
    p->mode = TG_MODE_ENFORCE;
    if (!(p->source = strdup(source)))
        goto out_free;
    if (!(p->actions = calloc(tg_rule_count ? tg_rule_count : 1, sizeof *p->actions)))
        goto out_free;
    p->nactions = tg_rule_count;
    for (size_t i = 0; i < tg_rule_count; i++)
        p->actions[i] = tg_rule_defs[i].default_action;
    p->instances = calloc(tg_instance_table_len ? tg_instance_table_len : 1, sizeof *p->instances);
    if (!p->instances)
        goto out_free;
    for (size_t i = 0; i < tg_instance_table_len; i++) {
        struct tg_instance *in = &p->instances[i];
        *in = tg_instance_table[i];
        if (!(in->name = strdup(tg_instance_table[i].name)))
            goto out_free;
        p->ninstances = i + 1;
    }
    return p;
out_free:
    tg_policy_unref(p);
    return NULL;
}

const char *tg_policy_default_yaml(size_t *len)
{
    if (len)
        *len = tg_embed_default_policy_len;
    return tg_embed_default_policy;
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Builds base + embedded default + text. The embedded default is itself loaded through here
 * (text == tg_embed_default_policy), without a second pass over it. */
/* Rules whose action the loader caps, and why (SPEC 10: Volcano skips task minimums by design,
 * so gang.task-minimums-skipped never denies). */
static const struct {
    enum tg_rule_id rule;
    enum tg_action cap;
    const char *why;
} caps[] = {
    {TG_RULE_GANG_TASK_MINIMUMS_SKIPPED, TG_ACTION_WARN,
     "Volcano accepts a job minimum below the task minimums by design"},
};

/* Applies caps[] to p's actions, with one warning line per capped rule. 0 or -ENOMEM. */
static int apply_caps(struct tg_policy *p)
{
    for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
        if (p->actions[caps[i].rule] <= caps[i].cap)
            continue;
        p->actions[caps[i].rule] = caps[i].cap;
        char line[256];
        int n = snprintf(line, sizeof line, "rules.%s: capped at %s (%s)",
                         tg_rule_defs[caps[i].rule].id, tg_action_name(caps[i].cap), caps[i].why);
        size_t old = p->warnings ? strlen(p->warnings) : 0;
        char *grown = realloc(p->warnings, old + (size_t)n + 2);
        if (!grown)
            return -ENOMEM;
        p->warnings = grown;
        snprintf(p->warnings + old, (size_t)n + 2, "%s%s", old ? "\n" : "", line);
    }
    return 0;
}

static struct tg_policy *load_text(const char *text, size_t len, const char *source,
                                   const char *prefix, char *err, size_t errlen)
{
    struct tg_policy *p;

    if (err && errlen)
        err[0] = '\0';
    p = new_base(source);
    if (!p) {
        set_err(err, errlen, "%sout of memory", prefix);
        return NULL;
    }
    if (text != tg_embed_default_policy &&
        apply_yaml(p, tg_embed_default_policy, tg_embed_default_policy_len, "<embedded>: ", err,
                   errlen) != 0)
        goto out_unref;
    if (apply_yaml(p, text ? text : "", text ? len : 0, prefix, err, errlen) != 0)
        goto out_unref;
    if (apply_caps(p) < 0) {
        set_err(err, errlen, "%sout of memory", prefix);
        goto out_unref;
    }
    if (tg_sha256_hex(text ? text : "", text ? len : 0, p->sha256) < 0) {
        set_err(err, errlen, "%scannot compute the SHA-256 of the policy", prefix);
        goto out_unref;
    }
    return p;
out_unref:
    tg_policy_unref(p);
    return NULL;
}

struct tg_policy *tg_policy_load_yaml(const char *text, size_t len, const char *source, char *err,
                                      size_t errlen)
{
    return load_text(text, len, source ? source : "<memory>", "", err, errlen);
}

struct tg_policy *tg_policy_load_bytes(const char *text, size_t len, const char *path, char *err,
                                       size_t errlen)
{
    char prefix[512];
    snprintf(prefix, sizeof prefix, "%s: ", path);
    return load_text(text, len, path, prefix, err, errlen);
}

char *tg_policy_read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    struct stat st;
    char *buf = NULL, *tmp;
    size_t n = 0;
    ssize_t r;
    int fd, e = 0;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        e = errno;
        set_err(err, errlen, "%s: cannot open: %s", path, strerror(e));
        goto out;
    }
    if (fstat(fd, &st) != 0) {
        e = errno;
        set_err(err, errlen, "%s: cannot stat: %s", path, strerror(e));
        goto out_close;
    }
    if (!S_ISREG(st.st_mode)) {
        e = EISDIR;
        set_err(err, errlen, "%s: not a regular file", path);
        goto out_close;
    }
    buf = malloc(TG_POLICY_MAX_BYTES + 1);
    if (!buf) {
        e = ENOMEM;
        set_err(err, errlen, "%s: out of memory", path);
        goto out_close;
    }
    /* Read to the end rather than trusting st_size: the file may be rewritten while we read. */
    while (n <= TG_POLICY_MAX_BYTES && (r = read(fd, buf + n, TG_POLICY_MAX_BYTES + 1 - n)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            e = errno;
            set_err(err, errlen, "%s: cannot read: %s", path, strerror(e));
            goto out_free;
        }
        n += (size_t)r;
    }
    if (n > TG_POLICY_MAX_BYTES) {
        e = EFBIG;
        set_err(err, errlen, "%s: larger than %d bytes", path, TG_POLICY_MAX_BYTES);
        goto out_free;
    }
    buf[n] = '\0';
    *len = n;
    /* Give back the unused part of the 1 MiB buffer: the reloader keeps the last bytes. */
    tmp = realloc(buf, n + 1);
    if (tmp)
        buf = tmp;
    goto out_close;
out_free:
    free(buf);
    buf = NULL;
out_close:
    close(fd);
out:
    if (!buf)
        errno = e;
    return buf;
}

struct tg_policy *tg_policy_load_file(const char *path, char *err, size_t errlen)
{
    struct tg_policy *p;
    size_t len = 0;
    char *text = tg_policy_read_file(path, &len, err, errlen);
    if (!text)
        return NULL;
    p = tg_policy_load_bytes(text, len, path, err, errlen);
    free(text);
    return p;
}
