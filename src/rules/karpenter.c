/* karpenter.c -- the karpenter.* rules on a Karpenter NodePool (SPEC 11 "Node pools and the Slurm
 * controller", SPEC 13): a pool that admits EFA instance types in more than one zone, and a zero
 * disruption budget on a pool that allows spot.
 *
 * The pool's requirements (and its template labels, which Karpenter adds as `key In [value]`)
 * are evaluated as Karpenter intersects them with an instance type's labels
 * (kubernetes-sigs/karpenter pkg/scheduling/requirements.go Intersects, requirement.go): In needs
 * the value, NotIn and DoesNotExist accept a missing label, Exists and the integer bounds need
 * one, and requirements on one key all hold at once. Facts and sources:
 * docs/references-karpenter.md. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/cron.h"
#include "tg/instance_labels.h"
#include "tg/pod.h"
#include "tg/policy.h"
#include "tg/registry.h"
#include "tg/workload.h"

#define ZONE_KEY "topology.kubernetes.io/zone"
#define ZONE_ID_KEY "topology.k8s.aws/zone-id"
#define CAPACITY_KEY "karpenter.sh/capacity-type"
#define NODEPOOL_KEY "karpenter.sh/nodepool"
#define TYPE_KEY "node.kubernetes.io/instance-type"
#define AWS "karpenter.k8s.aws/"
#define DEFAULT_EXPIRE_AFTER "720h"

/* The key Karpenter reads a requirement under (core pkg/apis/v1/labels.go NormalizedLabels). */
static const char *normalized(const char *key)
{
    static const char *const map[][2] = {
        {"failure-domain.beta.kubernetes.io/zone", ZONE_KEY},
        {"failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region"},
        {"beta.kubernetes.io/instance-type", TYPE_KEY},
        {"beta.kubernetes.io/arch", "kubernetes.io/arch"},
        {"beta.kubernetes.io/os", "kubernetes.io/os"},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        if (!strcmp(key, map[i][0]))
            return map[i][1];
    }
    return key;
}

static bool on_key(const struct tg_np_req *r, const char *key)
{
    return !strcmp(normalized(r->key), normalized(key));
}

/* An integer as Go's strconv.Atoi reads it. */
static bool parse_int(const char *s, long long *out)
{
    char *end;
    if (!s || !*s || isspace((unsigned char)*s))
        return false;
    errno = 0;
    *out = strtoll(s, &end, 10);
    return !*end && errno == 0;
}

/* 1 when a node whose label has value v (NULL: the node has no such label) meets r, 0 when it
 * does not, -1 when r cannot be evaluated (an unknown operator, a bound that is no integer). */
static int req_admits(const struct tg_np_req *r, const char *v)
{
    long long have, bound;
    if (!strcmp(r->op, "In") || !strcmp(r->op, "NotIn")) {
        bool in = false;
        for (size_t i = 0; v && i < r->nvalues; i++)
            in |= !strcmp(r->values[i], v);
        return !strcmp(r->op, "In") ? in : !in;
    }
    if (!strcmp(r->op, "Exists"))
        return v != NULL;
    if (!strcmp(r->op, "DoesNotExist"))
        return v == NULL;
    int cmp = !strcmp(r->op, "Gt")    ? 1
              : !strcmp(r->op, "Gte") ? 2
              : !strcmp(r->op, "Lt")  ? -1
              : !strcmp(r->op, "Lte") ? -2
                                      : 0;
    if (cmp == 0 || r->nvalues != 1 || !parse_int(r->values[0], &bound))
        return -1;
    if (!v || !parse_int(v, &have))
        return 0;
    return cmp == 1    ? have > bound
           : cmp == 2  ? have >= bound
           : cmp == -1 ? have < bound
                       : have <= bound;
}

/* ---- an instance type's labels ------------------------------------------------------------- */

enum label {
    LABEL_ABSENT,  /* Karpenter does not set it on this type */
    LABEL_SET,     /* set to *out */
    LABEL_UNKNOWN, /* set, to a value the table cannot tell (a type the policy added) */
    LABEL_OTHER,   /* not a label of the instance type: it does not select types */
};

/* instance-category and -generation: the regex (^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\. that aws
 * pkg/providers/instancetype/types.go applies to the type name (p6-b200.48xlarge: p and 6). */
static bool category_generation(const char *name, bool want_category, char *buf, size_t len)
{
    const char *p = name, *d;
    while (*p >= 'a' && *p <= 'z')
        p++;
    const char *letters_end = p;
    if (*p == '-') {
        for (d = p + 1; isdigit((unsigned char)*d); d++)
            ;
        if (d > p + 1 && d[0] == 't' && d[1] == 'b')
            p = d + 2;
    }
    for (d = p; isdigit((unsigned char)*d); d++)
        ;
    if (letters_end == name || d == p || !strchr(d, '.'))
        return false;
    if (want_category)
        snprintf(buf, len, "%.*s", (int)(letters_end - name), name);
    else
        snprintf(buf, len, "%.*s", (int)(d - p), p);
    return true;
}

/* instance-family and -size: the two parts of the name around its one dot. */
static bool family_size(const char *name, bool want_family, char *buf, size_t len)
{
    const char *dot = strchr(name, '.');
    if (!dot || strchr(dot + 1, '.'))
        return false;
    if (want_family)
        snprintf(buf, len, "%.*s", (int)(dot - name), name);
    else
        snprintf(buf, len, "%s", dot + 1);
    return true;
}

static enum label count_label(int n, char *buf, size_t len)
{
    if (n <= 0)
        return LABEL_ABSENT;
    snprintf(buf, len, "%d", n);
    return LABEL_SET;
}

/* A text label: v is its value (NULL: the type has none) when the table knows the type's labels;
 * otherwise the type has the label with an unknown value when has is set, else none. */
static enum label text_label(const char *v, bool known, bool has, char *buf, size_t len)
{
    if (!known)
        return has ? LABEL_UNKNOWN : LABEL_ABSENT;
    if (!v)
        return LABEL_ABSENT;
    snprintf(buf, len, "%s", v);
    return LABEL_SET;
}

/* The labels of the accelerators and the machine (aws types.go computeRequirements: gpu-* only
 * for a type with one GPU kind, accelerator-* for Neuron devices). */
static enum label device_label(const struct tg_instance *in, const struct tg_instance_labels *row,
                               const char *k, char *buf, size_t len)
{
    if (!strcmp(k, "instance-gpu-count"))
        return count_label(in->gpus, buf, len);
    if (!strcmp(k, "instance-gpu-name"))
        return text_label(row ? row->gpu_name : NULL, row, in->gpus > 0, buf, len);
    if (!strcmp(k, "instance-gpu-manufacturer"))
        return text_label(row && row->gpu_name ? "nvidia" : NULL, row, in->gpus > 0, buf, len);
    if (!strcmp(k, "instance-accelerator-count"))
        return count_label(in->neuron, buf, len);
    if (!strcmp(k, "instance-accelerator-name"))
        return text_label(row ? row->accelerator_name : NULL, row, in->neuron > 0, buf, len);
    if (!strcmp(k, "instance-accelerator-manufacturer"))
        return text_label(in->neuron > 0 ? "aws" : NULL, true, false, buf, len);
    if (!strcmp(k, "instance-cpu"))
        return row ? count_label(row->vcpus, buf, len) : LABEL_UNKNOWN;
    if (!strcmp(k, "instance-memory")) {
        if (!row)
            return LABEL_UNKNOWN;
        snprintf(buf, len, "%ld", row->memory_mib);
        return LABEL_SET;
    }
    return LABEL_OTHER;
}

/* The value of label key (normalized) on the nodes of instance type in; row: its labels in the
 * built-in table, or NULL. */
static enum label instance_label(const struct tg_instance *in, const struct tg_instance_labels *row,
                                 const char *key, char *buf, size_t len)
{
    if (!strcmp(key, TYPE_KEY))
        return text_label(in->name, true, true, buf, len);
    if (!strcmp(key, "kubernetes.io/arch"))
        return text_label(row ? row->arch : NULL, row, true, buf, len);
    if (strncmp(key, AWS, strlen(AWS)))
        return LABEL_OTHER;
    const char *k = key + strlen(AWS);
    bool family = !strcmp(k, "instance-family"), category = !strcmp(k, "instance-category");
    if (family || !strcmp(k, "instance-size"))
        return family_size(in->name, family, buf, len) ? LABEL_SET : LABEL_ABSENT;
    if (category || !strcmp(k, "instance-generation"))
        return category_generation(in->name, category, buf, len) ? LABEL_SET : LABEL_ABSENT;
    return device_label(in, row, k, buf, len);
}

/* Whether the pool can launch instance type in: every requirement on a label of the type holds
 * for it (a label the table cannot tell is not held against it). */
static bool admits_type(const struct tg_nodepool *np, const struct tg_instance *in)
{
    const struct tg_instance_labels *row = tg_instance_labels_find(in->name);
    char buf[64];
    for (size_t i = 0; i < np->nreqs; i++) {
        const struct tg_np_req *r = &np->reqs[i];
        enum label l = instance_label(in, row, normalized(r->key), buf, sizeof(buf));
        if (l == LABEL_OTHER || l == LABEL_UNKNOWN)
            continue;
        if (req_admits(r, l == LABEL_SET ? buf : NULL) == 0)
            return false;
    }
    return true;
}

/* ---- karpenter.efa-zones ------------------------------------------------------------------- */

/* How many distinct values the requirements on key leave (-1: no In restricts it; a
 * DoesNotExist leaves none); *one gets the first of them. */
static long key_values(const struct tg_nodepool *np, const char *key, const char **one)
{
    const struct tg_np_req *in = NULL;
    long n = 0;
    for (size_t i = 0; i < np->nreqs; i++) {
        if (!on_key(&np->reqs[i], key))
            continue;
        if (!strcmp(np->reqs[i].op, "DoesNotExist"))
            return 0;
        if (!in && !strcmp(np->reqs[i].op, "In"))
            in = &np->reqs[i];
    }
    if (!in)
        return -1;
    for (size_t k = 0; k < in->nvalues; k++) {
        const char *v = in->values[k];
        bool ok = true;
        for (size_t j = 0; j < k && ok; j++)
            ok = strcmp(in->values[j], v) != 0;
        for (size_t i = 0; i < np->nreqs && ok; i++)
            ok = !on_key(&np->reqs[i], key) || req_admits(&np->reqs[i], v) != 0;
        if (ok && n++ == 0 && one)
            *one = v;
    }
    return n;
}

static bool one_value(const struct tg_nodepool *np, const char *key)
{
    long n = key_values(np, key, NULL);
    return n == 0 || n == 1;
}

/* The pool is listed as single-zone: a single-zone node label of the policy that its nodes carry
 * (karpenter.sh/nodepool=NAME, or a label the pool fixes to one value). */
static bool listed_single_zone(const struct tg_policy *pol, const struct tg_workload *wl)
{
    for (size_t i = 0; i < pol->nsingle_zone; i++) {
        const struct tg_zone_label *z = &pol->single_zone_labels[i];
        const char *v = NULL;
        if (!strcmp(z->key, NODEPOOL_KEY))
            v = wl->name[0] ? wl->name : NULL;
        else if (key_values(&wl->np, z->key, &v) != 1)
            v = NULL;
        for (size_t k = 0; v && k < z->nvalues; k++) {
            if (!strcmp(z->values[k], v))
                return true;
        }
        if (v && z->nvalues == 0)
            return true;
    }
    return false;
}

static bool zone_pinned(const struct tg_policy *pol, const struct tg_workload *wl)
{
    if (one_value(&wl->np, ZONE_KEY) || one_value(&wl->np, ZONE_ID_KEY))
        return true;
    for (size_t i = 0; i < pol->nzone_labels; i++) {
        if (one_value(&wl->np, pol->zone_labels[i]))
            return true;
    }
    for (size_t i = 0; i < pol->nzone_id_labels; i++) {
        if (one_value(&wl->np, pol->zone_id_labels[i]))
            return true;
    }
    return listed_single_zone(pol, wl);
}

/* The field to report: the first requirement on a zone key, else the requirements. */
static const char *zone_field(const struct tg_policy *pol, const struct tg_nodepool *np)
{
    for (size_t i = 0; i < np->nreqs; i++) {
        const char *key = normalized(np->reqs[i].key);
        if (!np->reqs[i].label && (!strcmp(key, ZONE_KEY) || !strcmp(key, ZONE_ID_KEY) ||
                                   tg_policy_is_zone_label(pol, key)))
            return np->reqs[i].path.field;
    }
    return "spec.template.spec.requirements";
}

static void efa_zones(struct tg_eval *ev)
{
    const struct tg_policy *pol = ev->policy;
    const struct tg_workload *wl = ev->wl;
    const char *first = NULL;
    size_t n = 0;
    char more[32] = "";
    for (size_t i = 0; i < pol->ninstances; i++) {
        if (pol->instances[i].efa > 0 && admits_type(&wl->np, &pol->instances[i]) && n++ == 0)
            first = pol->instances[i].name;
    }
    if (n == 0 || zone_pinned(pol, wl))
        return;
    if (n > 1)
        snprintf(more, sizeof(more), " +%zu", n - 1);
    tg_report(ev, TG_RULE_KARPENTER_EFA_ZONES, zone_field(pol, &wl->np),
              "allow EFA types (%s%s) in any zone, so a job's workers may span zones: require "
              "one zone, or list the pool in singleZoneNodeLabels if its EC2NodeClass subnets "
              "share one",
              first, more);
}

/* ---- karpenter.budget-not-spot ------------------------------------------------------------- */

/* Spot is allowed unless a capacity-type requirement excludes it (Karpenter v1 has no on-demand
 * default: aws pkg/providers/instance/instance.go getCapacityType). */
static bool spot_allowed(const struct tg_nodepool *np)
{
    for (size_t i = 0; i < np->nreqs; i++) {
        if (on_key(&np->reqs[i], CAPACITY_KEY) && req_admits(&np->reqs[i], "spot") == 0)
            return false;
    }
    return true;
}

/* nodes "0", "00", "0%", "00%": the pattern ^((100|[0-9]{1,2})%|[0-9]+)$ read as a number. */
static bool zero_nodes(const char *s)
{
    size_t n = strlen(s);
    if (n > 1 && s[n - 1] == '%')
        n--;
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '0')
            return false;
    }
    return true;
}

/* A Go duration ("10m", "8h", "1h30m", "90s") in seconds; false when it is not one. */
static bool duration_seconds(const char *s, double *out)
{
    static const struct {
        const char *unit;
        double secs;
    } units[] = {{"h", 3600}, {"ms", 1e-3}, {"m", 60}, {"s", 1}, {"us", 1e-6}, {"ns", 1e-9}};
    *out = 0;
    if (!*s)
        return false;
    while (*s) {
        char *end;
        double v = strtod(s, &end);
        size_t u = 0;
        if (end == s || !isdigit((unsigned char)*s))
            return false;
        while (u < sizeof(units) / sizeof(units[0]) &&
               strncmp(end, units[u].unit, strlen(units[u].unit)))
            u++;
        if (u == sizeof(units) / sizeof(units[0]))
            return false;
        *out += v * units[u].secs;
        s = end + strlen(units[u].unit);
    }
    return true;
}

/* Active at every moment: no schedule, or a schedule whose duration covers its longest gap
 * (core Budget.IsActive: active while a schedule hit lies within the last `duration`). */
static bool always_active(const struct tg_np_budget *b)
{
    long gap;
    double secs;
    if (!b->schedule && !b->duration)
        return true;
    if (!b->schedule || !b->duration || tg_cron_max_gap(b->schedule, &gap) < 0 ||
        !duration_seconds(b->duration, &secs))
        return false;
    return secs >= (double)gap * 60;
}

static void budget_not_spot(struct tg_eval *ev)
{
    const struct tg_nodepool *np = &ev->wl->np;
    const struct tg_np_budget *whole = NULL;
    unsigned covered = 0;
    char field[TG_PATH_MAX];
    /* The most restrictive active budget wins per reason (GetAllowedDisruptionsByReason). */
    for (size_t i = 0; i < np->nbudgets; i++) {
        const struct tg_np_budget *b = &np->budgets[i];
        if (!zero_nodes(b->nodes) || !always_active(b))
            continue;
        covered |= b->reasons;
        if (!whole && b->reasons == TG_NP_ALL_REASONS)
            whole = b;
    }
    if (covered != TG_NP_ALL_REASONS || !spot_allowed(np))
        return;
    if (whole)
        tg_path_sub(field, sizeof(field), &whole->path, "nodes");
    else
        snprintf(field, sizeof(field), "spec.disruption.budgets");
    const char *expire = np->expire_after ? np->expire_after : DEFAULT_EXPIRE_AFTER;
    if (!strcmp(expire, "Never"))
        tg_report(ev, TG_RULE_KARPENTER_BUDGET_NOT_SPOT, field,
                  "0 stops voluntary disruption only: Spot reclaims (spot is allowed) still end "
                  "nodes; for long runs prefer on-demand/reserved capacity and checkpoints");
    else
        tg_report(ev, TG_RULE_KARPENTER_BUDGET_NOT_SPOT, field,
                  "0 stops voluntary disruption only: Spot reclaims (spot is allowed) and "
                  "expireAfter (%.16s) still end nodes; for long runs prefer on-demand/reserved, a "
                  "longer expireAfter, checkpoints",
                  expire);
}

int tg_rules_karpenter(struct tg_eval *ev)
{
    if (!ev->policy || ev->wl->kind != TG_KIND_NODEPOOL || tg_workload_spec_unchanged(ev->wl))
        return 0;
    efa_zones(ev);
    budget_not_spot(ev);
    return ev->error;
}
