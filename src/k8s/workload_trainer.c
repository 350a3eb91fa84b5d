/* workload_trainer.c -- Kubeflow Trainer TrainJob, TrainingRuntime and ClusterTrainingRuntime
 * decoded into the workload view (include/tg/workload_trainer.h has the model; sources in
 * docs/references.md#ref-trainer). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/obj.h"
#include "tg/workload_jobs.h"
#include "tg/workload_trainer.h"

/* kubeflow/trainer: pkg/constants/constants.go (LabelTrainJobAncestor, AncestorTrainer, Node,
 * Launcher, DatasetInitializer, ModelInitializer). */
#define ANCESTOR_LABEL "trainer.kubeflow.org/trainjob-ancestor-step"
#define ANCESTOR_TRAINER "trainer"
#define NODE_JOB "node"
#define LAUNCHER_JOB "launcher"

static int set_env_json(struct tg_template *t, const char *name, json_t *v, const char *field,
                        const char *dflt)
{
    char buf[32];
    const char *s = json_string_value(v);
    if (json_is_integer(v)) {
        snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
        s = buf;
    }
    return tg_template_set_operator_env(t, name, s ? s : dflt, field);
}

/* ---- TrainJob ------------------------------------------------------------------------------- */

/* Does an override's targetJobs list name the node job? */
static bool targets_node(json_t *entry)
{
    size_t i;
    json_t *tj;
    json_array_foreach (json_object_get(entry, "targetJobs"), i, tj) {
        const char *n = json_string_value(json_object_get(tj, "name"));
        if (n && !strcmp(n, NODE_JOB))
            return true;
    }
    return false;
}

/* v2.0 podSpecOverrides[] (the entry is the pod spec fragment) and v2.1 podTemplateOverrides[]
 * ({metadata, spec}). */
static bool override_list(struct tg_eval *ev, json_t *spec, const struct tg_path *sp,
                          const char *key, struct tg_template *t)
{
    struct tg_path lp, ip;
    size_t i;
    json_t *e;
    json_t *list = tg_get_array(ev, spec, sp, key);
    tg_path_key(&lp, sp, key);
    bool v21 = !strcmp(key, "podTemplateOverrides");
    json_array_foreach (list, i, e) {
        if (!targets_node(e))
            continue;
        tg_path_index(&ip, &lp, i);
        t->path = ip;
        t->meta = v21 ? tg_get_object(ev, e, &ip, "metadata") : NULL;
        t->spec = v21 ? tg_get_object(ev, e, &ip, "spec") : e;
        if (v21)
            tg_path_key(&t->spec_path, &ip, "spec");
        else
            t->spec_path = ip;
        return true;
    }
    return false;
}

/* v2.2 runtimePatches[].trainingRuntimeSpec.template.spec.replicatedJobs[name=node]. */
static bool runtime_patch(struct tg_eval *ev, json_t *spec, const struct tg_path *sp,
                          struct tg_template *t)
{
    static const char *const walk[] = {"trainingRuntimeSpec", "template", "spec"};
    struct tg_path lp, ip, p, jp;
    size_t i, j;
    json_t *patch, *rj;
    json_t *list = tg_get_array(ev, spec, sp, "runtimePatches");
    tg_path_key(&lp, sp, "runtimePatches");
    json_array_foreach (list, i, patch) {
        tg_path_index(&ip, &lp, i);
        json_t *o = patch;
        p = ip;
        for (size_t k = 0; k < 3 && o; k++) {
            o = tg_get_object(ev, o, &p, walk[k]);
            tg_path_key(&p, &p, walk[k]);
        }
        json_t *rjobs = tg_get_array(ev, o, &p, "replicatedJobs");
        tg_path_key(&p, &p, "replicatedJobs");
        json_array_foreach (rjobs, j, rj) {
            const char *n = json_string_value(json_object_get(rj, "name"));
            if (!n || strcmp(n, NODE_JOB))
                continue;
            tg_path_index(&jp, &p, j);
            json_t *jt = tg_get_object(ev, rj, &jp, "template");
            tg_path_key(&jp, &jp, "template");
            json_t *js = tg_get_object(ev, jt, &jp, "spec");
            tg_path_key(&jp, &jp, "spec");
            json_t *pt = tg_get_object(ev, js, &jp, "template");
            tg_path_key(&t->path, &jp, "template");
            t->meta = tg_get_object(ev, pt, &t->path, "metadata");
            t->spec = tg_get_object(ev, pt, &t->path, "spec");
            tg_path_key(&t->spec_path, &t->path, "spec");
            return true;
        }
    }
    return false;
}

/* The node container as the Trainer builds it from spec.trainer (kubeflow/trainer:
 * pkg/runtime/framework/plugins/jobset/builder.go Trainer; trainingruntime.go: resourcesPerNode
 * replaces the node container's resources). Owned by wl->owned. */
static int trainer_container(struct tg_eval *ev, struct tg_workload *wl, struct tg_template *t,
                             json_t *trainer, const struct tg_path *tp)
{
    static const char *const keys[] = {"image", "command", "args", "env"};
    json_t *c = json_pack("{s:s}", "name", NODE_JOB);
    if (!c || json_array_append_new(wl->owned, c))
        return -ENOMEM;
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = json_object_get(trainer, keys[i]);
        if (v && json_object_set(c, keys[i], v))
            return -ENOMEM;
    }
    json_t *res = tg_get_object(ev, trainer, tp, "resourcesPerNode");
    t->resources_unknown = res == NULL;
    if (res && json_object_set(c, "resources", res))
        return -ENOMEM;
    if (tg_template_add_container(t, c, tp, false, NODE_JOB) < 0)
        return -ENOMEM;
    t->containers[t->ncontainers - 1].resources_key = "resourcesPerNode";
    return 0;
}

int tg_decode_trainjob(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                       const struct tg_path *sp)
{
    struct tg_path tp;
    long long n = -1;
    int rc;
    if (!(wl->owned = json_array()))
        return -ENOMEM;
    struct tg_template *t = tg_workload_add_template(wl);
    if (!t)
        return -ENOMEM;
    t->role = TG_ROLE_WORKER;
    t->role_name = NODE_JOB;
    t->path = *sp;
    t->spec_path = *sp;
    if (!override_list(ev, spec, sp, "podSpecOverrides", t) &&
        !override_list(ev, spec, sp, "podTemplateOverrides", t))
        runtime_patch(ev, spec, sp, t);
    json_t *trainer = tg_get_object(ev, spec, sp, "trainer");
    tg_path_key(&tp, sp, "trainer");
    if (tg_get_int(ev, trainer, &tp, "numNodes", &n) != 1 || n < 0)
        n = -1;
    t->replicas = t->world_pods = n;
    t->replicas_set = n >= 0;
    if (!trainer) {
        t->resources_unknown = true;
        return 0;
    }
    if ((rc = trainer_container(ev, wl, t, trainer, &tp)) < 0)
        return rc;
    /* The torch plugin sets both (plugins/torch/torch.go EnforceMLPolicy): numNodes, and
     * numProcPerNode or the runtime's value (auto from v2.2, mlPolicy.torch before it). */
    if ((rc = set_env_json(t, "PET_NNODES", n >= 0 ? json_object_get(trainer, "numNodes") : NULL,
                           "spec.trainer.numNodes", NULL)) < 0)
        return rc;
    return set_env_json(t, "PET_NPROC_PER_NODE", json_object_get(trainer, "numProcPerNode"),
                        "spec.trainer.numProcPerNode", NULL);
}

/* ---- (Cluster)TrainingRuntime --------------------------------------------------------------- */

struct ml_policy {
    long long num_nodes; /* default 1; -1 unusable */
    json_t *torch;       /* mlPolicy.torch or NULL */
    json_t *mpi;         /* mlPolicy.mpi or NULL */
    bool launcher_as_node;
};

static void read_ml_policy(struct tg_eval *ev, json_t *spec, const struct tg_path *sp,
                           struct ml_policy *ml)
{
    struct tg_path mp, xp;
    long long n = 1;
    json_t *pol = tg_get_object(ev, spec, sp, "mlPolicy");
    tg_path_key(&mp, sp, "mlPolicy");
    int got = tg_get_int(ev, pol, &mp, "numNodes", &n);
    ml->num_nodes = got == 0 ? 1 : got == 1 && n >= 0 ? n : -1;
    ml->torch = tg_get_object(ev, pol, &mp, "torch");
    ml->mpi = tg_get_object(ev, pol, &mp, "mpi");
    tg_path_key(&xp, &mp, "mpi");
    ml->launcher_as_node = false;
    tg_get_bool(ev, ml->mpi, &xp, "runLauncherAsNode", &ml->launcher_as_node);
}

static const char *ancestor_of(json_t *rjob)
{
    json_t *meta = json_object_get(json_object_get(rjob, "template"), "metadata");
    return json_string_value(json_object_get(json_object_get(meta, "labels"), ANCESTOR_LABEL));
}

/* Does any replicated job carry the trainer ancestor label? */
static bool has_trainer_label(json_t *rjobs)
{
    size_t i;
    json_t *rj;
    json_array_foreach (rjobs, i, rj) {
        const char *a = ancestor_of(rj);
        if (a && !strcmp(a, ANCESTOR_TRAINER))
            return true;
    }
    return false;
}

/* Role, pods and world of one replicated job of a runtime. */
static void runtime_job(struct tg_template *t, json_t *rjob, const struct ml_policy *ml,
                        bool labelled, int *next_world)
{
    const char *name = json_string_value(json_object_get(rjob, "name"));
    const char *anc = ancestor_of(rjob);
    bool trainer =
        anc ? !strcmp(anc, ANCESTOR_TRAINER) : !labelled && name && !strcmp(name, NODE_JOB);
    bool launcher = ml->mpi && name && !strcmp(name, LAUNCHER_JOB);
    bool node = name && !strcmp(name, NODE_JOB);
    bool init = (anc && strstr(anc, "initializer")) || (name && strstr(name, "initializer"));
    if (launcher) {
        t->role = TG_ROLE_LAUNCHER;
        t->world_pods = 1;
    } else if (ml->mpi && node) {
        long long n = ml->num_nodes;
        t->world_pods = n < 0 ? -1 : ml->launcher_as_node ? (n > 1 ? n - 1 : 1) : n;
    } else if (trainer) {
        t->world_pods = ml->num_nodes;
    } else if (init) {
        t->role = TG_ROLE_INITIALIZER;
    }
    if (launcher || trainer || (ml->mpi && node)) {
        t->world = 0;
        t->replicas = t->world_pods;
    } else {
        t->world = (*next_world)++;
    }
}

static int runtime_torch_env(struct tg_eval *ev, struct tg_template *t, const struct ml_policy *ml)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", ml->num_nodes);
    int rc = tg_template_set_operator_env(t, "PET_NNODES", ml->num_nodes < 0 ? NULL : buf,
                                          "spec.mlPolicy.numNodes");
    if (rc < 0)
        return rc;
    /* mlPolicy.torch.numProcPerNode up to v2.1 (default auto); v2.2 has none: auto. */
    return set_env_json(t, "PET_NPROC_PER_NODE", json_object_get(ml->torch, "numProcPerNode"),
                        "spec.mlPolicy.torch.numProcPerNode", "auto");
}

#define JOBSET_EXCLUSIVE "alpha.jobset.sigs.k8s.io/exclusive-topology"

static const char *exclusive_of(json_t *tmpl)
{
    json_t *ann = json_object_get(json_object_get(tmpl, "metadata"), "annotations");
    return json_string_value(json_object_get(ann, JOBSET_EXCLUSIVE));
}

/* kubeflow/trainer: pkg/runtime/core/trainingruntime.go copies the runtime template's metadata
 * annotations onto the JobSet it builds (plugins/jobset/jobset.go), so a JobSet exclusive-topology
 * key there, or on a replicated job's template, places each child Job in one domain: a zone pin
 * for a world of one child Job (the trainer job runs as one child Job). A world shared with
 * another rank job (MPI launcher and node) is not held by it; launcher-like jobs do not count. */
static void runtime_topology(struct tg_workload *wl, json_t *tpl, json_t *rjobs, const long *idx)
{
    size_t n = json_array_size(rjobs);
    for (size_t i = 0; i < n; i++) {
        if (idx[i] < 0)
            continue;
        struct tg_template *t = &wl->tpl[idx[i]];
        json_t *rj = json_array_get(rjobs, i);
        json_t *reps = json_object_get(rj, "replicas");
        bool one_job = !json_is_integer(reps) || json_integer_value(reps) <= 1;
        for (size_t j = 0; j < n && one_job; j++) {
            if (j == i || idx[j] < 0)
                continue;
            const struct tg_template *o = &wl->tpl[idx[j]];
            one_job = o->world != t->world || o->role == TG_ROLE_LAUNCHER ||
                      o->role == TG_ROLE_INITIALIZER;
        }
        if (!one_job || t->role == TG_ROLE_LAUNCHER || t->role == TG_ROLE_INITIALIZER)
            continue;
        const char *k = exclusive_of(json_object_get(rj, "template"));
        t->copy_topology = k ? k : exclusive_of(tpl);
    }
}

int tg_decode_trainingruntime(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                              const struct tg_path *sp)
{
    struct tg_path p, rp, ip;
    struct ml_policy ml;
    size_t i;
    json_t *rj;
    int rc, next_world = 1;
    read_ml_policy(ev, spec, sp, &ml);
    wl->trainer_mpi = ml.mpi != NULL;
    json_t *tpl = tg_get_object(ev, spec, sp, "template");
    tg_path_key(&p, sp, "template");
    json_t *js = tg_get_object(ev, tpl, &p, "spec");
    tg_path_key(&p, &p, "spec");
    json_t *rjobs = tg_get_array(ev, js, &p, "replicatedJobs");
    tg_path_key(&rp, &p, "replicatedJobs");
    bool labelled = has_trainer_label(rjobs);
    long *idx = calloc(json_array_size(rjobs) + 1, sizeof(*idx));
    if (!idx)
        return -ENOMEM;
    rc = 0;
    json_array_foreach (rjobs, i, rj) {
        tg_path_index(&ip, &rp, i);
        if ((rc = tg_decode_replicated_job(ev, wl, rj, &ip, &idx[i])) < 0)
            goto out;
        if (idx[i] < 0)
            continue;
        struct tg_template *t = &wl->tpl[idx[i]];
        runtime_job(t, rj, &ml, labelled, &next_world);
        if (ml.torch && t->world == 0 && t->role == TG_ROLE_WORKER &&
            (rc = runtime_torch_env(ev, t, &ml)) < 0)
            goto out;
    }
    runtime_topology(wl, tpl, rjobs, idx);
out:
    free(idx);
    return rc < 0 ? rc : 0;
}
