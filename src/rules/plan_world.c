/* plan_world.c -- the world size of a training launch (include/tg/plan_world.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tg/mpi.h"
#include "tg/plan_world.h"
#include "tg/pod.h"

static void unknown(struct tg_plan_world *w, const char *why)
{
    w->known = false;
    snprintf(w->why, sizeof(w->why), "%s", why);
}

/* n = nodes x per_node, without the text (for a caller that writes its own how). Returns false
 * when the count overflows (w is then unknown). */
static bool known_count(struct tg_plan_world *w, long long nodes, long long per_node)
{
    w->known = true;
    w->nodes = nodes;
    w->per_node = per_node;
    if (__builtin_mul_overflow(nodes, per_node, &w->n)) {
        unknown(w, "the process count overflows");
        return false;
    }
    return true;
}

/* n = nodes x per_node; how says so: "torchrun: 6 nodes x 8 GPUs" (written when read). */
static void known(struct tg_plan_world *w, const char *who, long long nodes, long long per_node,
                  const char *what)
{
    if (known_count(w, nodes, per_node)) {
        w->how_form = TG_HOW_NODES;
        w->how_who = who;
        w->how_what = what;
        w->how_nodes = nodes;
        w->how_per = per_node;
    }
}

/* Writes the how of the ranks (everything but the torchrun part) into buf[len]. */
static void how_ranks(const struct tg_plan_world *w, char *buf, size_t len)
{
    switch (w->how_form) {
    case TG_HOW_NODES:
        snprintf(buf, len, "%.30s: %lld node%s x %lld %s", w->how_who, w->how_nodes,
                 w->how_nodes == 1 ? "" : "s", w->how_per, w->how_what);
        break;
    case TG_HOW_NP:
        snprintf(buf, len, "%s -np %lld", w->how_who, w->how_nodes);
        break;
    default:
        snprintf(buf, len, "%s", w->how);
        break;
    }
}

const char *tg_plan_world_how(const struct tg_plan_world *w, char *buf, size_t len)
{
    if (w->how_torch) {
        char ranks[sizeof(w->how)];
        how_ranks(w, ranks, sizeof(ranks));
        /* the ranks' text cut at 60 bytes */
        snprintf(buf, len, "%.60s, each rank running torchrun with %lld %.10s", ranks,
                 w->torch_nproc, w->torch_what);
        return buf;
    }
    if (w->how_form == TG_HOW_TEXT)
        return w->how;
    how_ranks(w, buf, len);
    return buf;
}

const struct tg_template *tg_plan_rank_template(const struct tg_workload *wl,
                                                const struct tg_template *t)
{
    if (wl->kind == TG_KIND_MPIJOB && t == wl->mpi.launcher && wl->mpi.worker)
        return wl->mpi.worker;
    return t;
}

int tg_plan_pod_gpus(const struct tg_template *t, long long *n)
{
    return tg_template_count(t, TG_RES_GPU, n) == 1 && *n > 0 ? 1 : 0;
}

/* ---- mpirun ---------------------------------------------------------------------------------*/

/* The ranks of MPI run r: -np, else every slot of the MPIJob's hostfile (or -N x hosts). */
static int mpi_ranks(struct tg_eval *ev, const struct tg_mpirun *r, struct tg_plan_world *w)
{
    struct tg_mpi_slots s;
    if (r->np.set && r->np.resolved) {
        w->known = true;
        w->n = r->np.value;
        w->how_form = TG_HOW_NP;
        w->how_who = r->launcher;
        w->how_nodes = w->n;
        return 0;
    }
    if (r->np.set) {
        unknown(w, r->np.reason);
        return 0;
    }
    if (r->hosts && r->host_slots_known && !r->per_node.set) {
        /* -H host:slots,... without -np: one rank per slot listed (Open MPI mpirun(1)) */
        w->known = true;
        w->n = r->host_slots;
        snprintf(w->how, sizeof(w->how), "%s without -np: the %lld slots of -H", r->launcher, w->n);
        return 0;
    }
    int rc = tg_mpi_slots(ev, ev->wl, &s);
    if (rc < 0)
        return rc;
    /* the operator's hostfile, also when named (--hostfile /etc/mpi/hostfile, hydra -f) */
    bool own = !r->hostfile || !strcmp(r->hostfile_path, "/etc/mpi/hostfile");
    if (rc == 0 || r->hosts || !own) {
        unknown(w, "mpirun without -np on hosts that are not an MPIJob's hostfile");
        return 0;
    }
    if (r->per_node.set && !r->per_node.resolved) {
        unknown(w, r->per_node.reason);
        return 0;
    }
    if (r->per_node.set) {
        known(w, r->launcher, s.nodes, r->per_node.value, "ranks per node");
    } else {
        char what[96];
        known_count(w, s.nodes, s.per_worker);
        snprintf(w->how, sizeof(w->how), "%.20s without -np: %.90s", r->launcher,
                 tg_mpi_slots_what(&s, what, sizeof(what)));
    }
    return 0;
}

/* ---- the DeepSpeed launcher -----------------------------------------------------------------*/

/* --include localhost:0,1,2 (or localhost@localhost:...): the slots it names; 0 when it names
 * other hosts or whole hosts (their slots are not known here). */
static long long include_slots(const char *spec)
{
    long long n = 0;
    for (const char *s = spec; *s;) {
        size_t len = strcspn(s, "@");
        const char *colon = memchr(s, ':', len);
        if (!colon || (size_t)(colon - s) != 9 || strncmp(s, "localhost", 9))
            return 0;
        for (const char *c = colon; c < s + len; c++)
            n += *c == ':' || *c == ',';
        s += len + (s[len] == '@');
    }
    return n;
}

/* The hosts and slots of the hostfile the launcher reads: the MPIJob's (mpi-operator mounts it
 * at /etc/mpi/hostfile, `host slots=N` lines for Open MPI), or none (runner.py: a missing
 * hostfile means this host alone). 1: *hosts and *slots known; 0: local run; -1: not known. */
static int ds_hostfile(struct tg_eval *ev, const struct tg_plan *p, const struct tg_container *c,
                       long long *hosts, long long *slots, const char **why)
{
    struct tg_mpi_slots s;
    const char *path = p->ds.hostfile_set ? p->ds.hostfile : "/job/hostfile";
    if (p->ds.hostfile_set && !p->ds.hostfile_known) {
        *why = "the DeepSpeed launcher's --hostfile is not known";
        return -1;
    }
    if (!strcmp(path, "/etc/mpi/hostfile") && ev->wl->kind == TG_KIND_MPIJOB &&
        tg_mpi_slots(ev, ev->wl, &s) == 1 && !strcmp(ev->wl->mpi.implementation, "OpenMPI")) {
        *hosts = s.nodes;
        *slots = s.per_worker;
        return 1;
    }
    if (!p->ds.hostfile_set) {
        /* /job/hostfile exists only when a volume puts it there */
        size_t i;
        json_t *m;
        json_array_foreach (json_object_get(c->c, "volumeMounts"), i, m) {
            const char *mp = json_string_value(json_object_get(m, "mountPath"));
            if (mp && (!strcmp(mp, "/job") || !strcmp(mp, "/job/") || !strcmp(mp, "/")))
                break;
        }
        if (i == json_array_size(json_object_get(c->c, "volumeMounts")))
            return 0;
    }
    *why = "the DeepSpeed launcher's hostfile is read when the job runs";
    return -1;
}

static void ds_world(struct tg_eval *ev, const struct tg_template *t, const struct tg_container *c,
                     const struct tg_plan *p, struct tg_plan_world *w)
{
    const struct tg_plan_value *nn = &p->ds.num_nodes, *ng = &p->ds.num_gpus;
    long long hosts = 0, slots = 0, gpus;
    const char *why = NULL;
    if (nn->state == TG_PV_UNKNOWN || ng->state == TG_PV_UNKNOWN) {
        unknown(w, nn->state == TG_PV_UNKNOWN ? nn->why : ng->why);
        return;
    }
    if (p->ds.exclude || (p->ds.include[0] && !p->ds.include_known)) {
        unknown(w, "the DeepSpeed launcher's --include/--exclude choose slots not known here");
        return;
    }
    int hf = ds_hostfile(ev, p, c, &hosts, &slots, &why);
    if (hf < 0) {
        unknown(w, why);
        return;
    }
    if (hf == 0) { /* this pod alone */
        long long inc = p->ds.include[0] ? include_slots(p->ds.include) : 0;
        if (p->ds.include[0] && inc > 0) {
            known(w, "deepspeed", 1, inc, "GPUs (--include)");
        } else if (p->ds.include[0]) {
            unknown(w, "the DeepSpeed launcher's --include names hosts not known here");
        } else if (nn->state == TG_PV_SET && nn->value > 1) {
            unknown(w, "--num_nodes above 1 without a hostfile (DeepSpeed refuses it)");
        } else if (tg_pv_known(ng)) {
            known(w, "deepspeed", 1, ng->value, "GPUs (--num_gpus)");
        } else if (tg_plan_pod_gpus(t, &gpus)) {
            known(w, "deepspeed", 1, gpus, "GPUs (the pod's nvidia.com/gpu)");
        } else {
            unknown(w, "the DeepSpeed launcher uses every local GPU, and the pod's count is "
                       "not known");
        }
        return;
    }
    if (p->ds.include[0]) {
        unknown(w, "the DeepSpeed launcher's --include chooses slots not known here");
        return;
    }
    long long kept = tg_pv_known(nn) && nn->value > 0 && nn->value < hosts ? nn->value : hosts;
    long long per = tg_pv_known(ng) && ng->value > 0 ? ng->value : slots;
    known(w, "deepspeed", kept, per, tg_pv_known(ng) ? "GPUs (--num_gpus)" : "slots");
}

/* ---- torchrun -------------------------------------------------------------------------------*/

/* Processes per node of torchrun r: a number, or for gpu and auto the GPUs of the rank pods
 * (torchrun counts the devices it sees: the container's nvidia.com/gpu). 1 and *n, *gpus when the
 * count is the pod's GPUs; 0 when not known (*why). */
static int torch_nproc(const struct tg_torchrun *r, const struct tg_template *rt, long long *n,
                       bool *gpus, const char **why)
{
    long long pod = 0;
    bool has_gpus = tg_plan_pod_gpus(rt, &pod);
    *gpus = false;
    if (tg_torchrun_nproc(r, n) == 1) {
        *gpus = has_gpus && *n == pod;
        return 1;
    }
    if (r->nproc.resolved && (!strcmp(r->nproc.text, "gpu") || !strcmp(r->nproc.text, "auto"))) {
        if (!has_gpus) {
            *why =
                "--nproc_per_node gpu/auto counts devices, and the pod requests no nvidia.com/gpu";
            return 0;
        }
        *n = pod;
        *gpus = true;
        return 1;
    }
    *why = r->nproc.resolved ? "--nproc_per_node is not a number" : r->nproc.reason;
    return 0;
}

/* torchrun: nnodes x nproc_per_node; under mpirun each rank runs it: ranks x nproc_per_node. */
static int torch_world(struct tg_eval *ev, const struct tg_template *rt, const struct tg_launch *l,
                       const struct tg_plan *p, struct tg_plan_world *w)
{
    const struct tg_torchrun *r = &p->tr;
    long long nproc, min, max;
    bool gpus;
    const char *why = "";
    if (!torch_nproc(r, rt, &nproc, &gpus, &why)) {
        unknown(w, why);
        return 0;
    }
    const char *what = gpus ? "GPUs" : "processes";
    if (p->mpi) {
        const struct tg_mpirun *r0 = p->mpi_run < l->nruns ? &l->runs[p->mpi_run] : NULL;
        int rc = r0 ? mpi_ranks(ev, r0, w) : 0;
        if (rc < 0 || !w->known || !r0)
            return rc;
        if (known_count(w, w->n, nproc)) {
            w->how_torch = true;
            w->torch_nproc = nproc;
            w->torch_what = what;
        }
        return 0;
    }
    if (tg_torchrun_nnodes(r, &min, &max) != 1) {
        unknown(w,
                r->nnodes.resolved ? "--nnodes is not a count or MIN:MAX range" : r->nnodes.reason);
        return 0;
    }
    if (min != max) {
        char buf[TG_LAUNCH_REASON_MAX];
        snprintf(buf, sizeof(buf),
                 "torchrun --nnodes %lld:%lld is elastic: the rendezvous decides how many nodes "
                 "train",
                 min, max);
        unknown(w, buf);
        return 0;
    }
    known(w, "torchrun", min, nproc, what);
    return 0;
}

/* ---- entry ----------------------------------------------------------------------------------*/

static void from_value(struct tg_plan_world *w, const struct tg_plan_value *v, const char *what)
{
    if (tg_pv_known(v)) {
        w->known = true;
        w->n = v->value;
        snprintf(w->how, sizeof(w->how), "%s", v->src);
    } else if (v->state == TG_PV_UNKNOWN) {
        unknown(w, v->why);
    } else {
        unknown(w, what);
    }
}

/* NeMo (Lightning) starts trainer.devices processes on each of trainer.num_nodes nodes. */
static void nemo_world(const struct tg_plan *p, struct tg_plan_world *w)
{
    if (tg_pv_known(&p->nodes) && tg_pv_known(&p->devices)) {
        known(w, "NeMo", p->nodes.value, p->devices.value, "devices");
        w->how_form = TG_HOW_TEXT;
        snprintf(w->how, sizeof(w->how), "trainer.num_nodes %lld x trainer.devices %lld",
                 p->nodes.value, p->devices.value);
    } else {
        unknown(w, !tg_pv_known(&p->nodes) ? p->nodes.why : p->devices.why);
        if (!w->why[0])
            unknown(w, "trainer.num_nodes or trainer.devices is not given");
    }
}

int tg_plan_world(struct tg_eval *ev, const struct tg_template *t, const struct tg_container *c,
                  const struct tg_launch *l, const struct tg_plan *p, struct tg_plan_world *w)
{
    const struct tg_template *rt = tg_plan_rank_template(ev->wl, t);
    memset(w, 0, sizeof(*w));
    if (p->torch)
        return torch_world(ev, rt, l, p, w);
    if (p->mpi)
        return p->mpi_run < l->nruns ? mpi_ranks(ev, &l->runs[p->mpi_run], w) : 0;
    if (p->deepspeed)
        ds_world(ev, rt, c, p, w);
    else if (p->accelerate)
        from_value(w, &p->acc.num_processes,
                   p->acc.config_file[0] ? "accelerate launch: --num_processes is in --config_file"
                                         : "accelerate launch without --num_processes: its "
                                           "default config file or the GPU count decides");
    else if (p->nemo_cli || p->fw == TG_PLAN_FW_NEMO1)
        nemo_world(p, w);
    else
        unknown(w, "the program runs without a launcher: its world comes from the "
                   "environment the job sets");
    return 0;
}
