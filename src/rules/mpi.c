/* mpi.c -- the mpi.* rules: launcher -np against slots, slots against GPUs, env the ranks never
 * see, and the mpi-operator's own validation run at admission. */
/*
 * Sources: docs/references.md#ref-mpi and #ref-trainingop (kubeflow/mpi-operator:
 * pkg/apis/kubeflow/validation/validation.go, pkg/controller/mpi_job_controller.go;
 * kubeflow/training-operator: pkg/apis/kubeflow.org/v1/mpi_validation.go); SPEC sections 4 and 9.
 * The launcher command line is read by src/launcher/ (include/tg/launch.h, mpirun.h), which cites
 * the MPI documentation.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tg/launch.h"
#include "tg/launch_memo.h"
#include "tg/mpi.h"
#include "tg/mpirun.h"
#include "tg/obj.h"
#include "tg/pod.h"
#include "tg/policy.h"
#include "tg/registry.h"
#include "tg/roles.h"

#define RES_NEURONCORE "aws.amazon.com/neuroncore"
/* The hostfile the operator mounts and points mpirun at (docs/references.md#ref-mpi-hostfile). */
#define OPERATOR_HOSTFILE "/etc/mpi/hostfile"
/* A DNS-1035 label is at most 63 characters (RFC 1035; apimachinery IsDNS1035Label). */
#define DNS1035_MAX 63

/* The first regular container of a template (the one the operator runs), or NULL. */
static const struct tg_container *main_container(const struct tg_template *t)
{
    for (size_t i = 0; t && i < t->ncontainers; i++)
        if (!t->containers[i].init)
            return &t->containers[i];
    return NULL;
}

/* ---- the operator's validation (docs/references.md#ref-mpi-validation) ---------------------- */

/* A replica count as written (r: the replicas member of a replica spec, NULL when absent): 1 and
 * *v for a number (2.0 counts as 2), 0 when absent or null, -1 for another type (the decoder
 * reports that as object.invalid-field). */
static int written_count(json_t *r, long long *v)
{
    if (!r || json_is_null(r))
        return 0;
    if (json_is_integer(r))
        *v = (long long)json_integer_value(r);
    else if (json_is_real(r) && json_real_value(r) > -1e15 && json_real_value(r) < 1e15)
        *v = (long long)json_real_value(r);
    else
        return -1;
    return 1;
}

static void check_replicas(struct tg_eval *ev, const struct tg_mpi *m)
{
    long long n = 0;
    if (!m->launcher_spec) {
        tg_report(ev, TG_RULE_MPI_REPLICAS, "spec.mpiReplicaSpecs.Launcher",
                  "missing: the operator requires exactly one Launcher and would only log an "
                  "event and never start the job; add a Launcher replica spec with replicas: 1");
    } else if (written_count(m->replicas_raw[0], &n) == 1 && n != 1) {
        tg_report(ev, TG_RULE_MPI_REPLICAS, "spec.mpiReplicaSpecs.Launcher.replicas",
                  "is %lld, must be 1: the operator refuses it and the job never starts; set "
                  "replicas: 1",
                  n);
    }
    if (!m->worker_spec)
        return; /* a launcher-only MPIJob is valid (SPEC section 9) */
    int got = written_count(m->replicas_raw[1], &n);
    if (got == 0 && !m->v1) {
        /* v2beta1 defaults Worker replicas to 0, then requires >= 1
         * (docs/references.md#ref-mpi-replica-defaults, #ref-mpi-validation). The training-operator
         * (v1) defaults a missing count to 1. */
        tg_report(ev, TG_RULE_MPI_REPLICAS, "spec.mpiReplicaSpecs.Worker.replicas",
                  "missing: the operator defaults it to 0 and then refuses the job, which never "
                  "starts; set the number of workers (1 or more), or remove the Worker spec");
    } else if (got == 1 && n < 1) {
        tg_report(ev, TG_RULE_MPI_REPLICAS, "spec.mpiReplicaSpecs.Worker.replicas",
                  "is %lld, must be 1 or more: the operator refuses it and the job never starts; "
                  "set the number of workers, or remove the Worker spec for a launcher-only job",
                  n);
    }
}

static void check_restart_policy(struct tg_eval *ev, const struct tg_mpi *m)
{
    static const struct tg_path paths[] = {
        TG_PATH_CONST("spec.mpiReplicaSpecs.Launcher", "/spec/mpiReplicaSpecs/Launcher"),
        TG_PATH_CONST("spec.mpiReplicaSpecs.Worker", "/spec/mpiReplicaSpecs/Worker")};
    json_t *specs[] = {m->launcher_spec, m->worker_spec};
    if (m->v1)
        return; /* training-operator v1 accepts the common policies
                   (docs/references.md#ref-trainingop-mpijob-validation) */
    for (size_t i = 0; i < 2; i++) {
        char field[TG_FIELD_MAX];
        if (!specs[i])
            continue;
        const struct tg_path *p = &paths[i];
        const char *rp = tg_read_string(ev, m->restart_policy_raw[i], specs[i], p, "restartPolicy");
        if (!rp || !strcmp(rp, "Never") || !strcmp(rp, "OnFailure"))
            continue;
        tg_report(ev, TG_RULE_MPI_RESTART_POLICY,
                  tg_path_sub(field, sizeof(field), p, "restartPolicy"),
                  "\"%.40s\" is not accepted by the MPI operator (Never or OnFailure); the job "
                  "would never start; use %s",
                  rp, i == 0 ? "OnFailure" : "Never");
    }
}

static bool dns1035_label(const char *s, char *why, size_t whylen)
{
    size_t n = strlen(s);
    if (n > DNS1035_MAX) {
        snprintf(why, whylen, "is %zu characters, at most %d are allowed", n, DNS1035_MAX);
        return false;
    }
    if (!(s[0] >= 'a' && s[0] <= 'z')) {
        snprintf(why, whylen, "must start with a lower-case letter");
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
            snprintf(why, whylen, "may hold only a-z, 0-9 and '-'");
            return false;
        }
    }
    if (s[n - 1] == '-') {
        snprintf(why, whylen, "must end with a letter or digit");
        return false;
    }
    return true;
}

/* <name>-worker-<last> is a DNS-1035 label, told without writing it: "-worker-" and the digits
 * of last (0 or more) are valid bytes and end it with a digit, so it is one when name starts
 * with a lower-case letter, holds only a-z, 0-9 and '-' and the whole fits in 63 characters.
 * false: not one, and check_name writes the label to say why. */
static bool worker_name_valid(const char *name, long long last)
{
    size_t n = strlen(name), digits = 1;
    for (long long v = last; v >= 10; v /= 10)
        digits++;
    if (n + 8 + digits > DNS1035_MAX || !(name[0] >= 'a' && name[0] <= 'z'))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            return false;
    }
    return true;
}

static void check_name(struct tg_eval *ev, const struct tg_workload *wl, const struct tg_mpi *m)
{
    char label[512], why[96];
    long long replicas = 1;
    if (!wl->name || !wl->name[0])
        return; /* generateName: the final name is not known yet */
    /* kubeflow/mpi-operator validation.go validateMPIJobName: the highest worker pod name,
     * with replicas taken as 1 when the Worker spec is absent or not positive */
    if (m->worker && m->worker->replicas_set && m->worker->replicas > 0)
        replicas = m->worker->replicas;
    if (worker_name_valid(wl->name, replicas - 1))
        return;
    snprintf(label, sizeof(label), "%s-worker-%lld", wl->name, replicas - 1);
    if (dns1035_label(label, why, sizeof(why)))
        return;
    tg_report(ev, TG_RULE_MPI_NAME_TOO_LONG, "metadata.name",
              "worker pod and service name \"%.70s\" %s (DNS-1035 label): the operator "
              "never creates them; rename the job",
              label, why);
}

/* ---- slots and the launcher command line (docs/references.md#ref-mpi-slots-np) -------------- */

static bool count_slots(const struct tg_mpi *m, bool launcher_host, struct tg_mpi_slots *s)
{
    s->per_worker = m->slots_per_worker;
    s->workers = m->worker ? m->worker->replicas : 0;
    if (m->worker && m->v1 && !m->worker->replicas_set)
        s->workers = 1; /* training-operator default */
    else if (m->worker && (!m->worker->replicas_set || s->workers < 1))
        return false; /* mpi.replicas already says what is wrong */
    if (s->per_worker < 0 || s->workers < 0)
        return false;
    if (__builtin_add_overflow(s->workers, launcher_host ? 1 : 0, &s->nodes))
        return false;
    if (!m->worker && !launcher_host)
        return false; /* launcher-only job: mpirun runs locally */
    if (__builtin_mul_overflow(s->per_worker, s->workers, &s->total))
        return false;
    s->slots_default = !m->slots_set;
    s->launcher_host = launcher_host;
    if (launcher_host && __builtin_add_overflow(s->total, s->per_worker, &s->total))
        return false;
    return true;
}

const char *tg_mpi_slots_what(const struct tg_mpi_slots *s, char *buf, size_t len)
{
    int n = snprintf(buf, len, "slotsPerWorker %lld%s x %lld worker%s", s->per_worker,
                     s->slots_default ? " (default)" : "", s->workers, s->workers == 1 ? "" : "s");
    if (s->launcher_host && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " + %lld launcher", s->per_worker);
    return buf;
}

/* Is the launcher a host of the hostfile: runLauncherAsWorker, or training-operator's launcher
 * that runs ranks itself (docs/references.md#ref-trainingop). */
static bool launcher_is_host(struct tg_eval *ev, const struct tg_mpi *m)
{
    return m->run_launcher_as_worker ||
           (m->v1 && m->worker && m->launcher && tg_template_launcher_only(ev, m->launcher) == 0);
}

int tg_mpi_slots(struct tg_eval *ev, const struct tg_workload *wl, struct tg_mpi_slots *s)
{
    if (wl->kind != TG_KIND_MPIJOB)
        return 0;
    bool host = launcher_is_host(ev, &wl->mpi);
    return ev->error ? ev->error : count_slots(&wl->mpi, host, s) ? 1 : 0;
}

/* The path of the command/args item that holds the launcher (or its script), built on its first
 * use: a line that fits its slots reports nothing and needs none. */
struct run_field {
    const struct tg_container *c;
    size_t item;
    bool built;
    struct tg_path p;
};

static const char *run_field(struct run_field *f)
{
    if (!f->built) {
        json_t *cmd = json_object_get(f->c->c, "command");
        size_t ncmd = json_is_array(cmd) ? json_array_size(cmd) : 0;
        tg_path_key(&f->p, &f->c->path, f->item < ncmd ? "command" : "args");
        tg_path_index(&f->p, &f->p, f->item < ncmd ? f->item : f->item - ncmd);
        f->built = true;
    }
    return f->p.field;
}

static void check_unresolved(struct tg_eval *ev, struct run_field *field, const struct tg_mpirun *r,
                             const struct tg_mpi_slots *s)
{
    if (r->np.set && !r->np.resolved)
        tg_report(ev, TG_RULE_MPI_NP_UNRESOLVED, run_field(field),
                  "%s -np %.30s cannot be checked against %lld slots (%s); write a number or a "
                  "literal env value",
                  r->launcher, r->np.text, s->total, r->np.reason);
    else if (r->per_node.set && !r->per_node.resolved)
        tg_report(ev, TG_RULE_MPI_NP_UNRESOLVED, run_field(field),
                  "%s ranks per node %.30s are unknown (%s); use a number (slotsPerWorker is %lld)",
                  r->launcher, r->per_node.text, r->per_node.reason, s->per_worker);
}

/* -H and --hostfile decide where ranks go; say so instead of guessing. Returns true when the
 * operator's slots still apply. */
static bool hosts_apply(struct tg_eval *ev, struct run_field *field, const struct tg_mpirun *r)
{
    if (r->hosts && r->host_slots_known) {
        if (r->np.set && r->np.resolved && r->np.value > r->host_slots && !r->oversubscribe)
            tg_report(ev, TG_RULE_MPI_NP_EXCEEDS_SLOTS, run_field(field),
                      "%s -np %lld is above the %lld slots of its own -H list (%zu hosts): mpirun "
                      "fails with \"not enough slots\"; lower -np or list more slots",
                      r->launcher, r->np.value, r->host_slots, r->nhosts);
        return false;
    }
    if (r->hosts) {
        if (r->np.set)
            tg_report(ev, TG_RULE_MPI_NP_UNRESOLVED, run_field(field),
                      "%s -np %.30s is not checked: its -H host list is not literal, so its "
                      "slots are unknown; use the operator's hostfile or literal host:slots",
                      r->launcher, r->np.text);
        return false;
    }
    if (r->hostfile && strcmp(r->hostfile_path, OPERATOR_HOSTFILE) != 0) {
        if (r->np.set)
            tg_report(ev, TG_RULE_MPI_NP_UNRESOLVED, run_field(field),
                      "%s -np %.30s is not checked: --hostfile %.50s is not the operator's %s, so "
                      "its slots are unknown",
                      r->launcher, r->np.text, r->hostfile_path[0] ? r->hostfile_path : "(unknown)",
                      OPERATOR_HOSTFILE);
        return false;
    }
    return true;
}

/* One mpirun line against the slots. Every line is judged for overruns (a warm-up line included);
 * only the largest (largest) is judged for idle slots. Hydra launchers (Intel MPI, MPICH)
 * oversubscribe instead of failing: their overruns are warnings at most (SPEC 10). */
static void check_run(struct tg_eval *ev, const struct tg_container *lc, const struct tg_mpirun *r,
                      const struct tg_mpi_slots *s, bool largest)
{
    struct run_field field; /* not zeroed: its path is written when built */
    field.c = lc;
    field.item = r->argv_index;
    field.built = false;
    check_unresolved(ev, &field, r, s);
    if (!hosts_apply(ev, &field, r))
        return;
    bool hydra = r->impl != TG_MPI_OPENMPI;
    enum tg_action cap = hydra ? TG_ACTION_WARN : TG_ACTION_DENY;
    if (r->per_node.set && r->per_node.resolved && r->per_node.value > s->per_worker &&
        !r->oversubscribe) {
        tg_report_capped(
            ev, TG_RULE_MPI_NPERNODE_EXCEEDS_SLOTS, cap, run_field(&field),
            "%s runs %lld ranks per worker but slotsPerWorker is %lld: %s; lower it to %lld "
            "or raise slotsPerWorker",
            r->launcher, r->per_node.value, s->per_worker,
            hydra ? "ranks share the GPUs of one worker"
                  : "Open MPI fails with \"not enough slots\"",
            s->per_worker);
    }
    if (!r->np.set || !r->np.resolved)
        return; /* without -np mpirun fills every slot (SPEC section 9) */
    long long np = r->np.value, placed;
    if (r->per_node.set && r->per_node.resolved && r->per_node.value <= s->per_worker &&
        !r->oversubscribe && !__builtin_mul_overflow(r->per_node.value, s->nodes, &placed) &&
        placed < s->total && np > placed) {
        /* Open MPI refuses more processes than ppr places; hydra wraps around the hosts */
        tg_report_capped(ev, TG_RULE_MPI_NP_EXCEEDS_SLOTS, cap, run_field(&field),
                         "%s -np %lld is above the %lld ranks that %lld per worker place on %lld "
                         "workers: %s; use -np %lld",
                         r->launcher, np, placed, r->per_node.value, s->nodes,
                         hydra ? "extra ranks share the GPUs of the same workers"
                               : "Open MPI fails (not enough slots)",
                         placed);
    } else if (np > s->total && !r->oversubscribe) {
        /* Open MPI refuses (open-mpi/ompi#3133); hydra wraps ranks round-robin over the hosts
         * (wiki.mpich.org Using_the_Hydra_Process_Manager), so ranks share GPUs. */
        char what[96];
        tg_report_capped(ev, TG_RULE_MPI_NP_EXCEEDS_SLOTS, cap, run_field(&field),
                         "%s -np %lld is above the %lld slots (%s): %s; use -np %lld or add slots",
                         r->launcher, np, s->total, tg_mpi_slots_what(s, what, sizeof(what)),
                         hydra ? "extra ranks share the GPUs of the same workers"
                               : "Open MPI fails (not enough slots)",
                         s->total);
    } else if (np < s->total && largest) {
        char what[96];
        tg_report(ev, TG_RULE_MPI_NP_BELOW_SLOTS, run_field(&field),
                  "%s -np %lld uses %lld of the %lld slots (%s): %lld stay idle; use -np %lld or "
                  "fewer workers or slots",
                  r->launcher, np, np, s->total, tg_mpi_slots_what(s, what, sizeof(what)),
                  s->total - np, s->total);
    }
}

/* ---- slots against accelerators ---------------------------------------------------------- */

/* NEURON_LOGICAL_NC_CONFIG of the worker's main container (0: not set or not a number): how many
 * physical NeuronCores form one logical core (docs/references.md#ref-neuron-trn2-lnc). */
static int lnc_env(const struct tg_template *t)
{
    const struct tg_container *c = main_container(t);
    char buf[32];
    const char *v =
        c ? tg_ctr_env_get(c, "NEURON_LOGICAL_NC_CONFIG", buf, sizeof(buf), NULL) : NULL;
    return v && (!strcmp(v, "1") || !strcmp(v, "2")) ? v[0] - '0' : 0;
}

/* Logical NeuronCores per device of the instance types the worker is pinned to (trn2: 4 with the
 * default LNC=2, 8 with NEURON_LOGICAL_NC_CONFIG=1): > 0 when every candidate type is in the table
 * with the same count, else 0. */
static int pinned_neuron_cores(struct tg_eval *ev, const struct tg_template *t)
{
    struct tg_label_pin pin;
    int cores = 0, lnc = lnc_env(t);
    tg_label_pin_init(&pin);
    if (tg_template_instance_types(NULL, t, ev->policy->instances, ev->policy->ninstances, NULL,
                                   &pin) < 0) {
        ev->error = ev->error ? ev->error : -ENOMEM;
        goto out;
    }
    if (!pin.finite || pin.n == 0)
        goto out;
    for (size_t i = 0; i < pin.n; i++) {
        const struct tg_instance *in = tg_policy_instance(ev->policy, pin.values[i]);
        int logical = in ? tg_instance_logical_cores(in, lnc) : 0;
        if (logical <= 0 || (cores && logical != cores)) {
            cores = 0;
            goto out;
        }
        cores = logical;
    }
out:
    tg_label_pin_release(&pin);
    return cores;
}

/* The processes check_slots_accel compares, as its messages show them (written only for a
 * finding). Returns true. */
static bool slots_what(char *what, size_t len, const struct tg_mpi *m, const struct tg_mpirun *job,
                       long long procs, long long rpw)
{
    if (job && (job->per_node.set || job->rank_procs != 1))
        snprintf(what, len, "each worker runs %lld processes (%lld ranks x %lld)", procs, rpw,
                 job->rank_procs);
    else
        snprintf(what, len, "slotsPerWorker %lld%s", m->slots_per_worker,
                 m->slots_set ? "" : " (default)");
    return true;
}

/* mpi.slots-gpu-mismatch (SPEC 10): the processes each worker runs -- ranks per worker (-N,
 * --npernode, ppr:N:node, else slotsPerWorker) times the processes each rank starts (a per-node
 * torchrun's --nproc_per_node) -- against its GPUs or logical NeuronCores. job is the launcher's
 * largest mpirun line (NULL when none is read: slotsPerWorker alone). Quiet when they match,
 * whatever slotsPerWorker is, and when a count is unknown (nproc auto/gpu, an unresolved -N). */
static void check_slots_accel(struct tg_eval *ev, const struct tg_mpi *m,
                              const struct tg_mpirun *job)
{
    const struct tg_template *w = m->worker;
    long long spw = m->slots_per_worker, n = 0, procs, rpw;
    const char *field = "spec.slotsPerWorker";
    char what[128];
    if (!w || spw < 0)
        return;
    rpw = spw;
    if (job && job->per_node.set) {
        /* above the slots: mpi.npernode-exceeds-slots says so, or the user oversubscribes on
         * purpose */
        if (!job->per_node.resolved || job->per_node.value > spw)
            return;
        rpw = job->per_node.value;
    }
    if (job && job->rank_procs == 0)
        return;
    if (__builtin_mul_overflow(rpw, job ? job->rank_procs : 1, &procs))
        return; /* counts past a long long: no plan to compare with the GPUs */
    if (tg_template_count(w, TG_RES_GPU, &n) == 1 && n > 0) {
        if (n != procs && slots_what(what, sizeof(what), m, job, procs, rpw))
            tg_report(ev, TG_RULE_MPI_SLOTS_GPU_MISMATCH, field,
                      "%s but each worker has %lld nvidia.com/gpu: one process per GPU needs %lld",
                      what, n, n);
        return;
    }
    if (tg_template_count(w, RES_NEURONCORE, &n) == 1 && n > 0) {
        if (n != procs && slots_what(what, sizeof(what), m, job, procs, rpw))
            tg_report(ev, TG_RULE_MPI_SLOTS_GPU_MISMATCH, field,
                      "%s but each worker has %lld aws.amazon.com/neuroncore: one process per "
                      "NeuronCore needs %lld",
                      what, n, n);
        return;
    }
    if (tg_template_count(w, TG_RES_NEURON, &n) == 1 && n > 0) {
        /* one process per device or one per logical NeuronCore are both common; the core count
         * is known only for a pinned instance type (policy instance table) */
        int cores = pinned_neuron_cores(ev, w);
        if (procs == n || (cores > 0 && procs == n * cores))
            return;
        slots_what(what, sizeof(what), m, job, procs, rpw);
        if (cores > 0) {
            tg_report(ev, TG_RULE_MPI_SLOTS_GPU_MISMATCH, field,
                      "%s but each worker has %lld aws.amazon.com/neuron devices (%lld logical "
                      "NeuronCores): use %lld (one per core) or %lld",
                      what, n, n * cores, n * cores, n);
        } else if (procs < n || procs % n != 0) {
            /* cores unknown, but every Neuron device has 2 or more cores: one process per core
             * is a multiple (2 or more) of the devices, one per device is the devices */
            tg_report(ev, TG_RULE_MPI_SLOTS_GPU_MISMATCH, field,
                      "%s but each worker has %lld aws.amazon.com/neuron devices: use %lld (one "
                      "per device) or devices x NeuronCores per device (one per core)",
                      what, n, n);
        }
    }
}

/* ---- env the ranks never see ----------------------------------------------------------------
 * Ranks on a worker are started by its sshd, which gives them a fresh environment: the worker
 * template's env never reaches them (kubeflow/trainer#3427). Only what the launcher forwards
 * does: Open MPI forwards only -x names (or mca_base_env_list); Intel MPI and MPICH hydra, and
 * horovodrun, forward the launcher's environment (citations in src/launcher/mpirun.c). */

static bool is_fabric_var(const char *name)
{
    return !strncmp(name, "FI_", 3) || !strncmp(name, "NCCL_", 5);
}

/* Does name reach the ranks of every launch, with a value? */
static bool reaches_ranks(const struct tg_launch *l, const char *name)
{
    for (size_t i = 0; i < l->nruns; i++) {
        const struct tg_mpirun *r = &l->runs[i];
        const struct tg_launch_fwd *f = tg_mpirun_find_fwd(r, name);
        bool all = tg_mpirun_forwards_all(r);
        if (f && f->value)
            continue;
        if ((f || all) && tg_mpirun_env_has(r, name))
            continue;
        return false;
    }
    return true;
}

/* The ranks' host container wc (sshd's, started over ssh): its FI_ and NCCL_ env that no launch of
 * lc forwards with a value never reaches a rank. */
static void check_env(struct tg_eval *ev, const struct tg_container *wc,
                      const struct tg_container *lc, const struct tg_launch *l)
{
    json_t *env = wc ? wc->env_raw : NULL;
    char names[200] = "", fix[200] = "";
    size_t missing = 0, i;
    json_t *e;
    bool openmpi = false, valued = true;
    if (!json_is_array(env) || l->nruns == 0)
        return; /* no launch seen: how ranks start is unknown */
    for (size_t k = 0; k < l->nruns; k++)
        openmpi |= l->runs[k].impl == TG_MPI_OPENMPI && !l->runs[k].forward_all;
    json_array_foreach (env, i, e) {
        const char *name = tg_ctr_env_name(wc, i);
        if (!name || !is_fabric_var(name) || reaches_ranks(l, name))
            continue;
        bool dup = false;
        for (size_t k = 0; k < i && !dup; k++) {
            const char *o = json_string_value(json_object_get(json_array_get(env, k), "name"));
            dup = o && !strcmp(o, name);
        }
        if (dup)
            continue;
        if (missing < 2) {
            /* -x NAME=value with the worker's own value: right whether or not the launcher
             * already has -x NAME (which forwards the launcher's env, not the worker's) */
            char vbuf[TG_ENV_VALUE_MAX];
            const char *v = tg_ctr_env_get(wc, name, vbuf, sizeof(vbuf), NULL);
            bool plain = v && *v && strlen(v) <= 40 && !strpbrk(v, " \t'\"$;");
            size_t a = strlen(names), b = strlen(fix);
            snprintf(names + a, sizeof(names) - a, "%s%.40s", missing ? ", " : "", name);
            snprintf(fix + b, sizeof(fix) - b, "%s-x %.40s%s%s", missing ? " " : "", name,
                     plain ? "=" : "", plain ? v : "");
            valued &= plain;
        }
        missing++;
    }
    if (!missing)
        return;
    char more[32] = "";
    struct tg_path p;
    tg_path_key(&p, &wc->path, "env");
    const char *field = p.field;
    if (missing > 2)
        snprintf(more, sizeof(more), " (+%zu more)", missing - 2);
    bool own_list = false;
    tg_env_value(lc->c, "OMPI_MCA_mca_base_env_list", &own_list);
    if (openmpi && own_list) /* -x next to that list aborts Open MPI 4: extend the list */
        tg_report(ev, TG_RULE_MPI_ENV_NOT_FORWARDED, field,
                  "%s%s: set only on workers, never seen by ranks (fresh sshd env); list in "
                  "the launcher's OMPI_MCA_mca_base_env_list",
                  names, more);
    else if (openmpi && valued)
        tg_report(ev, TG_RULE_MPI_ENV_NOT_FORWARDED, field,
                  "%s%s: set only on workers, never seen by ranks (sshd gives them a fresh env); "
                  "add %s to the launcher's mpirun",
                  names, more, fix);
    else if (openmpi)
        tg_report(ev, TG_RULE_MPI_ENV_NOT_FORWARDED, field,
                  "%s%s: set only on workers, never seen by ranks (sshd gives them a fresh env); "
                  "set on the launcher and add %s",
                  names, more, fix);
    else
        tg_report(ev, TG_RULE_MPI_ENV_NOT_FORWARDED, field,
                  "%s%s: set only on workers, never seen by ranks (sshd gives them a fresh env); "
                  "set it in the launcher's env, which the launcher forwards",
                  names, more);
}

/* ---- the command line's own JSON types ---------------------------------------------------- */

/* ---- entry ------------------------------------------------------------------------------- */

static int check_launcher(struct tg_eval *ev, const struct tg_mpi *m)
{
    const struct tg_container *lc = main_container(m->launcher);
    enum tg_mpi_impl impl;
    const struct tg_launch *l;
    struct tg_mpi_slots s;
    int rc;
    /* every launcher container's line is read (here and by the EFA rules) */
    for (size_t i = 0; m->launcher && i < m->launcher->ncontainers; i++)
        tg_check_command_types(ev, &m->launcher->containers[i]);
    if (!lc || tg_mpi_impl_parse(m->v1 ? NULL : m->implementation, &impl) < 0) {
        check_slots_accel(ev, m, NULL);
        return 0; /* an unknown implementation is refused by the operator's enum */
    }
    if ((rc = tg_eval_launch(ev, lc, impl, &l)) < 0)
        return rc;
    bool launcher_host = launcher_is_host(ev, m);
    size_t largest = 0;
    for (size_t i = 1; i < l->nruns; i++) {
        const struct tg_launch_value *a = &l->runs[i].np, *b = &l->runs[largest].np;
        if (a->set && a->resolved && (!b->set || !b->resolved || a->value > b->value))
            largest = i;
    }
    if (count_slots(m, launcher_host, &s))
        for (size_t i = 0; i < l->nruns; i++)
            check_run(ev, lc, &l->runs[i], &s, i == largest);
    check_slots_accel(ev, m, l->nruns ? &l->runs[largest] : NULL);
    /* training-operator (kubeflow.org/v1) starts ranks with kubectl exec: they inherit the
     * worker container's env (docs/references.md#ref-trainingop-kubexec) */
    if (!m->v1)
        check_env(ev, main_container(m->worker), lc, l);
    return 0;
}

/* Volcano Job with an MPI launcher task: its ranks in the other tasks are started over ssh
 * (the mpi and ssh plugins, docs/references.md#ref-volcano-mpi-plugin). */
static int check_vcjob_env(struct tg_eval *ev)
{
    const struct tg_workload *wl = ev->wl;
    const struct tg_container *lc = NULL;
    const struct tg_launch *l = NULL;
    for (size_t i = 0; i < wl->ntpl && !lc; i++) {
        int rc = tg_template_launcher_only(ev, &wl->tpl[i]);
        if (rc < 0)
            return rc;
        for (size_t k = 0; rc > 0 && k < wl->tpl[i].ncontainers && !lc; k++) {
            if ((rc = tg_eval_launch(ev, &wl->tpl[i].containers[k], TG_MPI_OPENMPI, &l)) < 0)
                return rc;
            if (l->nruns > 0)
                lc = &wl->tpl[i].containers[k];
        }
    }
    for (size_t i = 0; lc && i < wl->ntpl; i++) {
        const struct tg_container *wc = main_container(&wl->tpl[i]);
        if (wc && tg_template_launcher_only(ev, &wl->tpl[i]) == 0)
            check_env(ev, wc, lc, l);
    }
    return 0;
}

int tg_rules_mpi(struct tg_eval *ev)
{
    struct tg_workload *wl = ev->wl;
    const struct tg_mpi *m = &wl->mpi;
    if (tg_workload_spec_unchanged(wl))
        return 0;
    if (wl->kind == TG_KIND_VCJOB) {
        int rc = check_vcjob_env(ev);
        return rc < 0 ? rc : 0;
    }
    if (wl->kind != TG_KIND_MPIJOB)
        return 0;
    check_replicas(ev, m);
    check_restart_policy(ev, m);
    check_name(ev, wl, m);
    int rc = check_launcher(ev, m);
    return rc < 0 ? rc : 0;
}
