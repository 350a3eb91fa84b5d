/* zone.c -- the zone.* rules: the pods of an EFA job must share one availability zone, because
 * EFA does not cross zones (SPEC sections 4, 9, 11 and 13; docs/references.md#ref-efa-same-az,
 * #ref-k8s-zone-labels). The scope is the world (include/tg/workload.h): zone.missing,
 * zone.multiple and zone.preferred-only need two or more EFA pods in one world, zone.conflict
 * compares the templates of one world, and a conflict inside one template always counts. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/obj.h"
#include "tg/pod.h"
#include "tg/policy.h"
#include "tg/registry.h"

#define REQUIRED "requiredDuringSchedulingIgnoredDuringExecution"
#define PREFERRED "preferredDuringSchedulingIgnoredDuringExecution"
/* kubernetes-sigs/kueue: apis/kueue/v1beta2/topology_types.go (Topology-Aware Scheduling). */
#define KUEUE_TAS_REQUIRED "kueue.x-k8s.io/podset-required-topology"
#define KUEUE_TAS_PREFERRED "kueue.x-k8s.io/podset-preferred-topology"
/* Zone lists in messages are cut here so that a line stays well under 256 characters. */
#define LIST_MAX 64
/* Templates whose pins tg_rules_zone keeps on the stack; more take the heap. */
#define PINS_ON_STACK 4

enum pin_state {
    PIN_NONE = 0, /* nothing pins a zone */
    PIN_ONE,      /* pinned to one zone (named, or held together with unknown name) */
    PIN_MULTIPLE, /* required node affinity allows several zones, nothing else pins */
    PIN_CONFLICT, /* two pins of this template contradict each other (reported) */
};

/* How one template is placed, in zone terms. */
struct zone_pin {
    enum pin_state state;
    const char *zone;    /* the named zone when PIN_ONE names it, else NULL */
    const char *zone_id; /* the zone id (topology.k8s.aws/zone-id) when one is pinned, or NULL */
    /* Where the deciding pin is written: field itself (PIN_FIELD_PATH), or, built only when a
     * finding names it (pin_field), t's nodeSelector key of keys or its required node affinity
     * terms. */
    enum { PIN_FIELD_PATH, PIN_FIELD_SELECTOR, PIN_FIELD_AFFINITY } field_kind;
    const struct tg_template *field_tpl;
    char *const *field_keys;
    size_t field_nkeys;
    struct tg_path field;
    bool preferred; /* a preferred affinity names a zone key */
    struct tg_path pref_field;
    char allowed[LIST_MAX]; /* PIN_MULTIPLE: the zones the affinity allows */
};

static bool key_in(const char *key, char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(keys[i], key))
            return true;
    }
    return false;
}

static void join(const struct tg_label_pin *p, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < p->n; i++) {
        int w = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", p->values[i]);
        if (w < 0 || (size_t)w >= len - at) {
            if (len > 4)
                memcpy(buf + len - 4, "...", 4);
            return;
        }
        at += (size_t)w;
    }
}

/* The first of keys written in nodeSelector (for the field), or NULL. */
static const char *selector_zone_key(char *const *keys, size_t nkeys, const struct tg_template *t)
{
    json_t *ns = tg_template_node_selector(t);
    for (size_t i = 0; i < nkeys; i++) {
        if (json_is_string(json_object_get(ns, keys[i])))
            return keys[i];
    }
    return NULL;
}

/* A nodeSelector entry on a single-zone node label of the policy; NULL when none matches. */
static const struct tg_zone_label *single_zone_pin(const struct tg_policy *pol,
                                                   const struct tg_template *t)
{
    json_t *ns = tg_template_node_selector(t);
    for (size_t i = 0; i < pol->nsingle_zone; i++) {
        const struct tg_zone_label *z = &pol->single_zone_labels[i];
        const char *v = json_string_value(json_object_get(ns, z->key));
        if (!v)
            continue;
        if (z->nvalues == 0)
            return z;
        for (size_t k = 0; k < z->nvalues; k++) {
            if (!strcmp(z->values[k], v))
                return z;
        }
    }
    return NULL;
}

/* A pod affinity term list holds the pods in one zone: a topologyKey that is a zone label or a
 * narrower domain (SPEC section 9). */
static bool holds_in_zone(const struct tg_policy *pol, json_t *terms, bool weighted)
{
    size_t i;
    json_t *t;
    json_array_foreach (terms, i, t) {
        if (weighted)
            t = json_object_get(t, "podAffinityTerm");
        const char *key = json_string_value(json_object_get(t, "topologyKey"));
        if (key && (key_in(key, pol->zone_labels, pol->nzone_labels) ||
                    key_in(key, pol->narrow_topology_keys, pol->nnarrow)))
            return true;
    }
    return false;
}

/* Required pod affinity that keeps the pods together; sets field (only when it does). */
static bool pod_affinity_pin(struct tg_eval *ev, const struct tg_template *t, struct tg_path *field)
{
    struct tg_path p;
    /* read first without paths; through the getters (which report at their paths) only when a
     * member on the way has the wrong type */
    json_t *raff = tg_template_affinity(t);
    json_t *rpa = json_is_object(raff) ? json_object_get(raff, "podAffinity") : NULL;
    json_t *rreq = json_is_object(rpa) ? json_object_get(rpa, REQUIRED) : NULL;
    if (!tg_wrong_type(raff, JSON_OBJECT) && !tg_wrong_type(rpa, JSON_OBJECT) &&
        !tg_wrong_type(rreq, JSON_ARRAY)) {
        if (!json_is_array(rreq) || !holds_in_zone(ev->policy, rreq, false))
            return false;
        tg_path_key(field, &t->spec_path, "affinity");
        tg_path_key(field, field, "podAffinity");
        tg_path_key(field, field, REQUIRED);
        return true;
    }
    json_t *aff = tg_get_object(ev, t->spec, &t->spec_path, "affinity");
    tg_path_key(&p, &t->spec_path, "affinity");
    json_t *pa = tg_get_object(ev, aff, &p, "podAffinity");
    tg_path_key(&p, &p, "podAffinity");
    json_t *req = tg_get_array(ev, pa, &p, REQUIRED);
    tg_path_key(field, &p, REQUIRED);
    return holds_in_zone(ev->policy, req, false);
}

/* A preferred node affinity on a zone label, or a preferred pod affinity on a zone-narrow key. */
static bool preferred_pin(const struct tg_policy *pol, const struct tg_template *t,
                          struct tg_path *field)
{
    struct tg_path p;
    size_t i, k;
    json_t *w, *e;
    json_t *aff = tg_template_affinity(t);
    json_t *pref = json_object_get(json_object_get(aff, "nodeAffinity"), PREFERRED);
    json_array_foreach (pref, i, w) {
        json_t *exprs = json_object_get(json_object_get(w, "preference"), "matchExpressions");
        json_array_foreach (exprs, k, e) {
            const char *key = json_string_value(json_object_get(e, "key"));
            if (key && tg_policy_is_zone_label(pol, key)) {
                tg_path_key(&p, &t->spec_path, "affinity");
                tg_path_key(field, &p, "nodeAffinity");
                tg_path_key(field, field, PREFERRED);
                return true;
            }
        }
    }
    json_t *ppref = json_object_get(json_object_get(aff, "podAffinity"), PREFERRED);
    if (json_is_array(ppref) && holds_in_zone(pol, ppref, true)) {
        tg_path_key(&p, &t->spec_path, "affinity");
        tg_path_key(field, &p, "podAffinity");
        tg_path_key(field, field, PREFERRED);
        return true;
    }
    return false;
}

/* Where the required node affinity terms of t are written. Paths are built only where a finding
 * or a pin names them (building one costs more than most checks). */
static void affinity_path(const struct tg_template *t, struct tg_path *p)
{
    tg_path_key(p, &t->spec_path, "affinity");
    tg_path_key(p, p, "nodeAffinity");
    tg_path_key(p, p, REQUIRED);
    tg_path_key(p, p, "nodeSelectorTerms");
}

/* Where t's nodeSelector writes the first of zkeys (nodeSelector itself when none). */
static void selector_path(const struct tg_template *t, char *const *zkeys, size_t nzkeys,
                          struct tg_path *p)
{
    const char *nskey = selector_zone_key(zkeys, nzkeys, t);
    tg_path_key(p, &t->spec_path, "nodeSelector");
    if (nskey)
        tg_path_key(p, p, nskey);
}

/* The deciding pin of zp is at t's nodeSelector (one of zkeys) or its required node affinity. */
static void pin_field_later(struct zone_pin *zp, int kind, const struct tg_template *t,
                            char *const *zkeys, size_t nzkeys)
{
    zp->field_kind = kind;
    zp->field_tpl = t;
    zp->field_keys = zkeys;
    zp->field_nkeys = nzkeys;
}

/* Where the deciding pin of zp is written (buf holds it when it is built here). */
static const char *pin_field(const struct zone_pin *zp, struct tg_path *buf)
{
    switch (zp->field_kind) {
    case PIN_FIELD_SELECTOR:
        selector_path(zp->field_tpl, zp->field_keys, zp->field_nkeys, buf);
        return buf->field;
    case PIN_FIELD_AFFINITY:
        affinity_path(zp->field_tpl, buf);
        return buf->field;
    default:
        return zp->field.field;
    }
}

/* Works out how template t is placed by one family of zone keys (zone names, or zone ids: two
 * namespaces of values that are never compared with each other). Conflicts inside t are reported
 * when report is set. */
static int template_pin_by(struct tg_eval *ev, const struct tg_template *t, bool report,
                           char *const *zkeys, size_t nzkeys, struct zone_pin *zp)
{
    const struct tg_policy *pol = ev->policy;
    const char *const *keys = (const char *const *)zkeys;
    struct tg_label_pin ns, aff;
    struct tg_path affp, nsp;
    char list[LIST_MAX];
    bool several = false;
    int rc;
    /* zeroed but for the two paths, which start at the root (written only when they are used) */
    zp->state = PIN_NONE;
    zp->zone = zp->zone_id = NULL;
    zp->field_kind = PIN_FIELD_PATH;
    zp->field_tpl = NULL;
    zp->field_keys = NULL;
    zp->field_nkeys = 0;
    tg_path_root(&zp->field);
    zp->preferred = false;
    tg_path_root(&zp->pref_field);
    zp->allowed[0] = '\0';
    tg_label_pin_init(&aff);
    if ((rc = tg_template_pin_node_selector(ev, t, keys, nzkeys, &ns)) < 0 ||
        (rc = tg_template_pin_node_affinity(ev, t, keys, nzkeys, &aff)) < 0)
        goto out;
    join(&aff, list, sizeof(list));
    if (ns.finite && ns.n == 0) {
        zp->state = PIN_CONFLICT;
        if (report) {
            selector_path(t, zkeys, nzkeys, &nsp);
            tg_report(ev, TG_RULE_ZONE_CONFLICT, nsp.field,
                      "nodeSelector names two different zones; no node has both: keep one");
        }
        goto out;
    }
    if (ns.finite) {
        zp->state = PIN_ONE;
        zp->zone = ns.values[0];
        pin_field_later(zp, PIN_FIELD_SELECTOR, t, zkeys, nzkeys);
    }
    if (aff.finite && aff.n == 0) {
        zp->state = PIN_CONFLICT;
        if (report) {
            affinity_path(t, &affp);
            tg_report(ev, TG_RULE_ZONE_CONFLICT, affp.field,
                      "the zone expressions of every term contradict each other: no node "
                      "matches; allow one zone");
        }
        goto out;
    }
    if (aff.finite && zp->zone && !tg_label_pin_has(&aff, zp->zone)) {
        zp->state = PIN_CONFLICT;
        if (report) {
            selector_path(t, zkeys, nzkeys, &nsp);
            tg_report(ev, TG_RULE_ZONE_CONFLICT, nsp.field,
                      "pins zone %s but required node affinity allows only %s: no node matches "
                      "both; keep one zone",
                      zp->zone, list);
        }
        goto out;
    }
    if (!zp->zone && aff.finite && aff.n == 1) {
        zp->state = PIN_ONE;
        zp->zone = aff.values[0];
        pin_field_later(zp, PIN_FIELD_AFFINITY, t, zkeys, nzkeys);
    } else if (!zp->zone && aff.mentioned) {
        several = true;
    }
    const struct tg_zone_label *sz = single_zone_pin(pol, t);
    if (sz) {
        struct tg_path szp;
        tg_path_key(&szp, &t->spec_path, "nodeSelector");
        tg_path_key(&szp, &szp, sz->key);
        if (sz->zone && zp->zone && strcmp(sz->zone, zp->zone)) {
            if (report)
                tg_report(ev, TG_RULE_ZONE_CONFLICT, szp.field,
                          "selects nodes of zone %s (policy singleZoneNodeLabels) but the "
                          "template also pins zone %s; keep one zone",
                          sz->zone, zp->zone);
            zp->state = PIN_CONFLICT;
            goto out;
        }
        if (sz->zone && aff.finite && !tg_label_pin_has(&aff, sz->zone)) {
            zp->state = PIN_CONFLICT;
            if (report)
                tg_report(ev, TG_RULE_ZONE_CONFLICT, szp.field,
                          "selects nodes of zone %s (policy singleZoneNodeLabels) but required "
                          "node affinity allows only %s; keep one zone",
                          sz->zone, list);
            goto out;
        }
        if (zp->state != PIN_ONE) {
            zp->state = PIN_ONE;
            zp->zone = sz->zone;
            zp->field_kind = PIN_FIELD_PATH;
            zp->field = szp;
        }
    }
    if (zp->state == PIN_NONE && pod_affinity_pin(ev, t, &zp->field)) {
        zp->state = PIN_ONE;
        zp->field_kind = PIN_FIELD_PATH;
    }
    if (zp->state == PIN_NONE && several) {
        zp->state = PIN_MULTIPLE;
        pin_field_later(zp, PIN_FIELD_AFFINITY, t, zkeys, nzkeys);
        if (aff.finite)
            snprintf(zp->allowed, sizeof(zp->allowed), "%s", list);
    }
    if (zp->state == PIN_NONE)
        zp->preferred = preferred_pin(pol, t, &zp->pref_field);
out:
    tg_label_pin_release(&ns);
    tg_label_pin_release(&aff);
    return rc;
}

/* How template t is placed, by zone names and by zone ids together: pinned when either family
 * pins one zone; a conflict in either is a conflict. The zone name is the reference for
 * comparisons between templates, the zone id where no name is pinned. */
static int template_pin(struct tg_eval *ev, const struct tg_template *t, bool report,
                        struct zone_pin *zp)
{
    const struct tg_policy *pol = ev->policy;
    struct zone_pin byid;
    int rc = template_pin_by(ev, t, report, pol->zone_labels, pol->nzone_labels, zp);
    if (rc < 0 || pol->nzone_id_labels == 0)
        return rc;
    if ((rc = template_pin_by(ev, t, report, pol->zone_id_labels, pol->nzone_id_labels, &byid)) < 0)
        return rc;
    if (byid.state == PIN_ONE && byid.zone)
        zp->zone_id = byid.zone;
    if (zp->state == PIN_CONFLICT || byid.state == PIN_CONFLICT) {
        zp->state = PIN_CONFLICT;
    } else if (zp->state != PIN_ONE && byid.state == PIN_ONE) {
        const char *id = zp->zone_id;
        *zp = byid;
        zp->zone = NULL;
        zp->zone_id = id;
    } else if (zp->state == PIN_NONE && byid.state == PIN_MULTIPLE) {
        *zp = byid;
        zp->zone = NULL;
    }
    return 0;
}

/* ---- pins that hold each copy of a world together ----------------------------------------- */

/* A node label that confines pods to one zone: a zone (or zone id) label, or a narrower key. */
static bool zone_or_narrower(const struct tg_policy *pol, const char *key)
{
    return key && (tg_policy_is_zone_label(pol, key) ||
                   key_in(key, pol->narrow_topology_keys, pol->nnarrow));
}

static const char *template_annotation(const struct tg_template *t, const char *key)
{
    return json_string_value(json_object_get(json_object_get(t->meta, "annotations"), key));
}

/* SPEC 11: a JobSet or LWS exclusive-topology key on a zone key pins each child Job / group, when
 * each is its own world (the decoder sets copy_topology only then); Kueue's
 * podset-required-topology on a zone key or a narrower one puts all pods of the template in one
 * domain; podset-preferred-topology is judged like a preferred affinity. */
static void group_pins(const struct tg_policy *pol, const struct tg_template *t,
                       struct zone_pin *zp)
{
    if (zp->state != PIN_NONE && zp->state != PIN_MULTIPLE)
        return;
    if (zone_or_narrower(pol, t->copy_topology) ||
        zone_or_narrower(pol, template_annotation(t, KUEUE_TAS_REQUIRED))) {
        zp->state = PIN_ONE;
        zp->zone = NULL;
        return;
    }
    if (zp->state == PIN_NONE && !zp->preferred &&
        zone_or_narrower(pol, template_annotation(t, KUEUE_TAS_PREFERRED))) {
        zp->preferred = true;
        tg_path_key(&zp->pref_field, &t->path, "metadata");
        tg_path_key(&zp->pref_field, &zp->pref_field, "annotations");
        tg_path_key(&zp->pref_field, &zp->pref_field, KUEUE_TAS_PREFERRED);
    }
}

/* ---- scope: which templates need one zone ---------------------------------------------------- */

/* SPEC 13 "Pods at admission": a group of two or more pods that no judged workload owns. */
static bool pod_shows_group(const struct tg_workload *wl)
{
    /* the gang keys, then the size keys */
    static const char *const keys[] = {
        "scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name",
        "scheduling.x-k8s.io/pod-group", "leaderworkerset.sigs.k8s.io/size",
        "leaderworkerset.sigs.k8s.io/group-size"};
    enum { NKEYS = sizeof(keys) / sizeof(keys[0]), NGANG = 3 };
    /* one walk over each map (they are small), not a lookup per key */
    json_t *ann[NKEYS], *lab[NKEYS];
    tg_members_named(wl->annotations, keys, NKEYS, ann);
    tg_members_named(wl->labels, keys, NKEYS, lab);
    for (size_t i = 0; i < NGANG; i++) {
        /* scheduler-plugins sets its key as a label, Volcano as an annotation: accept both */
        const char *g = json_string_value(ann[i]);
        if (!g)
            g = json_string_value(lab[i]);
        if (g && *g)
            return true;
    }
    for (size_t i = NGANG; i < NKEYS; i++) {
        /* LWS writes the size annotation; SPEC 11 names a group-size label: accept both */
        const char *v = json_string_value(ann[i]);
        if (!v)
            v = json_string_value(lab[i]);
        char *end;
        long n = v ? strtol(v, &end, 10) : 0;
        if (v && end != v && *end == '\0' && n >= 2)
            return true;
    }
    return false;
}

/* May zone.missing, zone.multiple and zone.preferred-only judge this object at all? */
static bool judges_unpinned(const struct tg_workload *wl)
{
    if (wl->judged_owner || wl->queue_held)
        return false; /* judged through its owner; held by Kueue until it sets the zone */
    return wl->kind != TG_KIND_POD || pod_shows_group(wl);
}

/* EFA pods in one copy of world w (every_world templates included); unknown counts as two. */
static long long world_efa_pods(const struct tg_workload *wl, const bool *efa, int w, bool any)
{
    long long n = 0;
    for (size_t i = 0; i < wl->ntpl; i++) {
        const struct tg_template *t = &wl->tpl[i];
        if (!efa[i] || !(t->every_world || (!any && t->world == w)))
            continue;
        if (__builtin_add_overflow(n, t->world_pods < 0 ? 2 : t->world_pods, &n))
            return LLONG_MAX; /* more pods than anything counts: still more than one */
    }
    return n;
}

/* SPEC 13: two or more EFA pods in one world. A template in every world (the Ray head) counts
 * in each of them. */
static bool needs_zone(const struct tg_workload *wl, const bool *efa, size_t i)
{
    const struct tg_template *t = &wl->tpl[i];
    if (wl->kind == TG_KIND_POD)
        return true; /* judges_unpinned() saw its group of two or more */
    if (!t->every_world)
        return world_efa_pods(wl, efa, t->world, false) >= 2;
    bool other = false;
    for (size_t k = 0; k < wl->ntpl; k++) {
        if (wl->tpl[k].every_world)
            continue;
        other = true;
        if (world_efa_pods(wl, efa, wl->tpl[k].world, false) >= 2)
            return true;
    }
    return !other && world_efa_pods(wl, efa, 0, true) >= 2;
}

static void report_unpinned(struct tg_eval *ev, const struct tg_template *t,
                            const struct zone_pin *zp)
{
    struct tg_path buf;
    if (zp->state == PIN_MULTIPLE) {
        if (zp->allowed[0])
            tg_report(ev, TG_RULE_ZONE_MULTIPLE, pin_field(zp, &buf),
                      "allows zones %s; EFA cannot span zones: allow one (or add a required zone "
                      "pod affinity)",
                      zp->allowed);
        else
            tg_report(ev, TG_RULE_ZONE_MULTIPLE, pin_field(zp, &buf),
                      "does not pin one zone in every term, and EFA cannot span zones: pin the "
                      "same zone in each term");
    } else if (ev->wl->kind == TG_KIND_TRAINJOB) {
        /* SPEC 11: a TrainJob's runtime usually pins the zone, and is judged on its own. */
        return;
    } else if (zp->preferred) {
        tg_report(ev, TG_RULE_ZONE_PREFERRED_ONLY, zp->pref_field.field,
                  "the zone is only preferred, so pods may land in different zones, which EFA "
                  "cannot span; make it required");
    } else {
        tg_report(ev, TG_RULE_ZONE_MISSING, t->spec_path.field[0] ? t->spec_path.field : "spec",
                  "requests EFA but is not pinned to one zone, and EFA does not cross zones: set "
                  "nodeSelector topology.kubernetes.io/zone or a required pod affinity on it");
    }
}

/* zone.conflict between the EFA templates of one world: the first one with a named zone (or zone
 * id) is the reference for the others. */
static void check_between(struct tg_eval *ev, const bool *efa, const struct zone_pin *pins)
{
    const struct tg_workload *wl = ev->wl;
    for (size_t j = 0; j < wl->ntpl; j++) {
        const struct zone_pin *zp = &pins[j];
        const struct tg_template *ref = NULL, *ref_id = NULL;
        struct tg_path buf;
        const char *zone = NULL, *id = NULL;
        if (!efa[j] || zp->state != PIN_ONE)
            continue;
        for (size_t i = 0; i < j; i++) {
            if (!efa[i] || pins[i].state != PIN_ONE ||
                !tg_templates_share_world(&wl->tpl[i], &wl->tpl[j]))
                continue;
            if (!zone && pins[i].zone) {
                zone = pins[i].zone;
                ref = &wl->tpl[i];
            }
            if (!id && pins[i].zone_id) {
                id = pins[i].zone_id;
                ref_id = &wl->tpl[i];
            }
        }
        if (zone && zp->zone && strcmp(zone, zp->zone))
            tg_report(ev, TG_RULE_ZONE_CONFLICT, pin_field(zp, &buf),
                      "pins zone %s but the %s template pins %s, and EFA cannot cross zones: "
                      "pin all templates to one zone",
                      zp->zone, ref->role_name, zone);
        if (id && zp->zone_id && strcmp(id, zp->zone_id))
            tg_report(ev, TG_RULE_ZONE_CONFLICT, pin_field(zp, &buf),
                      "pins zone id %s but the %s template pins %s, and EFA cannot cross zones: "
                      "pin all templates to one zone",
                      zp->zone_id, ref_id->role_name, id);
    }
}

int tg_rules_zone(struct tg_eval *ev)
{
    struct tg_workload *wl = ev->wl;
    bool any_efa = false;
    int rc = 0;
    if (!ev->policy || wl->ntpl == 0 || tg_workload_spec_unchanged(wl))
        return 0;
    /* Most workloads have a template or two: their pins live on the stack (a zone_pin holds two
     * paths, and a calloc of that size costs more than the rule). A pin is written by
     * template_pin before it is read, and only for the templates with EFA. */
    bool efa_stack[PINS_ON_STACK];
    struct zone_pin pins_stack[PINS_ON_STACK];
    bool heap = wl->ntpl > PINS_ON_STACK;
    bool *efa = heap ? calloc(wl->ntpl, sizeof(*efa)) : efa_stack;
    struct zone_pin *pins = heap ? calloc(wl->ntpl, sizeof(*pins)) : pins_stack;
    if (!efa || !pins) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < wl->ntpl; i++)
        any_efa |= efa[i] = tg_template_requests_efa(&wl->tpl[i]);
    if (!any_efa)
        goto out;
    /* SPEC 13: zone.conflict inside one template always applies (that pod can never schedule);
     * a template without EFA (an MPI launcher, a Ray head) may run in any zone. */
    for (size_t i = 0; i < wl->ntpl; i++) {
        if (!efa[i])
            continue;
        if ((rc = template_pin(ev, &wl->tpl[i], true, &pins[i])) < 0)
            goto out;
        group_pins(ev->policy, &wl->tpl[i], &pins[i]);
    }
    bool judge = judges_unpinned(wl);
    for (size_t i = 0; i < wl->ntpl && judge; i++) {
        if (efa[i] && pins[i].state != PIN_ONE && pins[i].state != PIN_CONFLICT &&
            needs_zone(wl, efa, i))
            report_unpinned(ev, &wl->tpl[i], &pins[i]);
    }
    check_between(ev, efa, pins);
    rc = ev->error;
out:
    if (heap) {
        free(efa);
        free(pins);
    }
    return rc;
}
