/* mpirun.c -- the options of mpirun/mpiexec/horovodrun: ranks, ranks per node, hosts, env. */
/*
 * Sources for the option grammar (each flag below was checked against these):
 * - Open MPI 4.1 mpirun(1) (open-mpi/ompi v4.1.x: orte/tools/orterun/orterun.1in; also
 *   manpages.ubuntu.com focal mpiexec.openmpi.1, openmpi-bin 4.0.3): mpirun, mpiexec and orterun
 *   are synonyms; -c/-n/--n/-np give the process count; -npernode/--npernode and -N launch N per
 *   node; --map-by ppr:N:<object>[:PE=n,OVERSUBSCRIBE...]; --oversubscribe; -H/-host/--host
 *   host[:slots] lists; -hostfile/--hostfile/-machinefile/--machinefile; -x ENV[=value] "Export
 *   the specified environment variables to the remote nodes"; -mca/--mca key value, and the
 *   mca_base_env_list parameter ("A;B=x") as the MCA form of -x.
 * - Open MPI 5.0 mpirun(1) (open-mpi/ompi v5.0.x docs/man-openmpi/man1/mpirun.1.rst; ubuntu
 *   plucky mpirun.openmpi.1, openmpi-bin 5.0.7): mpirun is prterun underneath; -n/-np,
 *   -N (ppr:N:node),
 *   --map-by ppr:N:node with :OVERSUBSCRIBE, -H/--host, --hostfile, -x, --mca still accepted;
 *   --npernode is deprecated in favour of --map-by ppr:N:node but still read.
 * - Intel MPI mpiexec.hydra (Intel MPI Library Developer Reference for Linux, 2021.x, "Global
 *   Hydra Options" and "Local Hydra Options"): -n/-np, -ppn, -perhost, -grr, -rr, -genv VAR val,
 *   -genvall, -genvnone, -genvlist a,b, -genvexcl, -env/-envall/-envnone/-envlist (local),
 *   -f/-hostfile/-machinefile, -hosts/-host. By default "the entire launching node environment is
 *   passed to the MPI processes" (Intel oneMKL developer guide, "Setting Environment Variables on
 *   a Cluster"; Intel MPI "Environment Variables Not Propagated by Hydra" lists the exceptions).
 * - MPICH hydra mpiexec(1) (pmodels/mpich: src/pm/hydra/mpiexec.txt; MPICH 4.0 mpiexec man page;
 *   wiki.mpich.org Using_the_Hydra_Process_Manager): -n/-np, -ppn, -genv, -genvall (the default:
 *   hydra passes the launcher's environment), -genvnone, -genvlist, -f/-hostfile/-machinefile,
 *   -hosts/-host with host:n.
 * - horovodrun (horovod/horovod: horovod/runner/launch.py for the options; horovod/runner/
 *   mpi_run.py passes "-x NAME" for every exportable variable of its environment, so
 *   horovodrun forwards what it has).
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tg/arena.h"
#include "tg/mpirun.h"

enum eff {
    E_NONE, /* no effect we read */
    E_NP,
    E_PERNODE,
    E_MAPBY, /* OpenMPI --map-by */
    E_OVERSUB,
    E_NOOVERSUB,
    E_HOSTS,
    E_HOSTFILE,
    E_X,        /* -x NAME[=VALUE] */
    E_MCA,      /* --mca KEY VALUE */
    E_GENV,     /* -genv NAME VALUE */
    E_GENVLIST, /* -genvlist a,b */
    E_GENVALL,
    E_GENVNONE,
    E_RR, /* hydra -rr: one process per host in turn (= -perhost 1) */
};

struct opt {
    const char *name;
    unsigned char len; /* strlen(name) */
    unsigned char nargs;
    unsigned char eff;
};

#define OPT(name, nargs, eff)                                                                      \
    {                                                                                              \
        name, sizeof(name) - 1, nargs, eff                                                         \
    }

/* Open MPI 4.1 / 5.0 mpirun. Options that take no argument are listed too, so that an
 * unknown option can be told apart from the program. */
static const struct opt openmpi_opts[] = {
    OPT("-np", 1, E_NP),
    OPT("--np", 1, E_NP),
    OPT("-n", 1, E_NP),
    OPT("--n", 1, E_NP),
    OPT("-c", 1, E_NP),
    OPT("-N", 1, E_PERNODE),
    OPT("-npernode", 1, E_PERNODE),
    OPT("--npernode", 1, E_PERNODE),
    OPT("-map-by", 1, E_MAPBY),
    OPT("--map-by", 1, E_MAPBY),
    OPT("-oversubscribe", 0, E_OVERSUB),
    OPT("--oversubscribe", 0, E_OVERSUB),
    OPT("-nooversubscribe", 0, E_NOOVERSUB),
    OPT("--nooversubscribe", 0, E_NOOVERSUB),
    OPT("-H", 1, E_HOSTS),
    OPT("-host", 1, E_HOSTS),
    OPT("--host", 1, E_HOSTS),
    OPT("-hostfile", 1, E_HOSTFILE),
    OPT("--hostfile", 1, E_HOSTFILE),
    OPT("-machinefile", 1, E_HOSTFILE),
    OPT("--machinefile", 1, E_HOSTFILE),
    OPT("-default-hostfile", 1, E_HOSTFILE),
    OPT("--default-hostfile", 1, E_HOSTFILE),
    OPT("-x", 1, E_X),
    OPT("-mca", 2, E_MCA),
    OPT("--mca", 2, E_MCA),
    OPT("-gmca", 2, E_MCA),
    OPT("--gmca", 2, E_MCA),
    OPT("-pmixmca", 2, E_NONE),
    OPT("--pmixmca", 2, E_NONE),
    OPT("-prtemca", 2, E_NONE),
    OPT("--prtemca", 2, E_NONE),
    OPT("-npersocket", 1, E_NONE),
    OPT("--npersocket", 1, E_NONE),
    OPT("-rank-by", 1, E_NONE),
    OPT("--rank-by", 1, E_NONE),
    OPT("-bind-to", 1, E_NONE),
    OPT("--bind-to", 1, E_NONE),
    OPT("-prefix", 1, E_NONE),
    OPT("--prefix", 1, E_NONE),
    OPT("-wdir", 1, E_NONE),
    OPT("--wdir", 1, E_NONE),
    OPT("-wd", 1, E_NONE),
    OPT("--wd", 1, E_NONE),
    OPT("-path", 1, E_NONE),
    OPT("--path", 1, E_NONE),
    OPT("-preload-files", 1, E_NONE),
    OPT("--preload-files", 1, E_NONE),
    OPT("-tmpdir", 1, E_NONE),
    OPT("--tmpdir", 1, E_NONE),
    OPT("-output-filename", 1, E_NONE),
    OPT("--output-filename", 1, E_NONE),
    OPT("-report-uri", 1, E_NONE),
    OPT("--report-uri", 1, E_NONE),
    OPT("-report-pid", 1, E_NONE),
    OPT("--report-pid", 1, E_NONE),
    OPT("-rankfile", 1, E_NONE),
    OPT("--rankfile", 1, E_NONE),
    OPT("-rf", 1, E_NONE),
    OPT("-cpus-per-proc", 1, E_NONE),
    OPT("--cpus-per-proc", 1, E_NONE),
    OPT("-cpus-per-rank", 1, E_NONE),
    OPT("--cpus-per-rank", 1, E_NONE),
    OPT("-cpu-set", 1, E_NONE),
    OPT("--cpu-set", 1, E_NONE),
    OPT("-cpu-list", 1, E_NONE),
    OPT("--cpu-list", 1, E_NONE),
    OPT("-slot-list", 1, E_NONE),
    OPT("--slot-list", 1, E_NONE),
    OPT("-app", 1, E_NONE),
    OPT("--app", 1, E_NONE),
    OPT("-am", 1, E_NONE),
    OPT("--am", 1, E_NONE),
    OPT("-tune", 1, E_NONE),
    OPT("--tune", 1, E_NONE),
    OPT("-timeout", 1, E_NONE),
    OPT("--timeout", 1, E_NONE),
    OPT("-stdin", 1, E_NONE),
    OPT("--stdin", 1, E_NONE),
    OPT("-ompi-server", 1, E_NONE),
    OPT("--ompi-server", 1, E_NONE),
    OPT("-launch-agent", 1, E_NONE),
    OPT("--launch-agent", 1, E_NONE),
    OPT("-max-vm-size", 1, E_NONE),
    OPT("--max-vm-size", 1, E_NONE),
    OPT("--output", 1, E_NONE),
    OPT("--display", 1, E_NONE),
    OPT("--runtime-options", 1, E_NONE),
    OPT("--personality", 1, E_NONE),
    OPT("-xterm", 1, E_NONE),
    OPT("--xterm", 1, E_NONE),
    OPT("--debugger", 1, E_NONE),
    OPT("-allow-run-as-root", 0, E_NONE),
    OPT("--allow-run-as-root", 0, E_NONE),
    OPT("-tag-output", 0, E_NONE),
    OPT("--tag-output", 0, E_NONE),
    OPT("-timestamp-output", 0, E_NONE),
    OPT("--timestamp-output", 0, E_NONE),
    OPT("-display-map", 0, E_NONE),
    OPT("--display-map", 0, E_NONE),
    OPT("-display-allocation", 0, E_NONE),
    OPT("--display-allocation", 0, E_NONE),
    OPT("-display-devel-map", 0, E_NONE),
    OPT("--display-devel-map", 0, E_NONE),
    OPT("-report-bindings", 0, E_NONE),
    OPT("--report-bindings", 0, E_NONE),
    OPT("-bind-to-core", 0, E_NONE),
    OPT("--bind-to-core", 0, E_NONE),
    OPT("-bind-to-socket", 0, E_NONE),
    OPT("--bind-to-socket", 0, E_NONE),
    OPT("-bynode", 0, E_NONE),
    OPT("--bynode", 0, E_NONE),
    OPT("-byslot", 0, E_NONE),
    OPT("--byslot", 0, E_NONE),
    OPT("-q", 0, E_NONE),
    OPT("--quiet", 0, E_NONE),
    OPT("-v", 0, E_NONE),
    OPT("--verbose", 0, E_NONE),
    OPT("-d", 0, E_NONE),
    OPT("--debug", 0, E_NONE),
    OPT("--debug-daemons", 0, E_NONE),
    OPT("-noprefix", 0, E_NONE),
    OPT("--noprefix", 0, E_NONE),
    OPT("-nolocal", 0, E_NONE),
    OPT("--nolocal", 0, E_NONE),
    OPT("-use-hwthread-cpus", 0, E_NONE),
    OPT("--use-hwthread-cpus", 0, E_NONE),
    OPT("-do-not-resolve", 0, E_NONE),
    OPT("--do-not-resolve", 0, E_NONE),
    OPT("--enable-recovery", 0, E_NONE),
    OPT("--disable-recovery", 0, E_NONE),
    OPT("-merge-stderr-to-stdout", 0, E_NONE),
    OPT("--merge-stderr-to-stdout", 0, E_NONE),
    OPT("-xml", 0, E_NONE),
    OPT("--xml", 0, E_NONE),
    OPT("--leave-session-attached", 0, E_NONE),
    OPT("-s", 0, E_NONE),
    OPT("--preload-binary", 0, E_NONE),
    OPT("--show-progress", 0, E_NONE),
    OPT("--hetero-nodes", 0, E_NONE),
    OPT("--continuous", 0, E_NONE),
    OPT("--report-state-on-timeout", 0, E_NONE),
    OPT("--get-stack-traces", 0, E_NONE),
    OPT("--index-argv-by-rank", 0, E_NONE),
    OPT("-h", 0, E_NONE),
    OPT("--help", 0, E_NONE),
    OPT("-V", 0, E_NONE),
    OPT("--version", 0, E_NONE),
    {NULL, 0, 0, 0},
};

/* Intel MPI and MPICH mpiexec.hydra (global and local options). */
static const struct opt hydra_opts[] = {
    OPT("-n", 1, E_NP),
    OPT("-np", 1, E_NP),
    OPT("-ppn", 1, E_PERNODE),
    OPT("-perhost", 1, E_PERNODE),
    OPT("-grr", 1, E_PERNODE),
    OPT("-rr", 0, E_RR),
    OPT("-genv", 2, E_GENV),
    OPT("-env", 2, E_GENV),
    OPT("-genvlist", 1, E_GENVLIST),
    OPT("-envlist", 1, E_GENVLIST),
    OPT("-genvall", 0, E_GENVALL),
    OPT("-envall", 0, E_GENVALL),
    OPT("-genvnone", 0, E_GENVNONE),
    OPT("-envnone", 0, E_GENVNONE),
    OPT("-genvexcl", 1, E_NONE),
    OPT("-envexcl", 1, E_NONE),
    OPT("-f", 1, E_HOSTFILE),
    OPT("-hostfile", 1, E_HOSTFILE),
    OPT("-machinefile", 1, E_HOSTFILE),
    OPT("-machine", 1, E_HOSTFILE),
    OPT("-hosts", 1, E_HOSTS),
    OPT("-host", 1, E_HOSTS),
    OPT("-wdir", 1, E_NONE),
    OPT("-path", 1, E_NONE),
    OPT("-configfile", 1, E_NONE),
    OPT("-bootstrap", 1, E_NONE),
    OPT("-bootstrap-exec", 1, E_NONE),
    OPT("-bootstrap-exec-args", 1, E_NONE),
    OPT("-launcher", 1, E_NONE),
    OPT("-launcher-exec", 1, E_NONE),
    OPT("-iface", 1, E_NONE),
    OPT("-rmk", 1, E_NONE),
    OPT("-demux", 1, E_NONE),
    OPT("-usize", 1, E_NONE),
    OPT("-bind-to", 1, E_NONE),
    OPT("-map-by", 1, E_NONE),
    OPT("-membind", 1, E_NONE),
    OPT("-binding", 1, E_NONE),
    OPT("-s", 1, E_NONE),
    OPT("-outfile-pattern", 1, E_NONE),
    OPT("-errfile-pattern", 1, E_NONE),
    OPT("-prepend-pattern", 1, E_NONE),
    OPT("-hosts-group", 1, E_NONE),
    OPT("-nameserver", 1, E_NONE),
    OPT("-branch-count", 1, E_NONE),
    OPT("-gtool", 1, E_NONE),
    OPT("-gtoolfile", 1, E_NONE),
    OPT("-localhost", 1, E_NONE),
    OPT("-ckpoint-prefix", 1, E_NONE),
    OPT("-ckpointlib", 1, E_NONE),
    OPT("-prepend-rank", 0, E_NONE),
    OPT("-l", 0, E_NONE),
    OPT("-v", 0, E_NONE),
    OPT("-verbose", 0, E_NONE),
    OPT("-info", 0, E_NONE),
    OPT("-version", 0, E_NONE),
    OPT("-print-all-exitcodes", 0, E_NONE),
    OPT("-print-rank-map", 0, E_NONE),
    OPT("-gdb", 0, E_NONE),
    OPT("-nolocal", 0, E_NONE),
    OPT("-ordered-output", 0, E_NONE),
    OPT("-silent-abort", 0, E_NONE),
    OPT("-disable-x", 0, E_NONE),
    OPT("-enable-x", 0, E_NONE),
    OPT("-ilp64", 0, E_NONE),
    OPT("-check_mpi", 0, E_NONE),
    OPT("-trace", 0, E_NONE),
    OPT("-mps", 0, E_NONE),
    OPT("-tune", 0, E_NONE),
    OPT("-h", 0, E_NONE),
    OPT("-help", 0, E_NONE),
    OPT("--help", 0, E_NONE),
    {NULL, 0, 0, 0},
};

/* horovodrun (horovod/horovod: horovod/runner/launch.py, parse_args). */
static const struct opt horovod_opts[] = {
    OPT("-np", 1, E_NP),
    OPT("--num-proc", 1, E_NP),
    OPT("-H", 1, E_HOSTS),
    OPT("--hosts", 1, E_HOSTS),
    OPT("-hostfile", 1, E_HOSTFILE),
    OPT("--hostfile", 1, E_HOSTFILE),
    OPT("--slots-per-host", 1, E_PERNODE),
    OPT("--slots", 1, E_PERNODE),
    OPT("-p", 1, E_NONE),
    OPT("--ssh-port", 1, E_NONE),
    OPT("-i", 1, E_NONE),
    OPT("--ssh-identity-file", 1, E_NONE),
    OPT("--min-np", 1, E_NONE),
    OPT("--min-num-proc", 1, E_NONE),
    OPT("--max-np", 1, E_NONE),
    OPT("--max-num-proc", 1, E_NONE),
    OPT("--host-discovery-script", 1, E_NONE),
    OPT("--network-interface", 1, E_NONE),
    OPT("--network-interfaces", 1, E_NONE),
    OPT("--output-filename", 1, E_NONE),
    OPT("--start-timeout", 1, E_NONE),
    OPT("--config-file", 1, E_NONE),
    OPT("--mpi-args", 1, E_NONE),
    OPT("--log-level", 1, E_NONE),
    OPT("--elastic-timeout", 1, E_NONE),
    OPT("--reset-limit", 1, E_NONE),
    OPT("--cycle-time-ms", 1, E_NONE),
    OPT("--cache-capacity", 1, E_NONE),
    OPT("--fusion-threshold-mb", 1, E_NONE),
    OPT("--timeline-filename", 1, E_NONE),
    OPT("--autotune-log-file", 1, E_NONE),
    OPT("--gloo-timeout-seconds", 1, E_NONE),
    OPT("--num-nccl-streams", 1, E_NONE),
    OPT("--thread-affinity", 1, E_NONE),
    OPT("--blacklist-cooldown-range", 2, E_NONE),
    OPT("--gloo", 0, E_NONE),
    OPT("--mpi", 0, E_NONE),
    OPT("--jsrun", 0, E_NONE),
    OPT("--tcp", 0, E_NONE),
    OPT("--verbose", 0, E_NONE),
    OPT("--disable-cache", 0, E_NONE),
    OPT("-cb", 0, E_NONE),
    OPT("--check-build", 0, E_NONE),
    OPT("-v", 0, E_NONE),
    OPT("--version", 0, E_NONE),
    OPT("--mpi-threads-disable", 0, E_NONE),
    OPT("--prefix-output-with-timestamp", 0, E_NONE),
    {NULL, 0, 0, 0},
};

static const struct {
    const char *name;
    size_t len;
} launchers[] = {
    {"mpirun", 6},  {"mpiexec", 7}, {"mpiexec.hydra", 13},
    {"orterun", 7}, {"prterun", 7}, {"horovodrun", 10},
};

bool tg_launcher_is_mpi(const char *word)
{
    const char *b = strrchr(word, '/');
    b = b ? b + 1 : word;
    size_t len = strlen(b);
    for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++)
        if (launchers[i].len == len && memcmp(b, launchers[i].name, len) == 0)
            return true;
    return false;
}

int tg_mpi_impl_parse(const char *s, enum tg_mpi_impl *out)
{
    if (!s || !*s || strcmp(s, "OpenMPI") == 0)
        *out = TG_MPI_OPENMPI;
    else if (strcmp(s, "Intel") == 0)
        *out = TG_MPI_INTEL;
    else if (strcmp(s, "MPICH") == 0)
        *out = TG_MPI_MPICH;
    else
        return -EINVAL;
    return 0;
}

const char *tg_mpi_impl_name(enum tg_mpi_impl impl)
{
    switch (impl) {
    case TG_MPI_INTEL:
        return "Intel";
    case TG_MPI_MPICH:
        return "MPICH";
    default:
        return "OpenMPI";
    }
}

/* The strings of a run (the names and values of its forwarded variables and its env names) are
 * carved from blocks it holds: a name costs no malloc of its own, nor a free. */
struct tg_mpirun_strings {
    struct tg_mpirun_strings *prev;
    size_t cap, used;
    char data[];
};

#define STRINGS_BLOCK 240 /* a block's data at the least (a -x list of a launch line fits) */

/* n bytes of run's strings, or NULL on ENOMEM. */
static char *strings_alloc(struct tg_mpirun *run, size_t n)
{
    struct tg_mpirun_strings *b = run->strings;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > STRINGS_BLOCK ? n : STRINGS_BLOCK;
        b = tg_arena_malloc(sizeof(*b) + cap);
        if (!b)
            return NULL;
        b->prev = run->strings;
        b->cap = cap;
        b->used = 0;
        run->strings = b;
    }
    char *p = b->data + b->used;
    b->used += n;
    return p;
}

void tg_mpirun_release(struct tg_mpirun *run)
{
    tg_arena_free(run->fwd);
    run->fwd = NULL;
    run->nfwd = 0;
    free(run->env);
    run->env = NULL;
    run->nenv = 0;
    for (struct tg_mpirun_strings *b = run->strings; b;) {
        struct tg_mpirun_strings *prev = b->prev;
        tg_arena_free(b);
        b = prev;
    }
    run->strings = NULL;
}

bool tg_mpirun_forwards_all(const struct tg_mpirun *run)
{
    if (run->forward_all)
        return true;
    return run->impl != TG_MPI_OPENMPI && !run->horovod && !run->forward_none && !run->forward_list;
}

bool tg_mpirun_env_has(const struct tg_mpirun *run, const char *name)
{
    for (size_t i = 0; i < run->nenv; i++)
        if (strcmp(run->env[i], name) == 0)
            return true;
    return false;
}

const struct tg_launch_fwd *tg_mpirun_find_fwd(const struct tg_mpirun *run, const char *name)
{
    /* the first bytes told apart without a call (names seldom share one) */
    for (size_t i = 0; i < run->nfwd; i++)
        if (run->fwd[i].name[0] == name[0] && strcmp(run->fwd[i].name, name) == 0)
            return &run->fwd[i];
    return NULL;
}

/* Adds or replaces a forwarded variable (the last definition wins, as on mpirun). The name and
 * the value are in the run's strings, the name first. */
static int add_fwd(struct tg_mpirun *run, const char *name, size_t namelen, const char *value,
                   bool value_resolved)
{
    size_t vlen = value ? strlen(value) : 0;
    char *n = strings_alloc(run, namelen + 1 + (value ? vlen + 1 : 0));
    if (!n)
        return -ENOMEM;
    memcpy(n, name, namelen);
    n[namelen] = '\0';
    char *v = value ? memcpy(n + namelen + 1, value, vlen + 1) : NULL;
    for (size_t i = 0; i < run->nfwd; i++) {
        if (run->fwd[i].name[0] == n[0] && strcmp(run->fwd[i].name, n) == 0) {
            run->fwd[i].name = n;
            run->fwd[i].value = v;
            run->fwd[i].value_resolved = value && value_resolved;
            return 0;
        }
    }
    /* the list grows by doubling: its room is the smallest power of two (at least 8) that
     * holds nfwd, so it is full exactly when nfwd is 8 or a larger power of two */
    if (run->nfwd == 0 || (run->nfwd >= 8 && (run->nfwd & (run->nfwd - 1)) == 0)) {
        size_t cap = run->nfwd ? run->nfwd * 2 : 8;
        struct tg_launch_fwd *nf =
            tg_arena_realloc(run->fwd, run->nfwd * sizeof(*nf), cap * sizeof(*nf));
        if (!nf)
            return -ENOMEM;
        run->fwd = nf;
    }
    struct tg_launch_fwd *f = run->fwd;
    f[run->nfwd].name = n;
    f[run->nfwd].value = v;
    f[run->nfwd].value_resolved = value && value_resolved;
    run->nfwd++;
    return 0;
}

/* The bytes of a variable name: 1 those it may start with (letters, '_'), 2 the digits. */
static const unsigned char name_byte[256] = {
    ['_'] = 1, ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1,
    ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1,
    ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1,
    ['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1,
    ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1,
    ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1,
    ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1, ['0'] = 2, ['1'] = 2, ['2'] = 2,
    ['3'] = 2, ['4'] = 2, ['5'] = 2, ['6'] = 2, ['7'] = 2, ['8'] = 2, ['9'] = 2,
};

/* A NAME: a letter or '_', then letters, digits and '_' (isalpha/isalnum of the C locale the
 * server runs in, by one table look a byte). */
static bool valid_name(const char *s, size_t len)
{
    if (!len || name_byte[(unsigned char)s[0]] != 1)
        return false;
    for (size_t i = 1; i < len; i++)
        if (!name_byte[(unsigned char)s[i]])
            return false;
    return true;
}

/* "A;B=1;C" (Open MPI mca_base_env_list: ';'-separated NAME or NAME=VALUE). */
int tg_mpirun_add_env_list(struct tg_mpirun *run, const char *list)
{
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ";");
        size_t nl = strcspn(p, "=;");
        while (nl && isspace((unsigned char)p[nl - 1]))
            nl--;
        const char *s = p;
        while (nl && isspace((unsigned char)*s)) {
            s++;
            nl--;
        }
        if (valid_name(s, nl)) {
            char val[512];
            const char *value = NULL;
            if (s[nl] == '=') {
                size_t vl = len - (size_t)(s + nl + 1 - p);
                snprintf(val, sizeof(val), "%.*s", (int)vl, s + nl + 1);
                value = val;
            }
            if (add_fwd(run, s, nl, value, true) < 0)
                return -ENOMEM;
        }
        p += len;
        if (*p == ';')
            p++;
    }
    return 0;
}

/* A "NAME" or "NAME=VALUE" word (-x). */
static int add_x(struct tg_mpirun *run, const struct tg_sh_word *w)
{
    const char *eq = strchr(w->text, '=');
    size_t nl = eq ? (size_t)(eq - w->text) : strlen(w->text);
    if (!valid_name(w->text, nl))
        return 0; /* "-x $VARS": the name itself is unknown */
    return add_fwd(run, w->text, nl, eq ? eq + 1 : NULL, w->resolved);
}

/* "a,b" (-genvlist): names, values taken from the launcher. */
static int add_name_list(struct tg_mpirun *run, const char *list)
{
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (valid_name(p, len) && add_fwd(run, p, len, NULL, false) < 0)
            return -ENOMEM;
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* --map-by ppr:N:node[:MODIFIERS] and any :OVERSUBSCRIBE / :NOOVERSUBSCRIBE modifier. */
static void read_map_by(struct tg_mpirun *run, const struct tg_sh_word *w)
{
    const char *t = w->text;
    const char *p = t;
    while (*p) {
        size_t len = strcspn(p, ":,");
        if (len == 13 && strncasecmp(p, "OVERSUBSCRIBE", 13) == 0)
            run->oversubscribe = true;
        else if (len == 15 && strncasecmp(p, "NOOVERSUBSCRIBE", 15) == 0)
            run->oversubscribe = false;
        p += len;
        if (*p)
            p++;
    }
    if (strncasecmp(t, "ppr:", 4) != 0)
        return;
    const char *num = t + 4;
    size_t nlen = strcspn(num, ":");
    const char *obj = num + nlen;
    if (*obj != ':' || strncasecmp(obj + 1, "node", 4) != 0 ||
        (obj[5] && obj[5] != ':' && obj[5] != ','))
        return; /* ppr:N:socket and friends: per socket, not per node */
    char buf[64];
    snprintf(buf, sizeof(buf), "%.*s", (int)(nlen < 63 ? nlen : 63), num);
    struct tg_sh_word nw = {.text = buf, .resolved = w->resolved, .reason = w->reason};
    tg_launch_value_read(&run->per_node, &nw, "--map-by ppr");
    snprintf(run->per_node.text, sizeof(run->per_node.text), "%s", t);
}

/* -H a:2,b:2 (OpenMPI: a host alone is one slot; hydra host:n the same way). */
static void read_hosts(struct tg_mpirun *run, const struct tg_sh_word *w)
{
    bool first = !run->hosts;
    run->hosts = true;
    if (first)
        run->host_slots_known = true;
    if (!w->resolved) {
        run->host_slots_known = false;
        return;
    }
    const char *p = w->text;
    while (*p) {
        size_t len = strcspn(p, ",");
        const char *colon = memchr(p, ':', len);
        long long slots = 1;
        if (colon) {
            char buf[32];
            size_t sl = len - (size_t)(colon + 1 - p);
            snprintf(buf, sizeof(buf), "%.*s", (int)(sl < 31 ? sl : 31), colon + 1);
            char *end;
            errno = 0;
            slots = strtoll(buf, &end, 10);
            if (errno || *end || !buf[0] || slots < 0)
                run->host_slots_known = false;
        }
        if (len > 0) {
            run->nhosts++;
            if (run->host_slots_known &&
                __builtin_add_overflow(run->host_slots, slots, &run->host_slots))
                run->host_slots_known = false;
        }
        p += len;
        if (*p == ',')
            p++;
    }
}

/* ---- option lookup -----------------------------------------------------------------------
 * A table is looked up through an index built on its first use: the FNV-1a hash of a name picks
 * a slot, and the slots after it are tried in turn (open addressing) until the name or an empty
 * slot. A scan of the 148 Open MPI options cost some 300 instructions per option word. No table
 * holds a name twice, so the index finds what a scan from the top would. */
#define OPT_SLOTS 512 /* a power of two, over twice the largest table */

struct opt_index {
    const struct opt *tab;
    pthread_once_t once;
    unsigned short slot[OPT_SLOTS]; /* 1 + the option's index in tab; 0: empty */
};

/* The slot of the n (>= 2: every name is '-' and more, as is every word looked up) bytes at s:
 * of the length and three of the bytes, not a pass over all of them. */
static size_t opt_hash(const char *s, size_t n)
{
    uint32_t h = (uint32_t)n * 97u + (unsigned char)s[1] * 31u + (unsigned char)s[n - 1] * 7u +
                 (unsigned char)s[n / 2] * 131u + (unsigned char)s[(n * 3) / 4];
    return (h ^ (h >> 5)) & (OPT_SLOTS - 1);
}

static void index_build(struct opt_index *x)
{
    for (size_t i = 0; x->tab[i].name; i++) {
        if (2 * (i + 1) > OPT_SLOTS || x->tab[i].len < 2) /* more slots; opt_hash reads 2 */
            abort();
        size_t k = opt_hash(x->tab[i].name, x->tab[i].len);
        while (x->slot[k])
            k = (k + 1) & (OPT_SLOTS - 1);
        x->slot[k] = (unsigned short)(i + 1);
    }
}

static struct opt_index openmpi_index = {.tab = openmpi_opts, .once = PTHREAD_ONCE_INIT};
static struct opt_index hydra_index = {.tab = hydra_opts, .once = PTHREAD_ONCE_INIT};
static struct opt_index horovod_index = {.tab = horovod_opts, .once = PTHREAD_ONCE_INIT};

static void build_openmpi(void)
{
    index_build(&openmpi_index);
}

static void build_hydra(void)
{
    index_build(&hydra_index);
}

static void build_horovod(void)
{
    index_build(&horovod_index);
}

/* The index of tab, built on first use. */
static const struct opt_index *index_of(const struct opt *tab)
{
    if (tab == openmpi_opts) {
        pthread_once(&openmpi_index.once, build_openmpi);
        return &openmpi_index;
    }
    if (tab == hydra_opts) {
        pthread_once(&hydra_index.once, build_hydra);
        return &hydra_index;
    }
    if (tab == horovod_opts) {
        pthread_once(&horovod_index.once, build_horovod);
        return &horovod_index;
    }
    abort(); /* a table without an index: give it one above */
}

/* The option of x named by the n bytes at s, or NULL. */
static const struct opt *index_find(const struct opt_index *x, const char *s, size_t n)
{
    for (size_t k = opt_hash(s, n); x->slot[k]; k = (k + 1) & (OPT_SLOTS - 1)) {
        const struct opt *o = &x->tab[x->slot[k] - 1];
        if (o->len == n && memcmp(o->name, s, n) == 0)
            return o;
    }
    return NULL;
}

/* The option word names in the table of x, or NULL; for --opt=value, *inl is the value. */
static const struct opt *find_opt(const struct opt_index *x, const char *word, const char **inl)
{
    size_t wl = strlen(word);
    *inl = NULL;
    const struct opt *o = index_find(x, word, wl);
    if (o)
        return o;
    const char *eq = memchr(word, '=', wl);
    if (!eq || word[1] != '-')
        return NULL; /* --opt=value only for long options */
    o = index_find(x, word, (size_t)(eq - word));
    if (!o || o->nargs != 1)
        return NULL;
    *inl = eq + 1;
    return o;
}

/* Applies one option with its arguments. */
static int apply(struct tg_mpirun *run, const struct opt *o, const struct tg_sh_word *a,
                 struct tg_launch_value *ctx_np)
{
    switch (o->eff) {
    case E_NP:
        tg_launch_value_read(ctx_np, &a[0], o->name);
        break;
    case E_PERNODE:
        tg_launch_value_read(&run->per_node, &a[0], o->name);
        break;
    case E_RR: {
        struct tg_sh_word one = {.text = "1", .resolved = true};
        tg_launch_value_read(&run->per_node, &one, o->name);
        snprintf(run->per_node.text, sizeof(run->per_node.text), "-rr");
        break;
    }
    case E_MAPBY:
        read_map_by(run, &a[0]);
        break;
    case E_OVERSUB:
        run->oversubscribe = true;
        break;
    case E_NOOVERSUB:
        run->oversubscribe = false;
        break;
    case E_HOSTS:
        read_hosts(run, &a[0]);
        break;
    case E_HOSTFILE:
        run->hostfile = true;
        snprintf(run->hostfile_path, sizeof(run->hostfile_path), "%s",
                 a[0].resolved ? a[0].text : "");
        break;
    case E_X:
        return add_x(run, &a[0]);
    case E_MCA:
        if (strcmp(a[0].text, "mca_base_env_list") == 0 && a[1].resolved)
            return tg_mpirun_add_env_list(run, a[1].text);
        break;
    case E_GENV:
        if (valid_name(a[0].text, strlen(a[0].text)))
            return add_fwd(run, a[0].text, strlen(a[0].text), a[1].text,
                           a[0].resolved && a[1].resolved);
        break;
    case E_GENVLIST:
        /* hydra's env propagation becomes "list:a,b" (pmodels/mpich: src/pm/hydra genvlist) */
        run->forward_list = true;
        run->forward_all = run->forward_none = false;
        if (a[0].resolved)
            return add_name_list(run, a[0].text);
        break;
    case E_GENVALL:
        run->forward_all = true;
        run->forward_none = run->forward_list = false;
        break;
    case E_GENVNONE:
        run->forward_none = true;
        run->forward_all = run->forward_list = false;
        break;
    default:
        break;
    }
    return 0;
}

static void add_counts(struct tg_launch_value *total, const struct tg_launch_value *ctx, bool first)
{
    if (first) {
        *total = *ctx;
        return;
    }
    if (!total->set)
        return;
    if (!ctx->set) {
        total->resolved = false;
        snprintf(total->reason, sizeof(total->reason),
                 "an app context after ':' has no process count");
        return;
    }
    if (total->resolved && ctx->resolved) {
        if (__builtin_add_overflow(total->value, ctx->value, &total->value)) {
            total->resolved = false;
            snprintf(total->reason, sizeof(total->reason), "process count overflows");
        }
    } else if (total->resolved) {
        total->resolved = false;
        snprintf(total->reason, sizeof(total->reason), "%s", ctx->reason);
    }
    size_t l = strlen(total->text);
    snprintf(total->text + l, sizeof(total->text) - l, "+%s", ctx->text);
}

int tg_mpirun_parse(const struct tg_sh_word *argv, size_t argc, enum tg_mpi_impl impl,
                    struct tg_mpirun *run)
{
    memset(run, 0, sizeof(*run));
    if (argc == 0)
        return 0;
    const char *b = strrchr(argv[0].text, '/');
    b = b ? b + 1 : argv[0].text;
    tg_launch_puts(run->launcher, sizeof(run->launcher), 0, b);
    run->horovod = strcmp(b, "horovodrun") == 0;
    /* mpiexec.hydra is hydra's own name (MPICH and Intel MPI install it; Open MPI does not): read
     * with hydra's grammar whatever the workload says (a Volcano task or a Pod names no
     * implementation) */
    if (impl == TG_MPI_OPENMPI && strcmp(b, "mpiexec.hydra") == 0)
        impl = strstr(argv[0].text, "intel") || strstr(argv[0].text, "oneapi") ? TG_MPI_INTEL
                                                                               : TG_MPI_MPICH;
    run->impl = impl;
    run->forward_all = run->horovod;
    /* the table's index found (and built on first use) once for the line, not per option */
    const struct opt_index *index = index_of(run->horovod             ? horovod_opts
                                             : impl == TG_MPI_OPENMPI ? openmpi_opts
                                                                      : hydra_opts);
    struct tg_launch_value ctx_np;
    memset(&ctx_np, 0, sizeof(ctx_np));
    bool first_ctx = true;
    size_t i = 1;
    while (i < argc) {
        const struct tg_sh_word *w = &argv[i];
        if (w->text[0] != '-' || !w->text[1]) {
            /* the program: its arguments are not ours. MPMD: another context after ':' */
            size_t j = i;
            if (!run->program)
                run->program = i;
            while (j < argc && strcmp(argv[j].text, ":") != 0)
                j++;
            if (j >= argc || run->horovod) {
                run->prog = run->mpmd ? 0 : i;
                break;
            }
            add_counts(&run->np, &ctx_np, first_ctx);
            first_ctx = false;
            run->mpmd = true;
            memset(&ctx_np, 0, sizeof(ctx_np));
            i = j + 1;
            continue;
        }
        const char *inl;
        const struct opt *o = find_opt(index, w->text, &inl);
        if (!o) {
            if (!run->note[0])
                snprintf(run->note, sizeof(run->note), "unknown %s option %.60s read as a flag",
                         run->horovod ? "horovodrun" : tg_mpi_impl_name(impl), w->text);
            i++;
            continue;
        }
        struct tg_sh_word args[2];
        if (inl) {
            args[0] = *w;
            args[0].text = (char *)inl;
            i++;
        } else {
            if (i + o->nargs >= argc) {
                if (!run->note[0])
                    snprintf(run->note, sizeof(run->note), "%s has no value", o->name);
                break;
            }
            for (size_t k = 0; k < o->nargs; k++)
                args[k] = argv[i + 1 + k];
            i += 1 + o->nargs;
        }
        if (apply(run, o, args, &ctx_np) < 0)
            goto out_nomem;
    }
    add_counts(&run->np, &ctx_np, first_ctx);
    return 0;
out_nomem:
    tg_mpirun_release(run);
    return -ENOMEM;
}

/* ---- the launcher's environment ------------------------------------------------------------ */

/* Adds name (len bytes) to run->env (once). */
static int env_add(struct tg_mpirun *run, const char *name, size_t len)
{
    for (size_t i = 0; i < run->nenv; i++)
        if (strlen(run->env[i]) == len && strncmp(run->env[i], name, len) == 0)
            return 0;
    char **v = realloc(run->env, (run->nenv + 1) * sizeof(*v));
    if (!v)
        return -ENOMEM;
    run->env = v;
    run->env[run->nenv] = strings_alloc(run, len + 1);
    if (!run->env[run->nenv])
        return -ENOMEM;
    memcpy(run->env[run->nenv], name, len);
    run->env[run->nenv][len] = '\0';
    run->nenv++;
    return 0;
}

int tg_mpirun_set_env(struct tg_mpirun *run, const struct tg_sh_env *env)
{
    static const char list_name[] = "OMPI_MCA_mca_base_env_list";
    const char *list = NULL;
    for (size_t i = 0; i < env->n; i++) {
        const struct tg_sh_env_var *e = &env->v[i];
        if (env_add(run, e->name, e->namelen) < 0)
            return -ENOMEM;
        if (e->namelen == sizeof(list_name) - 1 && !strncmp(e->name, list_name, e->namelen))
            list = e->value;
    }
    /* Open MPI reads mca_base_env_list from OMPI_MCA_mca_base_env_list too (open-mpi/ompi:
     * docs/mca.rst, "MCA parameters as environment variables"). */
    if (run->impl == TG_MPI_OPENMPI && list && tg_mpirun_add_env_list(run, list) < 0)
        return -ENOMEM;
    return 0;
}
