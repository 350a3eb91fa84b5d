/* workload.h -- every supported object decoded into one view: its pod templates (with role,
 * replicas, paths, the world their pods train in) and the workload facts the rules read. Rules
 * work on this view only.
 *
 * Worlds (SPEC 11 "A world ... is"): the pods that train together. Each template has a world id;
 * templates with the same id put their pods into the same world. A world may exist in several
 * copies that never talk to each other (the groups of a LeaderWorkerSet, the child Jobs of a
 * JobSet replicated job without a shared rendezvous address): world_pods counts the pods of the
 * template in ONE copy. A Ray head is part of the world of every worker group (every_world). */
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

/* What a template's pods do, as the controller that runs them names it (decode time). Whether a
 * template is launcher-like (SPEC 11: no GPU, no Neuron, no EFA, only starts or coordinates
 * others) is decided from the role and its devices: tg_template_coordinates(). */
enum tg_role {
    TG_ROLE_POD = 0,
    TG_ROLE_LAUNCHER, /* MPIJob Launcher; the launcher job of a Trainer MPI runtime */
    TG_ROLE_WORKER,   /* ranks: MPIJob/PyTorchJob Worker, LWS worker, Ray worker group, the pods
                         of a batch Job or a JobSet replicated job, the Trainer node */
    TG_ROLE_TASK,     /* a Volcano Job task */
    TG_ROLE_SLURMD,
    TG_ROLE_MASTER,      /* PyTorchJob Master (a rank: node rank 0) */
    TG_ROLE_LEADER,      /* LeaderWorkerSet leaderTemplate */
    TG_ROLE_HEAD,        /* Ray head */
    TG_ROLE_SUBMITTER,   /* RayJob submitterPodTemplate (runs `ray job submit`) */
    TG_ROLE_INITIALIZER, /* Kubeflow Trainer dataset or model initializer */
};

/* The most hugepages-* names of one container the decoder keeps (struct tg_container). */
#define TG_HUGEPAGE_NAMES_MAX 7

/* The most env entries of one container whose names tg_ctr_env_get keeps (include/tg/pod.h). */
#define TG_ENV_MEMO_MAX 16

struct tg_container {
    json_t *c;           /* borrowed container object (TrainJob: made by the decoder) */
    struct tg_path path; /* ...spec.containers[0] / /spec/.../containers/0; NodeSet: spec.slurmd */
    bool init;           /* from initContainers */
    bool sidecar;        /* an init container with restartPolicy: Always (runs beside the app) */
    const char *name;    /* "" when absent */
    /* The member that holds its resources in the object as written, for field paths:
     * "resources", or "resourcesPerNode" for the node container made from a TrainJob's
     * spec.trainer (whose object reads them under "resources"). */
    const char *resources_key;
    /* resources.limits and resources.requests of c when they are objects, else NULL: read once at
     * decode time, since the rules look up device counts in them over a hundred times per
     * request (include/tg/pod.h: tg_ctr_res). */
    json_t *limits, *requests;
    /* resources, resources.limits and resources.requests as written (any JSON type; the last two
     * NULL when resources is no object), for the checks that report a wrong type */
    json_t *res_raw, *limits_raw, *requests_raw;
    json_t *env_raw; /* its env member as written (any JSON type), or NULL: tg_ctr_env_get */
    bool claims;     /* resources.claims is a non-empty array (DRA: tg_template_uses_claims) */
    /* tg_container_count of the devices the rules count most (EFA, nvidia.com/gpu,
     * aws.amazon.com/neuron, in that order), taken at decode time: rc, and the count when rc 1. */
    signed char dev_rc[3];
    long long dev_n[3];
    /* Their members of limits and of requests (NULL when absent), and [3] hugepages-2Mi's, read in
     * one walk over each: tg_ctr_res answers for those four from them, tg_ctr_count for
     * hugepages-2Mi from [3]. */
    json_t *dev_limit[4], *dev_request[4];
    /* Some key of limits or requests begins with "hugepages-" (found in the same walks), and the
     * first TG_HUGEPAGE_NAMES_MAX of those keys, distinct, limits' first (borrowed). */
    bool hugepage_keys;
    unsigned char nhugepage_names;
    const char *hugepage_names[TG_HUGEPAGE_NAMES_MAX];
    /* The names of env_raw's entries (NULL for an entry without a string name), read on the
     * first tg_ctr_env_get and kept for its later calls: the rules ask one container for several
     * variables per request, and each ask walked every entry. Written through the rules' const
     * pointers, as tg_template's types_memo. env_memo: 0 not read yet, 1 read (env_names_n of
     * them), -1 not kept (env is no array, or has more than TG_ENV_MEMO_MAX entries). */
    signed char env_memo;
    unsigned char env_names_n;
    const char *env_names[TG_ENV_MEMO_MAX];
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
    int world;                 /* world id (see the top of this file); 0 for single-world kinds */
    bool every_world;          /* part of every world of the workload (Ray head) */
    long long world_pods;      /* pods of this template in one copy of its world; -1 unknown */
    const char *copy_topology; /* exclusive-topology key that places each copy of the world in
                                  one domain of that node label (JobSet, LWS), or NULL */
    bool resources_unknown;    /* TrainJob without resourcesPerNode: its runtime's resources apply,
                                  which the request does not show */
    /* Env the controller puts into every container of the template, winning over the user's
     * entries of the same name (training-operator and Trainer append or upsert theirs, LWS puts
     * its own first and drops the user's): a JSON array of {"name", "value"?, "field"}, value
     * absent when it is not known at admission, field the object field it comes from. NULL when
     * none. Owned by the view. */
    json_t *operator_env;
    /* spec.nodeSelector, spec.affinity, spec.resourceClaims, spec.volumes and
     * spec.schedulingGates as written (json_object_get's answer: any JSON type, NULL when absent
     * or when spec is no object), read once (spec_read) when the decoder adds the containers or
     * is done, for the readers that would look them up several times per request
     * (include/tg/pod.h: tg_template_node_selector); containers and initContainers (the
     * decoder's own reads) with them. Without spec_read (a template built by hand) they are
     * looked up. */
    bool spec_read;
    json_t *node_selector, *affinity, *resource_claims, *volumes, *scheduling_gates;
    json_t *containers_raw, *init_containers_raw;
    /* tg_template_instance_types' answer, kept when no fit and no wrong JSON type shaped it (no
     * family pin was enumerated; nothing was reported), for its later calls without ev: the rules
     * ask for one template's types up to five times per request. Written through the rules'
     * const pointers (the view itself is not const); the values are borrowed. */
    struct {
        bool set, finite, mentioned;
        const void *table; /* the instance table it was read against */
        size_t ntable, n;
        const char *values[8];
    } types_memo;
    /* The pod-level sums of EFA, nvidia.com/gpu and aws.amazon.com/neuron (the order of struct
     * tg_container dev_rc) that tg_template_count and tg_template_count_valid give, kept on
     * their first ask (the rules ask for them about ten times per request) and forgotten when a
     * container is added. Written through the rules' const pointers, as types_memo. */
    struct {
        bool set, seen, bad;
        long long n;
    } count_memo[3];
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
    /* Their replicas and restartPolicy members as written (any JSON type, NULL when absent; [0]
     * the Launcher's, [1] the Worker's), found in the decoder's walk over each. */
    json_t *replicas_raw[2], *restart_policy_raw[2];
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

/* PyTorchJob facts (kubeflow.org/v1, training-operator). */
struct tg_pytorch {
    bool has_min_available;
    long long min_available; /* runPolicy.schedulingPolicy.minAvailable */
    struct tg_template *master, *worker;
    json_t *master_spec, *worker_spec; /* the ReplicaSpec objects, NULL when absent */
    bool elastic;                      /* spec.elasticPolicy is set */
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

#define TG_TPL_INLINE 2

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
    /* An owner reference names a kind trainguard judges (a JobSet owning its child Job, a
     * PyTorchJob owning its pods), or a StatefulSet that a LeaderWorkerSet created (its pods carry
     * leaderworkerset.sigs.k8s.io/name): the object is judged through that owner (SPEC 11, 13). */
    bool judged_owner;
    /* Kueue (SPEC 11): the kueue.x-k8s.io/queue-name label is on the object's own metadata. */
    bool queued;
    /* Queued and not yet released by Kueue: suspended (Kueue's webhook suspends every queued job
     * at CREATE; on UPDATE the object's suspend field says), a queued kind with no suspend field
     * (LeaderWorkerSet), or a Pod behind Kueue's scheduling gate. zone.missing, zone.multiple and
     * zone.preferred-only wait for the release; zone.conflict does not. */
    bool queue_held;
    /* Kubeflow Trainer's MPI runtime: a (Cluster)TrainingRuntime with mlPolicy.mpi, or the JobSet a
     * TrainJob owns with a replicated job named launcher. Its launcher runs mpirun over ssh into
     * the node job's sshd pods (docs/references.md#ref-trainer-mpi-ssh). */
    bool trainer_mpi;
    json_t *owned;           /* JSON made by the decoder (TrainJob's node container and pod spec) */
    struct tg_template *tpl; /* tpl_inline while ntpl <= TG_TPL_INLINE, then the heap */
    size_t ntpl;
    /* The first templates live in the view itself: a template holds two paths, so an array of them
     * on the heap is a large allocation, for which malloc first consolidates its free lists. */
    struct tg_template tpl_inline[TG_TPL_INLINE];
    struct tg_mpi mpi;
    struct tg_vcjob vc;
    struct tg_podgroup pg;
    struct tg_nodeset ns;
    struct tg_pytorch pt;
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

/* Pods of one copy of t's world: the world_pods of every template in it (every_world ones
 * included); -1 when one of them is unknown. */
long long tg_template_world_size(const struct tg_workload *wl, const struct tg_template *t);
/* Do templates a and b put pods into one world? */
bool tg_templates_share_world(const struct tg_template *a, const struct tg_template *b);

/* ---- building blocks for the decoders of each kind (src/k8s/workload*.c) ------------------- */

/* A new zeroed template at the end of wl->tpl (replicas and world counts -1), or NULL on ENOMEM.
 * It may move the earlier templates: take pointers into wl->tpl after the last add. */
struct tg_template *tg_workload_add_template(struct tg_workload *wl);
/* Reads the PodTemplateSpec parent[key] (path ppath.key) into t: meta, spec, paths and the
 * containers. Returns 0 or -ENOMEM. */
int tg_template_read(struct tg_eval *ev, struct tg_template *t, json_t *parent,
                     const struct tg_path *ppath, const char *key);
/* The same, for a parent whose member key (json_object_get's answer raw) was read before. */
int tg_template_read_member(struct tg_eval *ev, struct tg_template *t, json_t *parent,
                            const struct tg_path *ppath, const char *key, json_t *raw);
/* Adds spec.containers and spec.initContainers of t->spec to t. Returns 0 or -ENOMEM. */
int tg_template_add_containers(struct tg_eval *ev, struct tg_template *t);
/* Adds one container object (borrowed) at path to t. Returns 0 or -ENOMEM. */
int tg_template_add_container(struct tg_template *t, json_t *c, const struct tg_path *path,
                              bool init, const char *fallback_name);
/* Appends {name, value, field} to t->operator_env (value NULL: unknown at admission). Returns 0
 * or -ENOMEM. */
int tg_template_set_operator_env(struct tg_template *t, const char *name, const char *value,
                                 const char *field);
/* The batch/v1 Job pod count of a JobSpec: min(parallelism, completions) with parallelism unset
 * = 1 and completions unset = parallelism (kubernetes pkg/apis/batch/v1/defaults.go). Wrong
 * types are reported at path; -1 when unusable. */
long long tg_job_spec_pods(struct tg_eval *ev, json_t *job_spec, const struct tg_path *path);

#endif
