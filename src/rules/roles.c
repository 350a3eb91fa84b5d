/* roles.c -- launchers and rank hosts: which pod templates run ranks, and how the ranks get their
 * environment (include/tg/roles.h). */
#include <errno.h>
#include <string.h>

#include "tg/launch_memo.h"
#include "tg/obj.h"
#include "tg/pod.h"
#include "tg/roles.h"

#define RES_NEURONCORE "aws.amazon.com/neuroncore"
#define RES_NEURONDEVICE "aws.amazon.com/neurondevice"

enum tg_mpi_impl tg_workload_mpi_impl(const struct tg_workload *wl)
{
    enum tg_mpi_impl impl = TG_MPI_OPENMPI;
    if (wl->kind == TG_KIND_MPIJOB && !wl->mpi.v1 &&
        tg_mpi_impl_parse(wl->mpi.implementation, &impl) < 0)
        impl = TG_MPI_OPENMPI;
    return impl;
}

static const char *label(const struct tg_template *t, const char *key)
{
    return json_string_value(json_object_get(json_object_get(t->meta, "labels"), key));
}

static bool label_is(const struct tg_template *t, const char *key, const char *value)
{
    const char *v = label(t, key);
    return v && !strcmp(v, value);
}

/* Any container of t sets env name (to value, when value is not NULL). */
static bool env_is(const struct tg_template *t, const char *name, const char *value)
{
    for (size_t i = 0; i < t->ncontainers; i++) {
        bool defined;
        const char *v = tg_ctr_env_value(&t->containers[i], name, &defined);
        if (defined && (!value || (v && !strcmp(v, value))))
            return true;
    }
    return false;
}

static bool count_above_zero(const struct tg_template *t, const char *res)
{
    long long n = 0;
    int rc = tg_template_count_valid(t, res, &n);
    return rc == 2 || (rc == 1 && n > 0);
}

bool tg_template_has_devices(const struct tg_template *t)
{
    return tg_template_requests_efa(t) || count_above_zero(t, TG_RES_GPU) ||
           count_above_zero(t, TG_RES_NEURON) || count_above_zero(t, RES_NEURONCORE) ||
           count_above_zero(t, RES_NEURONDEVICE) || tg_template_uses_claims(t);
}

/* training-operator's isGPULauncher: a launcher container's limits name a GPU resource
 * (kubeflow/training-operator pkg/controller.v1/mpi/mpijob.go; docs/references.md#ref-trainingop):
 * such a launcher is written into the hostfile and runs ranks. */
static bool gpu_launcher(const struct tg_template *t)
{
    for (size_t i = 0; i < t->ncontainers; i++) {
        json_t *limits =
            json_object_get(json_object_get(t->containers[i].c, "resources"), "limits");
        const char *key;
        json_t *v;
        json_object_foreach (limits, key, v) {
            if (strstr(key, "gpu"))
                return true;
        }
    }
    return false;
}

/* Does a launch of template t name the hosts its ranks run on (so they are not local)? */
static int names_other_hosts(struct tg_eval *ev, const struct tg_template *t, bool *yes)
{
    static const char *const hostfile_env[] = {
        "OMPI_MCA_orte_default_hostfile", "I_MPI_HYDRA_HOST_FILE", "HYDRA_HOST_FILE", "MPI_HOST"};
    /* only an MPIJob names its MPI implementation: read the lines of other kinds with both
     * grammars (mpiexec.hydra -f is hydra's hostfile option) */
    static const enum tg_mpi_impl grammars[] = {TG_MPI_OPENMPI, TG_MPI_INTEL};
    size_t ng = ev->wl->kind == TG_KIND_MPIJOB ? 1 : 2;
    *yes = false;
    for (size_t i = 0; i < t->ncontainers && !*yes; i++) {
        const struct tg_container *c = &t->containers[i];
        bool env_hosts = false;
        for (size_t k = 0; k < sizeof(hostfile_env) / sizeof(hostfile_env[0]); k++) {
            bool defined;
            tg_env_value(c->c, hostfile_env[k], &defined);
            env_hosts |= defined;
        }
        for (size_t g = 0; g < ng && !*yes; g++) {
            const struct tg_launch *l;
            int rc =
                tg_eval_launch(ev, c, ng == 1 ? tg_workload_mpi_impl(ev->wl) : grammars[g], &l);
            if (rc < 0)
                return rc;
            for (size_t r = 0; r < l->nruns && !*yes; r++)
                *yes = l->runs[r].hosts || l->runs[r].hostfile || env_hosts;
        }
    }
    return 0;
}

/* The marks operators put on the launcher Pods they create (docs/references.md:
 * ref-mpi-launcher-container, ref-trainingop, ref-volcano-mpi-plugin, ref-trainer). */
static bool operator_launcher(const struct tg_template *t)
{
    if (label_is(t, "training.kubeflow.org/job-role", "launcher") ||
        label_is(t, "training.kubeflow.org/replica-type", "launcher") ||
        env_is(t, "K_MPI_JOB_ROLE", "launcher") || env_is(t, "OMPI_MCA_plm_rsh_agent", NULL) ||
        env_is(t, "MPI_HOST", NULL))
        return true;
    /* Kubeflow Trainer: the launcher job's container is named launcher (node when the launcher
     * runs ranks too, runLauncherAsNode) */
    if (label_is(t, "jobset.sigs.k8s.io/replicatedjob-name", "launcher")) {
        for (size_t i = 0; i < t->ncontainers; i++) {
            if (!strcmp(t->containers[i].name, "launcher"))
                return true;
        }
    }
    return false;
}

/* Does any container of t run an MPI launcher? */
static int runs_launcher(struct tg_eval *ev, const struct tg_template *t, bool *yes)
{
    *yes = false;
    for (size_t i = 0; i < t->ncontainers && !*yes; i++) {
        const struct tg_launch *l;
        int rc = tg_eval_launch(ev, &t->containers[i], tg_workload_mpi_impl(ev->wl), &l);
        if (rc < 0)
            return rc;
        *yes = l->nruns > 0;
    }
    return 0;
}

/* SPEC 11 launcher-like roles of the other workload kinds, as their decoders name them: a Ray
 * head, a RayJob submitter, a Trainer initializer or MPI launcher, an LWS leader template. Without
 * a GPU, a Neuron device or EFA they only start or coordinate others. */
static bool coordinator_role(const struct tg_template *t)
{
    switch (t->role) {
    case TG_ROLE_LAUNCHER:
    case TG_ROLE_HEAD:
    case TG_ROLE_SUBMITTER:
    case TG_ROLE_INITIALIZER:
    case TG_ROLE_LEADER:
        return true;
    default:
        return false;
    }
}

int tg_template_launcher_only(struct tg_eval *ev, const struct tg_template *t)
{
    const struct tg_workload *wl = ev->wl;
    bool yes = false;
    int rc;
    switch (wl->kind) {
    case TG_KIND_MPIJOB:
        return t->role == TG_ROLE_LAUNCHER && wl->mpi.worker && !wl->mpi.run_launcher_as_worker &&
               !(wl->mpi.v1 && gpu_launcher(t));
    case TG_KIND_VCJOB:
        if (wl->ntpl < 2)
            return 0;
        rc = runs_launcher(ev, t, &yes);
        return rc < 0 ? rc : yes;
    case TG_KIND_POD:
        if (tg_template_has_devices(t))
            return 0;
        if (operator_launcher(t))
            return 1;
        rc = names_other_hosts(ev, t, &yes);
        return rc < 0 ? rc : yes;
    default:
        /* a pod template of the other kinds is a launcher like a Pod is: mpi-operator's launcher
         * batch Job carries the launcher Pod's labels and env in its template */
        if (tg_template_has_devices(t))
            return 0;
        if (coordinator_role(t) || operator_launcher(t))
            return 1;
        rc = names_other_hosts(ev, t, &yes);
        return rc < 0 ? rc : yes;
    }
}

enum tg_rank_env tg_workload_rank_env(struct tg_eval *ev, const struct tg_workload *wl)
{
    if (wl->kind == TG_KIND_MPIJOB) {
        if (wl->mpi.v1)
            return TG_RANK_ENV_EXEC;
        return tg_workload_mpi_impl(wl) == TG_MPI_OPENMPI ? TG_RANK_ENV_SSH : TG_RANK_ENV_HYDRA;
    }
    /* Kubeflow Trainer's MPI plugin supports Open MPI only (plugins/mpi/mpi.go EnforceMLPolicy);
     * its launcher reaches the node pods over ssh (OMPI_MCA_plm_rsh_args, sshd in the nodes),
     * also when it runs ranks itself (runLauncherAsNode) */
    if (wl->trainer_mpi)
        return TG_RANK_ENV_SSH;
    if (wl->kind == TG_KIND_VCJOB) {
        for (size_t i = 0; i < wl->ntpl; i++) {
            int rc = tg_template_launcher_only(ev, &wl->tpl[i]);
            if (rc > 0)
                return TG_RANK_ENV_SSH;
        }
    }
    return TG_RANK_ENV_OWN;
}

/* Does s run sshd (a word "sshd", also as the last part of a path)? */
static bool names_sshd(const char *s, void *ctx)
{
    (void)ctx;
    for (const char *p = strstr(s, "sshd"); p; p = strstr(p + 4, "sshd")) {
        bool start = p == s || p[-1] == '/' || p[-1] == ' ' || p[-1] == ';';
        bool end = p[4] == '\0' || p[4] == ' ' || p[4] == ';' || p[4] == '\n';
        if (start && end)
            return true;
    }
    return false;
}

/* v is the string value. */
static bool str_is(const json_t *v, const char *value)
{
    const char *s = json_string_value(v);
    return s && !strcmp(s, value);
}

bool tg_pod_is_ssh_rank_host(const struct tg_workload *wl)
{
    if (wl->kind != TG_KIND_POD || wl->ntpl == 0)
        return false;
    const struct tg_template *t = &wl->tpl[0];
    if (env_is(t, "K_MPI_JOB_ROLE", "worker"))
        return true;
    static const char *const keys[] = {"training.kubeflow.org/job-role",
                                       "training.kubeflow.org/operator-name", "volcano.sh/job-name",
                                       "jobset.sigs.k8s.io/jobset-name"};
    json_t *lab[4];
    /* the four labels in one walk over the labels (a Pod's own: its template's metadata is the
     * object's, whose labels the decoder read) */
    tg_members_named(wl->labels, keys, 4, lab);
    if (str_is(lab[0], "worker") && str_is(lab[1], "mpi-operator"))
        return true;
    /* Volcano's mpi/ssh plugins, Kubeflow Trainer's MPI nodes: sshd in a framework's pod */
    if (!json_string_value(lab[2]) && !json_string_value(lab[3]))
        return false;
    for (size_t i = 0; i < t->ncontainers; i++) {
        if (!t->containers[i].init && tg_command_find(t->containers[i].c, names_sshd, NULL))
            return true;
    }
    return false;
}
