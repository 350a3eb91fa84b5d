/* launcher.h -- reads a container's command line the way POSIX sh and mpirun would: which MPI
 * launcher it runs, how many ranks, how many per node, and which variables reach the ranks.
 *
 * Contract:
 * - Nothing here guesses. A value that is not a literal, a literal `env` value of the same
 *   container, an assignment earlier in the same script, or simple $((...)) arithmetic over those,
 *   is "unresolved" and carries a one-line reason that names what could not be read.
 * - Every string in the results is owned by the result and freed by tg_launch_release().
 * - No function here reads the policy or reports findings: src/rules/mpi.c turns a struct
 *   tg_launch into findings; the EFA rules and the env mutator read the forwarded variables.
 * - Limits: scripts nest (sh -c 'bash -c "..."') at most TG_LAUNCH_MAX_DEPTH deep; at most
 *   TG_LAUNCH_MAX_RUNS launcher invocations are kept per container (more is never legitimate). */
#ifndef TG_LAUNCHER_H
#define TG_LAUNCHER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define TG_LAUNCH_MAX_DEPTH 4
#define TG_LAUNCH_MAX_RUNS 16
/* Reasons name a word of the script; 160 bytes keeps them inside a 256-character warning. */
#define TG_LAUNCH_REASON_MAX 160

/* spec.mpiImplementation (api-facts 2.2): the option grammar mpirun is read with. */
enum tg_mpi_impl {
    TG_MPI_OPENMPI = 0, /* default, and kubeflow.org/v1 MPIJobs */
    TG_MPI_INTEL,
    TG_MPI_MPICH,
};

/* "OpenMPI", "Intel", "MPICH" -> the enum; NULL or "" is OpenMPI. -EINVAL for anything else. */
int tg_mpi_impl_parse(const char *s, enum tg_mpi_impl *out);
const char *tg_mpi_impl_name(enum tg_mpi_impl impl);

/* ---- shell variables -------------------------------------------------------------------------
 * The variables a script can read: the container's `env` (literal values; valueFrom makes the name
 * known but its value unknown) and the assignments the script makes as it runs. */
struct tg_sh_var {
    char *name;
    char *value;   /* NULL: defined, value unknown (why says why) */
    char *why;     /* NULL when value is set */
    bool exported; /* in the environment of the commands the script runs */
};

struct tg_sh_vars {
    struct tg_sh_var *v;
    size_t n, cap;
};

void tg_sh_vars_init(struct tg_sh_vars *vs);
void tg_sh_vars_release(struct tg_sh_vars *vs);
/* Sets (or replaces) name. value NULL means "defined, unknown", with why as the reason.
 * Returns 0 or -ENOMEM. */
int tg_sh_vars_set(struct tg_sh_vars *vs, const char *name, const char *value, const char *why);
/* Marks name as exported (container env, `export NAME`); no-op when it is not defined. */
void tg_sh_vars_export(struct tg_sh_vars *vs, const char *name);
/* The variable, or NULL when the name was never defined. Borrowed. */
const struct tg_sh_var *tg_sh_vars_get(const struct tg_sh_vars *vs, const char *name);

/* ---- words ------------------------------------------------------------------------------------
 * One word of a simple command after quote removal and parameter expansion. */
struct tg_sh_word {
    char *text;    /* the word; unresolved parts kept as written ("$(hostname)") */
    bool resolved; /* every part of it is known */
    char *reason;  /* NULL when resolved: "$NP is not set in the container env or the script" */
};

/* Kubernetes $(VAR) expansion of one command/args item or env value (api-facts 1.17): $(NAME) is
 * replaced by the value of NAME when vars has it with a literal value, $$ becomes $, anything else
 * stays as written. *unknown (may be NULL) gets the first $(NAME) left unexpanded. Returns a
 * malloc'd string or NULL on ENOMEM. */
char *tg_k8s_expand(const char *s, const struct tg_sh_vars *vars, char *unknown, size_t unknownlen);

/* ---- launcher invocations ---------------------------------------------------------------------*/

/* A count given on the command line (-np, -N). */
struct tg_launch_value {
    bool set;      /* the option was given */
    bool resolved; /* value holds the number */
    long long value;
    char text[64];                     /* the word as seen, for messages ("$NP", "16") */
    char reason[TG_LAUNCH_REASON_MAX]; /* when set && !resolved */
};

/* One variable a launcher hands to the ranks it starts on other hosts. */
struct tg_launch_fwd {
    char *name;
    char *value;         /* -x NAME=VALUE, -genv NAME VALUE; NULL: the launcher's own value */
    bool value_resolved; /* value is known (false when value is NULL or has $(...)) */
};

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
    bool mpmd;                       /* ':'-separated app contexts; np is their sum */
    int depth;                       /* 0: the container's command/args; 1: inside sh -c ... */
    int line;                        /* 1-based line of the script where the command starts */
    size_t index;                    /* 0-based ordinal of the simple command in the script */
    size_t argv_index;               /* the command/args item (0-based over command then args)
                                        holding the launcher word, or the script it is in */
    char note[TG_LAUNCH_REASON_MAX]; /* parse remark (unknown option where reading stopped) */
};

struct tg_launch {
    struct tg_mpirun *runs;
    size_t nruns;
    bool script_error; /* unterminated quote or similar: reading stopped there */
    char error[TG_LAUNCH_REASON_MAX];
};

void tg_launch_init(struct tg_launch *l);
void tg_launch_release(struct tg_launch *l);

/* Reads argv (a container's command followed by its args, already Kubernetes-expanded, as
 * words: exec form, no shell parsing at this level) with the variables in vars (updated by the
 * assignments the script makes). Appends every launcher invocation found to out. Returns 0 or
 * -ENOMEM. */
int tg_launch_parse_words(const struct tg_sh_word *argv, size_t argc, struct tg_sh_vars *vars,
                          enum tg_mpi_impl impl, struct tg_launch *out);

/* Reads one shell script (the text after sh -c) at nesting depth. Same contract. */
int tg_launch_parse_script(const char *script, struct tg_sh_vars *vars, enum tg_mpi_impl impl,
                           int depth, struct tg_launch *out);

/* Reads the launcher words that start at argv[0] (the launcher itself) into run. Used by the
 * shell walker; exposed for tests. Returns 0 or -ENOMEM. */
int tg_mpirun_parse(const struct tg_sh_word *argv, size_t argc, enum tg_mpi_impl impl,
                    struct tg_mpirun *run);
void tg_mpirun_release(struct tg_mpirun *run);
/* Adds the names of an Open MPI mca_base_env_list value ("A;B=1;C") to run's forwarded
 * variables (the --mca / OMPI_MCA_ form of -x). Returns 0 or -ENOMEM. */
int tg_mpirun_add_env_list(struct tg_mpirun *run, const char *list);

/* True when word (a path or a name) is a launcher: mpirun, mpiexec, mpiexec.hydra, orterun,
 * prterun, horovodrun, in any directory. */
bool tg_launcher_is_mpi(const char *word);

/* Everything at once for a container object (borrowed): builds the variables from its `env`,
 * Kubernetes-expands command and args, and reads them. A container without command and args
 * runs its image's entrypoint: no runs. Wrong JSON types (command not an array of strings) give
 * no runs. Returns 0 or -ENOMEM. */
int tg_launch_parse_container(json_t *container, enum tg_mpi_impl impl, struct tg_launch *out);

/* For the env mutator and the EFA rules: does the container run an Open MPI launcher (mpirun,
 * mpiexec, orterun, prterun, or horovodrun on an OpenMPI job), and is `name` forwarded to the
 * ranks by every such invocation (-x NAME[=...], mca_base_env_list, or forward-all)? */
bool tg_launch_runs_openmpi(const struct tg_launch *l);
bool tg_launch_forwards(const struct tg_launch *l, const char *name);
/* Does the whole launcher environment reach the ranks: -genvall, horovodrun, or Intel MPI /
 * MPICH hydra by default (not after -genvnone or -genvlist)? Open MPI: only with -genvall-like
 * flags it does not have, so false. */
bool tg_mpirun_forwards_all(const struct tg_mpirun *run);
/* Is name in the environment the launcher process starts with (run->env)? */
bool tg_mpirun_env_has(const struct tg_mpirun *run, const char *name);
/* The forwarded entry for name in run, or NULL. Borrowed. */
const struct tg_launch_fwd *tg_mpirun_find_fwd(const struct tg_mpirun *run, const char *name);

#endif
