/* zone.c -- the zone.* rules: the pods of an EFA job must share one availability zone, because
 * EFA does not cross zones (SPEC sections 4 and 9; api-facts 5.6, 5.7). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tg/obj.h"
#include "tg/pod.h"
#include "tg/policy.h"
#include "tg/registry.h"

#define REQUIRED "requiredDuringSchedulingIgnoredDuringExecution"
#define PREFERRED "preferredDuringSchedulingIgnoredDuringExecution"
/* Zone lists in messages are cut here so that a line stays well under 256 characters. */
#define LIST_MAX 64

enum pin_state {
    PIN_NONE = 0, /* nothing pins a zone */
    PIN_ONE,      /* pinned to one zone (named, or held together with unknown name) */
    PIN_MULTIPLE, /* required node affinity allows several zones, nothing else pins */
    PIN_CONFLICT, /* two pins of this template contradict each other (reported) */
};

/* How one template is placed, in zone terms. */
struct zone_pin {
    enum pin_state state;
    const char *zone;     /* the named zone when PIN_ONE names it, else NULL */
    const char *zone_id;  /* the zone id (topology.k8s.aws/zone-id) when one is pinned, or NULL */
    struct tg_path field; /* where the deciding pin is written */
    bool preferred;       /* a preferred affinity names a zone key */
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
static const char *selector_zone_key(char *const *keys, size_t nkeys, json_t *spec)
{
    json_t *ns = json_object_get(spec, "nodeSelector");
    for (size_t i = 0; i < nkeys; i++) {
        if (json_is_string(json_object_get(ns, keys[i])))
            return keys[i];
    }
    return NULL;
}

/* A nodeSelector entry on a single-zone node label of the policy; NULL when none matches. */
static const struct tg_zone_label *single_zone_pin(const struct tg_policy *pol, json_t *spec)
{
    json_t *ns = json_object_get(spec, "nodeSelector");
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

/* Required pod affinity that keeps the pods together; sets field. */
static bool pod_affinity_pin(struct tg_eval *ev, const struct tg_template *t, struct tg_path *field)
{
    struct tg_path p;
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
    json_t *aff = json_object_get(t->spec, "affinity");
    tg_path_key(&p, &t->spec_path, "affinity");
    json_t *pref = json_object_get(json_object_get(aff, "nodeAffinity"), PREFERRED);
    json_array_foreach (pref, i, w) {
        json_t *exprs = json_object_get(json_object_get(w, "preference"), "matchExpressions");
        json_array_foreach (exprs, k, e) {
            const char *key = json_string_value(json_object_get(e, "key"));
            if (key && tg_policy_is_zone_label(pol, key)) {
                tg_path_key(field, &p, "nodeAffinity");
                tg_path_key(field, field, PREFERRED);
                return true;
            }
        }
    }
    json_t *ppref = json_object_get(json_object_get(aff, "podAffinity"), PREFERRED);
    if (json_is_array(ppref) && holds_in_zone(pol, ppref, true)) {
        tg_path_key(field, &p, "podAffinity");
        tg_path_key(field, field, PREFERRED);
        return true;
    }
    return false;
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
    memset(zp, 0, sizeof(*zp));
    tg_label_pin_init(&aff);
    if ((rc = tg_pin_node_selector(ev, t->spec, &t->spec_path, keys, nzkeys, &ns)) < 0 ||
        (rc = tg_pin_node_affinity(ev, t->spec, &t->spec_path, keys, nzkeys, &aff)) < 0)
        goto out;
    tg_path_key(&affp, &t->spec_path, "affinity");
    tg_path_key(&affp, &affp, "nodeAffinity");
    tg_path_key(&affp, &affp, REQUIRED);
    tg_path_key(&affp, &affp, "nodeSelectorTerms");
    tg_path_key(&nsp, &t->spec_path, "nodeSelector");
    const char *nskey = selector_zone_key(zkeys, nzkeys, t->spec);
    if (nskey)
        tg_path_key(&nsp, &nsp, nskey);
    join(&aff, list, sizeof(list));
    if (ns.finite && ns.n == 0) {
        zp->state = PIN_CONFLICT;
        if (report)
            tg_report(ev, TG_RULE_ZONE_CONFLICT, nsp.field,
                      "nodeSelector names two different zones; no node has both: keep one");
        goto out;
    }
    if (ns.finite) {
        zp->state = PIN_ONE;
        zp->zone = ns.values[0];
        zp->field = nsp;
    }
    if (aff.finite && aff.n == 0) {
        zp->state = PIN_CONFLICT;
        if (report)
            tg_report(ev, TG_RULE_ZONE_CONFLICT, affp.field,
                      "the zone expressions of every term contradict each other: no node "
                      "matches; allow one zone");
        goto out;
    }
    if (aff.finite && zp->zone && !tg_label_pin_has(&aff, zp->zone)) {
        zp->state = PIN_CONFLICT;
        if (report)
            tg_report(ev, TG_RULE_ZONE_CONFLICT, nsp.field,
                      "pins zone %s but required node affinity allows only %s: no node matches "
                      "both; keep one zone",
                      zp->zone, list);
        goto out;
    }
    if (!zp->zone && aff.finite && aff.n == 1) {
        zp->state = PIN_ONE;
        zp->zone = aff.values[0];
        zp->field = affp;
    } else if (!zp->zone && aff.mentioned) {
        several = true;
    }
    const struct tg_zone_label *sz = single_zone_pin(pol, t->spec);
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
            zp->field = szp;
        }
    }
    if (zp->state == PIN_NONE && pod_affinity_pin(ev, t, &zp->field))
        zp->state = PIN_ONE;
    if (zp->state == PIN_NONE && several) {
        zp->state = PIN_MULTIPLE;
        zp->field = affp;
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

/* zone.missing / multiple / preferred-only apply to workloads of two or more pods that use EFA
 * (SPEC section 9). Unknown replicas count as several. */
static bool multi_pod(const struct tg_workload *wl)
{
    long long pods = 0;
    switch (wl->kind) {
    case TG_KIND_NODESET:
        return true;
    case TG_KIND_POD:
        return wl->has_owner ||
               json_object_get(wl->annotations, "scheduling.k8s.io/group-name") != NULL;
    case TG_KIND_MPIJOB:
    case TG_KIND_VCJOB:
        for (size_t i = 0; i < wl->ntpl; i++) {
            if (!tg_template_requests_efa(&wl->tpl[i]))
                continue;
            pods += wl->tpl[i].replicas < 0 ? 2 : wl->tpl[i].replicas;
        }
        return pods >= 2;
    default:
        return false;
    }
}

static void report_unpinned(struct tg_eval *ev, const struct tg_template *t,
                            const struct zone_pin *zp)
{
    if (zp->state == PIN_MULTIPLE) {
        if (zp->allowed[0])
            tg_report(ev, TG_RULE_ZONE_MULTIPLE, zp->field.field,
                      "allows zones %s; EFA cannot span zones: allow one (or add a required zone "
                      "pod affinity)",
                      zp->allowed);
        else
            tg_report(ev, TG_RULE_ZONE_MULTIPLE, zp->field.field,
                      "does not pin one zone in every term, and EFA cannot span zones: pin the "
                      "same zone in each term");
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

int tg_rules_zone(struct tg_eval *ev)
{
    struct tg_workload *wl = ev->wl;
    struct zone_pin zp;
    const struct tg_template *ref = NULL, *ref_by_id = NULL;
    const char *ref_zone = NULL, *ref_id = NULL;
    bool any_efa = false;
    int rc = 0;
    if (!ev->policy || wl->ntpl == 0 || tg_workload_spec_unchanged(wl))
        return 0;
    for (size_t i = 0; i < wl->ntpl; i++)
        any_efa |= tg_template_requests_efa(&wl->tpl[i]);
    if (!any_efa)
        return 0;
    bool multi = multi_pod(wl);
    /* SPEC 9: zone.conflict applies to every template that requests EFA, so only EFA templates
     * are compared; a template without EFA (an MPIJob Launcher that only runs mpirun) may run in
     * any zone. The first EFA template with a named zone is the reference. */
    for (size_t i = 0; i < wl->ntpl; i++) {
        const struct tg_template *t = &wl->tpl[i];
        if (!tg_template_requests_efa(t))
            continue;
        if ((rc = template_pin(ev, t, true, &zp)) < 0)
            return rc;
        if (multi && zp.state != PIN_ONE && zp.state != PIN_CONFLICT)
            report_unpinned(ev, t, &zp);
        if (zp.state != PIN_ONE)
            continue;
        if (zp.zone && !ref_zone) {
            ref = t;
            ref_zone = zp.zone;
        } else if (zp.zone && strcmp(ref_zone, zp.zone)) {
            tg_report(ev, TG_RULE_ZONE_CONFLICT, zp.field.field,
                      "pins zone %s but the %s template pins %s, and EFA cannot cross zones: "
                      "pin all templates to one zone",
                      zp.zone, ref->role_name, ref_zone);
        }
        if (zp.zone_id && !ref_id) {
            ref_by_id = t;
            ref_id = zp.zone_id;
        } else if (zp.zone_id && strcmp(ref_id, zp.zone_id)) {
            tg_report(ev, TG_RULE_ZONE_CONFLICT, zp.field.field,
                      "pins zone id %s but the %s template pins %s, and EFA cannot cross zones: "
                      "pin all templates to one zone",
                      zp.zone_id, ref_by_id->role_name, ref_id);
        }
    }
    return ev->error;
}
