/* policy.h -- the checked policy: mode, rule actions, namespaces, zones, instances, env to inject.
 * A policy is immutable once published; readers hold a reference while they evaluate. */
#ifndef TG_POLICY_H
#define TG_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "tg/finding.h"
#include "tg/instances.h"

enum tg_mode {
    TG_MODE_ENFORCE = 0,
    TG_MODE_WARN = 1,
    TG_MODE_AUDIT = 2,
};

/* A node label that pins a single zone: nodeSelector key with one of values (any value when
 * nvalues is 0). zone, when set, names the zone, so that two such pins can conflict. */
struct tg_zone_label {
    char *key;
    char **values;
    size_t nvalues;
    char *zone; /* may be NULL */
};

/* An env var to inject. When gdr_only, only for templates pinned to GDR instance types. When
 * nfamilies > 0, only for templates pinned to those instance families ("p5", "p4d"). */
struct tg_env_entry {
    char *name;
    char *value;
    bool gdr_only;          /* only where every possible instance type has GPUDirect RDMA */
    bool rdma_read_only;    /* only where every possible instance type has EFA RDMA read */
    bool host_network_only; /* only for pods with hostNetwork: true */
    char **families;
    size_t nfamilies;
};

struct tg_ns_mode {
    char *ns;
    enum tg_mode mode;
};

struct tg_policy {
    enum tg_mode mode;
    enum tg_action *actions; /* indexed like tg_rule_defs[] */
    size_t nactions;
    char **exempt_namespaces;
    size_t nexempt;
    char **exception_namespaces; /* where trainguard.dev/exempt-rules is honoured (default none) */
    size_t nexception;
    char *rules_version; /* "X.Y": rules introduced after it run at warn at most; NULL: no cap */
    struct tg_ns_mode *ns_modes;
    size_t nns_modes;
    char **zone_labels; /* default: topology.kubernetes.io/zone and the beta key */
    size_t nzone_labels;
    char **zone_id_labels; /* zone ids, another namespace of values: topology.k8s.aws/zone-id */
    size_t nzone_id_labels;
    char **narrow_topology_keys; /* pod affinity keys narrower than a zone */
    size_t nnarrow;
    struct tg_zone_label *single_zone_labels;
    size_t nsingle_zone;
    char **volcano_schedulers; /* default: volcano */
    size_t nvolcano;
    struct tg_instance *instances;
    size_t ninstances;
    struct tg_env_entry *inject_env;
    size_t ninject;
    bool inject_with_env_from; /* inject into containers that use envFrom too */
    char *source;              /* file path, or "<embedded>" */
    char *warnings;            /* what the loader changed or doubts, one line each; or NULL */
    char sha256[65];           /* SHA-256 (hex) of the YAML bytes it was loaded from */
    int refcount;              /* owned by policy.c */
};

/* The compiled-in default policy (SPEC section 6). NULL on ENOMEM. Refcount 1. */
struct tg_policy *tg_policy_new_default(void);

void tg_policy_ref(struct tg_policy *p);
void tg_policy_unref(struct tg_policy *p);

/* The mode that applies in namespace ns (per-namespace mode, else the policy mode). */
enum tg_mode tg_policy_mode_for(const struct tg_policy *p, const char *ns);
/* True when the policy names a mode for namespace ns (it then wins over --mode). */
bool tg_policy_has_ns_mode(const struct tg_policy *p, const char *ns);
bool tg_policy_is_exempt(const struct tg_policy *p, const char *ns);
/* True when objects in namespace ns may exempt themselves from rules (exceptionNamespaces). */
bool tg_policy_allows_exceptions(const struct tg_policy *p, const char *ns);
/* The policy's action for every rule (out has TG_RULE_COUNT entries) after its caps: a rule whose
 * `since` is newer than rulesVersion runs at warn at most (SPEC 12, "Upgrades"). */
void tg_policy_effective_actions(const struct tg_policy *p, enum tg_action *out);
/* The action for a rule index (TG_ACTION_OFF for an unknown index). */
enum tg_action tg_policy_action(const struct tg_policy *p, int rule_index);
/* Instance type by exact name, or NULL. */
const struct tg_instance *tg_policy_instance(const struct tg_policy *p, const char *name);
/* A zone label or a zone-id label (either names one availability zone). */
bool tg_policy_is_zone_label(const struct tg_policy *p, const char *key);

const char *tg_mode_name(enum tg_mode m);
int tg_mode_parse(const char *s, enum tg_mode *out); /* 0 or -EINVAL */
const char *tg_action_name(enum tg_action a);
int tg_action_parse(const char *s, enum tg_action *out); /* 0 or -EINVAL */

/* The process-wide current policy: acquire returns a new reference (never NULL once set). */
void tg_policy_publish(struct tg_policy *p); /* steals the caller's reference */
struct tg_policy *tg_policy_acquire(void);
void tg_policy_release(struct tg_policy *p);

#endif
