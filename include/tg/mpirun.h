/* mpirun.h -- the option grammar of the MPI launchers (mpirun, mpiexec, mpiexec.hydra, orterun,
 * prterun, horovodrun) over the words of one command: how many ranks, how many per node, on
 * which hosts, and which variables reach the ranks.
 *
 * Contract:
 * - Input is words the shell reader already expanded (include/tg/shell.h); nothing here reads a
 *   script, a container or the policy. A count that is not a literal is unresolved with a reason
 *   (include/tg/launch_value.h).
 * - Reading stops at the program: its arguments are never taken for launcher options. An option
 *   the grammar does not know is read as a flag, and the first one is noted.
 * - Every string in a struct tg_mpirun is owned by it and freed by tg_mpirun_release(). */
#ifndef TG_MPIRUN_H
#define TG_MPIRUN_H

#include <stdbool.h>
#include <stddef.h>

#include "tg/launch_value.h"
#include "tg/shell.h"

/* spec.mpiImplementation of an MPIJob (kubeflow/mpi-operator v2beta1): the option grammar
 * mpirun is read with. */
enum tg_mpi_impl {
    TG_MPI_OPENMPI = 0, /* default, and kubeflow.org/v1 MPIJobs */
    TG_MPI_INTEL,
    TG_MPI_MPICH,
};

/* "OpenMPI", "Intel", "MPICH" -> the enum; NULL or "" is OpenMPI. -EINVAL for anything else. */
int tg_mpi_impl_parse(const char *s, enum tg_mpi_impl *out);
const char *tg_mpi_impl_name(enum tg_mpi_impl impl);

/* True when word (a path or a name) is an MPI launcher: mpirun, mpiexec, mpiexec.hydra,
 * orterun, prterun, horovodrun, in any directory. */
bool tg_launcher_is_mpi(const char *word);

/* One variable a launcher hands to the ranks it starts on other hosts. */
struct tg_launch_fwd {
    char *name;
    char *value;         /* -x NAME=VALUE, -genv NAME VALUE; NULL: the launcher's own value
                            (name and value are held by the run's strings) */
    bool value_resolved; /* value is known (false when value is NULL or has $(...)) */
};

/* A block of the strings a run holds (tg_mpirun_release frees them). */
struct tg_mpirun_strings;

/* One launcher invocation. */
struct tg_mpirun {
    char launcher[32];     /* basename as written: "mpirun", "mpiexec.hydra", "horovodrun" */
    enum tg_mpi_impl impl; /* grammar used (horovodrun: the job's implementation) */
    bool horovod;
    struct tg_launch_value np;       /* -np/-n/--np/-c (OpenMPI), -n/-np (hydra), horovodrun -np */
    struct tg_launch_value per_node; /* -N/--npernode/--map-by ppr:N:node, -ppn/-perhost */
    bool oversubscribe;              /* --oversubscribe or a :OVERSUBSCRIBE map modifier */
    bool hosts;                      /* -H/--host/-host/-hosts given */
    bool host_slots_known;           /* every -H entry is a literal host[:slots] */
    long long host_slots;            /* slots those entries give (OpenMPI: host alone = 1) */
    size_t nhosts;
    bool hostfile;             /* --hostfile/-hostfile/--machinefile/-f given */
    char hostfile_path[128];   /* as written ("" when unresolved) */
    struct tg_launch_fwd *fwd; /* forwarded variables, in command-line order */
    size_t nfwd;
    bool forward_all;  /* -genvall/-envall, or horovodrun (forwards its env) */
    bool forward_none; /* -genvnone/-envnone */
    bool forward_list; /* -genvlist/-envlist: hydra passes only those names */
    char **env;        /* names in the launcher process's environment: the
                          container env, exported script variables, prefix
                          assignments, `env NAME=VALUE` (values may be unknown) */
    size_t nenv;
    struct tg_mpirun_strings *strings; /* the names and values of fwd and env (NULL: none) */
    bool mpmd;                         /* ':'-separated app contexts; np is their sum */
    size_t prog; /* the word (index into the words parsed) where the program starts; 0 when
                    there is none, or several (MPMD) */
    /* Where the invocation is (set by its caller, src/launcher/launch.c, from the shell walk). */
    int depth;                       /* 0: the container's command/args; 1: inside sh -c ... */
    int line;                        /* 1-based line of the script where the command starts */
    size_t index;                    /* 0-based ordinal of the simple command in the script */
    size_t argv_index;               /* the command/args item (0-based over command then args)
                                        holding the launcher word, or the script it is in */
    char note[TG_LAUNCH_REASON_MAX]; /* parse remark (unknown option where reading stopped) */
    size_t program;                  /* index in the launcher's words of the program each rank
                                        runs (0: none seen) */
    long long rank_procs;            /* processes each rank starts: the --nproc_per_node of a
                                        per-node launcher (torchrun) the ranks run; 1 when the
                                        program is not one, 0 when unknown (gpu, auto, unread,
                                        or a shell script, which may start one) */
};

/* Reads the launcher words that start at argv[0] (the launcher itself) into run (which it
 * initialises; where-fields and env stay empty). Returns 0 or -ENOMEM (run is then released). */
int tg_mpirun_parse(const struct tg_sh_word *argv, size_t argc, enum tg_mpi_impl impl,
                    struct tg_mpirun *run);
void tg_mpirun_release(struct tg_mpirun *run);

/* Records env, the environment the launcher process starts with (tg_sh_cmd_env), in run->env
 * (each name once), and for Open MPI the variables that the last OMPI_MCA_mca_base_env_list of
 * that environment forwards. Returns 0 or -ENOMEM. */
int tg_mpirun_set_env(struct tg_mpirun *run, const struct tg_sh_env *env);

/* Adds the names of an Open MPI mca_base_env_list value ("A;B=1;C") to run's forwarded
 * variables (the --mca / OMPI_MCA_ form of -x). Returns 0 or -ENOMEM. */
int tg_mpirun_add_env_list(struct tg_mpirun *run, const char *list);

/* Does the whole launcher environment reach the ranks: -genvall, horovodrun, or Intel MPI /
 * MPICH hydra by default (not after -genvnone or -genvlist)? Open MPI: only with -genvall-like
 * flags it does not have, so false. */
bool tg_mpirun_forwards_all(const struct tg_mpirun *run);
/* Is name in the environment the launcher process starts with (run->env)? */
bool tg_mpirun_env_has(const struct tg_mpirun *run, const char *name);
/* The forwarded entry for name in run, or NULL. Borrowed. */
const struct tg_launch_fwd *tg_mpirun_find_fwd(const struct tg_mpirun *run, const char *name);

#endif
