/* gang.c -- the gang.* rules: gang sizes (minAvailable, minMember, minTaskMember) against the pods
 * an MPIJob, PodGroup or Volcano Job creates, and the scheduler of a Pod that joins a PodGroup. */
#include <stdio.h>
#include <string.h>

#include "tg/obj.h"
#include "tg/pod.h"
#include "tg/policy.h"
#include "tg/registry.h"

/* Counts are int32 in every API read here; a larger value never reaches the API server, and
 * refusing it keeps the sums below free of overflow. */
#define GANG_COUNT_MAX 2147483647LL

/* Members of a gang are pods, never nodes (docs/references.md#ref-volcano-podgroup-min-member:
 * "members/tasks" of a PodGroup are pods; one node may run several). */

static bool count_ok(long long v)
{
    return v >= 0 && v <= GANG_COUNT_MAX;
}

/* gang.negative when v < 0. Returns true when it fired. */
static bool check_negative(struct tg_eval *ev, const char *field, const char *what, long long v)
{
    if (v >= 0)
        return false;
    tg_report(ev, TG_RULE_GANG_NEGATIVE, field,
              "%s %lld is negative: it counts pods and must be 0 or more", what, v);
    return true;
}

/* ---- MPIJob ------------------------------------------------------------------------------------
 * Members = Worker replicas + 1 launcher: the minMember the operator gives its PodGroup when
 * schedulingPolicy.minAvailable is unset (kubeflow/mpi-operator: pkg/controller/podgroup.go
 * calculateMinAvailable; docs/references.md#ref-mpi-min-available, #ref-mpi-gang-podgroup). With
 * runLauncherAsWorker the launcher is still one pod. Worker or Launcher replicas below 1 are
 * mpi.replicas (the operator refuses them); a negative one is also gang.negative (SPEC 4: "a
 * negative minAvailable, minMember or replicas"), and the gang size is then not compared. */
static void mpijob_negative_replicas(struct tg_eval *ev)
{
    static const char *const fields[] = {"spec.mpiReplicaSpecs.Launcher.replicas",
                                         "spec.mpiReplicaSpecs.Worker.replicas"};
    const struct tg_mpi *m = &ev->wl->mpi;
    for (size_t i = 0; i < 2; i++) {
        long long n = 0;
        /* the member as the decoder read it; a wrong type is its object.invalid-field */
        if (tg_int_value(m->replicas_raw[i], &n) == 1)
            check_negative(ev, fields[i], "replicas", n);
    }
}

static void gang_mpijob(struct tg_eval *ev)
{
    static const char field[] = "spec.runPolicy.schedulingPolicy.minAvailable";
    const struct tg_mpi *m = &ev->wl->mpi;
    long long workers = 0;
    mpijob_negative_replicas(ev);
    if (!m->has_min_available || check_negative(ev, field, "minAvailable", m->min_available))
        return;
    if (m->worker) {
        workers = m->worker->replicas;
        if (workers < 1 || workers > GANG_COUNT_MAX)
            return;
    }
    long long members = workers + 1, min = m->min_available;
    if (min > members) {
        tg_report(ev, TG_RULE_GANG_MIN_EXCEEDS_MEMBERS, field,
                  "%lld > the %lld pods this MPIJob creates (%lld workers + launcher): the gang "
                  "waits for pods that never exist, so it never schedules; set it to %lld or "
                  "remove it",
                  min, members, workers, members);
    } else if (min < members) {
        tg_report(ev, TG_RULE_GANG_PARTIAL_START, field,
                  "%lld < the %lld pods this MPIJob creates (%lld workers + launcher): the gang "
                  "may start part of them and MPI ranks hang waiting for the rest; set it to %lld "
                  "or remove it",
                  min, members, workers, members);
    }
}

/* ---- PyTorchJob --------------------------------------------------------------------------------
 * Members = Master + Worker replicas: the minMember training-operator gives the PodGroup when
 * runPolicy.schedulingPolicy.minAvailable is unset (kubeflow/training-operator:
 * pkg/controller.v1/common/job.go, v1.9.3). A smaller minimum is allowed: torch elastic jobs
 * start with part of their pods (SPEC 11: gang minimums). */
static void gang_pytorchjob(struct tg_eval *ev)
{
    static const char field[] = "spec.runPolicy.schedulingPolicy.minAvailable";
    static const char *const types[] = {"Master", "Worker"};
    const struct tg_pytorch *pt = &ev->wl->pt;
    json_t *specs[] = {pt->master_spec, pt->worker_spec};
    long long members = 0, n;
    bool known = true;
    for (size_t i = 0; i < 2; i++) {
        struct tg_path p, rp;
        if (!specs[i])
            continue;
        tg_path_root(&p);
        tg_path_key(&p, &p, "spec");
        tg_path_key(&p, &p, "pytorchReplicaSpecs");
        tg_path_key(&p, &p, types[i]);
        tg_path_key(&rp, &p, "replicas");
        int got = tg_get_int(NULL, specs[i], &p, "replicas", &n);
        if (got == 1 && check_negative(ev, rp.field, "replicas", n))
            known = false;
        else if (got == 1 && count_ok(n))
            members += n;
        else if (got == 0)
            members += 1; /* the operator's default */
        else
            known = false;
    }
    if (!pt->has_min_available || check_negative(ev, field, "minAvailable", pt->min_available))
        return;
    if (known && pt->min_available > members)
        tg_report(ev, TG_RULE_GANG_MIN_EXCEEDS_MEMBERS, field,
                  "%lld > the %lld pods this PyTorchJob creates (Master + Worker replicas): the "
                  "gang waits for pods that never exist, so it never schedules; set it to %lld "
                  "or remove it",
                  pt->min_available, members, members);
}

/* ---- Volcano Job -------------------------------------------------------------------------------
 * Members = the sum of task replicas (docs/references.md#ref-volcano-job-min-available). Volcano's
 * job webhook defaults a task's minAvailable to its replicas and a job minAvailable of 0 (or unset)
 * to the sum of the task minimums (docs/references.md#ref-volcano-job-defaults, volcano-sh/volcano:
 * pkg/webhooks/admission/jobs/mutate/mutate_job.go); the job PodGroup gets minMember = job
 * minAvailable and minTaskMember = task minimums (#ref-volcano-job-podgroup). partitionPolicy
 * minimums are not modelled: they can only hide a partial start, never invent one. */
struct vc_totals {
    long long members;   /* sum of task replicas */
    long long task_min;  /* sum of task minimums after the webhook defaults */
    bool members_known;  /* every task's replicas usable */
    bool task_min_known; /* every task's minimum usable */
};

/* One task: gang.negative, a task minAvailable above its replicas, and the totals. */
static void vc_task(struct tg_eval *ev, json_t *task, const struct tg_path *ip, struct vc_totals *t)
{
    struct tg_path rp, mp;
    long long rep = 0, min = 0;
    const char *name = tg_get_string(NULL, task, ip, "name");
    tg_path_key(&rp, ip, "replicas");
    tg_path_key(&mp, ip, "minAvailable");
    int got_r = tg_get_int(ev, task, ip, "replicas", &rep);
    int got_m = tg_get_int(ev, task, ip, "minAvailable", &min);
    bool rep_ok = got_r >= 0 && count_ok(rep); /* absent replicas: 0 pods */
    if (got_r == 1)
        check_negative(ev, rp.field, "replicas", rep);
    if (got_m == 1)
        check_negative(ev, mp.field, "minAvailable", min);
    if (rep_ok)
        t->members += rep;
    else
        t->members_known = false;
    if (got_m == 0) {
        if (!rep_ok) {
            t->task_min_known = false;
            return;
        }
        min = rep;
    } else if (got_m < 0 || !count_ok(min)) {
        t->task_min_known = false;
        return;
    }
    t->task_min += min;
    if (got_m == 1 && rep_ok && min > rep) {
        tg_report(ev, TG_RULE_GANG_MIN_EXCEEDS_MEMBERS, mp.field,
                  "task %s: %lld is above its %lld replicas: the gang waits for pods that never "
                  "exist, so the job never schedules; set it to %lld or less",
                  name && *name ? name : "(unnamed)", min, rep, rep);
    }
}

/* An MPI Job (mpi plugin) whose minAvailable is defaulted from task minimums below replicas: the
 * partial start is reported on each such task minimum, where the user can fix it. */
static void vc_partial_tasks(struct tg_eval *ev, const struct tg_path *tp, long long members,
                             long long task_min)
{
    struct tg_path ip, mp;
    size_t i;
    json_t *task;
    json_array_foreach (ev->wl->vc.tasks, i, task) {
        long long rep = 0, min;
        tg_path_index(&ip, tp, i);
        tg_path_key(&mp, &ip, "minAvailable");
        if (tg_get_int(NULL, task, &ip, "minAvailable", &min) != 1 ||
            tg_get_int(NULL, task, &ip, "replicas", &rep) < 0 || min < 0 || min >= rep)
            continue;
        const char *name = tg_get_string(NULL, task, &ip, "name");
        tg_report(ev, TG_RULE_GANG_PARTIAL_START, mp.field,
                  "task %s: %lld < its %lld replicas, and with job minAvailable unset the gang "
                  "of this MPI Job is %lld of its %lld pods: ranks hang waiting for the rest; set "
                  "it to %lld or remove it",
                  name && *name ? name : "(unnamed)", min, rep, task_min, members, rep);
    }
}

static void gang_vcjob(struct tg_eval *ev)
{
    static const char field[] = "spec.minAvailable";
    const struct tg_vcjob *vc = &ev->wl->vc;
    struct vc_totals t = {0, 0, true, true};
    struct tg_path root, sp, tp, ip;
    size_t i;
    json_t *task;
    tg_path_root(&root);
    tg_path_key(&sp, &root, "spec");
    tg_path_key(&tp, &sp, "tasks");
    json_array_foreach (vc->tasks, i, task) {
        tg_path_index(&ip, &tp, i);
        if (json_is_object(task))
            vc_task(ev, task, &ip, &t);
        else
            t.members_known = t.task_min_known = false; /* reported by the workload view */
    }
    long long min = vc->min_available;
    bool explicit_min = vc->has_min_available && min != 0; /* 0 is defaulted like unset */
    if (vc->has_min_available && check_negative(ev, field, "minAvailable", min))
        return;
    if (!t.members_known || !vc->tasks)
        return;
    if (explicit_min && min > t.members) {
        tg_report(ev, TG_RULE_GANG_MIN_EXCEEDS_MEMBERS, field,
                  "%lld > the %lld pods of this Job (sum of task replicas): the gang waits for "
                  "pods that never exist, so it never schedules; set it to %lld or less",
                  min, t.members, t.members);
        return;
    }
    /* Volcano treats the job as ready at its minimum and skips the task minimums when the job
     * minimum is below their sum, by design (docs/references.md#ref-volcano-task-minimums-skipped):
     * a warning, never a deny (SPEC 10). */
    if (explicit_min && t.task_min_known && min < t.task_min)
        tg_report_capped(ev, TG_RULE_GANG_TASK_MINIMUMS_SKIPPED, TG_ACTION_WARN, field,
                         "%lld is below the %lld pods the task minimums add up to: Volcano then "
                         "treats the job as ready at %lld pods and skips every task minimum; raise "
                         "minAvailable to %lld or lower the task minimums",
                         min, t.task_min, min, t.task_min);
    if (!vc->mpi_plugin)
        return;
    /* SPEC section 9: a Volcano Job is an all-or-nothing MPI workload when it uses the mpi plugin.
     */
    if (explicit_min && min < t.members) {
        tg_report(ev, TG_RULE_GANG_PARTIAL_START, field,
                  "%lld < the %lld pods of this MPI Job (mpi plugin): the gang may start part of "
                  "them and MPI ranks hang waiting for the rest; set it to %lld",
                  min, t.members, t.members);
    } else if (!explicit_min && t.task_min_known && t.task_min < t.members) {
        vc_partial_tasks(ev, &tp, t.members, t.task_min);
    }
}

/* ---- PodGroup ----------------------------------------------------------------------------------
 * A PodGroup alone says nothing of how many pods will join it, so its only member count is its
 * own minTaskMember. Volcano skips every per-task minimum when minMember is below their sum
 * (volcano-sh/volcano: pkg/scheduler/api/job_info.go CheckTaskValid, CheckTaskReady), by design:
 * gang.task-minimums-skipped on spec.minTaskMember, with the numbers (a warning, SPEC 10). */
static void gang_podgroup(struct tg_eval *ev)
{
    const struct tg_podgroup *pg = &ev->wl->pg;
    struct tg_path root, sp, mp, kp;
    const char *key;
    json_t *v;
    long long sum = 0;
    bool known = true;
    tg_path_root(&root);
    tg_path_key(&sp, &root, "spec");
    tg_path_key(&mp, &sp, "minTaskMember");
    if (pg->has_min_member) {
        tg_path_key(&kp, &sp, "minMember");
        check_negative(ev, kp.field, "minMember", pg->min_member);
    }
    json_object_foreach (pg->min_task_member, key, v) {
        long long n = 0;
        if (json_is_null(v))
            continue; /* null counts as absent */
        tg_path_key(&kp, &mp, key);
        int got = tg_get_int(ev, pg->min_task_member, &mp, key, &n);
        if (got < 0 || !count_ok(n)) {
            if (got == 1)
                check_negative(ev, kp.field, "minTaskMember", n);
            known = false;
            continue;
        }
        sum += n;
    }
    if (known && pg->has_min_member && count_ok(pg->min_member) && sum > pg->min_member) {
        tg_report_capped(ev, TG_RULE_GANG_TASK_MINIMUMS_SKIPPED, TG_ACTION_WARN, mp.field,
                         "the entries add up to %lld pods, above minMember %lld: Volcano then "
                         "treats the group as ready at %lld pods and skips every per-task "
                         "minimum; set minMember to %lld or more, or lower the task minimums",
                         sum, pg->min_member, pg->min_member, sum);
    }
}

/* ---- Pod ---------------------------------------------------------------------------------------
 * A Pod joins a PodGroup with the annotation scheduling.k8s.io/group-name, which only a Volcano
 * scheduler reads (docs/references.md#ref-volcano-group-annotation; volcano-sh/volcano:
 * pkg/scheduler/api/job_info.go getJobID). The newer scheduling.volcano.sh/group-name also names a
 * group (getJobID ignores it, but it shows the same intent), so either one makes the Pod a gang
 * member here. */
static bool is_volcano_scheduler(const struct tg_policy *p, const char *name)
{
    if (!p || p->nvolcano == 0)
        return !strcmp(name, "volcano");
    for (size_t i = 0; i < p->nvolcano; i++) {
        if (p->volcano_schedulers[i] && !strcmp(p->volcano_schedulers[i], name))
            return true;
    }
    return false;
}

/* An annotation map of at most this many members is walked for the group keys. */
#define GROUP_WALK_MAX 8

static void gang_pod(struct tg_eval *ev)
{
    static const char *const keys[] = {"scheduling.k8s.io/group-name",
                                       "scheduling.volcano.sh/group-name"};
    const struct tg_workload *wl = ev->wl;
    struct tg_path root, ap;
    const char *group = NULL, *key = NULL;
    json_t *ann[2];
    /* both keys in one walk over a small annotation map (looked up in a larger one); the path
     * is built, and the member read through the getter, only to report a wrong type */
    if (json_object_size(wl->annotations) <= GROUP_WALK_MAX) {
        tg_members_named(wl->annotations, keys, 2, ann);
    } else {
        ann[0] = json_object_get(wl->annotations, keys[0]);
        ann[1] = json_object_get(wl->annotations, keys[1]);
    }
    for (size_t i = 0; i < 2 && !group; i++) {
        const char *g = json_string_value(ann[i]);
        if (tg_wrong_type(ann[i], JSON_STRING)) {
            tg_path_root(&root);
            tg_path_key(&ap, &root, "metadata");
            tg_path_key(&ap, &ap, "annotations");
            g = tg_get_string(ev, wl->annotations, &ap, keys[i]); /* reports it */
        }
        if (g && *g) {
            group = g;
            key = keys[i];
        }
    }
    if (!group || wl->ntpl == 0)
        return;
    const struct tg_template *t = &wl->tpl[0];
    json_t *raw = json_object_get(t->spec, "schedulerName");
    const char *sched = tg_get_string(ev, t->spec, &t->spec_path, "schedulerName");
    if (raw && !json_is_null(raw) && !sched)
        return; /* not a string: object.invalid-field says so */
    if (sched && *sched && is_volcano_scheduler(ev->policy, sched))
        return;
    const char *want = ev->policy && ev->policy->nvolcano && ev->policy->volcano_schedulers[0]
                           ? ev->policy->volcano_schedulers[0]
                           : "volcano";
    char seen[96];
    if (sched && *sched)
        snprintf(seen, sizeof(seen), "\"%s\"", sched);
    else
        snprintf(seen, sizeof(seen), "unset (default-scheduler)");
    tg_report(ev, TG_RULE_GANG_SCHEDULER_MISMATCH, "spec.schedulerName",
              "the Pod joins PodGroup %s (%s) but schedulerName is %s, which ignores the gang: set "
              "schedulerName: %s",
              group, key, seen, want);
}

int tg_rules_gang(struct tg_eval *ev)
{
    /* An UPDATE of metadata only (labels, finalizers) is not judged again, as for efa/zone/mpi:
     * an object admitted before (audit mode, an older policy) must stay deletable. */
    if (tg_workload_spec_unchanged(ev->wl))
        return 0;
    switch (ev->wl->kind) {
    case TG_KIND_POD:
        gang_pod(ev);
        break;
    case TG_KIND_MPIJOB:
        gang_mpijob(ev);
        break;
    case TG_KIND_VCJOB:
        gang_vcjob(ev);
        break;
    case TG_KIND_PYTORCHJOB:
        gang_pytorchjob(ev);
        break;
    case TG_KIND_PODGROUP:
        gang_podgroup(ev);
        break;
    default:
        break;
    }
    return 0;
}
