/* torchrun.h -- a torchrun command read the way torch.distributed.run parses it: `torchrun`,
 * `python -m torch.distributed.run` and the older `python -m torch.distributed.launch`, for the
 * options the rules compare with the workload (SPEC 11): --nnodes (N or MIN:MAX),
 * --nproc-per-node / --nproc_per_node (N, gpu, auto, cpu, xpu), --standalone and the rendezvous.
 *
 * Facts (pytorch/pytorch torch/distributed/run.py, get_args_parser and run;
 * docs/references.md#ref-torchrun): every option has an environment fallback PET_<OPTION>
 * (PET_NNODES, PET_NPROC_PER_NODE, PET_STANDALONE, ...) that applies when the option is not on
 * the command line; --nnodes defaults to 1:1 and --nproc-per-node to 1; --standalone runs a
 * rendezvous on localhost: a one-node world.
 *
 * Contract: as include/tg/launch.h (nothing guessed; a value that cannot be read is unresolved
 * with a one-line reason). Options are read up to the training script (the first word that is not
 * an option or an option's value); the script's own arguments are never read as torchrun's. */
#ifndef TG_TORCHRUN_H
#define TG_TORCHRUN_H

#include <stdbool.h>
#include <stddef.h>

#include "tg/launch_value.h"
#include "tg/shell.h"

/* One option as the torchrun process will see it. */
struct tg_torch_opt {
    bool set;      /* on the command line, or from PET_<OPTION> in the environment */
    bool from_env; /* set from env_name, not from the command line */
    bool resolved; /* text is known */
    char text[64]; /* "4", "2:4", "gpu", "$NNODES" as seen */
    char env_name[32];
    char reason[TG_LAUNCH_REASON_MAX]; /* when set && !resolved */
};

struct tg_torchrun {
    char launcher[48];          /* "torchrun", "python -m torch.distributed.run", ... */
    struct tg_torch_opt nnodes; /* not set: torchrun's default 1:1 */
    struct tg_torch_opt nproc;  /* not set: torchrun's default 1 */
    bool standalone;            /* --standalone, or PET_STANDALONE=1 */
    bool rdzv;                  /* a rendezvous endpoint or backend is given */
    size_t script;              /* the word of the command where the training script (or, with
                                   -m, the module) starts; 0 when there is none */
    int depth;                  /* as struct tg_sh_cmd */
    int line;
    size_t index;
    size_t argv_index;
};

/* Could word (a path or a name) start torchrun: torchrun itself, or a Python interpreter
 * (python, python3, python3.11, in any directory) that may run `-m torch.distributed.run`. */
bool tg_launcher_is_torch(const char *word);

/* Reads one simple command (include/tg/shell.h) into out. Returns 1 when it runs torchrun, 0
 * when it does not (a Python interpreter running something else), -ENOMEM. */
int tg_torchrun_parse(const struct tg_sh_cmd *cmd, struct tg_torchrun *out);

/* The last read of tg_torchrun_parse_memo(), for the other readers of the same command (the MPI
 * reader for what each rank starts, the torchrun reader, the plan reader all read the torchrun
 * of one line). Keyed by the words read: the caller empties it (words NULL) before each new
 * command, as an earlier command's words may have stood at the same address. */
struct tg_torchrun_memo {
    const struct tg_sh_word *words;
    size_t nwords;
    int rc;
    struct tg_torchrun r;
};

/* tg_torchrun_parse(), or the copy memo keeps of the same words' read (memo NULL: none). */
int tg_torchrun_parse_memo(struct tg_torchrun_memo *memo, const struct tg_sh_cmd *cmd,
                           struct tg_torchrun *out);

/* The effective node count: 1 and *min, *max when known (torchrun's 1:1 when nothing sets it; a
 * standalone run is one node); 0 when the value is unresolved or not a count or range. */
int tg_torchrun_nnodes(const struct tg_torchrun *r, long long *min, long long *max);

/* The effective processes per node: 1 and *n for a number (torchrun's 1 when nothing sets it); 0
 * for gpu, auto, cpu, xpu (torchrun counts the devices itself), an unresolved value, or a value
 * that is not a count. */
int tg_torchrun_nproc(const struct tg_torchrun *r, long long *n);

#endif
