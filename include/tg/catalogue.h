/* catalogue.h -- the rule and kind catalogue (src/catalogue/rules.def, kinds.def) as C: the rule
 * ids, their table, the kinds trainguard decodes and the API versions that map to them.
 *
 * Contract:
 * - enum tg_rule_id has one TG_RULE_<ID> per catalogue row, in report order; TG_RULE_COUNT rows.
 *   tg_rule_defs[id] describes rule id. Rule code names rules by enum, so a misspelled id does
 *   not compile; strings (policy files, fixtures) go through tg_rule_index().
 * - enum tg_kind has TG_KIND_UNKNOWN (0) and one TG_KIND_<ID> per kinds.def TG_KIND row.
 * - Everything here is static, immutable data: safe from any thread. */
#ifndef TG_CATALOGUE_H
#define TG_CATALOGUE_H

#include <stdbool.h>
#include <stddef.h>

/* What a rule asks for. The policy maps each rule to one of these; the mode then caps it. */
enum tg_action {
    TG_ACTION_OFF = 0,
    TG_ACTION_WARN = 1,
    TG_ACTION_DENY = 2,
};

enum tg_kind {
    TG_KIND_UNKNOWN = 0,
#define TG_KIND(id, display, templates) TG_KIND_##id,
#define TG_API(id, group, version, kind, resource, scope)
#include "catalogue/kinds.def"
#undef TG_KIND
#undef TG_API
    TG_KIND_COUNT
};
#define TG_KIND_BIT(k) (1u << (k))

enum tg_scope {
    TG_SCOPE_NAMESPACED = 0,
    TG_SCOPE_CLUSTER = 1,
};

/* What makes an object interesting to a rule (the webhooks' prefilter is generated from it). A
 * rule with no trigger of its own acts only on objects another rule reads. */
enum tg_trigger {
    TG_TRIGGER_ALWAYS = 1u << 0,     /* every object of the rule's kinds */
    TG_TRIGGER_EFA = 1u << 1,        /* a container requests vpc.amazonaws.com/efa */
    TG_TRIGGER_GPU = 1u << 2,        /* a container requests nvidia.com/gpu */
    TG_TRIGGER_NEURON = 1u << 3,     /* a container requests aws.amazon.com/neuron* */
    TG_TRIGGER_DRA = 1u << 4,        /* the pod uses resourceClaims (Dynamic Resource Allocation) */
    TG_TRIGGER_FABRIC_ENV = 1u << 5, /* a container sets FI_* or NCCL_* env */
    TG_TRIGGER_LAUNCH = 1u << 6,     /* command/args run a launcher (mpirun, torchrun, ...) */
    TG_TRIGGER_GANG = 1u << 7,       /* gang annotations or labels (PodGroup names, LWS size) */
    TG_TRIGGER_INFINIBAND = 1u << 8, /* a hostPath volume at /dev/infiniband */
    TG_TRIGGER_QUEUE = 1u << 9,      /* the Kueue queue-name label */
    TG_TRIGGER_HUGEPAGES = 1u << 10, /* a container requests hugepages-<size> */
    TG_TRIGGER_EXEMPT = 1u << 11,    /* the trainguard.dev/exempt-rules annotation */
};

enum tg_rule_id {
#define TG_FAMILY(prefix, heading)
#define TG_RULE(id, name, action, since, kinds, triggers, summary, example, help) TG_RULE_##id,
#include "catalogue/rules.def"
#undef TG_FAMILY
#undef TG_RULE
    TG_RULE_COUNT
};

struct tg_rule_def {
    const char *id; /* "efa.env-without-device" */
    enum tg_action default_action;
    const char *since; /* release that introduced it, "X.Y" */
    unsigned kinds;    /* mask of TG_KIND_BIT() */
    unsigned triggers; /* mask of enum tg_trigger */
    const char *summary;
    const char *example; /* "field: message" of a typical finding */
    const char *help;
};
extern const struct tg_rule_def tg_rule_defs[];
extern const size_t tg_rule_count; /* TG_RULE_COUNT */

/* A family of rules (the id prefix before the dot) and its heading, in catalogue order. */
struct tg_rule_family {
    const char *prefix;
    const char *heading;
};
extern const struct tg_rule_family tg_rule_families[];
extern const size_t tg_rule_family_count;

struct tg_kind_def {
    const char *display;   /* "MPIJob" */
    const char *templates; /* what it contributes to the workload view */
};
extern const struct tg_kind_def tg_kind_defs[]; /* indexed by enum tg_kind; [0] is UNKNOWN */

struct tg_api_def {
    enum tg_kind kind;
    const char *group, *version, *kind_name; /* version NULL: any version */
    const char *resource;                    /* "" when no CRD serves it */
    enum tg_scope scope;
};
extern const struct tg_api_def tg_api_defs[];
extern const size_t tg_api_count;

/* A mutator of /mutate and what makes an object interesting to it (rules.def TG_MUTATOR). */
struct tg_mutator_def {
    const char *name;
    unsigned kinds;    /* mask of TG_KIND_BIT() */
    unsigned triggers; /* mask of enum tg_trigger */
    const char *summary;
};
extern const struct tg_mutator_def tg_mutator_defs[];
extern const size_t tg_mutator_def_count;

/* Triggers the validating webhook's prefilter adds for kinds (rules.def TG_PREFILTER). */
struct tg_prefilter_def {
    unsigned kinds;
    unsigned triggers;
    const char *why;
};
extern const struct tg_prefilter_def tg_prefilter_defs[];
extern const size_t tg_prefilter_def_count;

/* Where a kind's pod templates sit (kinds.def TG_TEMPLATE). */
enum tg_template_shape {
    TG_SHAPE_TEMPLATE = 0, /* a PodTemplateSpec: metadata and spec */
    TG_SHAPE_PODSPEC = 1,  /* a pod spec */
    TG_SHAPE_CONTAINER = 2 /* one container (resources, or resourcesPerNode), env, command, args */
};
struct tg_template_def {
    enum tg_kind kind;
    enum tg_template_shape shape;
    const char *path; /* "spec.tasks[*].template": `*` every map value, `[*]` every list item */
};
extern const struct tg_template_def tg_template_defs[];
extern const size_t tg_template_def_count;

/* What each trigger looks for, as the prefilter reads objects (NULL-terminated lists). The rule
 * code has its own, narrower readers; these are supersets of what they act on. */
extern const char *const tg_launch_words[];        /* T(LAUNCH): substrings of command/args */
extern const char *const tg_fabric_env_prefixes[]; /* T(FABRIC_ENV): env names, command words */
extern const char *const tg_gang_keys[];           /* T(GANG): label or annotation keys */
extern const char *const tg_queue_keys[];          /* T(QUEUE): label or annotation keys */
#define TG_EXEMPT_ANNOTATION "trainguard.dev/exempt-rules" /* T(EXEMPT) */

/* True for kinds whose pod spec cannot change after creation (kinds.def TG_UPDATE_IMMUTABLE). */
bool tg_kind_update_immutable(enum tg_kind kind);
/* True for kinds whose rules judge CREATE only (kinds.def TG_CREATE_ONLY). */
bool tg_kind_create_only(enum tg_kind kind);

/* Index of a rule id string, or -1. */
int tg_rule_index(const char *id);
/* The kind a (group, version, kind) decodes to: TG_KIND_UNKNOWN for anything the catalogue does
 * not list (a known kind in another version included). NULL arguments count as "". */
enum tg_kind tg_kind_lookup(const char *group, const char *version, const char *kind);
/* The API row of (group, version, kind), or NULL. */
const struct tg_api_def *tg_api_lookup(const char *group, const char *version, const char *kind);
/* "0.1" < "0.2" < "0.10" < "1.0": compares two X.Y release strings; garbage sorts first. */
int tg_release_cmp(const char *a, const char *b);

#endif
