/* launch.h -- what a container's command line launches: it walks the command and args the way
 * Kubernetes and a POSIX shell would (include/tg/expand.h, include/tg/shell.h) and hands each
 * simple command to the reader of its command word (the MPI launchers, include/tg/mpirun.h;
 * torchrun, include/tg/torchrun.h).
 *
 * Contract:
 * - Nothing here guesses. A value that is not a literal, a literal `env` value of the same
 *   container, an assignment earlier in the same script, or simple $((...)) arithmetic over those,
 *   is "unresolved" and carries a one-line reason that names what could not be read.
 * - Every string in the results is owned by the result and freed by tg_launch_release().
 * - No function here reads the policy or reports findings: src/rules/mpi.c turns a struct
 *   tg_launch into findings; the EFA rules and the env mutator read the forwarded variables.
 * - Limits: scripts nest (sh -c 'bash -c "..."') at most TG_LAUNCH_MAX_DEPTH deep; at most
 *   TG_LAUNCH_MAX_RUNS launcher invocations of one kind are kept per container (more is never
 *   legitimate). */
#ifndef TG_LAUNCH_H
#define TG_LAUNCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "tg/launch_plan.h"
#include "tg/launch_value.h"
#include "tg/mpirun.h"
#include "tg/shell.h"
#include "tg/torchrun.h"

#define TG_LAUNCH_MAX_DEPTH TG_SH_MAX_DEPTH
#define TG_LAUNCH_MAX_RUNS 16

/* Everything one container's command line launches, one array per kind of launch, each in the
 * order the shell runs them. A new kind (torchrun, deepspeed, accelerate launch, ...) adds its
 * array here, its release to tg_launch_release(), and its row to the reader table in
 * src/launcher/launch.c. */
struct tg_launch {
    struct tg_mpirun *runs; /* MPI launchers: mpirun, mpiexec, orterun, prterun, horovodrun */
    size_t nruns;
    struct tg_plan
        *plans; /* training launches read for the parallel plan (include/tg/launch_plan.h) */
    size_t nplans;
    size_t cap_plans;          /* plans allocated (a command is read into the one after the last) */
    struct tg_torchrun *torch; /* torchrun, python -m torch.distributed.run / .launch */
    size_t ntorch;
    bool script_error; /* unterminated quote or similar: reading stopped there */
    char error[TG_LAUNCH_REASON_MAX];
};

void tg_launch_init(struct tg_launch *l);
void tg_launch_release(struct tg_launch *l);

/* Where a script starts: the container's workingDir (NULL: the image's, not known). Files the
 * script writes (here-documents, `echo ... > file`) are found by the plan reader relative to it
 * and to the script's `cd`s. */
int tg_launch_parse_words_in(const struct tg_sh_word *argv, size_t argc, struct tg_sh_vars *vars,
                             enum tg_mpi_impl impl, const char *workdir, struct tg_launch *out);

/* Reads argv (a container's command followed by its args, already Kubernetes-expanded, as
 * words: exec form, no shell parsing at this level) with the variables in vars (updated by the
 * assignments the script makes). Appends every launch found to out; impl is the grammar MPI
 * launchers are read with. Returns 0 or -ENOMEM. */
int tg_launch_parse_words(const struct tg_sh_word *argv, size_t argc, struct tg_sh_vars *vars,
                          enum tg_mpi_impl impl, struct tg_launch *out);

/* Reads one shell script (the text after sh -c) at nesting depth. Same contract. */
int tg_launch_parse_script(const char *script, struct tg_sh_vars *vars, enum tg_mpi_impl impl,
                           int depth, struct tg_launch *out);

/* Everything at once for a container object (borrowed): builds the variables from its `env`,
 * Kubernetes-expands command and args, and reads them. A container without command and args
 * runs its image's entrypoint: no launches. Wrong JSON types (command not an array of strings)
 * give no launches. A container whose command, args and literal env values name no launcher is
 * not read (docs/launcher.md, "A fast path"). Returns 0 or -ENOMEM. */
int tg_launch_parse_container(json_t *container, enum tg_mpi_impl impl, struct tg_launch *out);
/* The same for a caller that has the container's command and args at hand (its "command" and
 * "args" members, NULL when absent). */
int tg_launch_parse_container_items(json_t *container, json_t *cmd, json_t *args,
                                    enum tg_mpi_impl impl, struct tg_launch *out);

/* Does s contain one of the strings some command line a reader reads contains (mpirun, torchrun,
 * parallel, batch, ...: src/launcher/launch.c)? The fast path's test on each string. */
bool tg_launch_mentions(const char *s);

/* For the env mutator and the EFA rules: does the container run an Open MPI launcher (mpirun,
 * mpiexec, orterun, prterun, or horovodrun on an OpenMPI job), and is `name` forwarded to the
 * ranks by every such invocation (-x NAME[=...], mca_base_env_list, or forward-all)? */
bool tg_launch_runs_openmpi(const struct tg_launch *l);
bool tg_launch_forwards(const struct tg_launch *l, const char *name);

#endif
