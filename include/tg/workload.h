/* workload.h -- every supported object decoded into one view: its pod templates (with role,
 * replicas, paths) and the workload facts the rules read. Rules work on this view only. */
#ifndef TG_WORKLOAD_H
#define TG_WORKLOAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "tg/path.h"

struct tg_eval;

enum tg_kind {
    TG_KIND_UNKNOWN = 0,
    TG_KIND_POD,
    TG_KIND_MPIJOB,      /* kubeflow.org v2beta1 (mpi-operator) or v1 (training-operator) */
    TG_KIND_NODESET,     /* slinky.slurm.net v1beta1 */
    TG_KIND_PODGROUP,    /* scheduling.volcano.sh v1beta1 */
    TG_KIND_VCJOB,       /* batch.volcano.sh v1alpha1 Job */
    TG_KIND_NODESET_BAD, /* SlurmNodeSet, or slinky.slurm.net/v1alpha1: only nodeset.* rules run */
};
#define TG_KIND_BIT(k) (1u << (k))

enum tg_role {
    TG_ROLE_POD = 0,
    TG_ROLE_LAUNCHER,
    TG_ROLE_WORKER,
    TG_ROLE_TASK,
    TG_ROLE_SLURMD,
};

struct tg_container {
    json_t *c;           /* borrowed container object */
    struct tg_path path; /* ...spec.containers[0] / /spec/.../containers/0; NodeSet: spec.slurmd */
    bool init;           /* from initContainers */
    const char *name;    /* "" when absent */
};

/* A pod template. For a Pod, the pod itself (meta = metadata, spec = spec). */
struct tg_template {
    enum tg_role role;
    const char *role_name;           /* "Pod", "Launcher", "Worker", a task name, "slurmd" */
    long long replicas;              /* pods from this template; -1 when unknown or invalid */
    bool replicas_set;               /* replicas was written in the object */
    json_t *meta;                    /* template metadata, may be NULL */
    json_t *spec;                    /* pod spec, may be NULL (NodeSet without template) */
    struct tg_path path;             /* the template (Pod: the root, field "") */
    struct tg_path spec_path;        /* its pod spec: "spec.mpiReplicaSpecs.Worker.template.spec" */
    struct tg_container *containers; /* containers then initContainers (NodeSet: slurmd first) */
    size_t ncontainers;
};

/* MPIJob facts (defaults already applied where the operator applies them). */
struct tg_mpi {
    bool v1;                    /* kubeflow.org/v1 (training-operator) */
    long long slots_per_worker; /* default 1; -1 when invalid */
    bool slots_set;
    bool run_launcher_as_worker;
    const char *implementation; /* "OpenMPI" (default), "Intel", "MPICH" */
    bool has_min_available;
    long long min_available;             /* runPolicy.schedulingPolicy.minAvailable */
    struct tg_template *launcher;        /* NULL when the spec has none */
    struct tg_template *worker;          /* NULL when the spec has none */
    json_t *launcher_spec, *worker_spec; /* the ReplicaSpec objects (replicas, restartPolicy) */
};

struct tg_vcjob {
    bool has_min_available;
    long long min_available;
    json_t *plugins; /* borrowed object or NULL */
    bool mpi_plugin;
    const char *scheduler_name; /* "" when absent */
    json_t *tasks;              /* borrowed array or NULL */
};

struct tg_podgroup {
    bool has_min_member;
    long long min_member;
    json_t *min_task_member; /* borrowed object or NULL */
};

struct tg_nodeset {
    const char *scaling_mode; /* "StatefulSet" (default) or "DaemonSet" or as written */
    bool scaling_mode_set;
    bool has_replicas;
    long long replicas;
    json_t *controller_ref; /* borrowed or NULL */
    json_t *slurmd;         /* spec.slurmd or NULL */
};

struct tg_workload {
    enum tg_kind kind;
    const char *api_version, *kind_name; /* as written in the object */
    const char *name, *namespace;        /* "" when absent (generateName) */
    json_t *obj;                         /* borrowed: the object */
    json_t *old_obj;                     /* borrowed: oldObject on UPDATE, else NULL */
    json_t *annotations, *labels;        /* borrowed metadata maps or NULL */
    bool has_owner;                      /* metadata.ownerReferences non-empty */
    struct tg_template *tpl;
    size_t ntpl;
    struct tg_mpi mpi;
    struct tg_vcjob vc;
    struct tg_podgroup pg;
    struct tg_nodeset ns;
};

/* The kind a (group, version, kind) decodes to; TG_KIND_UNKNOWN for anything section 3 does not
 * list (a known kind in another version included), except the NodeSet mistakes. */
enum tg_kind tg_kind_lookup(const char *group, const char *version, const char *kind);

/* Decodes obj into wl. Wrong JSON types in the fields it reads are reported on ev as
 * object.invalid-field (ev may be NULL in tests). Returns 0 or -ENOMEM. */
int tg_workload_decode(struct tg_workload *wl, enum tg_kind kind, json_t *obj, json_t *old_obj,
                       struct tg_eval *ev);
void tg_workload_release(struct tg_workload *wl);

/* Total pods the workload will create (sum of template replicas); -1 when any is unknown. */
long long tg_workload_pod_count(const struct tg_workload *wl);

#endif
