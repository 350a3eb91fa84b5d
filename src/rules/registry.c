/* registry.c -- the rule table (SPEC section 4) and the validator and mutator tables. */
#include <stdio.h>
#include <string.h>

#include "tg/rules.h"

#define D TG_ACTION_DENY
#define W TG_ACTION_WARN

/* Order is report order. To add a rule: a row here, its code in the family file, a fixture, and
 * a README row. */
const struct tg_rule_def tg_rule_defs[] = {
    {"object.invalid-field", D,
     "a field the rules read has the wrong JSON type or an unusable value"},
    {"efa.env-without-device", D,
     "FI_PROVIDER=efa or NCCL over OFI without a vpc.amazonaws.com/efa request"},
    {"efa.limit-required", D,
     "EFA or hugepages requested without a limit, or request and limit differ"},
    {"efa.invalid-quantity", D, "the EFA count is not a non-negative integer"},
    {"efa.exceeds-instance", D, "more EFA interfaces than the pinned instance type has"},
    {"efa.below-instance", W, "all GPUs of the instance type but fewer EFA interfaces than it has"},
    {"efa.provider-mismatch", W, "EFA requested but FI_PROVIDER names another provider"},
    {"efa.no-hugepages", W, "EFA requested without hugepages-2Mi"},
    {"efa.infiniband-hostpath", W, "a hostPath /dev/infiniband volume bypasses the device plugin"},
    {"zone.missing", D, "an EFA template of a multi-pod workload is not pinned to one zone"},
    {"zone.preferred-only", D, "the zone is only a preferred (soft) node affinity"},
    {"zone.multiple", D, "required node affinity allows several zones"},
    {"zone.conflict", D, "templates, or nodeSelector and affinity, pin different zones"},
    {"mpi.np-exceeds-slots", D, "mpirun -np is larger than the hostfile slots"},
    {"mpi.np-below-slots", W, "mpirun -np leaves slots idle"},
    {"mpi.npernode-exceeds-slots", D, "ranks per worker above slotsPerWorker"},
    {"mpi.np-unresolved", W, "the launcher runs mpirun but -np cannot be determined"},
    {"mpi.slots-gpu-mismatch", W,
     "slotsPerWorker differs from the GPUs or Neuron cores per worker"},
    {"mpi.env-not-forwarded", W, "worker FI_*/NCCL_* env that ranks started over ssh will not see"},
    {"mpi.replicas", D, "Launcher replicas not 1, or Worker replicas missing or below 1"},
    {"mpi.restart-policy", D, "a replica spec's restartPolicy is not Never or OnFailure"},
    {"mpi.name-too-long", D, "<name>-worker-<N-1> is not a valid DNS-1035 label"},
    {"gang.min-exceeds-members", D, "minAvailable / minMember above the pods the workload creates"},
    {"gang.partial-start", W, "an all-or-nothing MPI workload lets fewer than all its pods start"},
    {"gang.negative", D, "a negative minAvailable, minMember or replicas"},
    {"gang.scheduler-mismatch", W, "a Pod names a PodGroup but not the Volcano scheduler"},
    {"nodeset.daemonset-replicas", W, "scalingMode DaemonSet ignores replicas"},
    {"nodeset.kind", D, "kind SlurmNodeSet does not exist; the kind is NodeSet"},
    {"nodeset.api-version", D, "slinky.slurm.net/v1alpha1 was removed in slurm-operator 1.0"},
    {"nodeset.controller-ref", D, "controllerRef.name missing or empty"},
    {"nodeset.scaling-mode-change", W,
     "an UPDATE changes scalingMode: every existing pod is deleted"},
    {"nodeset.mode-field", W, "a field that only applies to the other scalingMode"},
};
const size_t tg_rule_count = sizeof(tg_rule_defs) / sizeof(tg_rule_defs[0]);

#undef D
#undef W

int tg_rule_index(const char *id)
{
    for (size_t i = 0; i < tg_rule_count; i++) {
        if (!strcmp(tg_rule_defs[i].id, id))
            return (int)i;
    }
    return -1;
}

static void report(struct tg_eval *ev, const char *id, enum tg_action cap, const char *field,
                   const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static void report(struct tg_eval *ev, const char *id, enum tg_action cap, const char *field,
                   const char *fmt, va_list ap)
{
    int idx = tg_rule_index(id);
    enum tg_action action;
    const char *rule;
    if (idx < 0) {
        /* A rule id missing from the table is a bug: make it loud, never silent. */
        action = TG_ACTION_DENY;
        rule = "internal";
        idx = (int)tg_rule_count;
    } else {
        action = ev->policy ? tg_policy_action(ev->policy, idx) : tg_rule_defs[idx].default_action;
        rule = tg_rule_defs[idx].id;
    }
    if (action > cap)
        action = cap;
    if (action == TG_ACTION_OFF)
        return;
    int rc = tg_findings_vadd(ev->findings, rule, idx, action, field, fmt, ap);
    if (rc < 0 && !ev->error)
        ev->error = rc;
}

void tg_report(struct tg_eval *ev, const char *id, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(ev, id, TG_ACTION_DENY, field, fmt, ap);
    va_end(ap);
}

void tg_report_capped(struct tg_eval *ev, const char *id, enum tg_action cap, const char *field,
                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(ev, id, cap, field, fmt, ap);
    va_end(ap);
}

#define K(k) TG_KIND_BIT(TG_KIND_##k)
#define TEMPLATED (K(POD) | K(MPIJOB) | K(NODESET) | K(VCJOB))
#define WRITES (TG_OP_CREATE | TG_OP_UPDATE)

const struct tg_validator tg_validators[] = {
    {"efa", TEMPLATED, WRITES, tg_rules_efa},
    {"zone", TEMPLATED, WRITES, tg_rules_zone},
    {"mpi", K(MPIJOB), WRITES, tg_rules_mpi},
    {"gang", K(POD) | K(MPIJOB) | K(PODGROUP) | K(VCJOB), WRITES, tg_rules_gang},
    {"nodeset", K(NODESET) | K(NODESET_BAD), WRITES, tg_rules_nodeset},
};
const size_t tg_validator_count = sizeof(tg_validators) / sizeof(tg_validators[0]);

const struct tg_validator tg_mutators[] = {
    {"efa-env", TEMPLATED, WRITES, tg_mutate_efa_env},
};
const size_t tg_mutator_count = sizeof(tg_mutators) / sizeof(tg_mutators[0]);
