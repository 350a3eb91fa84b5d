/* pod.c -- pod-template facts shared by the EFA and zone rules and the env mutator. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tg/instances.h"
#include "tg/obj.h"
#include "tg/pod.h"
#include "tg/quantity.h"

/* kubernetes/api: core/v1/well_known_labels.go (LabelInstanceTypeStable, LabelInstanceType). */
const char *const tg_instance_type_labels[] = {"node.kubernetes.io/instance-type",
                                               "beta.kubernetes.io/instance-type"};
const size_t tg_instance_type_label_count = 2;

/* ---- resources ----------------------------------------------------------------------------- */

void tg_container_res(json_t *container, const char *name, struct tg_res *out)
{
    json_t *res = json_object_get(container, "resources");
    json_t *limits = json_object_get(res, "limits");
    json_t *requests = json_object_get(res, "requests");
    out->limit = json_is_object(limits) ? json_object_get(limits, name) : NULL;
    out->request = json_is_object(requests) ? json_object_get(requests, name) : NULL;
}

/* Nearly every count is a short string of digits ("32"): read at once, that is the integer the
 * quantity grammar gives for it (tests/unit: pod suite, against the grammar). false for anything
 * else, which takes the general parser. */
bool tg_plain_count(const json_t *v, long long *out)
{
    const char *s;
    size_t len;
    long long n = 0;

    if (!json_is_string(v))
        return false;
    s = json_string_value(v);
    len = json_string_length(v);
    if (len == 0 || len > 18) /* 18 digits fit a long long */
        return false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        n = n * 10 + (s[i] - '0');
    }
    *out = n;
    return true;
}

/* 0 and *out when v is a non-negative integer quantity; -1 otherwise. */
static int count_of(const json_t *v, long long *out)
{
    struct tg_quantity q;
    if (v && tg_plain_count(v, out))
        return 0;
    if (!v || tg_quantity_from_json(v, &q) < 0)
        return -1;
    if (!tg_quantity_is_integer(&q) || tg_quantity_is_negative(&q))
        return -1;
    return tg_quantity_to_int(&q, out) < 0 ? -1 : 0;
}

int tg_container_count(json_t *container, const char *name, long long *count)
{
    struct tg_res r;
    tg_container_res(container, name, &r);
    json_t *v = r.limit ? r.limit : r.request;
    if (!v)
        return 0;
    return count_of(v, count) < 0 ? -1 : 1;
}

/* The devices whose counts a decoded container keeps (struct tg_container dev_rc, dev_n), then
 * hugepages-2Mi, whose members of limits and requests it keeps as well. */
static const char *const devices[] = {TG_RES_EFA, TG_RES_GPU, TG_RES_NEURON, TG_RES_HUGEPAGES_2MI};
#define HUGEPAGES_2MI 3

#define HUGEPAGES_PREFIX "hugepages-"

/* strlen of each of devices. */
static const size_t device_len[] = {sizeof(TG_RES_EFA) - 1, sizeof(TG_RES_GPU) - 1,
                                    sizeof(TG_RES_NEURON) - 1, sizeof(TG_RES_HUGEPAGES_2MI) - 1};

/* The index of name in the first n of devices, or -1: the first byte picks the one candidate
 * (the four begin with v, n, a and h). */
static int device_index(const char *name, int n)
{
    int i;
    switch (name[0]) {
    case 'v':
        i = 0;
        break;
    case 'n':
        i = 1;
        break;
    case 'a':
        i = 2;
        break;
    case 'h':
        i = HUGEPAGES_2MI;
        break;
    default:
        return -1;
    }
    return i < n && (name == devices[i] || !strcmp(name, devices[i])) ? i : -1;
}

static int ctr_count_read(const struct tg_container *c, const char *name, long long *count)
{
    /* the limit when present, else the request: the request is looked up only then */
    json_t *v = c->limits ? json_object_get(c->limits, name) : NULL;
    if (!v && c->requests)
        v = json_object_get(c->requests, name);
    if (!v)
        return 0;
    return count_of(v, count) < 0 ? -1 : 1;
}

/* Adds hugepages key k to c's names unless it is there or they are full. */
static void hugepage_name(struct tg_container *c, const char *k)
{
    for (size_t i = 0; i < c->nhugepage_names; i++) {
        if (!strcmp(c->hugepage_names[i], k))
            return;
    }
    if (c->nhugepage_names < TG_HUGEPAGE_NAMES_MAX)
        c->hugepage_names[c->nhugepage_names++] = k;
}

/* tg_members_named(map, devices, 4, out); returns whether some key of map begins with
 * "hugepages-" (the hugepages quantity check reads only such maps), and adds those keys to c's
 * hugepages names. */
static bool device_members(struct tg_container *c, json_t *map, json_t **out)
{
    bool huge = false;
    for (size_t i = 0; i < 4; i++)
        out[i] = NULL;
    for (void *it = json_object_iter(map); it; it = json_object_iter_next(map, it)) {
        const char *k = json_object_iter_key(it);
        bool hp = k[0] == 'h' && !strncmp(k, HUGEPAGES_PREFIX, strlen(HUGEPAGES_PREFIX));
        huge = huge || hp;
        if (hp)
            hugepage_name(c, k);
        for (size_t i = hp ? HUGEPAGES_2MI : 0; i < (hp ? 4 : HUGEPAGES_2MI); i++) {
            /* a key with a NUL inside is another key (json_object_get compares lengths) */
            if (k[0] == devices[i][0] && !strcmp(k, devices[i]) &&
                json_object_iter_key_len(it) == device_len[i]) {
                out[i] = json_object_iter_value(it);
                break;
            }
        }
    }
    return huge;
}

void tg_ctr_count_devices(struct tg_container *c)
{
    /* one walk over limits and one over requests for the four names, not a lookup each */
    c->nhugepage_names = 0;
    bool huge = device_members(c, c->limits, c->dev_limit);
    c->hugepage_keys = device_members(c, c->requests, c->dev_request) || huge;
    for (int i = 0; i < 3; i++) {
        /* the limit when present, else the request */
        json_t *v = c->dev_limit[i] ? c->dev_limit[i] : c->dev_request[i];
        c->dev_n[i] = 0;
        c->dev_rc[i] = (signed char)(!v ? 0 : count_of(v, &c->dev_n[i]) < 0 ? -1 : 1);
    }
}

void tg_ctr_res(const struct tg_container *c, const char *name, struct tg_res *out)
{
    int i = device_index(name, 4);
    if (i >= 0) {
        out->limit = c->dev_limit[i];
        out->request = c->dev_request[i];
        return;
    }
    out->limit = c->limits ? json_object_get(c->limits, name) : NULL;
    out->request = c->requests ? json_object_get(c->requests, name) : NULL;
}

int tg_ctr_count(const struct tg_container *c, const char *name, long long *count)
{
    int i = device_index(name, 4);
    if (i == HUGEPAGES_2MI) {
        /* as ctr_count_read, from the members the decoder kept */
        json_t *v = c->dev_limit[i] ? c->dev_limit[i] : c->dev_request[i];
        if (!v)
            return 0;
        return count_of(v, count) < 0 ? -1 : 1;
    }
    if (i < 0)
        return ctr_count_read(c, name, count);
    if (c->dev_rc[i] == 1)
        *count = c->dev_n[i];
    return c->dev_rc[i];
}

bool tg_container_requests_efa(json_t *container)
{
    long long n = 0;
    int rc = tg_container_count(container, TG_RES_EFA, &n);
    return rc < 0 || (rc == 1 && n > 0);
}

bool tg_ctr_requests_efa(const struct tg_container *c)
{
    long long n = 0;
    int rc = tg_ctr_count(c, TG_RES_EFA, &n);
    return rc < 0 || (rc == 1 && n > 0);
}

bool tg_template_uses_claims(const struct tg_template *t)
{
    if (json_array_size(tg_template_resource_claims(t)) > 0)
        return true;
    for (size_t i = 0; i < t->ncontainers; i++) {
        if (t->containers[i].claims)
            return true;
    }
    return false;
}

bool tg_template_requests_efa(const struct tg_template *t)
{
    for (size_t i = 0; i < t->ncontainers; i++) {
        if (tg_ctr_requests_efa(&t->containers[i]))
            return true;
    }
    return false;
}

#define COUNT_CAP ((long long)1 << 40)

/* The pod-level count over the containers whose value is a count, as the scheduler computes a
 * pod's effective request (docs/references.md#ref-k8s-sidecar-effective-requests): the app
 * containers plus every native sidecar (init container with restartPolicy Always), or an ordinary
 * init container plus the sidecars started before it, whichever is larger. *bad tells whether some
 * written value was not a count. Returns whether any container writes the resource. */
static bool template_sum(const struct tg_template *t, const char *name, long long *count, bool *bad)
{
    long long apps = 0, sidecars = 0, init_max = 0, n;
    bool seen = false;
    *bad = false;
    for (size_t i = 0; i < t->ncontainers; i++) {
        const struct tg_container *c = &t->containers[i];
        int rc = tg_ctr_count(c, name, &n);
        if (rc < 0) {
            seen = *bad = true;
            continue;
        }
        if (rc == 0)
            n = 0;
        seen |= rc == 1;
        /* Saturate: no node has 2^40 of anything, and the sums must not overflow. */
        if (n > COUNT_CAP)
            n = COUNT_CAP;
        if (!c->init) {
            apps = apps + n > COUNT_CAP ? COUNT_CAP : apps + n;
        } else if (c->sidecar) {
            sidecars = sidecars + n > COUNT_CAP ? COUNT_CAP : sidecars + n;
        } else {
            long long during = sidecars + n > COUNT_CAP ? COUNT_CAP : sidecars + n;
            init_max = during > init_max ? during : init_max;
        }
    }
    long long running = apps + sidecars > COUNT_CAP ? COUNT_CAP : apps + sidecars;
    *count = running > init_max ? running : init_max;
    return seen;
}

/* template_sum, kept for the devices of struct tg_template count_memo. */
static bool template_sum_kept(const struct tg_template *t, const char *name, long long *count,
                              bool *bad)
{
    int i = device_index(name, 3);
    if (i < 0)
        return template_sum(t, name, count, bad);
    /* the view is not const: only the rules' pointers to it are */
    struct tg_template *mt = (struct tg_template *)t;
    if (!t->count_memo[i].set) {
        mt->count_memo[i].seen =
            template_sum(t, name, &mt->count_memo[i].n, &mt->count_memo[i].bad);
        mt->count_memo[i].set = true;
    }
    *count = t->count_memo[i].n;
    *bad = t->count_memo[i].bad;
    return t->count_memo[i].seen;
}

int tg_template_count(const struct tg_template *t, const char *name, long long *count)
{
    long long n;
    bool bad;
    if (!template_sum_kept(t, name, &n, &bad))
        return 0;
    if (bad)
        return -1;
    *count = n;
    return 1;
}

int tg_template_count_valid(const struct tg_template *t, const char *name, long long *count)
{
    long long n;
    bool bad;
    if (!template_sum_kept(t, name, &n, &bad))
        return 0;
    *count = n;
    return bad ? 2 : 1;
}

/* ---- label pins ---------------------------------------------------------------------------- */

void tg_label_pin_init(struct tg_label_pin *p)
{
    memset(p, 0, sizeof(*p));
}

void tg_label_pin_release(struct tg_label_pin *p)
{
    if (p->values != p->inline_values)
        free(p->values);
    tg_label_pin_init(p);
}

bool tg_label_pin_has(const struct tg_label_pin *p, const char *value)
{
    for (size_t i = 0; i < p->n; i++) {
        if (!strcmp(p->values[i], value))
            return true;
    }
    return false;
}

/* Room for n values in p (the inline array while they fit). Returns 0 or -ENOMEM. */
static int pin_reserve(struct tg_label_pin *p, size_t n)
{
    if (!p->values)
        p->values = p->inline_values;
    if (n <= TG_PIN_INLINE)
        return 0;
    if (p->values == p->inline_values) {
        const char **heap = malloc(n * sizeof(*heap));
        if (!heap)
            return -ENOMEM;
        memcpy(heap, p->inline_values, p->n * sizeof(*heap));
        p->values = heap;
        return 0;
    }
    const char **grown = realloc(p->values, n * sizeof(*grown));
    if (!grown)
        return -ENOMEM;
    p->values = grown;
    return 0;
}

static int pin_add(struct tg_label_pin *p, const char *v)
{
    if (tg_label_pin_has(p, v))
        return 0;
    if (pin_reserve(p, p->n + 1) < 0)
        return -ENOMEM;
    p->values[p->n++] = v;
    return 0;
}

static bool key_in(const char *key, const char *const *keys, size_t nkeys)
{
    for (size_t i = 0; i < nkeys; i++) {
        if (!strcmp(keys[i], key))
            return true;
    }
    return false;
}

static bool str_in_array(json_t *arr, const char *v)
{
    size_t i;
    json_t *e;
    json_array_foreach (arr, i, e) {
        if (json_is_string(e) && !strcmp(json_string_value(e), v))
            return true;
    }
    return false;
}

/* p := p restricted to the strings of arr (an open p becomes finite). */
static int pin_in(struct tg_label_pin *p, json_t *arr)
{
    size_t i, k = 0;
    json_t *e;
    if (p->finite) {
        for (i = 0; i < p->n; i++) {
            if (str_in_array(arr, p->values[i]))
                p->values[k++] = p->values[i];
        }
        p->n = k;
        return 0;
    }
    p->finite = true;
    json_array_foreach (arr, i, e) {
        if (json_is_string(e) && pin_add(p, json_string_value(e)) < 0)
            return -ENOMEM;
    }
    return 0;
}

/* p := p without the strings of arr (an open p stays open). */
static void pin_not_in(struct tg_label_pin *p, json_t *arr)
{
    size_t k = 0;
    if (!p->finite)
        return;
    for (size_t i = 0; i < p->n; i++) {
        if (!str_in_array(arr, p->values[i]))
            p->values[k++] = p->values[i];
    }
    p->n = k;
}

/* dst := dst intersect src (both may be open). */
static int pin_and(struct tg_label_pin *dst, const struct tg_label_pin *src)
{
    dst->mentioned |= src->mentioned;
    if (!src->finite)
        return 0;
    if (!dst->finite) {
        dst->finite = true;
        for (size_t i = 0; i < src->n; i++) {
            if (pin_add(dst, src->values[i]) < 0)
                return -ENOMEM;
        }
        return 0;
    }
    size_t k = 0;
    for (size_t i = 0; i < dst->n; i++) {
        if (tg_label_pin_has(src, dst->values[i]))
            dst->values[k++] = dst->values[i];
    }
    dst->n = k;
    return 0;
}

/* The node-label readers below run in two modes. Paths on: wrong JSON types are reported on ev
 * through the typed getters, at paths built as the reader descends. Paths off: nothing is built
 * or reported, a member of the wrong type reads as absent (as the getters return it) and sets
 * bad. A reader first runs with paths off; only when that met a wrong type and ev wants reports
 * does it run again with paths on, so the well-typed spec never pays for its paths. */
struct pin_ctx {
    struct tg_eval *ev;
    bool paths;
    bool bad;
};

/* tg_get_object/array/string with the paths of x. */
static json_t *pin_get(struct pin_ctx *x, json_t *parent, const struct tg_path *path,
                       const char *key, json_type want)
{
    if (x->paths) /* strings take pin_get_string */
        return want == JSON_OBJECT ? tg_get_object(x->ev, parent, path, key)
                                   : tg_get_array(x->ev, parent, path, key);
    if (!json_is_object(parent))
        return NULL;
    json_t *v = json_object_get(parent, key);
    if (!v || json_is_null(v))
        return NULL;
    if (json_typeof(v) == want)
        return v;
    x->bad = true;
    return NULL;
}

/* pin_get of member key of spec, when raw != NULL: *raw is json_object_get's answer for it, read
 * before (paths on, the getter reads it again to report). */
static json_t *pin_get_spec(struct pin_ctx *x, json_t *spec, json_t *const *raw,
                            const struct tg_path *path, const char *key, json_type want)
{
    if (!raw || x->paths)
        return pin_get(x, spec, path, key, want);
    json_t *v = *raw;
    if (!v || json_is_null(v))
        return NULL;
    if (json_typeof(v) == want)
        return v;
    x->bad = true;
    return NULL;
}

static const char *pin_get_string(struct pin_ctx *x, json_t *parent, const struct tg_path *path,
                                  const char *key)
{
    if (x->paths)
        return tg_get_string(x->ev, parent, path, key);
    return json_string_value(pin_get(x, parent, path, key, JSON_STRING));
}

/* dst = src + key, in paths-on mode only. */
static void pin_path_key(const struct pin_ctx *x, struct tg_path *dst, const struct tg_path *src,
                         const char *key)
{
    if (x->paths)
        tg_path_key(dst, src, key);
}

static void pin_path_index(const struct pin_ctx *x, struct tg_path *dst, const struct tg_path *src,
                           size_t i)
{
    if (x->paths)
        tg_path_index(dst, src, i);
}

/* key (kl bytes, which may hold a NUL) is one of keys. */
static bool key_in_n(const char *key, size_t kl, const char *const *keys, size_t nkeys)
{
    for (size_t i = 0; i < nkeys; i++) {
        /* the first byte tells most keys apart without measuring them */
        if (keys[i][0] == key[0] && strlen(keys[i]) == kl && !memcmp(keys[i], key, kl))
            return true;
    }
    return false;
}

/* A nodeSelector value v of one of the keys: the first one pins, another that differs leaves no
 * node. The result does not depend on the order the keys are met in. */
static int selector_value(struct tg_label_pin *out, const char *v)
{
    out->mentioned = true;
    if (!out->finite) {
        out->finite = true;
        if (pin_add(out, v) < 0)
            return -ENOMEM;
    } else if (!tg_label_pin_has(out, v)) {
        out->n = 0; /* two alias keys with different values: no node has both */
    }
    return 0;
}

/* The pin of keys in the nodeSelector object ns (NULL: none), written at np (paths on only).
 * With paths off, a nodeSelector of at most SELECTOR_WALK_PER_KEY members per key is walked
 * once, its keys compared, instead of one lookup per key (a hash lookup costs several times a
 * step and a compare); members of the wrong type set bad either way. */
#define SELECTOR_WALK_PER_KEY 4

/* One label's alias keys and the pin they give. */
struct selector_group {
    const char *const *keys;
    size_t nkeys;
    struct tg_label_pin *out;
};

/* selector_keys_in for several labels at once: with paths off, a nodeSelector of at most
 * SELECTOR_WALK_PER_KEY members per key of all the groups is walked once for all of them (each
 * group's pin is what its own walk would give). */
static int selector_groups_in(struct pin_ctx *x, json_t *ns, const struct tg_path *np,
                              const struct selector_group *g, size_t ng)
{
    size_t nkeys = 0;
    for (size_t k = 0; k < ng; k++) {
        tg_label_pin_init(g[k].out);
        nkeys += g[k].nkeys;
    }
    if (!x->paths && json_is_object(ns) && json_object_size(ns) <= SELECTOR_WALK_PER_KEY * nkeys) {
        for (void *it = json_object_iter(ns); it; it = json_object_iter_next(ns, it)) {
            const char *key = json_object_iter_key(it);
            size_t kl = json_object_iter_key_len(it);
            for (size_t k = 0; k < ng; k++) {
                if (!key_in_n(key, kl, g[k].keys, g[k].nkeys))
                    continue;
                json_t *v = json_object_iter_value(it);
                if (json_is_null(v))
                    continue;
                if (!json_is_string(v))
                    x->bad = true;
                else if (selector_value(g[k].out, json_string_value(v)) < 0)
                    return -ENOMEM;
            }
        }
        return 0;
    }
    for (size_t k = 0; k < ng; k++) {
        for (size_t i = 0; i < g[k].nkeys; i++) {
            const char *v = pin_get_string(x, ns, np, g[k].keys[i]);
            if (v && selector_value(g[k].out, v) < 0)
                return -ENOMEM;
        }
    }
    return 0;
}

static int selector_keys_in(struct pin_ctx *x, json_t *ns, const struct tg_path *np,
                            const char *const *keys, size_t nkeys, struct tg_label_pin *out)
{
    const struct selector_group g = {keys, nkeys, out};
    return selector_groups_in(x, ns, np, &g, 1);
}

/* raw: spec's nodeSelector as read before, or NULL to look it up */
static int node_selector_in(struct pin_ctx *x, json_t *spec, json_t *const *raw,
                            const struct tg_path *spec_path, const char *const *keys, size_t nkeys,
                            struct tg_label_pin *out)
{
    struct tg_path np;
    json_t *ns = pin_get_spec(x, spec, raw, spec_path, "nodeSelector", JSON_OBJECT);
    pin_path_key(x, &np, spec_path, "nodeSelector");
    return selector_keys_in(x, ns, &np, keys, nkeys, out);
}

/* A pin read by `in`, first without paths; read again with them only when a wrong type needs
 * reporting (and there is an ev to report it to). */
typedef int (*pin_reader)(struct pin_ctx *x, json_t *spec, json_t *const *raw,
                          const struct tg_path *spec_path, const char *const *keys, size_t nkeys,
                          struct tg_label_pin *out);

static int pin_read(pin_reader in, struct tg_eval *ev, json_t *spec, json_t *const *raw,
                    const struct tg_path *spec_path, const char *const *keys, size_t nkeys,
                    struct tg_label_pin *out)
{
    struct pin_ctx x = {ev, false, false};
    int rc = in(&x, spec, raw, spec_path, keys, nkeys, out);
    if (rc < 0 || !x.bad || !ev)
        return rc;
    tg_label_pin_release(out);
    x.paths = true;
    return in(&x, spec, raw, spec_path, keys, nkeys, out);
}

int tg_pin_node_selector(struct tg_eval *ev, json_t *spec, const struct tg_path *spec_path,
                         const char *const *keys, size_t nkeys, struct tg_label_pin *out)
{
    return pin_read(node_selector_in, ev, spec, NULL, spec_path, keys, nkeys, out);
}

int tg_template_pin_node_selector(struct tg_eval *ev, const struct tg_template *t,
                                  const char *const *keys, size_t nkeys, struct tg_label_pin *out)
{
    return pin_read(node_selector_in, ev, t->spec, t->spec_read ? &t->node_selector : NULL,
                    &t->spec_path, keys, nkeys, out);
}

/* The values one nodeSelectorTerm allows (open when it has no In on the keys). */
static int term_pin(struct pin_ctx *x, json_t *term, const struct tg_path *tp,
                    const char *const *keys, size_t nkeys, struct tg_label_pin *out)
{
    struct tg_path ep, xp;
    size_t i;
    json_t *e;
    json_t *exprs = pin_get(x, term, tp, "matchExpressions", JSON_ARRAY);
    json_t *fields = pin_get(x, term, tp, "matchFields", JSON_ARRAY);
    tg_label_pin_init(out);
    if (json_array_size(exprs) == 0 && json_array_size(fields) == 0) {
        /* "A null or empty node selector term matches no objects" (core/v1 types.go). */
        out->finite = true;
        return 0;
    }
    pin_path_key(x, &ep, tp, "matchExpressions");
    json_array_foreach (exprs, i, e) {
        pin_path_index(x, &xp, &ep, i);
        if (!json_is_object(e))
            continue;
        const char *key = pin_get_string(x, e, &xp, "key");
        if (!key || !key_in(key, keys, nkeys))
            continue;
        out->mentioned = true;
        const char *op = pin_get_string(x, e, &xp, "operator");
        json_t *vals = pin_get(x, e, &xp, "values", JSON_ARRAY);
        if (op && !strcmp(op, "In")) {
            if (pin_in(out, vals) < 0)
                return -ENOMEM;
        } else if (op && !strcmp(op, "NotIn")) {
            pin_not_in(out, vals);
        }
    }
    return 0;
}

/* raw: spec's affinity as read before, or NULL to look it up */
static int node_affinity_in(struct pin_ctx *x, json_t *spec, json_t *const *raw,
                            const struct tg_path *spec_path, const char *const *keys, size_t nkeys,
                            struct tg_label_pin *out)
{
    struct tg_path p, tp;
    struct tg_label_pin term;
    size_t i;
    json_t *t;
    int rc = 0;
    tg_label_pin_init(out);
    tg_label_pin_init(&term);
    json_t *aff = pin_get_spec(x, spec, raw, spec_path, "affinity", JSON_OBJECT);
    pin_path_key(x, &p, spec_path, "affinity");
    json_t *na = pin_get(x, aff, &p, "nodeAffinity", JSON_OBJECT);
    pin_path_key(x, &p, &p, "nodeAffinity");
    json_t *req = pin_get(x, na, &p, "requiredDuringSchedulingIgnoredDuringExecution", JSON_OBJECT);
    pin_path_key(x, &p, &p, "requiredDuringSchedulingIgnoredDuringExecution");
    json_t *terms = pin_get(x, req, &p, "nodeSelectorTerms", JSON_ARRAY);
    pin_path_key(x, &p, &p, "nodeSelectorTerms");
    bool open = json_array_size(terms) == 0;
    json_array_foreach (terms, i, t) {
        pin_path_index(x, &tp, &p, i);
        if (!json_is_object(t)) {
            if (x->ev && !json_is_null(t)) {
                if (x->paths)
                    tg_report(x->ev, TG_RULE_OBJECT_INVALID_FIELD, tp.field,
                              "must be a node selector term");
                x->bad = true;
            }
            open = true; /* unusable: do not claim that no node matches */
            continue;
        }
        if ((rc = term_pin(x, t, &tp, keys, nkeys, &term)) < 0)
            goto out;
        out->mentioned |= term.mentioned;
        if (!term.finite)
            open = true;
        for (size_t k = 0; k < term.n && rc == 0; k++)
            rc = pin_add(out, term.values[k]);
        tg_label_pin_release(&term);
        if (rc < 0)
            goto out;
    }
    out->finite = !open;
    if (open)
        out->n = 0;
out:
    tg_label_pin_release(&term);
    return rc;
}

int tg_pin_node_affinity(struct tg_eval *ev, json_t *spec, const struct tg_path *spec_path,
                         const char *const *keys, size_t nkeys, struct tg_label_pin *out)
{
    return pin_read(node_affinity_in, ev, spec, NULL, spec_path, keys, nkeys, out);
}

int tg_template_pin_node_affinity(struct tg_eval *ev, const struct tg_template *t,
                                  const char *const *keys, size_t nkeys, struct tg_label_pin *out)
{
    if (t->spec_read && (!t->affinity || json_is_null(t->affinity))) {
        /* no affinity (the common case): open and unmentioned, as node_affinity_in finds it */
        tg_label_pin_init(out);
        return 0;
    }
    return pin_read(node_affinity_in, ev, t->spec, t->spec_read ? &t->affinity : NULL,
                    &t->spec_path, keys, nkeys, out);
}

/* The spec members kept, in the order of spec_slot's answers. */
static const char *const spec_keys[] = {"containers",     "initContainers", "nodeSelector",
                                        "affinity",       "resourceClaims", "volumes",
                                        "schedulingGates"};
#define SPEC_KEYS 7

/* The index in spec_keys of the key k (kl bytes, which may hold a NUL), or -1: told apart by
 * length and a byte, then compared. */
static int spec_slot(const char *k, size_t kl)
{
    int i;
    switch (kl) {
    case 7:
        i = 5;
        break;
    case 8:
        i = 3;
        break;
    case 10:
        i = 0;
        break;
    case 12:
        i = 2;
        break;
    case 14:
        i = k[0] == 'i' ? 1 : 4;
        break;
    case 15:
        i = 6;
        break;
    default:
        return -1;
    }
    return k[0] == spec_keys[i][0] && !memcmp(k, spec_keys[i], kl) ? i : -1;
}

void tg_template_read_spec(struct tg_template *t)
{
    json_t *v[SPEC_KEYS] = {NULL};
    if (json_object_size(t->spec) <= TG_SPEC_WALK_MAX) {
        /* nothing when spec is no object */
        for (void *it = json_object_iter(t->spec); it; it = json_object_iter_next(t->spec, it)) {
            int i = spec_slot(json_object_iter_key(it), json_object_iter_key_len(it));
            if (i >= 0)
                v[i] = json_object_iter_value(it);
        }
    } else {
        for (size_t i = 0; i < SPEC_KEYS; i++)
            v[i] = json_object_get(t->spec, spec_keys[i]);
    }
    t->containers_raw = v[0];
    t->init_containers_raw = v[1];
    t->node_selector = v[2];
    t->affinity = v[3];
    t->resource_claims = v[4];
    t->volumes = v[5];
    t->scheduling_gates = v[6];
    t->spec_read = true;
}

json_t *tg_template_node_selector(const struct tg_template *t)
{
    return t->spec_read ? t->node_selector : json_object_get(t->spec, "nodeSelector");
}

json_t *tg_template_affinity(const struct tg_template *t)
{
    return t->spec_read ? t->affinity : json_object_get(t->spec, "affinity");
}

json_t *tg_template_resource_claims(const struct tg_template *t)
{
    return t->spec_read ? t->resource_claims : json_object_get(t->spec, "resourceClaims");
}

json_t *tg_template_volumes(const struct tg_template *t)
{
    return t->spec_read ? t->volumes : json_object_get(t->spec, "volumes");
}

json_t *tg_template_scheduling_gates(const struct tg_template *t)
{
    return t->spec_read ? t->scheduling_gates : json_object_get(t->spec, "schedulingGates");
}

int tg_pin_label(struct tg_eval *ev, json_t *spec, const struct tg_path *spec_path,
                 const char *const *keys, size_t nkeys, struct tg_label_pin *out)
{
    struct tg_label_pin aff;
    int rc = tg_pin_node_selector(ev, spec, spec_path, keys, nkeys, out);
    if (rc < 0)
        return rc;
    if ((rc = tg_pin_node_affinity(ev, spec, spec_path, keys, nkeys, &aff)) == 0)
        rc = pin_and(out, &aff);
    tg_label_pin_release(&aff);
    if (rc < 0)
        tg_label_pin_release(out);
    return rc;
}

/* The three node labels that narrow the instance type (docs/references.md#ref-karpenter-labels):
 * the type itself, and Karpenter's family and size (derived from the type name). */
struct type_pins {
    struct tg_label_pin type, family, size;
};

static void type_pins_release(struct type_pins *p)
{
    tg_label_pin_release(&p->type);
    tg_label_pin_release(&p->family);
    tg_label_pin_release(&p->size);
}

static const char *const family_keys[] = {TG_LABEL_INSTANCE_FAMILY};
static const char *const size_keys[] = {TG_LABEL_INSTANCE_SIZE};

static bool row_fits(const struct tg_instance *in, const struct tg_fit *fit)
{
    return !fit || ((fit->gpus <= 0 || in->gpus >= fit->gpus) &&
                    (fit->neuron <= 0 || in->neuron >= fit->neuron) &&
                    (fit->efa <= 0 || in->efa >= fit->efa));
}

/* The types one conjunction of pins allows. A type pin is taken as written (narrowed by family and
 * size pins); family and size pins are enumerated from the table, narrowed to the rows that can
 * hold fit when some can. A family the table does not know, or a size without a family, cannot be
 * enumerated: open. */
static int pins_types(const struct type_pins *p, const struct tg_instance *table, size_t n,
                      const struct tg_fit *fit, struct tg_label_pin *out, bool *fit_used)
{
    char fam[64];
    tg_label_pin_init(out);
    out->mentioned = p->type.mentioned || p->family.mentioned || p->size.mentioned;
    if (p->type.finite) {
        out->finite = true;
        for (size_t i = 0; i < p->type.n; i++) {
            const char *v = p->type.values[i];
            if ((p->family.finite &&
                 !tg_label_pin_has(&p->family, tg_instance_family(v, fam, sizeof(fam)))) ||
                (p->size.finite && !tg_label_pin_has(&p->size, tg_instance_size(v))))
                continue;
            if (pin_add(out, v) < 0)
                return -ENOMEM;
        }
        return 0;
    }
    if (!p->family.finite)
        return 0;
    *fit_used = true; /* the family's rows, narrowed by fit */
    for (size_t i = 0; i < p->family.n; i++) {
        if (!tg_instance_family_known(table, n, p->family.values[i]))
            return 0; /* open */
    }
    out->finite = true;
    for (int pass = 0; pass < 2 && out->n == 0; pass++) {
        for (size_t i = 0; i < n; i++) {
            tg_instance_family(table[i].name, fam, sizeof(fam));
            if (!tg_label_pin_has(&p->family, fam) ||
                (p->size.finite && !tg_label_pin_has(&p->size, tg_instance_size(table[i].name))) ||
                (pass == 0 && !row_fits(&table[i], fit)))
                continue;
            if (pin_add(out, table[i].name) < 0)
                return -ENOMEM;
        }
    }
    return 0;
}

/* The kept answer of tg_template_instance_types (struct tg_template types_memo), copied to out. */
static int types_from_memo(const struct tg_template *t, struct tg_label_pin *out)
{
    tg_label_pin_init(out);
    out->finite = t->types_memo.finite;
    out->mentioned = t->types_memo.mentioned;
    if (t->types_memo.n == 0)
        return 0;
    if (pin_reserve(out, t->types_memo.n) < 0)
        return -ENOMEM;
    memcpy(out->values, t->types_memo.values, t->types_memo.n * sizeof(*out->values));
    out->n = t->types_memo.n;
    return 0;
}

/* Keeps out as t's answer (see types_memo), when it fits. */
static void types_to_memo(const struct tg_template *t, const struct tg_instance *table,
                          size_t ntable, const struct tg_label_pin *out)
{
    /* the view is not const: only the rules' pointers to it are */
    struct tg_template *mt = (struct tg_template *)t;
    if (out->n > sizeof(mt->types_memo.values) / sizeof(mt->types_memo.values[0]))
        return;
    mt->types_memo.finite = out->finite;
    mt->types_memo.mentioned = out->mentioned;
    mt->types_memo.table = table;
    mt->types_memo.ntable = ntable;
    mt->types_memo.n = out->n;
    if (out->n)
        memcpy(mt->types_memo.values, out->values, out->n * sizeof(*out->values));
    mt->types_memo.set = true;
}

int tg_template_instance_types(struct tg_eval *ev, const struct tg_template *t,
                               const struct tg_instance *table, size_t ntable,
                               const struct tg_fit *fit, struct tg_label_pin *out)
{
    struct type_pins sel, term;
    struct tg_label_pin cand, aff;
    struct pin_ctx quiet = {NULL, false, false}; /* the terms: reported by the per-key reader */
    bool fit_used = false;
    size_t i;
    json_t *tm;
    int rc;
    /* a call without ev reports nothing, so the kept answer serves it */
    if (!ev && t->types_memo.set && t->types_memo.table == (const void *)table &&
        t->types_memo.ntable == ntable)
        return types_from_memo(t, out);
    memset(&sel, 0, sizeof(sel));
    memset(&term, 0, sizeof(term));
    tg_label_pin_init(&aff);
    tg_label_pin_init(out);
    /* nodeSelector is read once for the three labels; a wrong type met there is reported by
     * reading it again per label, as tg_pin_node_selector does */
    struct pin_ctx x = {ev, false, false};
    json_t *ns_raw = tg_template_node_selector(t);
    json_t *ns = pin_get_spec(&x, t->spec, &ns_raw, &t->spec_path, "nodeSelector", JSON_OBJECT);
    const struct selector_group groups[] = {
        {tg_instance_type_labels, tg_instance_type_label_count, &sel.type},
        {family_keys, 1, &sel.family},
        {size_keys, 1, &sel.size},
    };
    if ((rc = selector_groups_in(&x, ns, NULL, groups, 3)) < 0)
        goto out;
    if (x.bad && ev) {
        type_pins_release(&sel);
        if ((rc = tg_template_pin_node_selector(ev, t, tg_instance_type_labels,
                                                tg_instance_type_label_count, &sel.type)) < 0 ||
            (rc = tg_template_pin_node_selector(ev, t, family_keys, 1, &sel.family)) < 0 ||
            (rc = tg_template_pin_node_selector(ev, t, size_keys, 1, &sel.size)) < 0)
            goto out;
    }
    if ((rc = pins_types(&sel, table, ntable, fit, out, &fit_used)) < 0)
        goto out;
    /* Required node affinity: terms are ORed, the expressions of one term ANDed. Read once by the
     * per-key reader too, which reports wrong JSON types in the terms (on ev; without ev it
     * would only read them). */
    if (ev && (rc = tg_template_pin_node_affinity(ev, t, tg_instance_type_labels,
                                                  tg_instance_type_label_count, &aff)) < 0)
        goto out;
    tg_label_pin_release(&aff);
    json_t *aff_obj = json_object_get(tg_template_affinity(t), "nodeAffinity");
    json_t *req = json_object_get(aff_obj, "requiredDuringSchedulingIgnoredDuringExecution");
    json_t *terms = json_object_get(req, "nodeSelectorTerms");
    bool open = !json_is_array(terms) || json_array_size(terms) == 0;
    json_array_foreach (terms, i, tm) {
        if (!json_is_object(tm)) {
            open = true;
            continue;
        }
        if ((rc = term_pin(&quiet, tm, NULL, tg_instance_type_labels, tg_instance_type_label_count,
                           &term.type)) < 0 ||
            (rc = term_pin(&quiet, tm, NULL, family_keys, 1, &term.family)) < 0 ||
            (rc = term_pin(&quiet, tm, NULL, size_keys, 1, &term.size)) < 0 ||
            (rc = pins_types(&term, table, ntable, fit, &cand, &fit_used)) < 0)
            goto out;
        aff.mentioned |= cand.mentioned;
        if (!cand.finite)
            open = true;
        for (size_t k = 0; k < cand.n && rc == 0; k++)
            rc = pin_add(&aff, cand.values[k]);
        tg_label_pin_release(&cand);
        type_pins_release(&term);
        if (rc < 0)
            goto out;
    }
    aff.finite = !open;
    if (open)
        aff.n = 0;
    rc = pin_and(out, &aff);
    if (rc == 0 && !x.bad && !fit_used)
        types_to_memo(t, table, ntable, out);
out:
    type_pins_release(&sel);
    type_pins_release(&term);
    tg_label_pin_release(&aff);
    if (rc < 0)
        tg_label_pin_release(out);
    return rc;
}

/* ---- env ----------------------------------------------------------------------------------- */

/* Keeps the names of c's env entries (struct tg_container env_memo). */
static void env_names_read(const struct tg_container *c)
{
    /* the view is not const: only the rules' pointers to it are */
    struct tg_container *mc = (struct tg_container *)c;
    size_t n = json_array_size(c->env_raw);
    if (!json_is_array(c->env_raw) || n > TG_ENV_MEMO_MAX) {
        mc->env_memo = -1;
        return;
    }
    for (size_t i = 0; i < n; i++)
        mc->env_names[i] = tg_env_entry_name(json_array_get(c->env_raw, i));
    mc->env_names_n = (unsigned char)n;
    mc->env_memo = 1;
}

const char *tg_ctr_env_name(const struct tg_container *c, size_t i)
{
    if (c->env_memo == 0)
        env_names_read(c);
    if (c->env_memo < 0)
        return tg_env_entry_name(json_array_get(c->env_raw, i));
    return i < c->env_names_n ? c->env_names[i] : NULL;
}

/* The index of the last entry of name among c's kept env names, or -1. */
static long env_last(const struct tg_container *c, const char *name)
{
    for (size_t i = c->env_names_n; i-- > 0;) {
        const char *n = c->env_names[i];
        if (n && n[0] == name[0] && !strcmp(n, name))
            return (long)i;
    }
    return -1;
}

const char *tg_ctr_env_get(const struct tg_container *c, const char *name, char *buf, size_t len,
                           bool *defined)
{
    if (c->env_memo == 0)
        env_names_read(c);
    if (c->env_memo < 0)
        return tg_env_get_in(c->env_raw, name, buf, len, defined);
    /* as tg_env_get_in: the last entry of the name, compared with the names kept */
    if (defined)
        *defined = false;
    if (len == 0)
        return NULL;
    long i = env_last(c, name);
    if (i < 0)
        return NULL;
    if (defined)
        *defined = true;
    return tg_env_get_at(c->env_raw, (size_t)i, buf, len);
}

const char *tg_ctr_env_value(const struct tg_container *c, const char *name, bool *defined)
{
    if (c->env_memo == 0)
        env_names_read(c);
    if (c->env_memo < 0)
        return tg_env_value_in(c->env_raw, name, defined);
    long i = env_last(c, name);
    if (defined)
        *defined = i >= 0;
    return i < 0 ? NULL : tg_env_value_at(c->env_raw, (size_t)i);
}

bool tg_fi_provider_selects_efa(const char *value)
{
    if (!value || value[0] == '^')
        return false;
    /* "efa", "efa,shm", "efa;ofi_rxr": any listed core provider named efa. */
    const char *p = value;
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        size_t n = strcspn(p, ",; ");
        if (n == 3 && !strncasecmp(p, "efa", 3))
            return true;
        p += n;
        p += strcspn(p, ",");
    }
    return false;
}

bool tg_nccl_net_is_ofi(const char *value)
{
    static const char *const ofi[] = {"AWS Libfabric", "Libfabric", "ofi"};
    if (!value)
        return false;
    for (size_t i = 0; i < sizeof(ofi) / sizeof(ofi[0]); i++) {
        if (!strcasecmp(value, ofi[i]))
            return true;
    }
    return false;
}

/* ---- updates ------------------------------------------------------------------------------- */

bool tg_workload_spec_unchanged(const struct tg_workload *wl)
{
    if (!wl->old_obj)
        return false;
    json_t *a = json_object_get(wl->obj, "spec");
    json_t *b = json_object_get(wl->old_obj, "spec");
    if (!a || !b)
        return !a && !b;
    return json_equal(a, b);
}
