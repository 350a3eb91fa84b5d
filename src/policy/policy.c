/* policy.c -- policy lifecycle, the compiled-in default, lookups, and the published snapshot. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tg/instances.h"
#include "tg/policy.h"
#include "tg/rules.h"

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void policy_free(struct tg_policy *p)
{
    free(p->actions);
    free_strv(p->exempt_namespaces, p->nexempt);
    for (size_t i = 0; i < p->nns_modes; i++)
        free(p->ns_modes[i].ns);
    free(p->ns_modes);
    free_strv(p->zone_labels, p->nzone_labels);
    free_strv(p->narrow_topology_keys, p->nnarrow);
    for (size_t i = 0; i < p->nsingle_zone; i++) {
        free(p->single_zone_labels[i].key);
        free_strv(p->single_zone_labels[i].values, p->single_zone_labels[i].nvalues);
        free(p->single_zone_labels[i].zone);
    }
    free(p->single_zone_labels);
    free_strv(p->volcano_schedulers, p->nvolcano);
    for (size_t i = 0; i < p->ninstances; i++)
        free(p->instances[i].name);
    free(p->instances);
    for (size_t i = 0; i < p->ninject; i++) {
        free(p->inject_env[i].name);
        free(p->inject_env[i].value);
        free_strv(p->inject_env[i].families, p->inject_env[i].nfamilies);
    }
    free(p->inject_env);
    free(p->source);
    free(p);
}

void tg_policy_ref(struct tg_policy *p)
{
    __atomic_add_fetch(&p->refcount, 1, __ATOMIC_RELAXED);
}

void tg_policy_unref(struct tg_policy *p)
{
    if (p && __atomic_sub_fetch(&p->refcount, 1, __ATOMIC_ACQ_REL) == 0)
        policy_free(p);
}

static char **strv_dup(const char *const *src, size_t n)
{
    char **v = calloc(n ? n : 1, sizeof(*v));
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (!(v[i] = strdup(src[i]))) {
            free_strv(v, i);
            return NULL;
        }
    }
    return v;
}

static const char *const default_exempt[] = {"kube-system"};
static const char *const default_zone_labels[] = {"topology.kubernetes.io/zone",
                                                  "failure-domain.beta.kubernetes.io/zone"};
/* SPEC section 9: topology keys narrower than a zone. */
static const char *const default_narrow[] = {
    "kubernetes.io/hostname", "nvidia.com/gpu.clique", "topology.k8s.aws/network-node-layer-1",
    "topology.k8s.aws/network-node-layer-2", "topology.k8s.aws/network-node-layer-3"};
static const char *const default_volcano[] = {"volcano"};

struct default_env {
    const char *name, *value;
    bool gdr_only;
};
/* SPEC section 5; NCCL_SOCKET_IFNAME excludes pod-id-link0 (api-facts section 6, item 14). */
static const struct default_env default_env[] = {
    {"FI_PROVIDER", "efa", false},
    {"FI_EFA_USE_DEVICE_RDMA", "1", true},
    {"NCCL_SOCKET_IFNAME", "^lo,docker,veth,pod-id-link0", false},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Fills the parts of the default that are tables in C. Returns 0 or -ENOMEM. */
static int fill_default(struct tg_policy *p)
{
    p->mode = TG_MODE_ENFORCE;
    p->nactions = tg_rule_count;
    if (!(p->actions = calloc(tg_rule_count, sizeof(*p->actions))))
        return -ENOMEM;
    for (size_t i = 0; i < tg_rule_count; i++)
        p->actions[i] = tg_rule_defs[i].default_action;
    if (!(p->exempt_namespaces = strv_dup(default_exempt, N(default_exempt))))
        return -ENOMEM;
    p->nexempt = N(default_exempt);
    if (!(p->zone_labels = strv_dup(default_zone_labels, N(default_zone_labels))))
        return -ENOMEM;
    p->nzone_labels = N(default_zone_labels);
    if (!(p->narrow_topology_keys = strv_dup(default_narrow, N(default_narrow))))
        return -ENOMEM;
    p->nnarrow = N(default_narrow);
    if (!(p->volcano_schedulers = strv_dup(default_volcano, N(default_volcano))))
        return -ENOMEM;
    p->nvolcano = N(default_volcano);
    if (!(p->instances = calloc(tg_instance_table_len, sizeof(*p->instances))))
        return -ENOMEM;
    for (size_t i = 0; i < tg_instance_table_len; i++) {
        const struct tg_instance_row *r = &tg_instance_table[i];
        struct tg_instance *in = &p->instances[i];
        if (!(in->name = strdup(r->name)))
            return -ENOMEM;
        p->ninstances++;
        in->efa = r->efa;
        in->gpus = r->gpus;
        in->neuron = r->neuron;
        in->neuron_cores = r->neuron_cores;
        in->gdr = r->gdr;
    }
    if (!(p->inject_env = calloc(N(default_env), sizeof(*p->inject_env))))
        return -ENOMEM;
    for (size_t i = 0; i < N(default_env); i++) {
        struct tg_env_entry *e = &p->inject_env[i];
        p->ninject++;
        if (!(e->name = strdup(default_env[i].name)) || !(e->value = strdup(default_env[i].value)))
            return -ENOMEM;
        e->gdr_only = default_env[i].gdr_only;
    }
    if (!(p->source = strdup("<embedded>")))
        return -ENOMEM;
    return 0;
}

struct tg_policy *tg_policy_new_default(void)
{
    struct tg_policy *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->refcount = 1;
    if (fill_default(p) < 0) {
        policy_free(p);
        return NULL;
    }
    return p;
}

enum tg_mode tg_policy_mode_for(const struct tg_policy *p, const char *ns)
{
    for (size_t i = 0; ns && i < p->nns_modes; i++) {
        if (!strcmp(p->ns_modes[i].ns, ns))
            return p->ns_modes[i].mode;
    }
    return p->mode;
}

bool tg_policy_has_ns_mode(const struct tg_policy *p, const char *ns)
{
    for (size_t i = 0; ns && i < p->nns_modes; i++) {
        if (!strcmp(p->ns_modes[i].ns, ns))
            return true;
    }
    return false;
}

bool tg_policy_is_exempt(const struct tg_policy *p, const char *ns)
{
    for (size_t i = 0; ns && i < p->nexempt; i++) {
        if (!strcmp(p->exempt_namespaces[i], ns))
            return true;
    }
    return false;
}

enum tg_action tg_policy_action(const struct tg_policy *p, int rule_index)
{
    if (rule_index < 0 || (size_t)rule_index >= p->nactions)
        return TG_ACTION_OFF;
    return p->actions[rule_index];
}

const struct tg_instance *tg_policy_instance(const struct tg_policy *p, const char *name)
{
    for (size_t i = 0; i < p->ninstances; i++) {
        if (!strcmp(p->instances[i].name, name))
            return &p->instances[i];
    }
    return NULL;
}

bool tg_policy_is_zone_label(const struct tg_policy *p, const char *key)
{
    for (size_t i = 0; i < p->nzone_labels; i++) {
        if (!strcmp(p->zone_labels[i], key))
            return true;
    }
    return false;
}

static const char *const mode_names[] = {"enforce", "warn", "audit"};
static const char *const action_names[] = {"off", "warn", "deny"};

const char *tg_mode_name(enum tg_mode m)
{
    return (unsigned)m < N(mode_names) ? mode_names[m] : "unknown";
}

int tg_mode_parse(const char *s, enum tg_mode *out)
{
    for (size_t i = 0; i < N(mode_names); i++) {
        if (!strcmp(s, mode_names[i])) {
            *out = (enum tg_mode)i;
            return 0;
        }
    }
    return -EINVAL;
}

const char *tg_action_name(enum tg_action a)
{
    return (unsigned)a < N(action_names) ? action_names[a] : "unknown";
}

int tg_action_parse(const char *s, enum tg_action *out)
{
    for (size_t i = 0; i < N(action_names); i++) {
        if (!strcmp(s, action_names[i])) {
            *out = (enum tg_action)i;
            return 0;
        }
    }
    return -EINVAL;
}

/* The published snapshot. A reader bumps the refcount under the lock, so a concurrent publish
 * can never free a policy between the load of the pointer and the bump. */
static pthread_mutex_t current_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tg_policy *current;

void tg_policy_publish(struct tg_policy *p)
{
    pthread_mutex_lock(&current_lock);
    struct tg_policy *old = current;
    current = p;
    pthread_mutex_unlock(&current_lock);
    tg_policy_unref(old);
}

struct tg_policy *tg_policy_acquire(void)
{
    pthread_mutex_lock(&current_lock);
    struct tg_policy *p = current;
    if (p)
        tg_policy_ref(p);
    pthread_mutex_unlock(&current_lock);
    return p;
}

void tg_policy_release(struct tg_policy *p)
{
    tg_policy_unref(p);
}
