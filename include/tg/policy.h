/* policy.h -- the checked policy: mode, rule actions, namespaces, zones, instances, env to inject.
 * A policy is immutable once published; readers hold a reference while they evaluate. */
#ifndef TG_POLICY_H
#define TG_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "tg/finding.h"

enum tg_mode {
    TG_MODE_ENFORCE = 0,
    TG_MODE_WARN = 1,
    TG_MODE_AUDIT = 2,
};

/* One EC2 instance type (api-facts section 5.3). */
struct tg_instance {
    char *name;       /* "p5.48xlarge" */
    int efa;          /* maximum EFA interfaces; 0 = no EFA */
    int gpus;         /* nvidia.com/gpu */
    int neuron;       /* aws.amazon.com/neuron devices */
    int neuron_cores; /* NeuronCores per device (trn1: 2, trn2: 8) */
    bool gdr;         /* GPUDirect RDMA over EFA (FI_EFA_USE_DEVICE_RDMA) */
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
    bool gdr_only;
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
    struct tg_ns_mode *ns_modes;
    size_t nns_modes;
    char **zone_labels; /* default: topology.kubernetes.io/zone and the beta key */
    size_t nzone_labels;
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
    int refcount;              /* owned by policy.c */
};

/* The compiled-in default policy (SPEC section 6). NULL on ENOMEM. Refcount 1. */
struct tg_policy *tg_policy_new_default(void);

/* Loads a policy from YAML text (src/policy/policy_yaml.c; keys and semantics: docs/policy.md).
 * Keys the text leaves out keep the embedded default. On error returns NULL with one line per error
 * in err, "line L, column C: key.path: reason" (1-based; at most 20 lines, in document order). */
struct tg_policy *tg_policy_load_yaml(const char *text, size_t len, const char *source, char *err,
                                      size_t errlen);
/* Loads a policy file. NULL on error, with "<file>: line L, column C: reason" lines in err (or
 * "<file>: cannot open: reason" when it cannot be read). */
struct tg_policy *tg_policy_load_file(const char *path, char *err, size_t errlen);
/* Like tg_policy_load_yaml with "<path>: " before each error line, source = path. */
struct tg_policy *tg_policy_load_bytes(const char *text, size_t len, const char *path, char *err,
                                       size_t errlen);
/* Policy files larger than this are refused (a policy is a few KiB). */
#define TG_POLICY_MAX_BYTES (1024 * 1024)
/* Reads a whole regular file (at most TG_POLICY_MAX_BYTES) into a malloc'd NUL-terminated buffer.
 * NULL on error with errno set and "<path>: reason" in err. */
char *tg_policy_read_file(const char *path, size_t *len, char *err, size_t errlen);
/* The embedded default policy YAML, commented (what `trainguard policy default` prints).
 * NUL-terminated, static storage. */
const char *tg_policy_default_yaml(size_t *len);

void tg_policy_ref(struct tg_policy *p);
void tg_policy_unref(struct tg_policy *p);

/* The mode that applies in namespace ns (per-namespace mode, else the policy mode). */
enum tg_mode tg_policy_mode_for(const struct tg_policy *p, const char *ns);
/* True when the policy names a mode for namespace ns (it then wins over --mode). */
bool tg_policy_has_ns_mode(const struct tg_policy *p, const char *ns);
bool tg_policy_is_exempt(const struct tg_policy *p, const char *ns);
/* The action for a rule index (TG_ACTION_OFF for an unknown index). */
enum tg_action tg_policy_action(const struct tg_policy *p, int rule_index);
/* Instance type by exact name, or NULL. */
const struct tg_instance *tg_policy_instance(const struct tg_policy *p, const char *name);
bool tg_policy_is_zone_label(const struct tg_policy *p, const char *key);

const char *tg_mode_name(enum tg_mode m);
int tg_mode_parse(const char *s, enum tg_mode *out); /* 0 or -EINVAL */
const char *tg_action_name(enum tg_action a);
int tg_action_parse(const char *s, enum tg_action *out); /* 0 or -EINVAL */

/* The process-wide current policy: acquire returns a new reference (never NULL once set). */
void tg_policy_publish(struct tg_policy *p); /* steals the caller's reference */
struct tg_policy *tg_policy_acquire(void);
void tg_policy_release(struct tg_policy *p);

/* ---- reloading (src/policy/reload.c) ------------------------------------------------------
 * One process-wide reloader. It loads `path` now and publishes it (an invalid file is an error
 * returned to the caller: a startup error), then a thread re-reads the file through its path every
 * interval_ms (0: only on request) and reloads when the bytes change, so a ConfigMap volume's
 * symlink swap is seen. An invalid or unreadable new file keeps the published policy, logs one JSON
 * line on stderr and counts a failure; a good one is published (readers holding the old snapshot
 * keep it until they release it). mode_override, when not NULL, replaces the mode of every policy
 * it loads (`serve --mode`). Returns 0, -EINVAL (err says why), -EALREADY, or -errno. */
int tg_policy_reloader_start(const char *path, unsigned interval_ms,
                             const enum tg_mode *mode_override, char *err, size_t errlen);
/* Reloads now, also when the bytes did not change (for SIGHUP from a thread that may block, such
 * as a sigwait loop; not async-signal-safe). 0 published, -EINVAL invalid (old policy kept),
 * -errno unreadable, -ESRCH when no reloader runs. */
int tg_policy_reload_now(void);
/* Async-signal-safe: asks the reloader thread to reload now (call it from a SIGHUP handler). */
void tg_policy_reload_request(void);
/* Stops the thread and forgets the path (the published policy stays). Safe when not started. */
void tg_policy_reloader_stop(void);
/* For /metrics: reloads that published a policy, reloads that failed (each failure counted once
 * per change of the file), and the unix time of the last successful load (start included; 0 when
 * none). Any pointer may be NULL. */
void tg_policy_reload_counts(unsigned long long *ok, unsigned long long *failed,
                             double *last_success);

#endif
