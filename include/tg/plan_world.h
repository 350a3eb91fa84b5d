/* plan_world.h -- the world size of a training launch (SPEC 11): how many processes train
 * together, from the launchers on its line (include/tg/launch_plan.h) and the workload around it.
 *
 * - mpirun: -np (-n) ranks; without it, every slot of the MPIJob's hostfile (slotsPerWorker x
 *   workers, the launcher only with runLauncherAsWorker) or -N per node x hosts. The MPI launcher
 *   is never a rank. A rank that runs torchrun starts nproc_per_node processes.
 * - torchrun: nnodes x nproc_per_node as the process sees them (command line, else PET_* env,
 *   the operator's own entries winning, else 1 and 1; --standalone is one node); gpu and auto
 *   count the pod's GPUs; an elastic MIN:MAX range is not one world.
 * - the DeepSpeed launcher: the kept hosts of its hostfile (--num_nodes caps them) x GPUs per
 *   host (--num_gpus, else the hostfile's slots); without a hostfile, the local GPUs; --include
 *   localhost:0,1,... counts the slots it names.
 * - accelerate launch: --num_processes (the total).
 * - NeMo: trainer.num_nodes x trainer.devices when nothing else starts the processes.
 * Facts: docs/references.md#ref-plan-world-mpi, #ref-plan-torchrun, #ref-plan-deepspeed-launcher,
 * #ref-plan-accelerate, #ref-plan-nemo1, #ref-plan-nemo2. */
#ifndef TG_PLAN_WORLD_H
#define TG_PLAN_WORLD_H

#include <stdbool.h>
#include <stddef.h>

#include "tg/eval.h"
#include "tg/launch.h"
#include "tg/workload.h"

struct tg_plan_world {
    bool known;
    long long n;                    /* processes */
    long long nodes, per_node;      /* n = nodes x per_node when both are above 0 */
    char how[128];                  /* "torchrun: 8 nodes x 8 GPUs", "mpirun -np 16": read it
                                       through tg_plan_world_how */
    char why[TG_LAUNCH_REASON_MAX]; /* !known: the reason */
    /* The how of the common worlds is written only when it is read (a finding or check's plan
     * view shows it; a snprintf costs more than the rest of the world): its form and parts. */
    enum {
        TG_HOW_TEXT = 0, /* how is written */
        TG_HOW_NODES,    /* "<who>: <nodes> node(s) x <per> <what>" */
        TG_HOW_NP,       /* "<who> -np <n>" */
    } how_form;
    const char *how_who, *how_what;
    long long how_nodes, how_per;
    /* torchrun under mpirun: the ranks' how (cut at 60 bytes) then ", each rank running torchrun
     * with <torch_nproc> <torch_what>" */
    bool how_torch;
    long long torch_nproc;
    const char *torch_what;
};

/* The how of a known world: w->how, or written into buf[len] (128 bytes hold all of it). */
const char *tg_plan_world_how(const struct tg_plan_world *w, char *buf, size_t len);

/* The world of plan p, read from container c of template t (launch l holds the plan's MPI runs).
 * Returns 0, or -ENOMEM. */
int tg_plan_world(struct tg_eval *ev, const struct tg_template *t, const struct tg_container *c,
                  const struct tg_launch *l, const struct tg_plan *p, struct tg_plan_world *w);

/* The template whose pods run the ranks of a launch read from t: an MPIJob's Worker for its
 * Launcher (t itself with runLauncherAsWorker and no Worker), else t. */
const struct tg_template *tg_plan_rank_template(const struct tg_workload *wl,
                                                const struct tg_template *t);

/* nvidia.com/gpu of template t's pod: 1 and *n when written and a count above 0, else 0. */
int tg_plan_pod_gpus(const struct tg_template *t, long long *n);

#endif
