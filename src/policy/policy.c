/* policy.c -- policy lifecycle, the compiled-in default, lookups, and the published snapshot. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tg/catalogue.h"
#include "tg/policy.h"
#include "tg/policy_yaml.h"

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
    free_strv(p->exception_namespaces, p->nexception);
    free(p->rules_version);
    for (size_t i = 0; i < p->nns_modes; i++)
        free(p->ns_modes[i].ns);
    free(p->ns_modes);
    free(p->warnings);
    free_strv(p->zone_labels, p->nzone_labels);
    free_strv(p->zone_id_labels, p->nzone_id_labels);
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

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The default is the embedded YAML (src/policy/default_policy.embed.yaml) over the C tables of
 * rule actions and instances, loaded by src/policy/policy_yaml.c: one source for what
 * `trainguard policy default` prints and what runs. test_policy.c checks it against SPEC. */
struct tg_policy *tg_policy_new_default(void)
{
    size_t len;
    const char *yaml = tg_policy_default_yaml(&len);
    return tg_policy_load_yaml(yaml, len, "<embedded>", NULL, 0);
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

bool tg_policy_allows_exceptions(const struct tg_policy *p, const char *ns)
{
    for (size_t i = 0; ns && *ns && i < p->nexception; i++) {
        if (!strcmp(p->exception_namespaces[i], ns))
            return true;
    }
    return false;
}

void tg_policy_effective_actions(const struct tg_policy *p, enum tg_action *out)
{
    if (!p->rules_version) { /* the usual policy: its actions as they are, defaults after them */
        size_t n = p->nactions < TG_RULE_COUNT ? p->nactions : TG_RULE_COUNT;
        if (n)
            memcpy(out, p->actions, n * sizeof(*out));
        for (size_t i = n; i < TG_RULE_COUNT; i++)
            out[i] = tg_rule_defs[i].default_action;
        return;
    }
    for (size_t i = 0; i < TG_RULE_COUNT; i++) {
        enum tg_action a = i < p->nactions ? p->actions[i] : tg_rule_defs[i].default_action;
        if (p->rules_version && a > TG_ACTION_WARN &&
            tg_release_cmp(tg_rule_defs[i].since, p->rules_version) > 0)
            a = TG_ACTION_WARN;
        out[i] = a;
    }
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
        /* the first two bytes tell most names apart without a call (the second is read only when
         * the first is no terminator: then both strings have one) */
        const char *n = p->instances[i].name;
        if (n[0] == name[0] && (!name[0] || n[1] == name[1]) && !strcmp(n, name))
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
    for (size_t i = 0; i < p->nzone_id_labels; i++) {
        if (!strcmp(p->zone_id_labels[i], key))
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
