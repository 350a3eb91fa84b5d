/* catalogue.c -- the rule and kind tables, built from rules.def and kinds.def. */
#include <stdlib.h>
#include <string.h>

#include "tg/catalogue.h"

#define DENY TG_ACTION_DENY
#define WARN TG_ACTION_WARN
#define K(k) TG_KIND_BIT(TG_KIND_##k)
#define T(t) TG_TRIGGER_##t

const struct tg_rule_def tg_rule_defs[] = {
#define TG_FAMILY(prefix, heading)
#define TG_RULE(id, name, action, since, kinds, triggers, summary, example, help)                  \
    {name, action, since, kinds, triggers, summary, example, help},
#include "catalogue/rules.def"
#undef TG_FAMILY
#undef TG_RULE
};
const size_t tg_rule_count = sizeof(tg_rule_defs) / sizeof(tg_rule_defs[0]);
_Static_assert(sizeof(tg_rule_defs) / sizeof(tg_rule_defs[0]) == TG_RULE_COUNT,
               "one table row per rule id");

const struct tg_rule_family tg_rule_families[] = {
#define TG_FAMILY(prefix, heading) {prefix, heading},
#define TG_RULE(id, name, action, since, kinds, triggers, summary, example, help)
#include "catalogue/rules.def"
#undef TG_FAMILY
#undef TG_RULE
};
const size_t tg_rule_family_count = sizeof(tg_rule_families) / sizeof(tg_rule_families[0]);

#define TG_FAMILY(prefix, heading)
#define TG_RULE(id, name, action, since, kinds, triggers, summary, example, help)
const struct tg_mutator_def tg_mutator_defs[] = {
#define TG_MUTATOR(name, kinds, triggers, summary) {name, kinds, triggers, summary},
#include "catalogue/rules.def"
#undef TG_MUTATOR
};
const size_t tg_mutator_def_count = sizeof(tg_mutator_defs) / sizeof(tg_mutator_defs[0]);

const struct tg_prefilter_def tg_prefilter_defs[] = {
#define TG_PREFILTER(kinds, triggers, why) {kinds, triggers, why},
#include "catalogue/rules.def"
#undef TG_PREFILTER
};
const size_t tg_prefilter_def_count = sizeof(tg_prefilter_defs) / sizeof(tg_prefilter_defs[0]);
#undef TG_FAMILY
#undef TG_RULE

#undef DENY
#undef WARN
#undef K
#undef T

const struct tg_kind_def tg_kind_defs[] = {
    {"unknown", "none"},
#define TG_KIND(id, display, templates) {display, templates},
#define TG_API(id, group, version, kind, resource, scope)
#include "catalogue/kinds.def"
#undef TG_KIND
#undef TG_API
};

#define NAMESPACED TG_SCOPE_NAMESPACED
#define CLUSTER TG_SCOPE_CLUSTER
const struct tg_api_def tg_api_defs[] = {
#define TG_KIND(id, display, templates)
#define TG_API(id, group, version, kind, resource, scope)                                          \
    {TG_KIND_##id, group, version, kind, resource, scope},
#include "catalogue/kinds.def"
#undef TG_KIND
#undef TG_API
};
const size_t tg_api_count = sizeof(tg_api_defs) / sizeof(tg_api_defs[0]);
#undef NAMESPACED
#undef CLUSTER

#define TEMPLATE TG_SHAPE_TEMPLATE
#define PODSPEC TG_SHAPE_PODSPEC
#define CONTAINER TG_SHAPE_CONTAINER
#define TG_KIND(id, display, templates)
#define TG_API(id, group, version, kind, resource, scope)
const struct tg_template_def tg_template_defs[] = {
#define TG_TEMPLATE(id, shape, path) {TG_KIND_##id, shape, path},
#include "catalogue/kinds.def"
#undef TG_TEMPLATE
};
const size_t tg_template_def_count = sizeof(tg_template_defs) / sizeof(tg_template_defs[0]);

bool tg_kind_update_immutable(enum tg_kind kind)
{
    static const enum tg_kind immutable[] = {
#define TG_UPDATE_IMMUTABLE(id) TG_KIND_##id,
#include "catalogue/kinds.def"
#undef TG_UPDATE_IMMUTABLE
    };
    for (size_t i = 0; i < sizeof(immutable) / sizeof(immutable[0]); i++) {
        if (immutable[i] == kind)
            return true;
    }
    return false;
}

bool tg_kind_create_only(enum tg_kind kind)
{
    static const enum tg_kind only[] = {
#define TG_CREATE_ONLY(id) TG_KIND_##id,
#include "catalogue/kinds.def"
#undef TG_CREATE_ONLY
        TG_KIND_UNKNOWN, /* keeps the array non-empty */
    };
    for (size_t i = 0; i < sizeof(only) / sizeof(only[0]); i++) {
        if (only[i] == kind && kind != TG_KIND_UNKNOWN)
            return true;
    }
    return false;
}
#undef TG_KIND
#undef TG_API
#undef TEMPLATE
#undef PODSPEC
#undef CONTAINER

/* Every launcher the launcher module reads (src/launcher/mpirun.c) and the per-node launchers of
 * SPEC 11 (torchrun and python -m torch.distributed.run/launch, deepspeed, accelerate launch). */
const char *const tg_launch_words[] = {"mpirun",     "mpiexec",  "orterun",           "prterun",
                                       "horovodrun", "torchrun", "torch.distributed", "deepspeed",
                                       "accelerate", NULL};
/* FI_* is libfabric's, NCCL_* NCCL's (and the aws-ofi-nccl plugin's) environment. */
const char *const tg_fabric_env_prefixes[] = {"FI_", "NCCL_", NULL};
/* The gang keys of SPEC 11 and 13: Volcano's PodGroup annotations (the two src/rules/gang.c
 * reads); scheduler-plugins' pod-group label (kubernetes-sigs/scheduler-plugins:
 * apis/scheduling/v1alpha1/types.go PodGroupLabel) and its pre-v0.24 spelling; LWS's group size,
 * which upstream sets on every pod as the annotation leaderworkerset.sigs.k8s.io/size
 * (kubernetes-sigs/lws: api/leaderworkerset/v1/leaderworkerset_types.go SizeAnnotationKey
 * @060ab4d), and the `group-size` key SPEC 11 names. Read as labels or annotations alike: the
 * prefilter only has to be a superset. */
const char *const tg_gang_keys[] = {"scheduling.k8s.io/group-name",
                                    "scheduling.volcano.sh/group-name",
                                    "scheduling.x-k8s.io/pod-group",
                                    "pod-group.scheduling.sigs.k8s.io",
                                    "leaderworkerset.sigs.k8s.io/size",
                                    "leaderworkerset.sigs.k8s.io/group-size",
                                    NULL};
/* Kueue's queue-name label (SPEC 11), read as a label or an annotation. */
const char *const tg_queue_keys[] = {"kueue.x-k8s.io/queue-name", NULL};

int tg_rule_index(const char *id)
{
    for (size_t i = 0; id && i < tg_rule_count; i++) {
        if (!strcmp(tg_rule_defs[i].id, id))
            return (int)i;
    }
    return -1;
}

const struct tg_api_def *tg_api_lookup(const char *group, const char *version, const char *kind)
{
    const char *g = group ? group : "", *k = kind ? kind : "";
    for (size_t i = 0; i < tg_api_count; i++) {
        const struct tg_api_def *a = &tg_api_defs[i];
        /* the kind's first byte tells most rows apart without a call */
        if (a->kind_name[0] == k[0] && !strcmp(a->kind_name, k) && !strcmp(a->group, g) &&
            (!a->version || !strcmp(a->version, version ? version : "")))
            return a;
    }
    return NULL;
}

enum tg_kind tg_kind_lookup(const char *group, const char *version, const char *kind)
{
    const struct tg_api_def *a = tg_api_lookup(group, version, kind);
    return a ? a->kind : TG_KIND_UNKNOWN;
}

/* One dot-separated number of a release, or -1 when s does not start with digits. */
static long release_part(const char **s)
{
    char *end;
    long v;
    if (**s < '0' || **s > '9')
        return -1;
    v = strtol(*s, &end, 10);
    *s = *end == '.' ? end + 1 : end;
    return v;
}

int tg_release_cmp(const char *a, const char *b)
{
    for (int i = 0; i < 3; i++) {
        long x = a ? release_part(&a) : -1, y = b ? release_part(&b) : -1;
        if (x != y)
            return x < y ? -1 : 1;
        if (x < 0)
            break;
    }
    return 0;
}
