/* workload_jobs.c -- batch/v1 Job, JobSet, LeaderWorkerSet, PyTorchJob, RayCluster and RayJob
 * decoded into the workload view: pod templates with their pods, worlds and the env their
 * controllers add (SPEC 11; sources in docs/references.md#ref-workloads). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/obj.h"
#include "tg/rendezvous.h"
#include "tg/workload_jobs.h"

/* kubernetes-sigs/jobset: api/jobset/v1alpha2/jobset_types.go ExclusiveKey. */
#define JOBSET_EXCLUSIVE "alpha.jobset.sigs.k8s.io/exclusive-topology"
/* kubernetes-sigs/lws: api/leaderworkerset/v1/leaderworkerset_types.go ExclusiveKeyAnnotationKey.
 */
#define LWS_EXCLUSIVE "leaderworkerset.sigs.k8s.io/exclusive-topology"
/* KubeRay: an unset maxReplicas is MaxInt32 (ray-operator/apis/ray/v1/raycluster_types.go). */
#define RAY_MAX_DEFAULT 2147483647LL
#define HOST_MAX 128

static long long mul_or_unknown(long long a, long long b)
{
    if (a < 0 || b < 0)
        return -1;
    if (a > 0 && b > (1LL << 40) / a)
        return -1; /* beyond any cluster: unknown rather than an overflow */
    return a * b;
}

/* An integer member with a default; -1 when it has the wrong type or is negative. */
static long long int_or(struct tg_eval *ev, json_t *obj, const struct tg_path *p, const char *key,
                        long long dflt)
{
    long long n;
    int got = tg_get_int(ev, obj, p, key, &n);
    if (got == 0)
        return dflt;
    return got == 1 && n >= 0 ? n : -1;
}

static int set_env_num(struct tg_template *t, const char *name, long long n, const char *field)
{
    char buf[32];
    if (n < 0)
        return tg_template_set_operator_env(t, name, NULL, field);
    snprintf(buf, sizeof(buf), "%lld", n);
    return tg_template_set_operator_env(t, name, buf, field);
}

/* ---- batch/v1 Job --------------------------------------------------------------------------- */

int tg_decode_batchjob(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                       const struct tg_path *sp)
{
    struct tg_template *t = tg_workload_add_template(wl);
    if (!t)
        return -ENOMEM;
    t->role = TG_ROLE_WORKER;
    t->role_name = "Job";
    t->replicas = tg_job_spec_pods(ev, spec, sp);
    t->replicas_set = json_object_get(spec, "parallelism") != NULL;
    t->world_pods = t->replicas;
    return tg_template_read(ev, t, spec, sp, "template");
}

/* ---- JobSet --------------------------------------------------------------------------------- */

int tg_decode_replicated_job(struct tg_eval *ev, struct tg_workload *wl, json_t *rjob,
                             const struct tg_path *rp, long *index)
{
    struct tg_path jp, js;
    *index = -1;
    if (!json_is_object(rjob)) {
        if (ev && rjob && !json_is_null(rjob))
            tg_report(ev, TG_RULE_OBJECT_INVALID_FIELD, rp->field,
                      "must be a replicated job object");
        return 0;
    }
    struct tg_template *t = tg_workload_add_template(wl);
    if (!t)
        return -ENOMEM;
    const char *name = tg_get_string(ev, rjob, rp, "name");
    long long copies = int_or(ev, rjob, rp, "replicas", 1);
    json_t *jt = tg_get_object(ev, rjob, rp, "template");
    tg_path_key(&jp, rp, "template");
    json_t *jspec = tg_get_object(ev, jt, &jp, "spec");
    tg_path_key(&js, &jp, "spec");
    t->role = TG_ROLE_WORKER;
    t->role_name = name ? name : "";
    t->world_pods = tg_job_spec_pods(ev, jspec, &js);
    t->replicas = mul_or_unknown(copies, t->world_pods);
    t->replicas_set = json_object_get(rjob, "replicas") != NULL;
    *index = (long)(wl->ntpl - 1);
    return tg_template_read(ev, t, jspec, &js, "template");
}

/* The rendezvous host of a template: the first container that names one decides. */
static enum tg_rdzv template_host(const struct tg_template *t, const char *key, const char *fvalue,
                                  char *host, size_t len)
{
    for (size_t i = 0; i < t->ncontainers; i++) {
        enum tg_rdzv r;
        if (t->containers[i].init)
            continue;
        if ((r = tg_rendezvous_host_field(t->containers[i].c, key, fvalue, host, len)) !=
            TG_RDZV_NONE)
            return r;
    }
    return TG_RDZV_NONE;
}

/* kubernetes-sigs/jobset: spec.coordinator {replicatedJob, jobIndex, podIndex} makes the controller
 * label and annotate every Job and Pod with jobset.sigs.k8s.io/coordinator =
 * <jobset>-<rjob>-<jobIndex>-<podIndex>.<subdomain> (jobset_controller.go CoordinatorEndpoint), the
 * same value on every pod: an env entry taken from it by fieldRef names one literal host. */
#define JOBSET_COORDINATOR "jobset.sigs.k8s.io/coordinator"
static bool coordinator_endpoint(const struct tg_workload *wl, json_t *spec, char *out, size_t len)
{
    json_t *c = json_object_get(spec, "coordinator");
    const char *rj = json_string_value(json_object_get(c, "replicatedJob"));
    json_t *ji = json_object_get(c, "jobIndex"), *pi = json_object_get(c, "podIndex");
    const char *sub =
        json_string_value(json_object_get(json_object_get(spec, "network"), "subdomain"));
    if (!rj || !wl->name || !wl->name[0] || (ji && !json_is_integer(ji)) ||
        (pi && !json_is_integer(pi)))
        return false;
    int n = snprintf(out, len, "%s-%s-%lld-%lld.%s", wl->name, rj,
                     ji ? (long long)json_integer_value(ji) : 0LL,
                     pi ? (long long)json_integer_value(pi) : 0LL, sub && sub[0] ? sub : wl->name);
    return n > 0 && (size_t)n < len;
}

/* The exclusive-topology key of replicated job i: its Job template's annotation, else the
 * JobSet's (the controller copies either onto each child Job). */
static const char *exclusive_key(json_t *rjob, json_t *js_annotations)
{
    json_t *ann = json_object_get(json_object_get(json_object_get(rjob, "template"), "metadata"),
                                  "annotations");
    const char *k = json_string_value(json_object_get(ann, JOBSET_EXCLUSIVE));
    return k ? k : json_string_value(json_object_get(js_annotations, JOBSET_EXCLUSIVE));
}

struct rjob_world {
    long index; /* in wl->tpl, -1: no template */
    enum tg_rdzv rdzv;
    char host[HOST_MAX];
};

/* SPEC 11: the replicated jobs that share one literal rendezvous address are one world (all their
 * child Jobs); any other replicated job has one world per child Job. An exclusive-topology key
 * pins a world only when the world is one child Job. */
static void jobset_worlds(struct tg_workload *wl, json_t *rjobs, struct rjob_world *rw, size_t n)
{
    int next = 0;
    for (size_t i = 0; i < n; i++) {
        if (rw[i].index < 0)
            continue;
        struct tg_template *t = &wl->tpl[rw[i].index];
        t->world = -1;
        for (size_t j = 0; j < i && rw[i].rdzv == TG_RDZV_LITERAL; j++) {
            if (rw[j].index >= 0 && rw[j].rdzv == TG_RDZV_LITERAL &&
                !strcmp(rw[i].host, rw[j].host))
                t->world = wl->tpl[rw[j].index].world;
        }
        if (t->world < 0)
            t->world = next++;
    }
    for (size_t i = 0; i < n; i++) {
        if (rw[i].index < 0)
            continue;
        struct tg_template *t = &wl->tpl[rw[i].index];
        bool one_job = rw[i].rdzv != TG_RDZV_LITERAL;
        if (!one_job) {
            long long per_job = t->world_pods;
            t->world_pods = t->replicas;
            one_job = per_job >= 0 && t->replicas == per_job; /* replicas 1 */
            for (size_t j = 0; j < n && one_job; j++)
                one_job = j == i || rw[j].index < 0 || wl->tpl[rw[j].index].world != t->world;
        }
        if (one_job)
            t->copy_topology = exclusive_key(json_array_get(rjobs, i), wl->annotations);
    }
}

/* Is the JobSet one that Kubeflow Trainer built for an MPI runtime: owned by a TrainJob, with the
 * replicated job named launcher that only the MPI plugin's runtimes have (kubeflow/trainer
 * pkg/constants/constants.go Launcher; docs/references.md#ref-trainer-mpi-ssh)? */
static bool trainer_mpi_jobset(const struct tg_workload *wl, json_t *rjobs)
{
    json_t *owners = json_object_get(json_object_get(wl->obj, "metadata"), "ownerReferences");
    bool owned = false;
    size_t i;
    json_t *o;
    json_array_foreach (owners, i, o) {
        const char *kind = json_string_value(json_object_get(o, "kind"));
        const char *av = json_string_value(json_object_get(o, "apiVersion"));
        owned |= kind && av && !strcmp(kind, "TrainJob") &&
                 !strncmp(av, "trainer.kubeflow.org/", strlen("trainer.kubeflow.org/"));
    }
    json_array_foreach (rjobs, i, o) {
        const char *n = json_string_value(json_object_get(o, "name"));
        if (owned && n && !strcmp(n, "launcher"))
            return true;
    }
    return false;
}

int tg_decode_jobset(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                     const struct tg_path *sp)
{
    struct tg_path rp, ip;
    size_t i;
    json_t *rjob;
    int rc = 0;
    json_t *rjobs = tg_get_array(ev, spec, sp, "replicatedJobs");
    size_t n = json_array_size(rjobs);
    if (n == 0)
        return 0;
    struct rjob_world *rw = calloc(n, sizeof(*rw));
    if (!rw)
        return -ENOMEM;
    tg_path_key(&rp, sp, "replicatedJobs");
    json_array_foreach (rjobs, i, rjob) {
        tg_path_index(&ip, &rp, i);
        if ((rc = tg_decode_replicated_job(ev, wl, rjob, &ip, &rw[i].index)) < 0)
            goto out;
    }
    char coord[2 * HOST_MAX] = "";
    if (!coordinator_endpoint(wl, spec, coord, sizeof(coord)))
        coord[0] = '\0';
    for (i = 0; i < n; i++) {
        if (rw[i].index < 0)
            continue;
        rw[i].rdzv = template_host(&wl->tpl[rw[i].index], coord[0] ? JOBSET_COORDINATOR : NULL,
                                   coord[0] ? coord : NULL, rw[i].host, sizeof(rw[i].host));
        /* replicas 0 creates no child Job: no pod, no world (jobset_types.go: Minimum 0). */
        if (wl->tpl[rw[i].index].replicas == 0)
            wl->tpl[rw[i].index].world_pods = 0;
    }
    jobset_worlds(wl, rjobs, rw, n);
    wl->trainer_mpi = trainer_mpi_jobset(wl, rjobs);
out:
    free(rw);
    return rc;
}

/* ---- LeaderWorkerSet ------------------------------------------------------------------------ */

/* The env the LWS pod webhook puts first in every container (kubernetes-sigs/lws:
 * pkg/utils/pod/pod_utils.go AddLWSVariables): the group size is known, the rest per pod. */
static int lws_env(struct tg_template *t, long long size)
{
    static const char field[] = "spec.leaderWorkerTemplate.size";
    int rc = set_env_num(t, "LWS_GROUP_SIZE", size, field);
    if (rc == 0)
        rc = tg_template_set_operator_env(t, "LWS_LEADER_ADDRESS", NULL, field);
    if (rc == 0)
        rc = tg_template_set_operator_env(t, "LWS_WORKER_INDEX", NULL, field);
    return rc;
}

static int lws_template(struct tg_eval *ev, struct tg_workload *wl, json_t *lwt,
                        const struct tg_path *lp, const char *key, long long groups,
                        long long per_group)
{
    struct tg_template *t = tg_workload_add_template(wl);
    if (!t)
        return -ENOMEM;
    bool leader = !strcmp(key, "leaderTemplate");
    t->role = leader ? TG_ROLE_LEADER : TG_ROLE_WORKER;
    t->role_name = leader ? "leader" : "worker";
    t->world_pods = per_group;
    t->replicas = mul_or_unknown(groups, per_group);
    t->copy_topology = json_string_value(json_object_get(wl->annotations, LWS_EXCLUSIVE));
    int rc = tg_template_read(ev, t, lwt, lp, key);
    return rc < 0 ? rc : 0;
}

int tg_decode_lws(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                  const struct tg_path *sp)
{
    struct tg_path lp;
    int rc;
    long long groups = int_or(ev, spec, sp, "replicas", 1);
    json_t *lwt = tg_get_object(ev, spec, sp, "leaderWorkerTemplate");
    tg_path_key(&lp, sp, "leaderWorkerTemplate");
    long long size = int_or(ev, lwt, &lp, "size", 1);
    bool has_leader = tg_get_object(ev, lwt, &lp, "leaderTemplate") != NULL;
    /* size counts the leader; without a leaderTemplate the leader is made from workerTemplate. */
    if (has_leader) {
        if ((rc = lws_template(ev, wl, lwt, &lp, "leaderTemplate", groups, size < 0 ? -1 : 1)) < 0)
            return rc;
    }
    long long workers = size < 0 ? -1 : has_leader ? (size > 0 ? size - 1 : 0) : size;
    if ((rc = lws_template(ev, wl, lwt, &lp, "workerTemplate", groups, workers)) < 0)
        return rc;
    for (size_t i = 0; i < wl->ntpl; i++) {
        if ((rc = lws_env(&wl->tpl[i], size)) < 0)
            return rc;
    }
    return 0;
}

/* ---- PyTorchJob ----------------------------------------------------------------------------- */

static int ptj_replica(struct tg_eval *ev, struct tg_workload *wl, json_t *specs,
                       const struct tg_path *p, const char *type)
{
    struct tg_path rp;
    json_t *rs = tg_get_object(ev, specs, p, type);
    if (!rs)
        return 0;
    struct tg_template *t = tg_workload_add_template(wl);
    if (!t)
        return -ENOMEM;
    tg_path_key(&rp, p, type);
    bool master = !strcmp(type, "Master");
    t->role = master ? TG_ROLE_MASTER : TG_ROLE_WORKER;
    t->role_name = type;
    long long n;
    int got = tg_get_int(ev, rs, &rp, "replicas", &n);
    t->replicas_set = got != 0;
    /* training-operator defaults replicas to 1 (pkg/apis/kubeflow.org/v1 pytorch_defaults.go) */
    t->replicas = got == 1 ? (n >= 0 ? n : -1) : got == 0 ? 1 : -1;
    t->world_pods = t->replicas;
    return tg_template_read(ev, t, rs, &rp, "template");
}

/* PET_NNODES and PET_NPROC_PER_NODE as training-operator appends them to every container after
 * the user's env (pkg/controller.v1/pytorch/envvar.go setPodEnv, elastic.go; v1.9.3). */
static int ptj_env(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                   const struct tg_path *sp)
{
    struct tg_path ep;
    char nnodes[64], nproc[32];
    const char *nnodes_field = "spec.pytorchReplicaSpecs", *nproc_field = "spec.nprocPerNode";
    long long total = 0;
    for (size_t i = 0; i < wl->ntpl; i++)
        if (total < 0 || wl->tpl[i].replicas < 0 ||
            __builtin_add_overflow(total, wl->tpl[i].replicas, &total))
            total = -1;
    json_t *ep_obj = tg_get_object(ev, spec, sp, "elasticPolicy");
    tg_path_key(&ep, sp, "elasticPolicy");
    wl->pt.elastic = ep_obj != NULL;
    snprintf(nnodes, sizeof(nnodes), "%lld", total);
    if (ep_obj) {
        /* setElasticPolicy: one of min/max copies the other; neither: Worker replicas. */
        long long wr = wl->pt.worker ? wl->pt.worker->replicas : 0;
        long long mn = int_or(ev, ep_obj, &ep, "minReplicas", -2);
        long long mx = int_or(ev, ep_obj, &ep, "maxReplicas", -2);
        mn = mn == -2 ? (mx == -2 ? wr : mx) : mn;
        mx = mx == -2 ? mn : mx;
        snprintf(nnodes, sizeof(nnodes), "%lld:%lld", mn, mx);
        nnodes_field = "spec.elasticPolicy";
        total = mn < 0 || mx < 0 ? -1 : total;
    }
    const char *np = tg_get_string(ev, spec, sp, "nprocPerNode");
    long long legacy = -1;
    if (!np && ep_obj && tg_get_int(ev, ep_obj, &ep, "nProcPerNode", &legacy) == 1 && legacy >= 0) {
        snprintf(nproc, sizeof(nproc), "%lld", legacy);
        np = nproc;
        nproc_field = "spec.elasticPolicy.nProcPerNode";
    }
    for (size_t i = 0; i < wl->ntpl; i++) {
        struct tg_template *t = &wl->tpl[i];
        int rc =
            tg_template_set_operator_env(t, "PET_NPROC_PER_NODE", np ? np : "auto", nproc_field);
        if (rc == 0)
            rc = tg_template_set_operator_env(t, "PET_NNODES", total < 0 ? NULL : nnodes,
                                              nnodes_field);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int tg_decode_pytorchjob(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                         const struct tg_path *sp)
{
    struct tg_path p;
    struct tg_pytorch *pt = &wl->pt;
    long long n;
    int rc;
    json_t *rp = tg_get_object(ev, spec, sp, "runPolicy");
    tg_path_key(&p, sp, "runPolicy");
    json_t *sched = tg_get_object(ev, rp, &p, "schedulingPolicy");
    tg_path_key(&p, &p, "schedulingPolicy");
    if (tg_get_int(ev, sched, &p, "minAvailable", &n) == 1) {
        pt->has_min_available = true;
        pt->min_available = n;
    }
    json_t *specs = tg_get_object(ev, spec, sp, "pytorchReplicaSpecs");
    tg_path_key(&p, sp, "pytorchReplicaSpecs");
    pt->master_spec = tg_get_object(NULL, specs, &p, "Master");
    pt->worker_spec = tg_get_object(NULL, specs, &p, "Worker");
    if ((rc = ptj_replica(ev, wl, specs, &p, "Master")) < 0 ||
        (rc = ptj_replica(ev, wl, specs, &p, "Worker")) < 0)
        return rc;
    for (size_t i = 0; i < wl->ntpl; i++) {
        if (wl->tpl[i].role == TG_ROLE_MASTER)
            pt->master = &wl->tpl[i];
        else
            pt->worker = &wl->tpl[i];
    }
    return ptj_env(ev, wl, spec, sp);
}

/* ---- Ray ------------------------------------------------------------------------------------ */

/* Pods of one worker group: replicas clamped to [minReplicas, maxReplicas] (maxReplicas when the
 * autoscaler is on), times numOfHosts; 0 when the group is suspended (ray-project/kuberay:
 * ray-operator/controllers/ray/utils/util.go GetWorkerGroupDesiredReplicas, v1.7.0). */
static long long ray_group_pods(struct tg_eval *ev, json_t *g, const struct tg_path *gp,
                                bool autoscaling)
{
    bool suspended = false;
    if (tg_get_bool(ev, g, gp, "suspend", &suspended) == 1 && suspended)
        return 0;
    long long rep = int_or(ev, g, gp, "replicas", 0);
    long long min = int_or(ev, g, gp, "minReplicas", 0);
    long long max = int_or(ev, g, gp, "maxReplicas", RAY_MAX_DEFAULT);
    long long hosts = int_or(ev, g, gp, "numOfHosts", 1);
    if (rep < 0 || min < 0 || max < 0)
        return -1;
    long long n = min > max ? max : rep < min ? min : rep > max ? max : rep;
    if (autoscaling)
        n = max == RAY_MAX_DEFAULT ? -1 : max;
    return mul_or_unknown(n, hosts);
}

/* A RayClusterSpec at path cp: the head (in every group's world) and the worker groups (one
 * world each). */
static int decode_ray_spec(struct tg_eval *ev, struct tg_workload *wl, json_t *cs,
                           const struct tg_path *cp)
{
    struct tg_path hp, gp, ip;
    size_t i;
    json_t *g;
    bool autoscaling = false;
    int rc;
    tg_get_bool(ev, cs, cp, "enableInTreeAutoscaling", &autoscaling);
    json_t *head = tg_get_object(ev, cs, cp, "headGroupSpec");
    tg_path_key(&hp, cp, "headGroupSpec");
    if (head) {
        struct tg_template *t = tg_workload_add_template(wl);
        if (!t)
            return -ENOMEM;
        t->role = TG_ROLE_HEAD;
        t->role_name = "head";
        t->replicas = t->world_pods = 1;
        t->every_world = true;
        if ((rc = tg_template_read(ev, t, head, &hp, "template")) < 0)
            return rc;
    }
    json_t *groups = tg_get_array(ev, cs, cp, "workerGroupSpecs");
    tg_path_key(&gp, cp, "workerGroupSpecs");
    json_array_foreach (groups, i, g) {
        tg_path_index(&ip, &gp, i);
        if (!json_is_object(g))
            continue;
        struct tg_template *t = tg_workload_add_template(wl);
        if (!t)
            return -ENOMEM;
        const char *name = tg_get_string(ev, g, &ip, "groupName");
        t->role = TG_ROLE_WORKER;
        t->role_name = name ? name : "worker";
        t->world = (int)i + 1;
        t->replicas = t->world_pods = ray_group_pods(ev, g, &ip, autoscaling);
        t->replicas_set = json_object_get(g, "replicas") != NULL;
        if ((rc = tg_template_read(ev, t, g, &ip, "template")) < 0)
            return rc;
    }
    return 0;
}

int tg_decode_raycluster(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                         const struct tg_path *sp)
{
    return spec ? decode_ray_spec(ev, wl, spec, sp) : 0;
}

int tg_decode_rayjob(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                     const struct tg_path *sp)
{
    struct tg_path cp;
    int rc;
    json_t *cs = tg_get_object(ev, spec, sp, "rayClusterSpec");
    tg_path_key(&cp, sp, "rayClusterSpec");
    if (cs && (rc = decode_ray_spec(ev, wl, cs, &cp)) < 0)
        return rc;
    if (!tg_get_object(ev, spec, sp, "submitterPodTemplate"))
        return 0;
    struct tg_template *t = tg_workload_add_template(wl);
    if (!t)
        return -ENOMEM;
    t->role = TG_ROLE_SUBMITTER;
    t->role_name = "submitter";
    t->replicas = t->world_pods = 1;
    t->world = -1; /* its own world: it only submits the job to the cluster */
    return tg_template_read(ev, t, spec, sp, "submitterPodTemplate");
}
