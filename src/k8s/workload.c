/* workload.c -- decode Pod, MPIJob, NodeSet, PodGroup and Volcano Job into one view of pod
 * templates plus the workload facts the rules read (SPEC section 3), the Karpenter NodePool and
 * slurm-operator Controller into their facts (SPEC section 11), the facts every kind shares
 * (owner, Kueue), and the dispatch to the decoders of the training workloads (workload_jobs.c,
 * workload_trainer.c). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tg/obj.h"
#include "tg/pod.h"
#include "tg/workload.h"
#include "tg/workload_jobs.h"
#include "tg/workload_trainer.h"

/* Kueue (kubernetes-sigs/kueue: pkg/controller/constants/constants.go QueueLabel;
 * pkg/controller/jobs/pod/constants/constants.go SchedulingGateName; apis/kueue/v1beta2
 * topology_types.go TopologySchedulingGate). */
#define KUEUE_QUEUE_LABEL "kueue.x-k8s.io/queue-name"
#define KUEUE_ADMISSION_GATE "kueue.x-k8s.io/admission"
#define KUEUE_TOPOLOGY_GATE "kueue.x-k8s.io/topology"
/* kubernetes-sigs/lws: api/leaderworkerset/v1/leaderworkerset_types.go SetNameLabelKey. */
#define LWS_NAME_LABEL "leaderworkerset.sigs.k8s.io/name"

struct tg_template *tg_workload_add_template(struct tg_workload *wl)
{
    struct tg_template *v;
    if (!wl->tpl && wl->ntpl == 0)
        wl->tpl = wl->tpl_inline;
    if (wl->tpl == wl->tpl_inline && wl->ntpl < TG_TPL_INLINE) {
        v = wl->tpl_inline;
    } else if (wl->tpl == wl->tpl_inline) { /* the inline ones move to the heap */
        v = malloc((wl->ntpl + 1) * sizeof(*v));
        if (v)
            memcpy(v, wl->tpl_inline, wl->ntpl * sizeof(*v));
    } else {
        v = realloc(wl->tpl, (wl->ntpl + 1) * sizeof(*v));
    }
    if (!v)
        return NULL;
    wl->tpl = v;
    struct tg_template *t = &v[wl->ntpl++];
    /* zeroed but for its two paths (1 KB), which start at the root */
    _Static_assert(offsetof(struct tg_template, path) < offsetof(struct tg_template, spec_path) &&
                       offsetof(struct tg_template, spec_path) <
                           offsetof(struct tg_template, containers),
                   "the paths lie between the members zeroed before and after them");
    size_t before = offsetof(struct tg_template, path);
    size_t after = offsetof(struct tg_template, containers);
    memset(t, 0, before);
    memset((char *)t + after, 0, sizeof(*t) - after);
    tg_path_root(&t->path);
    tg_path_root(&t->spec_path);
    t->replicas = -1;
    t->world_pods = -1;
    return t;
}

int tg_template_add_container(struct tg_template *t, json_t *c, const struct tg_path *path,
                              bool init, const char *fallback_name)
{
    struct tg_container *v = realloc(t->containers, (t->ncontainers + 1) * sizeof(*v));
    if (!v)
        return -ENOMEM;
    t->containers = v;
    memset(t->count_memo, 0, sizeof(t->count_memo)); /* the sums change */
    struct tg_container *k = &v[t->ncontainers++];
    k->c = c;
    k->path = *path;
    k->init = init;
    k->resources_key = "resources";
    /* limits, requests and claims in one walk over resources (a few members), not three lookups */
    json_t *res = json_object_get(c, "resources"), *limits = NULL, *requests = NULL, *claims = NULL;
    /* nothing when res is not an object; the iterator steps, not json_object_foreach (which
     * looks each key's iterator up again) */
    for (void *it = json_object_iter(res); it; it = json_object_iter_next(res, it)) {
        const char *key = json_object_iter_key(it);
        json_t *m = json_object_iter_value(it);
        if (!strcmp(key, "limits"))
            limits = m;
        else if (!strcmp(key, "requests"))
            requests = m;
        else if (!strcmp(key, "claims"))
            claims = m;
    }
    k->env_raw = json_object_get(c, "env");
    k->env_memo = 0;
    k->res_raw = res;
    k->limits_raw = limits;
    k->requests_raw = requests;
    k->limits = json_is_object(limits) ? limits : NULL;
    k->requests = json_is_object(requests) ? requests : NULL;
    k->claims = json_array_size(claims) > 0;
    tg_ctr_count_devices(k);
    const char *rp = init ? json_string_value(json_object_get(c, "restartPolicy")) : NULL;
    k->sidecar = rp && !strcmp(rp, "Always");
    const char *name = json_string_value(json_object_get(c, "name"));
    k->name = name ? name : fallback_name;
    return 0;
}

int tg_template_add_containers(struct tg_eval *ev, struct tg_template *t)
{
    static const char *const lists[] = {"containers", "initContainers"};
    /* the spec's members the view keeps, with the two lists, in one read */
    tg_template_read_spec(t);
    json_t *raw[] = {t->containers_raw, t->init_containers_raw};
    for (size_t l = 0; l < 2; l++) {
        json_t *arr = tg_read_array(ev, raw[l], t->spec, &t->spec_path, lists[l]);
        struct tg_path lp, cp;
        size_t i;
        json_t *c;
        if (json_array_size(arr) == 0)
            continue; /* nothing to add: no path to build */
        tg_path_key(&lp, &t->spec_path, lists[l]);
        json_array_foreach (arr, i, c) {
            tg_path_index(&cp, &lp, i);
            if (json_is_null(c))
                continue;
            if (!json_is_object(c)) {
                if (ev)
                    tg_report(ev, TG_RULE_OBJECT_INVALID_FIELD, cp.field,
                              "must be a container object");
                continue;
            }
            if (tg_template_add_container(t, c, &cp, l == 1, "") < 0)
                return -ENOMEM;
        }
    }
    return 0;
}

int tg_template_read(struct tg_eval *ev, struct tg_template *t, json_t *parent,
                     const struct tg_path *ppath, const char *key)
{
    return tg_template_read_member(ev, t, parent, ppath, key, json_object_get(parent, key));
}

int tg_template_read_member(struct tg_eval *ev, struct tg_template *t, json_t *parent,
                            const struct tg_path *ppath, const char *key, json_t *raw)
{
    static const char *const keys[] = {"metadata", "spec"};
    json_t *m[2];
    tg_path_key(&t->path, ppath, key);
    json_t *tpl = tg_read_object(ev, raw, parent, ppath, key);
    /* a pod template holds metadata and spec: one walk over it, not two lookups */
    tg_members_named(tpl, keys, 2, m);
    t->meta = tg_read_object(ev, m[0], tpl, &t->path, "metadata");
    t->spec = tg_read_object(ev, m[1], tpl, &t->path, "spec");
    tg_path_key(&t->spec_path, &t->path, "spec");
    return tg_template_add_containers(ev, t);
}

int tg_template_set_operator_env(struct tg_template *t, const char *name, const char *value,
                                 const char *field)
{
    if (!t->operator_env && !(t->operator_env = json_array()))
        return -ENOMEM;
    json_t *e = json_pack("{s:s, s:s}", "name", name, "field", field ? field : "");
    if (!e || (value && json_object_set_new(e, "value", json_string(value))) ||
        json_array_append_new(t->operator_env, e))
        return -ENOMEM;
    return 0;
}

long long tg_job_spec_pods(struct tg_eval *ev, json_t *job_spec, const struct tg_path *path)
{
    long long par = 1, comp = 0;
    int gp = tg_get_int(ev, job_spec, path, "parallelism", &par);
    int gc = tg_get_int(ev, job_spec, path, "completions", &comp);
    if (gp < 0 || gc < 0 || (gp == 1 && par < 0) || (gc == 1 && comp < 0))
        return -1;
    if (gp == 0)
        par = 1;
    if (gc == 0)
        comp = par;
    return par < comp ? par : comp;
}

/* meta, spec: the object's metadata and spec as json_object_get answers them */
static int decode_pod(struct tg_eval *ev, struct tg_workload *wl, json_t *meta, json_t *spec)
{
    struct tg_path root;
    struct tg_template *t = tg_workload_add_template(wl);
    if (!t)
        return -ENOMEM;
    tg_path_root(&root);
    t->role = TG_ROLE_POD;
    t->role_name = "Pod";
    t->replicas = 1;
    t->path = root;
    t->meta = tg_read_object(ev, meta, wl->obj, &root, "metadata");
    t->spec = tg_read_object(ev, spec, wl->obj, &root, "spec");
    tg_path_key(&t->spec_path, &root, "spec");
    return tg_template_add_containers(ev, t);
}

/* raw: the member role of specs as json_object_get answers it; i: 0 Launcher, 1 Worker */
static int decode_replica(struct tg_eval *ev, struct tg_workload *wl, json_t *specs,
                          const struct tg_path *sp, const char *role, json_t *raw, size_t i,
                          struct tg_template **out)
{
    static const char *const keys[] = {"replicas", "restartPolicy", "template"};
    struct tg_mpi *m = &wl->mpi;
    struct tg_path rp;
    json_t *rs = tg_read_object(ev, raw, specs, sp, role), *v[3];
    *out = NULL;
    if (!rs)
        return 0;
    struct tg_template *t = tg_workload_add_template(wl);
    if (!t)
        return -ENOMEM;
    tg_path_key(&rp, sp, role);
    bool launcher = i == 0;
    t->role = launcher ? TG_ROLE_LAUNCHER : TG_ROLE_WORKER;
    t->role_name = launcher ? "Launcher" : "Worker";
    /* a replica spec holds these three (and little else): one walk, not a lookup each */
    tg_members_named(rs, keys, 3, v);
    m->replicas_raw[i] = v[0];
    m->restart_policy_raw[i] = v[1];
    long long n;
    int got = tg_read_int(ev, v[0], rs, &rp, "replicas", &n);
    t->replicas_set = got != 0;
    /* Operator defaults (docs/references.md#ref-mpi-replica-defaults): Launcher 1, Worker 0. */
    t->replicas = got == 1 ? n : got == 0 ? (launcher ? 1 : 0) : -1;
    int rc = tg_template_read_member(ev, t, rs, &rp, "template", v[2]);
    if (rc == 0)
        *out = t;
    return rc;
}

static int decode_mpijob(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                         const struct tg_path *sp, const char *version)
{
    struct tg_mpi *m = &wl->mpi;
    struct tg_path p;
    long long n;
    bool b;
    int rc;
    /* the members of spec read here in one walk over it (a few members), not a lookup each */
    static const char *const keys[] = {"slotsPerWorker", "runLauncherAsWorker", "mpiImplementation",
                                       "runPolicy", "mpiReplicaSpecs"};
    json_t *v[5];
    tg_members_named(spec, keys, 5, v);
    m->v1 = version && !strcmp(version, "v1");
    m->slots_per_worker = 1;
    int got = tg_read_int(ev, v[0], spec, sp, "slotsPerWorker", &n);
    m->slots_set = got != 0;
    if (got == 1)
        m->slots_per_worker = n;
    else if (got < 0)
        m->slots_per_worker = -1;
    /* kubeflow.org/v1 (training-operator) has no runLauncherAsWorker: ignored
     * (docs/references.md#ref-trainingop-mpijob-fields). */
    if (tg_read_bool(ev, v[1], spec, sp, "runLauncherAsWorker", &b) == 1 && !m->v1)
        m->run_launcher_as_worker = b;
    const char *impl = tg_read_string(ev, v[2], spec, sp, "mpiImplementation");
    m->implementation = impl ? impl : "OpenMPI";
    json_t *rp = tg_read_object(ev, v[3], spec, sp, "runPolicy");
    /* runPolicy.schedulingPolicy.minAvailable, read without paths; they are built (and the two
     * read again through the getters) only to report a wrong type */
    json_t *sraw = json_object_get(rp, "schedulingPolicy");
    json_t *sched = json_is_object(sraw) ? sraw : NULL;
    got = tg_int_value(json_object_get(sched, "minAvailable"), &n);
    if (tg_wrong_type(sraw, JSON_OBJECT) || got < 0) {
        tg_path_key(&p, sp, "runPolicy");
        sched = tg_get_object(ev, rp, &p, "schedulingPolicy");
        tg_path_key(&p, &p, "schedulingPolicy");
        got = tg_get_int(ev, sched, &p, "minAvailable", &n);
    }
    if (got == 1) {
        m->has_min_available = true;
        m->min_available = n;
    }
    json_t *specs = tg_read_object(ev, v[4], spec, sp, "mpiReplicaSpecs");
    tg_path_key(&p, sp, "mpiReplicaSpecs");
    /* both replica specs in one walk over mpiReplicaSpecs, not four lookups */
    static const char *const roles[] = {"Launcher", "Worker"};
    json_t *rs[2];
    tg_members_named(specs, roles, 2, rs);
    m->launcher_spec = json_is_object(rs[0]) ? rs[0] : NULL;
    m->worker_spec = json_is_object(rs[1]) ? rs[1] : NULL;
    if ((rc = decode_replica(ev, wl, specs, &p, "Launcher", rs[0], 0, &m->launcher)) < 0)
        return rc;
    struct tg_template *worker;
    if ((rc = decode_replica(ev, wl, specs, &p, "Worker", rs[1], 1, &worker)) < 0)
        return rc;
    /* realloc may have moved the launcher: take both pointers after the last add. */
    m->launcher = NULL;
    m->worker = NULL;
    for (size_t i = 0; i < wl->ntpl; i++) {
        if (wl->tpl[i].role == TG_ROLE_LAUNCHER)
            m->launcher = &wl->tpl[i];
        else if (wl->tpl[i].role == TG_ROLE_WORKER)
            m->worker = &wl->tpl[i];
    }
    (void)worker;
    return 0;
}

static int decode_nodeset(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                          const struct tg_path *sp)
{
    struct tg_nodeset *ns = &wl->ns;
    long long n;
    const char *mode = tg_get_string(ev, spec, sp, "scalingMode");
    ns->scaling_mode_set = mode != NULL;
    ns->scaling_mode = mode ? mode : "StatefulSet";
    int got = tg_get_int(ev, spec, sp, "replicas", &n);
    ns->has_replicas = got == 1;
    ns->replicas = got == 1 ? n : 1;
    ns->controller_ref = tg_get_object(ev, spec, sp, "controllerRef");
    ns->slurmd = tg_get_object(ev, spec, sp, "slurmd");
    if (wl->kind == TG_KIND_NODESET_BAD)
        return 0;
    struct tg_template *t = tg_workload_add_template(wl);
    if (!t)
        return -ENOMEM;
    t->role = TG_ROLE_SLURMD;
    t->role_name = "slurmd";
    t->replicas_set = got == 1;
    /* DaemonSet mode: one pod per matching node, unknown at admission. */
    t->replicas = strcmp(ns->scaling_mode, "DaemonSet") ? ns->replicas : -1;
    tg_path_key(&t->path, sp, "template");
    json_t *tpl = tg_get_object(ev, spec, sp, "template");
    t->meta = tg_get_object(ev, tpl, &t->path, "metadata");
    t->spec = tg_get_object(ev, tpl, &t->path, "spec");
    tg_path_key(&t->spec_path, &t->path, "spec");
    if (ns->slurmd) {
        /* spec.slurmd becomes the container named slurmd
         * (docs/references.md#ref-slinky-slurmd-container). */
        struct tg_path cp;
        tg_path_key(&cp, sp, "slurmd");
        if (tg_template_add_container(t, ns->slurmd, &cp, false, "slurmd") < 0)
            return -ENOMEM;
    }
    return tg_template_add_containers(ev, t);
}

static int decode_vcjob(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                        const struct tg_path *sp)
{
    struct tg_vcjob *vc = &wl->vc;
    struct tg_path tp, ip;
    long long n;
    size_t i;
    json_t *task;
    if (tg_get_int(ev, spec, sp, "minAvailable", &n) == 1) {
        vc->has_min_available = true;
        vc->min_available = n;
    }
    vc->plugins = tg_get_object(ev, spec, sp, "plugins");
    vc->mpi_plugin = vc->plugins && json_object_get(vc->plugins, "mpi");
    const char *sched = tg_get_string(ev, spec, sp, "schedulerName");
    vc->scheduler_name = sched ? sched : "";
    vc->tasks = tg_get_array(ev, spec, sp, "tasks");
    tg_path_key(&tp, sp, "tasks");
    json_array_foreach (vc->tasks, i, task) {
        tg_path_index(&ip, &tp, i);
        if (!json_is_object(task)) {
            if (ev)
                tg_report(ev, TG_RULE_OBJECT_INVALID_FIELD, ip.field, "must be a task object");
            continue;
        }
        struct tg_template *t = tg_workload_add_template(wl);
        if (!t)
            return -ENOMEM;
        const char *name = tg_get_string(ev, task, &ip, "name");
        t->role = TG_ROLE_TASK;
        t->role_name = name ? name : "";
        int got = tg_get_int(ev, task, &ip, "replicas", &n);
        t->replicas_set = got != 0;
        t->replicas = got == 1 ? n : got == 0 ? 0 : -1;
        int rc = tg_template_read(ev, t, task, &ip, "template");
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int decode_podgroup(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                           const struct tg_path *sp)
{
    long long n;
    if (tg_get_int(ev, spec, sp, "minMember", &n) == 1) {
        wl->pg.has_min_member = true;
        wl->pg.min_member = n;
    }
    wl->pg.min_task_member = tg_get_object(ev, spec, sp, "minTaskMember");
    return 0;
}

/* ---- Karpenter NodePool (karpenter.sh/v1) ---------------------------------------------------- */

static struct tg_np_req *add_np_req(struct tg_nodepool *np)
{
    struct tg_np_req *v = realloc(np->reqs, (np->nreqs + 1) * sizeof(*v));
    if (!v)
        return NULL;
    np->reqs = v;
    struct tg_np_req *r = &v[np->nreqs++];
    memset(r, 0, sizeof(*r));
    return r;
}

/* requirements[i]: key, operator and the string values (others reported and left out). */
static int read_np_requirement(struct tg_eval *ev, struct tg_nodepool *np, json_t *item,
                               const struct tg_path *ip)
{
    struct tg_path vp, ep;
    size_t i;
    json_t *v;
    if (!json_is_object(item)) {
        if (ev)
            tg_report(ev, TG_RULE_OBJECT_INVALID_FIELD, ip->field, "must be a requirement object");
        return 0;
    }
    struct tg_np_req *r = add_np_req(np);
    if (!r)
        return -ENOMEM;
    r->path = *ip;
    const char *key = tg_get_string(ev, item, ip, "key");
    const char *op = tg_get_string(ev, item, ip, "operator");
    r->key = key ? key : "";
    r->op = op ? op : "";
    json_t *values = tg_get_array(ev, item, ip, "values");
    if (json_array_size(values) == 0)
        return 0;
    if (!(r->values = calloc(json_array_size(values), sizeof(*r->values))))
        return -ENOMEM;
    tg_path_key(&vp, ip, "values");
    json_array_foreach (values, i, v) {
        if (json_is_string(v)) {
            r->values[r->nvalues++] = json_string_value(v);
        } else if (ev && !json_is_null(v)) {
            tg_path_index(&ep, &vp, i);
            tg_report(ev, TG_RULE_OBJECT_INVALID_FIELD, ep.field, "must be a string");
        }
    }
    return 0;
}

/* spec.template.metadata.labels: each one is a requirement `key In [value]` for Karpenter. */
static int read_np_labels(struct tg_eval *ev, struct tg_nodepool *np, json_t *meta,
                          const struct tg_path *mp)
{
    struct tg_path lp;
    const char *key;
    json_t *v;
    json_t *labels = tg_get_object(ev, meta, mp, "labels");
    tg_path_key(&lp, mp, "labels");
    json_object_foreach (labels, key, v) {
        struct tg_path kp;
        tg_path_key(&kp, &lp, key);
        if (!json_is_string(v)) {
            if (ev && !json_is_null(v))
                tg_report(ev, TG_RULE_OBJECT_INVALID_FIELD, kp.field, "must be a string");
            continue;
        }
        struct tg_np_req *r = add_np_req(np);
        if (!r || !(r->values = calloc(1, sizeof(*r->values))))
            return -ENOMEM;
        r->key = key;
        r->op = "In";
        r->values[0] = json_string_value(v);
        r->nvalues = 1;
        r->label = true;
        r->path = kp;
    }
    return 0;
}

/* Reads a budget's reasons list into a mask; absent or null means every reason. */
static unsigned read_np_reasons(struct tg_eval *ev, json_t *budget, const struct tg_path *bp)
{
    static const char *const names[] = {"Underutilized", "Empty", "Drifted"};
    unsigned mask = 0;
    size_t i;
    json_t *v;
    json_t *reasons = tg_get_array(ev, budget, bp, "reasons");
    if (!reasons)
        return TG_NP_ALL_REASONS;
    json_array_foreach (reasons, i, v) {
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
            if (json_is_string(v) && !strcmp(json_string_value(v), names[k]))
                mask |= 1u << k;
        }
    }
    return mask;
}

static int read_np_budgets(struct tg_eval *ev, struct tg_nodepool *np, json_t *spec,
                           const struct tg_path *sp)
{
    struct tg_path dp, lp, bp;
    size_t i;
    json_t *b;
    json_t *disruption = tg_get_object(ev, spec, sp, "disruption");
    tg_path_key(&dp, sp, "disruption");
    json_t *budgets = tg_get_array(ev, disruption, &dp, "budgets");
    tg_path_key(&lp, &dp, "budgets");
    if (json_array_size(budgets) == 0)
        return 0;
    if (!(np->budgets = calloc(json_array_size(budgets), sizeof(*np->budgets))))
        return -ENOMEM;
    json_array_foreach (budgets, i, b) {
        tg_path_index(&bp, &lp, i);
        if (!json_is_object(b)) {
            if (ev && !json_is_null(b))
                tg_report(ev, TG_RULE_OBJECT_INVALID_FIELD, bp.field, "must be a budget object");
            continue;
        }
        struct tg_np_budget *out = &np->budgets[np->nbudgets++];
        const char *nodes = tg_get_string(ev, b, &bp, "nodes");
        out->nodes = nodes ? nodes : "10%";
        out->schedule = tg_get_string(ev, b, &bp, "schedule");
        out->duration = tg_get_string(ev, b, &bp, "duration");
        out->reasons = read_np_reasons(ev, b, &bp);
        out->path = bp;
    }
    return 0;
}

static int decode_nodepool(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                           const struct tg_path *sp)
{
    struct tg_nodepool *np = &wl->np;
    struct tg_path tp, mp, tsp, rp, ip;
    size_t i;
    json_t *item;
    int rc;
    json_t *tpl = tg_get_object(ev, spec, sp, "template");
    tg_path_key(&tp, sp, "template");
    json_t *meta = tg_get_object(ev, tpl, &tp, "metadata");
    tg_path_key(&mp, &tp, "metadata");
    json_t *tspec = tg_get_object(ev, tpl, &tp, "spec");
    tg_path_key(&tsp, &tp, "spec");
    json_t *reqs = tg_get_array(ev, tspec, &tsp, "requirements");
    tg_path_key(&rp, &tsp, "requirements");
    json_array_foreach (reqs, i, item) {
        tg_path_index(&ip, &rp, i);
        if (!json_is_null(item) && (rc = read_np_requirement(ev, np, item, &ip)) < 0)
            return rc;
    }
    if ((rc = read_np_labels(ev, np, meta, &mp)) < 0)
        return rc;
    np->expire_after = tg_get_string(ev, tspec, &tsp, "expireAfter");
    return read_np_budgets(ev, np, spec, sp);
}

/* ---- slurm-operator Controller (slinky.slurm.net/v1beta1) ------------------------------------ */

static int decode_controller(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                             const struct tg_path *sp)
{
    struct tg_slurm_controller *c = &wl->ctl;
    struct tg_path pp;
    bool b;
    if (tg_get_bool(ev, spec, sp, "external", &b) == 1)
        c->external = b;
    json_t *persistence = tg_get_object(ev, spec, sp, "persistence");
    tg_path_key(&pp, sp, "persistence");
    /* The CRD and the operator default enabled to true (internal/defaults/controller.go). */
    c->persistence = true;
    if (tg_get_bool(ev, persistence, &pp, "enabled", &b) == 1)
        c->persistence = b;
    const char *claim = tg_get_string(ev, persistence, &pp, "existingClaim");
    c->existing_claim = claim ? claim : "";
    c->extra_conf = tg_get_string(ev, spec, sp, "extraConf");
    const char *cluster = tg_get_string(ev, spec, sp, "clusterName");
    c->cluster_name = cluster && *cluster ? cluster : NULL;
    return 0;
}

/* Does one owner reference name a kind of the catalogue (any version: SPEC 13 identifies kinds by
 * group and kind), or a StatefulSet of a LeaderWorkerSet (its pods carry the LWS name label)? */
static bool owner_is_judged(json_t *ref, json_t *labels)
{
    const char *av = json_string_value(json_object_get(ref, "apiVersion"));
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    if (!av || !kind)
        return false;
    const char *slash = strchr(av, '/');
    size_t glen = slash ? (size_t)(slash - av) : 0;
    if (glen == 4 && !strncmp(av, "apps", 4) && !strcmp(kind, "StatefulSet"))
        return json_object_get(labels, LWS_NAME_LABEL) != NULL;
    for (size_t i = 0; i < tg_api_count; i++) {
        const struct tg_api_def *a = &tg_api_defs[i];
        if (a->resource[0] && strlen(a->group) == glen && !strncmp(a->group, av, glen) &&
            !strcmp(a->kind_name, kind))
            return true;
    }
    return false;
}

static bool judged_owner(json_t *owners, json_t *labels)
{
    size_t i;
    json_t *ref;
    json_array_foreach (owners, i, ref) {
        if (owner_is_judged(ref, labels))
            return true;
    }
    return false;
}

/* The kinds Kueue can hold by their suspend field, and where that field is (kubernetes-sigs/kueue
 * integrations: batch Job, JobSet, Kubeflow jobs with runPolicy.suspend, RayJob, RayCluster,
 * TrainJob). *path gets the field; false for other kinds. */
static bool suspend_field(enum tg_kind kind, json_t *spec, json_t **parent, const char **key)
{
    *key = "suspend";
    switch (kind) {
    case TG_KIND_BATCHJOB:
    case TG_KIND_JOBSET:
    case TG_KIND_RAYCLUSTER:
    case TG_KIND_RAYJOB:
    case TG_KIND_TRAINJOB:
        *parent = spec;
        return true;
    case TG_KIND_MPIJOB:
    case TG_KIND_PYTORCHJOB:
        *parent = json_object_get(spec, "runPolicy");
        return true;
    default:
        return false;
    }
}

/* gates: a pod spec's schedulingGates as written */
static bool kueue_gated(json_t *gates)
{
    size_t i;
    json_t *g;
    json_array_foreach (gates, i, g) {
        const char *n = json_string_value(json_object_get(g, "name"));
        if (n && (!strcmp(n, KUEUE_ADMISSION_GATE) || !strcmp(n, KUEUE_TOPOLOGY_GATE)))
            return true;
    }
    return false;
}

/* A label map of at most this many members is walked for the queue label. */
#define QUEUE_LABEL_WALK_MAX 4

/* SPEC 11 Kueue: queued (the label on the object's own metadata) and held. A Pod's gates are
 * read from its template (its spec is the object's), when the decoder made one. */
static void queue_state(struct tg_workload *wl, json_t *spec)
{
    static const char *const queue_key[] = {KUEUE_QUEUE_LABEL};
    json_t *parent = NULL, *q;
    const char *key;
    /* nearly every label map is small: walked for the key, not hashed */
    if (json_object_size(wl->labels) <= QUEUE_LABEL_WALK_MAX)
        tg_members_named(wl->labels, queue_key, 1, &q);
    else
        q = json_object_get(wl->labels, KUEUE_QUEUE_LABEL);
    wl->queued = json_is_string(q);
    if (wl->kind == TG_KIND_POD) {
        wl->queue_held = wl->ntpl > 0 && kueue_gated(tg_template_scheduling_gates(&wl->tpl[0]));
        return;
    }
    if (!wl->queued)
        return;
    if (!suspend_field(wl->kind, spec, &parent, &key)) {
        wl->queue_held = wl->kind == TG_KIND_LWS; /* Kueue gates its pods instead */
        return;
    }
    /* Kueue's webhook suspends every queued job at CREATE (pkg/controller/jobframework/defaults.go
     * ApplyDefaultForSuspend), whatever the manifest says. */
    wl->queue_held = wl->op == TG_OP_CREATE || json_is_true(json_object_get(parent, key));
}

/* The kinds of section 3 count their pods in one world. */
static void single_world(struct tg_workload *wl)
{
    for (size_t i = 0; i < wl->ntpl; i++) {
        if (wl->tpl[i].world_pods < 0)
            wl->tpl[i].world_pods = wl->tpl[i].replicas;
    }
}

static int decode_kind(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                       const struct tg_path *sp, const char *version, json_t *const *top)
{
    switch (wl->kind) {
    case TG_KIND_POD:
        return decode_pod(ev, wl, top[2], top[3]);
    case TG_KIND_MPIJOB:
        return decode_mpijob(ev, wl, spec, sp, version);
    case TG_KIND_NODESET:
    case TG_KIND_NODESET_BAD:
        return decode_nodeset(ev, wl, spec, sp);
    case TG_KIND_VCJOB:
        return decode_vcjob(ev, wl, spec, sp);
    case TG_KIND_PODGROUP:
        return decode_podgroup(ev, wl, spec, sp);
    case TG_KIND_BATCHJOB:
        return tg_decode_batchjob(ev, wl, spec, sp);
    case TG_KIND_JOBSET:
        return tg_decode_jobset(ev, wl, spec, sp);
    case TG_KIND_LWS:
        return tg_decode_lws(ev, wl, spec, sp);
    case TG_KIND_PYTORCHJOB:
        return tg_decode_pytorchjob(ev, wl, spec, sp);
    case TG_KIND_RAYCLUSTER:
        return tg_decode_raycluster(ev, wl, spec, sp);
    case TG_KIND_RAYJOB:
        return tg_decode_rayjob(ev, wl, spec, sp);
    case TG_KIND_TRAINJOB:
        return tg_decode_trainjob(ev, wl, spec, sp);
    case TG_KIND_TRAININGRUNTIME:
        return tg_decode_trainingruntime(ev, wl, spec, sp);
    case TG_KIND_NODEPOOL:
        return decode_nodepool(ev, wl, spec, sp);
    case TG_KIND_SLURM_CONTROLLER:
        return decode_controller(ev, wl, spec, sp);
    case TG_KIND_UNKNOWN:
    case TG_KIND_COUNT:
        break;
    }
    return 0;
}

int tg_workload_decode(struct tg_workload *wl, enum tg_kind kind, enum tg_op op, json_t *obj,
                       json_t *old_obj, struct tg_eval *ev)
{
    struct tg_path root, mp, sp;
    memset(wl, 0, sizeof(*wl));
    wl->kind = kind;
    wl->op = op;
    wl->obj = obj;
    wl->old_obj = old_obj;
    tg_path_root(&root);
    /* the members of the object and of its metadata in one walk over each (not a lookup each) */
    static const char *const top_keys[] = {"apiVersion", "kind", "metadata", "spec"};
    static const char *const meta_keys[] = {"name", "namespace", "annotations", "labels",
                                            "ownerReferences"};
    json_t *top[4], *mm[5];
    tg_members_named(obj, top_keys, 4, top);
    const char *av = json_string_value(top[0]);
    const char *kn = json_string_value(top[1]);
    wl->api_version = av ? av : "";
    wl->kind_name = kn ? kn : "";
    json_t *meta = json_is_object(top[2]) ? top[2] : NULL;
    if (tg_wrong_type(top[2], JSON_OBJECT))
        meta = tg_get_object(ev, obj, &root, "metadata"); /* reports it */
    tg_members_named(meta, meta_keys, 5, mm);
    json_t *rname = mm[0], *rns = mm[1], *rann = mm[2], *rlab = mm[3], *rown = mm[4];
    const char *name = json_string_value(rname), *ns = json_string_value(rns);
    wl->annotations = json_is_object(rann) ? rann : NULL;
    wl->labels = json_is_object(rlab) ? rlab : NULL;
    json_t *owners = json_is_array(rown) ? rown : NULL;
    if (tg_wrong_type(rname, JSON_STRING) || tg_wrong_type(rns, JSON_STRING) ||
        tg_wrong_type(rann, JSON_OBJECT) || tg_wrong_type(rlab, JSON_OBJECT) ||
        tg_wrong_type(rown, JSON_ARRAY)) {
        /* read again through the getters, which report at the metadata path */
        tg_path_key(&mp, &root, "metadata");
        name = tg_get_string(ev, meta, &mp, "name");
        ns = tg_get_string(ev, meta, &mp, "namespace");
        wl->annotations = tg_get_object(ev, meta, &mp, "annotations");
        wl->labels = tg_get_object(ev, meta, &mp, "labels");
        owners = tg_get_array(ev, meta, &mp, "ownerReferences");
    }
    wl->name = name ? name : "";
    wl->namespace = ns ? ns : "";
    wl->has_owner = json_array_size(owners) > 0;
    wl->judged_owner = judged_owner(owners, wl->labels);
    /* a Pod's decoder reads its spec itself, with its own path */
    if (kind == TG_KIND_POD)
        tg_path_root(&sp);
    else
        tg_path_key(&sp, &root, "spec");
    json_t *spec = kind == TG_KIND_POD ? NULL : tg_read_object(ev, top[3], obj, &root, "spec");
    const char *version = av && strchr(av, '/') ? strchr(av, '/') + 1 : av;
    int rc = decode_kind(ev, wl, spec, &sp, version, top);
    for (size_t i = 0; rc == 0 && i < wl->ntpl; i++) {
        if (!wl->tpl[i].spec_read) /* a template whose containers the decoder added itself */
            tg_template_read_spec(&wl->tpl[i]);
    }
    queue_state(wl, spec);
    if (rc == 0 && (kind == TG_KIND_POD || kind == TG_KIND_MPIJOB || kind == TG_KIND_NODESET ||
                    kind == TG_KIND_VCJOB))
        single_world(wl);
    return rc;
}

void tg_workload_release(struct tg_workload *wl)
{
    for (size_t i = 0; i < wl->ntpl; i++) {
        free(wl->tpl[i].containers);
        json_decref(wl->tpl[i].operator_env);
    }
    if (wl->tpl != wl->tpl_inline)
        free(wl->tpl);
    json_decref(wl->owned);
    wl->tpl = NULL;
    wl->ntpl = 0;
    wl->owned = NULL;
    for (size_t i = 0; i < wl->np.nreqs; i++)
        free(wl->np.reqs[i].values);
    free(wl->np.reqs);
    free(wl->np.budgets);
    memset(&wl->np, 0, sizeof(wl->np));
}

long long tg_workload_pod_count(const struct tg_workload *wl)
{
    long long total = 0;
    for (size_t i = 0; i < wl->ntpl; i++) {
        if (wl->tpl[i].replicas < 0)
            return -1;
        total += wl->tpl[i].replicas;
    }
    return total;
}

bool tg_templates_share_world(const struct tg_template *a, const struct tg_template *b)
{
    return a == b || a->every_world || b->every_world || a->world == b->world;
}

long long tg_template_world_size(const struct tg_workload *wl, const struct tg_template *t)
{
    long long total = 0;
    for (size_t i = 0; i < wl->ntpl; i++) {
        const struct tg_template *o = &wl->tpl[i];
        /* a template in every world joins t's world, but two worker groups of a Ray cluster do
         * not join each other through the head */
        bool in = o == t || o->every_world || (!t->every_world && o->world == t->world);
        if (!in)
            continue;
        if (o->world_pods < 0)
            return -1;
        total += o->world_pods;
    }
    return total;
}
