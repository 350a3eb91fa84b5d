/* workload.h -- every supported object decoded into one view: its pod templates (with role,
 * replicas, paths) and the workload facts the rules read. Rules work on this view only. */
#ifndef TG_WORKLOAD_H
#define TG_WORKLOAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "tg/catalogue.h"
#include "tg/eval.h"
#include "tg/path.h"

/* The operation of the request the view was decoded for (admission.k8s.io request.operation). */
enum tg_op {
    TG_OP_CREATE = 1 << 0,
    TG_OP_UPDATE = 1 << 1,
    TG_OP_DELETE = 1 << 2,
    TG_OP_CONNECT = 1 << 3,
};

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
    bool sidecar;        /* an init container with restartPolicy: Always (runs beside the app) */
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

/* One requirement of a Karpenter NodePool (spec.template.spec.requirements[i]), or one label of
 * spec.template.metadata.labels, which Karpenter adds to the requirements as `key In [value]`. */
struct tg_np_req {
    const char *key;     /* as written; "" when absent */
    const char *op;      /* "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", ... as written */
    const char **values; /* nvalues borrowed strings (entries of the wrong type are reported and
                            left out) */
    size_t nvalues;
    bool label;          /* from the template labels */
    struct tg_path path; /* spec.template.spec.requirements[0], spec.template.metadata.labels[k] */
};

/* The disruption reasons a Karpenter budget can name (core pkg/apis/v1 DisruptionReason). */
enum tg_np_reason {
    TG_NP_UNDERUTILIZED = 1 << 0,
    TG_NP_EMPTY = 1 << 1,
    TG_NP_DRIFTED = 1 << 2,
};
#define TG_NP_ALL_REASONS (TG_NP_UNDERUTILIZED | TG_NP_EMPTY | TG_NP_DRIFTED)

/* One budget of spec.disruption.budgets. */
struct tg_np_budget {
    const char *nodes;    /* as written; "10%" (the CRD default) when absent */
    const char *schedule; /* NULL when absent */
    const char *duration; /* NULL when absent */
    unsigned reasons;     /* mask of enum tg_np_reason; all of them when reasons is absent or null
                             (an empty list names none, as Karpenter reads it) */
    struct tg_path path;  /* spec.disruption.budgets[i] */
};

/* Karpenter NodePool facts (karpenter.sh/v1). Budgets absent: none here (the CRD's default is
 * one budget of 10%). */
struct tg_nodepool {
    struct tg_np_req *reqs;
    size_t nreqs;
    struct tg_np_budget *budgets;
    size_t nbudgets;
    const char *expire_after; /* spec.template.spec.expireAfter; NULL: absent (720h default) */
};

/* slurm-operator Controller facts (slinky.slurm.net/v1beta1), defaults applied as the operator
 * applies them. */
struct tg_slurm_controller {
    bool external;              /* spec.external */
    bool persistence;           /* spec.persistence.enabled; true when absent */
    const char *existing_claim; /* spec.persistence.existingClaim; "" when absent */
    const char *extra_conf;     /* spec.extraConf; NULL when absent */
    const char *cluster_name;   /* spec.clusterName; NULL when absent or empty */
};

struct tg_workload {
    enum tg_kind kind;
    enum tg_op op;                       /* CREATE or UPDATE (what the rules judge) */
    const char *req_kind, *req_version;  /* as the API server dispatched it (request.kind), set by
                                            the caller after decoding; NULL: the object's own */
    const char *req_namespace;           /* request.namespace, set like req_kind; NULL: unknown */
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
    struct tg_nodepool np;
    struct tg_slurm_controller ctl;
};

/* Decodes obj (and, on UPDATE, old_obj) into wl for operation op. Decoding only builds the view:
 * the problems it meets (wrong JSON types in the fields it reads) go to ev's sink as
 * object.invalid-field (ev may be NULL in tests); no rule runs here. Returns 0 or -ENOMEM. */
int tg_workload_decode(struct tg_workload *wl, enum tg_kind kind, enum tg_op op, json_t *obj,
                       json_t *old_obj, struct tg_eval *ev);
void tg_workload_release(struct tg_workload *wl);

/* Total pods the workload will create (sum of template replicas); -1 when any is unknown. */
long long tg_workload_pod_count(const struct tg_workload *wl);

#endif
