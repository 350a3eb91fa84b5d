/* efa.c -- the efa.* rules: EFA device requests, their quantities, environment and instance fit
 * (SPEC sections 4 and 9; docs/references.md#ref-k8s-pod-request-defaults,
 * #ref-k8s-noncommit-resources and #ref-efa). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tg/arena.h"
#include "tg/launch.h"
#include "tg/launch_memo.h"
#include "tg/mpirun.h"
#include "tg/obj.h"
#include "tg/pod.h"
#include "tg/policy.h"
#include "tg/quantity.h"
#include "tg/registry.h"
#include "tg/roles.h"

/* Values quoted in messages are cut here so that the whole line stays under ~200 characters. */
#define VALUE_TEXT_MAX 40
/* Templates whose rank lists the env and RDMA checks keep on the stack; more take the heap. */
#define TPL_ON_STACK 8

/* The JSON text of v for a message ("\"$EFA_PER_NODE\"", "1.5", "null"), cut to fit. */
static const char *value_text(const json_t *v, char *buf, size_t len)
{
    char *s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    snprintf(buf, len, "%s", s ? s : "?");
    if (s && strlen(s) >= len && len > 4)
        memcpy(buf + len - 4, "...", 4);
    tg_json_free(s);
    return buf;
}

/* A quantity as written: a string without quotes, a number as JSON. */
static const char *qty_text(const json_t *v, char *buf, size_t len)
{
    if (json_is_string(v)) {
        snprintf(buf, len, "%s", json_string_value(v));
        return buf;
    }
    return value_text(v, buf, len);
}

/* Index of the last env entry named name (the one the kubelet keeps), or -1. */
static long env_index(json_t *container, const char *name)
{
    json_t *env = json_object_get(container, "env");
    long last = -1;
    size_t i;
    json_t *e;
    json_array_foreach (env, i, e) {
        const char *n = tg_env_entry_name(e);
        if (n && !strcmp(n, name))
            last = (long)i;
    }
    return last;
}

/* The field of env[i] of container c. */
static void env_field(const struct tg_container *c, long i, struct tg_path *out)
{
    tg_path_key(out, &c->path, "env");
    tg_path_index(out, out, (size_t)i);
}

/* The field of resources.<list>[name] of container c. */
static void res_field(const struct tg_container *c, const char *list, const char *name,
                      struct tg_path *out)
{
    tg_path_key(out, &c->path, c->resources_key ? c->resources_key : "resources");
    tg_path_key(out, out, list);
    if (name)
        tg_path_key(out, out, name);
}

/* ---- quantities: efa.invalid-quantity, efa.limit-required ---------------------------------- */

/* Reports an unusable value v of resource name, written in list ("limits", "requests") of
 * container c; returns true when v is usable. The field path is built only for a finding. */
static bool check_value(struct tg_eval *ev, const char *name, const json_t *v,
                        const struct tg_container *c, const char *list, struct tg_quantity *qout)
{
    struct tg_quantity q = {0};
    struct tg_path p;
    char txt[VALUE_TEXT_MAX];
    bool efa = !strcmp(name, TG_RES_EFA);
    bool ok = tg_quantity_from_json(v, &q) == 0;
    *qout = q;
    if (efa && (!ok || !tg_quantity_is_integer(&q) || tg_quantity_is_negative(&q))) {
        res_field(c, list, name, &p);
        tg_report(ev, TG_RULE_EFA_INVALID_QUANTITY, p.field,
                  "is %s: the EFA count must be a non-negative integer (Kubernetes does not "
                  "expand variables here); write the number",
                  value_text(v, txt, sizeof(txt)));
        return false;
    }
    if (!ok) {
        res_field(c, list, name, &p);
        tg_report(ev, TG_RULE_OBJECT_INVALID_FIELD, p.field,
                  "is %s: %s must be a quantity (e.g. 5120Mi)", value_text(v, txt, sizeof(txt)),
                  name);
        return false;
    }
    return true;
}

/* a and b are JSON strings of the same bytes. */
static bool same_string(const json_t *a, const json_t *b)
{
    if (!json_is_string(a) || !json_is_string(b))
        return false;
    size_t n = json_string_length(a);
    return n == json_string_length(b) && !memcmp(json_string_value(a), json_string_value(b), n);
}

/* Checks one non-overcommittable resource (EFA, hugepages-*) of container c. */
static void check_resource(struct tg_eval *ev, const struct tg_container *c, const char *name,
                           bool limits_usable)
{
    struct tg_res r;
    struct tg_path rp;
    struct tg_quantity lq, rq;
    char a[VALUE_TEXT_MAX], b[VALUE_TEXT_MAX];
    long long ln, rn;
    tg_ctr_res(c, name, &r);
    /* A plain digit string (nearly every EFA count) is a usable integer: it needs no parse. A
     * usable value's quantity comes back parsed, for the comparison below. */
    bool lplain = r.limit && tg_plain_count(r.limit, &ln);
    bool rplain = r.request && tg_plain_count(r.request, &rn);
    bool lok = lplain || (r.limit && check_value(ev, name, r.limit, c, "limits", &lq));
    /* a request written as the same string as a usable limit ("5120Mi" twice) is as usable and
     * equal to it: no second parse, no comparison */
    bool same = lok && !lplain && r.request && same_string(r.limit, r.request);
    bool rok =
        same || rplain || (r.request && check_value(ev, name, r.request, c, "requests", &rq));
    if (!r.request || !rok)
        return;
    if (!r.limit) {
        /* A limits block of the wrong type is reported by the typed getters; no second finding. */
        if (limits_usable) {
            res_field(c, "requests", name, &rp);
            tg_report(ev, TG_RULE_EFA_LIMIT_REQUIRED, rp.field,
                      "requests %s without a limit, but %s cannot be overcommitted; set the same "
                      "value in limits",
                      qty_text(r.request, a, sizeof(a)), name);
        }
        return;
    }
    if (!lok)
        return;
    bool differ;
    if (same) {
        differ = false;
    } else if (lplain && rplain) {
        differ = ln != rn;
    } else {
        /* one plain, one not: the plain one parsed too (it parses, as a quantity) */
        if (lplain)
            tg_quantity_from_json(r.limit, &lq);
        if (rplain)
            tg_quantity_from_json(r.request, &rq);
        differ = tg_quantity_cmp(&lq, &rq) != 0;
    }
    if (differ) {
        res_field(c, "requests", name, &rp);
        tg_report(ev, TG_RULE_EFA_LIMIT_REQUIRED, rp.field,
                  "request %s differs from limit %s; %s cannot be overcommitted: make them "
                  "equal or drop the request",
                  qty_text(r.request, a, sizeof(a)), qty_text(r.limit, b, sizeof(b)), name);
    }
}

static void check_quantities(struct tg_eval *ev, const struct tg_container *c)
{
    struct tg_path rp;
    const char *names[1 + TG_HUGEPAGE_NAMES_MAX];
    size_t n = 0;
    /* resources, limits and requests as the decoder read them; read again through the getters
     * only to report a wrong type */
    json_t *res = json_is_object(c->res_raw) ? c->res_raw : NULL;
    if (tg_wrong_type(c->res_raw, JSON_OBJECT))
        tg_get_object(ev, c->c, &c->path, "resources");
    json_t *lraw = c->limits_raw;
    json_t *rraw = c->requests_raw;
    if (tg_wrong_type(lraw, JSON_OBJECT) || tg_wrong_type(rraw, JSON_OBJECT)) {
        /* the path is built only to report the wrong type, as the getters do */
        tg_path_key(&rp, &c->path, c->resources_key ? c->resources_key : "resources");
        tg_get_object(ev, res, &rp, "limits");
        tg_get_object(ev, res, &rp, "requests");
    }
    bool limits_usable = !lraw || json_is_null(lraw) || json_is_object(lraw);
    names[n++] = TG_RES_EFA;
    /* the hugepages-* keys of limits, then the others of requests, as the decoder found them */
    for (size_t i = 0; i < c->nhugepage_names; i++)
        names[n++] = c->hugepage_names[i];
    for (size_t i = 0; i < n; i++)
        check_resource(ev, c, names[i], limits_usable);
}

/* ---- per template: hugepages, provider, hostPath ------------------------------------------- */

static void check_hugepages(struct tg_eval *ev, const struct tg_container *c)
{
    struct tg_path lp;
    long long n = 0;
    if (!tg_ctr_requests_efa(c))
        return;
    /* A string that begins with a digit 1-9 ("5120Mi") is a count above 0 or no count at all (a
     * fraction, a tiny exponent, garbage after it): either way not "no hugepages", and the
     * quantity parser need not say which. */
    struct tg_res r;
    tg_ctr_res(c, TG_RES_HUGEPAGES_2MI, &r);
    const char *s = json_string_value(r.limit ? r.limit : r.request);
    if (s && s[0] >= '1' && s[0] <= '9')
        return;
    int rc = tg_ctr_count(c, TG_RES_HUGEPAGES_2MI, &n);
    if (rc < 0 || (rc == 1 && n > 0))
        return;
    res_field(c, "limits", NULL, &lp);
    tg_report(ev, TG_RULE_EFA_NO_HUGEPAGES, lp.field,
              "EFA without hugepages-2Mi: libfabric's EFA provider then falls back to regular "
              "pages for its buffers, which costs memory registration time and bandwidth; add "
              "hugepages-2Mi (e.g. 5120Mi, the same in requests and limits)");
}

/* FI_PROVIDER names providers and none of them is efa ("^list" excludes; "^tcp" allows efa). */
static bool provider_excludes_efa(const char *value)
{
    if (!value || !*value)
        return false;
    if (value[0] != '^')
        return !tg_fi_provider_selects_efa(value);
    return tg_fi_provider_selects_efa(value + 1);
}

static void check_provider(struct tg_eval *ev, const struct tg_container *c)
{
    struct tg_path ep;
    char buf[TG_ENV_VALUE_MAX];
    const char *v = tg_ctr_env_get(c, "FI_PROVIDER", buf, sizeof(buf), NULL);
    if (!provider_excludes_efa(v))
        return;
    env_field(c, env_index(c->c, "FI_PROVIDER"), &ep);
    char txt[VALUE_TEXT_MAX];
    snprintf(txt, sizeof(txt), "%s", v);
    tg_report(ev, TG_RULE_EFA_PROVIDER_MISMATCH, ep.field,
              "FI_PROVIDER=%s with vpc.amazonaws.com/efa requested: libfabric will not use the "
              "EFA device; set FI_PROVIDER=efa or drop it",
              txt);
}

/* "/dev/infiniband" or a path below it, after folding repeated and trailing slashes and "." */
static bool is_infiniband_path(const char *path)
{
    static const char *const want[] = {"dev", "infiniband"};
    size_t k = 0;
    const char *p = path;
    if (*p != '/')
        return false;
    while (*p && k < 2) {
        while (*p == '/')
            p++;
        size_t n = strcspn(p, "/");
        if (n == 0)
            break;
        if (n == 1 && p[0] == '.') {
            p += n;
            continue;
        }
        if (n != strlen(want[k]) || strncmp(p, want[k], n))
            return false;
        k++;
        p += n;
    }
    return k == 2 && (*p == '\0' || *p == '/');
}

static bool volume_mounted(const struct tg_template *t, const char *name)
{
    for (size_t i = 0; i < t->ncontainers; i++) {
        json_t *mounts = json_object_get(t->containers[i].c, "volumeMounts");
        size_t j;
        json_t *m;
        json_array_foreach (mounts, j, m) {
            const char *n = json_string_value(json_object_get(m, "name"));
            if (n && !strcmp(n, name))
                return true;
        }
    }
    return false;
}

static void check_hostpath(struct tg_eval *ev, const struct tg_template *t)
{
    struct tg_path vp, ip, hp;
    size_t i;
    json_t *v;
    json_t *vols = tg_read_array(ev, tg_template_volumes(t), t->spec, &t->spec_path, "volumes");
    json_array_foreach (vols, i, v) {
        if (!json_is_object(v))
            continue;
        json_t *host = json_object_get(v, "hostPath");
        json_t *pv = json_is_object(host) ? json_object_get(host, "path") : NULL;
        const char *path = json_string_value(pv);
        bool bad = tg_wrong_type(host, JSON_OBJECT) || tg_wrong_type(pv, JSON_STRING);
        if (!bad && (!path || !is_infiniband_path(path)))
            continue;
        /* the name only for a hostPath of the devices (or a wrong type) */
        const char *name = json_string_value(json_object_get(v, "name"));
        if (!bad && (!name || !volume_mounted(t, name)))
            continue;
        /* a wrong type to report, or a finding: read again through the getters, with paths */
        tg_path_key(&vp, &t->spec_path, "volumes");
        tg_path_index(&ip, &vp, i);
        host = tg_get_object(ev, v, &ip, "hostPath");
        tg_path_key(&hp, &ip, "hostPath");
        path = tg_get_string(ev, host, &hp, "path");
        if (!path || !name || !is_infiniband_path(path) || !volume_mounted(t, name))
            continue;
        char txt[VALUE_TEXT_MAX];
        snprintf(txt, sizeof(txt), "%s", path);
        tg_path_key(&hp, &hp, "path");
        tg_report(ev, TG_RULE_EFA_INFINIBAND_HOSTPATH, hp.field,
                  "hostPath %s exposes all RDMA devices of the node and bypasses the EFA device "
                  "plugin; remove it and request vpc.amazonaws.com/efa",
                  txt);
    }
}

/* ---- instance fit: efa.exceeds-instance, efa.below-instance -------------------------------- */

/* The first container with a usable EFA count (limit, else request), or NULL; a value that is not
 * a count has its own finding (efa.invalid-quantity) and is skipped. */
static const struct tg_container *efa_container(const struct tg_template *t)
{
    for (size_t i = 0; i < t->ncontainers; i++) {
        long long n;
        if (tg_ctr_count(&t->containers[i], TG_RES_EFA, &n) == 1)
            return &t->containers[i];
    }
    return NULL;
}

/* The texts of the instance-fit findings, written on first use (most templates fit). */
struct fit_text {
    const struct tg_policy *pol;
    const struct tg_label_pin *pin;
    const struct tg_container *c; /* efa_container() */
    struct tg_path field;         /* the field of its EFA count */
    bool has_field, has_list;
    char list[90]; /* type_list() */
};

static void type_list(const struct tg_policy *pol, const struct tg_label_pin *pin, char *buf,
                      size_t len);

static const char *fit_field(struct fit_text *x)
{
    if (!x->has_field) {
        struct tg_res r;
        tg_ctr_res(x->c, TG_RES_EFA, &r);
        res_field(x->c, r.limit ? "limits" : "requests", TG_RES_EFA, &x->field);
        x->has_field = true;
    }
    return x->field.field;
}

static const char *fit_list(struct fit_text *x)
{
    if (!x->has_list) {
        type_list(x->pol, x->pin, x->list, sizeof(x->list));
        x->has_list = true;
    }
    return x->list;
}

/* The EFA count of the container efa_field names (0 when none). */
static long long first_efa_count(const struct tg_template *t)
{
    for (size_t i = 0; i < t->ncontainers; i++) {
        long long n;
        if (tg_ctr_count(&t->containers[i], TG_RES_EFA, &n) == 1)
            return n;
    }
    return 0;
}

/* Reports an unusable GPU or Neuron count (read for efa.below-instance) as object.invalid-field. */
static void check_device_values(struct tg_eval *ev, const struct tg_template *t, const char *name)
{
    for (size_t i = 0; i < t->ncontainers; i++) {
        struct tg_res r;
        struct tg_path p;
        long long n;
        char txt[VALUE_TEXT_MAX];
        if (tg_ctr_count(&t->containers[i], name, &n) >= 0)
            continue;
        tg_ctr_res(&t->containers[i], name, &r);
        res_field(&t->containers[i], r.limit ? "limits" : "requests", name, &p);
        tg_report(ev, TG_RULE_OBJECT_INVALID_FIELD, p.field,
                  "is %s: %s must be a non-negative integer",
                  value_text(r.limit ? r.limit : r.request, txt, sizeof(txt)), name);
    }
}

/* "p5.48xlarge: 32, p4d.24xlarge: 4" for the known types of pin. */
static void type_list(const struct tg_policy *pol, const struct tg_label_pin *pin, char *buf,
                      size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < pin->n && at + 1 < len; i++) {
        const struct tg_instance *in = tg_policy_instance(pol, pin->values[i]);
        if (!in)
            continue;
        int w = snprintf(buf + at, len - at, "%s%s: %d", at ? ", " : "", in->name, in->efa);
        if (w < 0 || (size_t)w >= len - at) {
            buf[at] = '\0';
            break;
        }
        at += (size_t)w;
    }
}

/* Below-instance for one type: the pod takes all of its GPUs (or Neuron devices) but not all EFA.
 */
static bool takes_all_devices(const struct tg_instance *in, long long gpus, long long neuron)
{
    return (in->gpus > 0 && gpus == in->gpus) || (in->neuron > 0 && neuron == in->neuron);
}

/* efa.below-instance on one type: the count fits, is below the type's EFA, and the pod takes all
 * of the type's GPUs or Neuron devices. */
static bool below_on(const struct tg_instance *in, long long efa, long long gpus, long long neuron)
{
    return efa < in->efa && takes_all_devices(in, gpus, neuron);
}

/* efa.below-instance: with one pinned type, the SPEC row as written; with several, only when it
 * holds for every one of them (all known), so that the idle interfaces are certain. */
static void check_below(struct tg_eval *ev, const struct tg_template *t,
                        const struct tg_label_pin *pin, long long efa, struct fit_text *x)
{
    long long gpus = 0, neuron = 0;
    if (tg_template_count(t, TG_RES_GPU, &gpus) != 1)
        gpus = 0;
    if (tg_template_count(t, TG_RES_NEURON, &neuron) != 1)
        neuron = 0;
    const struct tg_instance *first = NULL;
    for (size_t i = 0; i < pin->n; i++) {
        const struct tg_instance *in = tg_policy_instance(ev->policy, pin->values[i]);
        if (!in || !below_on(in, efa, gpus, neuron))
            return;
        if (!first)
            first = in;
    }
    if (!first)
        return;
    bool gpu = first->gpus > 0 && gpus == first->gpus;
    if (pin->n == 1)
        tg_report(ev, TG_RULE_EFA_BELOW_INSTANCE, fit_field(x),
                  "takes all %d %s of %s but only %lld of its %d EFA interfaces: the rest stay "
                  "idle; request %d",
                  gpu ? first->gpus : first->neuron, gpu ? "GPUs" : "Neuron devices", first->name,
                  efa, first->efa, first->efa);
    else
        tg_report(ev, TG_RULE_EFA_BELOW_INSTANCE, fit_field(x),
                  "takes all %s of each pinned type but only %lld EFA, fewer than each has "
                  "(%s): the rest stay idle",
                  gpu ? "GPUs" : "Neuron devices", efa, fit_list(x));
}

static int check_instance(struct tg_eval *ev, const struct tg_template *t)
{
    struct tg_label_pin pin;
    struct fit_text x = {.pol = ev->policy, .pin = &pin};
    long long efa = 0;
    /* SPEC 9: one bad field never stops the other rules. With an unusable value in one container
     * the others' sum is a lower bound: enough to show that the count exceeds a type, not to
     * show that it is below one. */
    int rc = ev->policy ? tg_template_count_valid(t, TG_RES_EFA, &efa) : 0;
    bool exact = rc == 1;
    const char *least = exact ? "" : "at least ";
    if (rc <= 0 || efa <= 0)
        return 0;
    /* a family pin stands for the family's types that can hold the pod (Karpenter launches only
     * those); when none can, all of them, so that the request is compared */
    struct tg_fit need = {0, 0, efa};
    if (tg_template_count(t, TG_RES_GPU, &need.gpus) != 1)
        need.gpus = 0;
    if (tg_template_count(t, TG_RES_NEURON, &need.neuron) != 1)
        need.neuron = 0;
    if (tg_template_instance_types(ev, t, ev->policy->instances, ev->policy->ninstances, &need,
                                   &pin) < 0)
        return -ENOMEM;
    if (!pin.finite || pin.n == 0 || !(x.c = efa_container(t)))
        goto out;
    check_device_values(ev, t, TG_RES_GPU);
    check_device_values(ev, t, TG_RES_NEURON);
    size_t known = 0, fit = 0;
    for (size_t i = 0; i < pin.n; i++) {
        const struct tg_instance *in = tg_policy_instance(ev->policy, pin.values[i]);
        if (!in)
            continue;
        known++;
        if (efa <= in->efa)
            fit++;
    }
    if (known == pin.n && fit == 0) {
        int have = pin.n == 1 ? tg_policy_instance(ev->policy, pin.values[0])->efa : 0;
        if (pin.n == 1 && have == 0)
            tg_report(ev, TG_RULE_EFA_EXCEEDS_INSTANCE, fit_field(&x),
                      "%s%lld EFA interfaces per pod, but %s has no EFA: the pod can never be "
                      "scheduled; pin an instance type with EFA or remove the request",
                      least, efa, pin.values[0]);
        else if (pin.n == 1)
            /* the count at field is one container's; the pod's sum may hold a native sidecar's */
            tg_report(ev, TG_RULE_EFA_EXCEEDS_INSTANCE, fit_field(&x),
                      "%s%lld EFA interfaces per pod, but %s has %d: the pod can never be "
                      "scheduled; request at most %d%s",
                      least, efa, pin.values[0], have, have,
                      first_efa_count(t) < efa
                          ? " for the whole pod (containers and native sidecars together)"
                          : "");
        else
            tg_report(ev, TG_RULE_EFA_EXCEEDS_INSTANCE, fit_field(&x),
                      "%s%lld EFA interfaces per pod, more than any pinned instance type has "
                      "(%s): the pod can never be scheduled",
                      least, efa, fit_list(&x));
        goto out;
    }
    /* SPEC 9: several possible types deny only when the count fits none of them; when it fits
     * only some, the same rule warns (the pods can never run on the others). */
    if (fit > 0 && fit < known)
        tg_report_capped(ev, TG_RULE_EFA_EXCEEDS_INSTANCE, TG_ACTION_WARN, fit_field(&x),
                         "%s%lld EFA interfaces per pod fit only some pinned instance types "
                         "(%s); pin only types that have them",
                         least, efa, fit_list(&x));
    if (exact)
        check_below(ev, t, &pin, efa, &x);
out:
    tg_label_pin_release(&pin);
    return 0;
}

/* ---- efa.env-without-device ---------------------------------------------------------------- */

/* The variable and value (expanded as the kubelet does, into buf) that make a container expect
 * EFA, or NULL. */
static const char *efa_env(const struct tg_container *c, const char **var, char *buf, size_t len)
{
    const char *v = tg_ctr_env_get(c, "FI_PROVIDER", buf, len, NULL);
    if (tg_fi_provider_selects_efa(v)) {
        *var = "FI_PROVIDER";
        return v;
    }
    v = tg_ctr_env_get(c, "NCCL_NET", buf, len, NULL);
    if (tg_nccl_net_is_ofi(v)) {
        *var = "NCCL_NET";
        return v;
    }
    return NULL;
}

static bool has_efa_device(const struct tg_template *t)
{
    return tg_template_requests_efa(t) || tg_template_uses_claims(t);
}

/* Every container of t whose own env expects EFA without holding an EFA device itself: the device
 * plugin attaches the device only to the container that requests it
 * (docs/references.md#ref-efa-resource-name), so a sibling's EFA does not count. A DRA claim may
 * carry the device (unknown: not judged). */
static void check_own_env(struct tg_eval *ev, const struct tg_template *t)
{
    /* a TrainJob without resourcesPerNode runs with its runtime's resources, not in the request */
    if (tg_template_uses_claims(t) || t->resources_unknown)
        return;
    for (size_t i = 0; i < t->ncontainers; i++) {
        const struct tg_container *c = &t->containers[i];
        const char *var = NULL;
        char buf[TG_ENV_VALUE_MAX];
        const char *v = efa_env(c, &var, buf, sizeof(buf));
        struct tg_path ep;
        char txt[VALUE_TEXT_MAX];
        if (!v || tg_ctr_requests_efa(c))
            continue;
        snprintf(txt, sizeof(txt), "%s", v);
        env_field(c, env_index(c->c, var), &ep);
        if (tg_template_requests_efa(t))
            tg_report(ev, TG_RULE_EFA_ENV_WITHOUT_DEVICE, ep.field,
                      "%s=%s, but the EFA devices of this pod belong to another container, and "
                      "the device plugin attaches them only to the container that requests them: "
                      "request vpc.amazonaws.com/efa in container %s",
                      var, txt, c->name[0] ? c->name : "(unnamed)");
        else
            tg_report(ev, TG_RULE_EFA_ENV_WITHOUT_DEVICE, ep.field,
                      "%s=%s picks a provider but attaches no device: request "
                      "vpc.amazonaws.com/efa in the %s%s limits (and requests)",
                      var, txt, t->role == TG_ROLE_POD ? "container's" : t->role_name,
                      t->role == TG_ROLE_POD ? "" : " template's");
    }
}

/* The value of name that a launcher run hands to its ranks, or NULL. */
static const char *forwarded_value(const struct tg_mpirun *run, json_t *container, const char *name)
{
    const struct tg_launch_fwd *f = tg_mpirun_find_fwd(run, name);
    if (f && f->value)
        return f->value_resolved ? f->value : NULL;
    bool all = run->forward_all || (run->impl != TG_MPI_OPENMPI && !run->forward_none);
    if (f || all)
        return tg_env_value(container, name, NULL);
    return NULL;
}

/* Does a run of the launcher container forward an EFA provider selection; which variable. */
static const char *forwards_efa(const struct tg_launch *l, json_t *container, const char **var,
                                const char **value)
{
    for (size_t i = 0; i < l->nruns; i++) {
        const char *v = forwarded_value(&l->runs[i], container, "FI_PROVIDER");
        if (tg_fi_provider_selects_efa(v)) {
            *var = "FI_PROVIDER";
            *value = v;
            return v;
        }
        v = forwarded_value(&l->runs[i], container, "NCCL_NET");
        if (tg_nccl_net_is_ofi(v)) {
            *var = "NCCL_NET";
            *value = v;
            return v;
        }
    }
    return NULL;
}

static enum tg_mpi_impl workload_impl(const struct tg_workload *wl)
{
    return tg_workload_mpi_impl(wl);
}

/* A launcher that hands the ranks an FI_PROVIDER without efa while a rank template requests EFA. */
static void check_forwarded_provider(struct tg_eval *ev, const struct tg_template *lt,
                                     const struct tg_container *c, const struct tg_launch *l,
                                     struct tg_template **ranks, size_t nranks)
{
    const char *v = NULL;
    for (size_t i = 0; i < l->nruns && !provider_excludes_efa(v); i++)
        v = forwarded_value(&l->runs[i], c->c, "FI_PROVIDER");
    if (!provider_excludes_efa(v))
        return;
    for (size_t i = 0; i < nranks; i++) {
        struct tg_path fp;
        char txt[VALUE_TEXT_MAX], own[TG_ENV_VALUE_MAX];
        if (ranks[i] == lt || !tg_template_requests_efa(ranks[i]))
            continue;
        /* the rank template's own FI_PROVIDER of the same value is reported there */
        json_t *rc0 = json_array_get(json_object_get(ranks[i]->spec, "containers"), 0);
        const char *mine = tg_env_get(rc0, "FI_PROVIDER", own, sizeof(own), NULL);
        if (mine && !strcmp(mine, v))
            continue;
        snprintf(txt, sizeof(txt), "%s", v);
        tg_path_key(&fp, &c->path, json_object_get(c->c, "args") ? "args" : "command");
        tg_report(ev, TG_RULE_EFA_PROVIDER_MISMATCH, fp.field,
                  "mpirun hands FI_PROVIDER=%s to the ranks of the %s template, which requests "
                  "EFA: libfabric will not use it; forward FI_PROVIDER=efa or drop it",
                  txt, ranks[i]->role_name);
        return;
    }
}

/* A launcher container that forwards FI_PROVIDER=efa: each rank template without EFA. */
static int check_forwarded(struct tg_eval *ev, const struct tg_template *lt,
                           const struct tg_container *c, struct tg_template **ranks, size_t nranks)
{
    const struct tg_launch *l;
    const char *var = NULL, *value = NULL;
    int rc = tg_eval_launch(ev, c, workload_impl(ev->wl), &l);
    if (rc < 0)
        return rc;
    if (!forwards_efa(l, c->c, &var, &value)) {
        check_forwarded_provider(ev, lt, c, l, ranks, nranks);
        return 0;
    }
    for (size_t i = 0; i < nranks; i++) {
        struct tg_path fp;
        char txt[VALUE_TEXT_MAX], buf[TG_ENV_VALUE_MAX];
        const char *own = NULL;
        /* The launcher's own env finding (when it runs ranks) already names this variable. */
        if (has_efa_device(ranks[i]) || (ranks[i] == lt && efa_env(c, &own, buf, sizeof(buf))))
            continue;
        snprintf(txt, sizeof(txt), "%s", value);
        tg_path_key(&fp, &c->path, json_object_get(c->c, "args") ? "args" : "command");
        tg_report(ev, TG_RULE_EFA_ENV_WITHOUT_DEVICE, fp.field,
                  "mpirun hands %s=%s to the ranks: it picks a provider but attaches no device; "
                  "request vpc.amazonaws.com/efa in the %s%s limits",
                  var, txt, ranks[i]->role == TG_ROLE_POD ? "container's" : ranks[i]->role_name,
                  ranks[i]->role == TG_ROLE_POD ? "" : " template's");
        break;
    }
    return 0;
}

/* Ranks run in every template that is not launcher-only (include/tg/roles.h). A launcher's
 * forwarded FI_PROVIDER/NCCL_NET is judged against the rank templates of the same workload; a
 * launcher Pod's ranks run in other pods (judged there). A rank template's own mpirun starts
 * ranks on hosts like itself, so its forwarded env needs EFA in the template itself (SPEC 4: "a
 * container or its mpirun -x"). An ssh rank host Pod's env never reaches the ranks (they get what
 * the launcher forwards), so it is not judged. */
static int check_env_without_device(struct tg_eval *ev)
{
    struct tg_workload *wl = ev->wl;
    struct tg_template *ranks_stack[TPL_ON_STACK], **ranks = NULL;
    bool launcher_stack[TPL_ON_STACK], *launcher = NULL;
    size_t nranks = 0;
    int rc = 0;
    if (wl->ntpl == 0 || tg_pod_is_ssh_rank_host(wl))
        return 0;
    /* both are written before they are read */
    bool heap = wl->ntpl > TPL_ON_STACK;
    ranks = heap ? calloc(wl->ntpl, sizeof(*ranks)) : ranks_stack;
    launcher = heap ? calloc(wl->ntpl, sizeof(*launcher)) : launcher_stack;
    if (!ranks || !launcher) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < wl->ntpl; i++) {
        struct tg_template *t = &wl->tpl[i];
        if ((rc = tg_template_launcher_only(ev, t)) < 0)
            goto out;
        launcher[i] = rc > 0;
        rc = 0;
        if (launcher[i])
            continue;
        ranks[nranks++] = t;
        check_own_env(ev, t);
        /* outside MPIJob, a rank template's own mpirun runs ranks like itself */
        for (size_t k = 0; wl->kind != TG_KIND_MPIJOB && k < t->ncontainers; k++) {
            if ((rc = check_forwarded(ev, t, &t->containers[k], &t, 1)) < 0)
                goto out;
        }
    }
    for (size_t i = 0; wl->kind != TG_KIND_POD && i < wl->ntpl; i++) {
        /* an MPIJob's launcher forwards to the ranks, itself included when it runs ranks */
        if (!launcher[i] && !(wl->kind == TG_KIND_MPIJOB && wl->tpl[i].role == TG_ROLE_LAUNCHER))
            continue;
        for (size_t k = 0; k < wl->tpl[i].ncontainers && rc == 0; k++)
            rc = check_forwarded(ev, &wl->tpl[i], &wl->tpl[i].containers[k], ranks, nranks);
        if (rc < 0)
            goto out;
    }
out:
    if (heap) {
        free(ranks);
        free(launcher);
    }
    return rc;
}

/* ---- efa.rdma-unsupported ------------------------------------------------------------------ */

/* libfabric reads FI_EFA_USE_DEVICE_RDMA as a boolean (fi_param_get_bool: 1, true, yes, on). */
static bool rdma_requested(const char *v)
{
    return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
                 !strcasecmp(v, "on"));
}

/* Every instance type template t can land on is known and lacks RDMA read; *types names them. */
static int lacks_rdma_read(struct tg_eval *ev, const struct tg_template *t, bool *lacks,
                           char *types, size_t len)
{
    struct tg_label_pin pin;
    struct tg_fit need = {0, 0, 0};
    size_t at = 0;
    *lacks = false;
    types[0] = '\0';
    if (tg_template_count(t, TG_RES_GPU, &need.gpus) != 1)
        need.gpus = 0;
    if (tg_template_count(t, TG_RES_EFA, &need.efa) != 1)
        need.efa = 0;
    if (tg_template_instance_types(NULL, t, ev->policy->instances, ev->policy->ninstances, &need,
                                   &pin) < 0)
        return -ENOMEM;
    *lacks = pin.finite && pin.n > 0;
    for (size_t i = 0; i < pin.n && *lacks; i++) {
        const struct tg_instance *in = tg_policy_instance(ev->policy, pin.values[i]);
        *lacks = in && in->rdma_read == TG_NO;
    }
    /* the names, for the finding only */
    for (size_t i = 0; i < pin.n && *lacks; i++) {
        int w = snprintf(types + at, len - at, "%s%s", at ? ", " : "", pin.values[i]);
        if (w > 0 && (size_t)w < len - at)
            at += (size_t)w;
    }
    tg_label_pin_release(&pin);
    return 0;
}

#define RDMA_VAR "FI_EFA_USE_DEVICE_RDMA"
#define RDMA_FIX                                                                                   \
    "libfabric aborts at start; remove it (libfabric 1.18+ uses RDMA read by itself where the "    \
    "device has it)"

/* A rank template whose containers set FI_EFA_USE_DEVICE_RDMA=1 themselves, and a launcher that
 * forwards it to rank templates, on instance types without RDMA read. */
static int check_rdma(struct tg_eval *ev, const struct tg_template *t, bool launcher,
                      struct tg_template **ranks, size_t nranks)
{
    char types[96], buf[TG_ENV_VALUE_MAX];
    bool lacks;
    int rc;
    for (size_t k = 0; k < t->ncontainers; k++) {
        const struct tg_container *c = &t->containers[k];
        const char *v = tg_ctr_env_get(c, RDMA_VAR, buf, sizeof(buf), NULL);
        if (!launcher && rdma_requested(v)) {
            struct tg_path ep;
            if ((rc = lacks_rdma_read(ev, t, &lacks, types, sizeof(types))) < 0)
                return rc;
            if (lacks) {
                env_field(c, env_index(c->c, RDMA_VAR), &ep);
                tg_report(ev, TG_RULE_EFA_RDMA_UNSUPPORTED, ep.field,
                          RDMA_VAR "=%s, but the EFA of %s has no RDMA read: " RDMA_FIX, v, types);
            }
        }
        if (!launcher)
            continue;
        const struct tg_launch *l;
        if ((rc = tg_eval_launch(ev, c, workload_impl(ev->wl), &l)) < 0)
            return rc;
        for (size_t r = 0; r < l->nruns; r++) {
            const char *fv = forwarded_value(&l->runs[r], c->c, RDMA_VAR);
            if (!rdma_requested(fv))
                continue;
            for (size_t i = 0; i < nranks; i++) {
                struct tg_path fp;
                if ((rc = lacks_rdma_read(ev, ranks[i], &lacks, types, sizeof(types))) < 0)
                    return rc;
                if (!lacks)
                    continue;
                tg_path_key(&fp, &c->path, json_object_get(c->c, "args") ? "args" : "command");
                tg_report(ev, TG_RULE_EFA_RDMA_UNSUPPORTED, fp.field,
                          "%s hands " RDMA_VAR "=%s to the ranks of the %s template, but the EFA "
                          "of %s has no RDMA read: " RDMA_FIX,
                          l->runs[r].launcher, fv, ranks[i]->role_name, types);
                return 0;
            }
        }
    }
    return 0;
}

static int check_rdma_all(struct tg_eval *ev)
{
    struct tg_workload *wl = ev->wl;
    struct tg_template *ranks_stack[TPL_ON_STACK];
    bool launcher_stack[TPL_ON_STACK];
    /* both are written before they are read */
    bool heap = wl->ntpl > TPL_ON_STACK;
    struct tg_template **ranks = heap ? calloc(wl->ntpl, sizeof(*ranks)) : ranks_stack;
    bool *launcher = heap ? calloc(wl->ntpl, sizeof(*launcher)) : launcher_stack;
    size_t nranks = 0;
    int rc = 0;
    if (!ranks || !launcher) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < wl->ntpl && rc >= 0; i++) {
        rc = tg_template_launcher_only(ev, &wl->tpl[i]);
        launcher[i] = rc > 0;
        if (rc == 0)
            ranks[nranks++] = &wl->tpl[i];
    }
    for (size_t i = 0; i < wl->ntpl && rc >= 0; i++)
        rc = check_rdma(ev, &wl->tpl[i], launcher[i] && wl->kind != TG_KIND_POD, ranks, nranks);
out:
    if (heap) {
        free(ranks);
        free(launcher);
    }
    return rc < 0 ? rc : 0;
}

/* ---- entry ---------------------------------------------------------------------------------- */

int tg_rules_efa(struct tg_eval *ev)
{
    struct tg_workload *wl = ev->wl;
    int rc;
    if (tg_workload_spec_unchanged(wl))
        return 0;
    for (size_t i = 0; i < wl->ntpl; i++) {
        const struct tg_template *t = &wl->tpl[i];
        bool efa = tg_template_requests_efa(t);
        for (size_t k = 0; k < t->ncontainers; k++) {
            /* env of the wrong type is reported once here; the env readers then skip it. */
            if (tg_wrong_type(t->containers[k].env_raw, JSON_ARRAY))
                tg_get_array(ev, t->containers[k].c, &t->containers[k].path, "env");
            check_quantities(ev, &t->containers[k]);
            if (efa) {
                check_hugepages(ev, &t->containers[k]);
                check_provider(ev, &t->containers[k]);
            }
        }
        check_hostpath(ev, t);
        if ((rc = check_instance(ev, t)) < 0)
            return rc;
    }
    if ((rc = check_env_without_device(ev)) < 0 || (rc = check_rdma_all(ev)) < 0)
        return rc;
    return ev->error;
}
