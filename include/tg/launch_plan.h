/* launch_plan.h -- the parallel plan of a training launch line (SPEC 11): what starts the processes
 * (mpirun, torchrun, the DeepSpeed launcher, accelerate launch, the NeMo 2 CLI, python), and what
 * the training program is told: tensor, pipeline, context, expert parallel sizes, micro and
 * global batch, gradient accumulation, a DeepSpeed JSON config.
 *
 * Frameworks read (flags and defaults: docs/references.md#ref-plan):
 * - Megatron-LM / Megatron-Core (`--tensor-model-parallel-size`, ..., the v1 spellings
 *   `--model-parallel-size` and `--batch-size`, `--yaml-cfg`);
 * - Megatron-DeepSpeed (the same with `--deepspeed`, `--deepspeed_config`,
 *   `--ds-sequence-parallel-size`, `--moe-expert-parallel-size`);
 * - NeMo 1 Hydra overrides (`trainer.devices=8`, `+model.context_parallel_size=2`, `++...`) and the
 *   NeMo 2 CLI (`nemo llm pretrain --factory RECIPE
 * trainer.strategy.tensor_model_parallel_size=2`);
 * - Hugging Face Trainer flags (`--per_device_train_batch_size`, `--gradient_accumulation_steps`,
 *   `--deepspeed '{...}'` or a path) and DeepSpeed JSON configs, inline or written by a
 *   here-document earlier in the same script.
 *
 * Contract:
 * - Nothing is guessed. A value is given (with where it was read), absent (the framework's
 *   default then applies, when the framework has one the reader knows), or unknown with a
 *   one-line reason: an unresolved shell word, a value that lives in a file (a config file, a
 *   NeMo 2 recipe), a flag value that is not a number. The rules (src/rules/plan.c) never let a
 *   finding rest on an unknown value.
 * - The world size is not computed here: it needs the workload (pods, slots, GPUs per pod). The
 *   plan records what the launchers on the line say; src/rules/plan.c combines it with the view.
 * - Everything a struct tg_plan holds is inside it (fixed-size text); no release is needed. */
#ifndef TG_LAUNCH_PLAN_H
#define TG_LAUNCH_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "tg/launch_value.h"
#include "tg/shell.h"
#include "tg/torchrun.h"

/* Where a value stands. */
enum tg_pv_state {
    TG_PV_ABSENT = 0, /* not given: the framework's default applies (if it has one) */
    TG_PV_SET,        /* given, and value holds it */
    TG_PV_UNKNOWN,    /* given (or hidden in a file) but not known: why says why */
    TG_PV_AUTO,       /* DeepSpeed "auto": filled in by the Hugging Face integration */
};

/* One value of a plan. */
struct tg_plan_value {
    enum tg_pv_state state;
    long long value;
    char src[96];                   /* where it was read: "--global-batch-size 64" */
    char why[TG_LAUNCH_REASON_MAX]; /* TG_PV_UNKNOWN: the reason */
};

/* The training program's framework, as its arguments show it. */
enum tg_plan_fw {
    TG_PLAN_FW_NONE = 0,
    TG_PLAN_FW_MEGATRON,    /* Megatron-LM / Megatron-Core arguments */
    TG_PLAN_FW_MEGATRON_DS, /* Megatron-DeepSpeed: Megatron arguments with DeepSpeed's */
    TG_PLAN_FW_NEMO1,       /* NeMo 1: Hydra overrides of trainer.* and model.* */
    TG_PLAN_FW_NEMO2,       /* NeMo 2: nemo llm ... with recipe overrides */
    TG_PLAN_FW_HF,          /* Hugging Face Trainer arguments (or accelerate scripts using them) */
    TG_PLAN_FW_DEEPSPEED,   /* a DeepSpeed config and no other framework's arguments */
};

/* A file the script wrote before the launch line (`cat <<EOF > ds_config.json`). */
struct tg_plan_file {
    const char *path;    /* absolute, or relative to the container's starting directory */
    const char *content; /* NULL: not known (why says why) */
    const char *why;
};

struct tg_plan_files {
    const struct tg_plan_file *v;
    size_t n;
};

/* The DeepSpeed launcher's options (deepspeed/launcher/runner.py). */
struct tg_plan_ds_launcher {
    struct tg_plan_value num_nodes; /* --num_nodes: keep the first N hosts of the hostfile */
    struct tg_plan_value num_gpus;  /* --num_gpus / --num_accelerators: GPUs per kept host */
    char hostfile[128];             /* -H/--hostfile as written; "" when not given */
    bool hostfile_set;
    bool hostfile_known; /* the hostfile word is resolved */
    char include[128];   /* -i/--include NODE_SPEC[@NODE_SPEC...]; "" when not given */
    bool include_known;  /* the include word is resolved */
    bool exclude;        /* -e/--exclude given */
};

/* accelerate launch's options (src/accelerate/commands/launch.py). */
struct tg_plan_accelerate {
    struct tg_plan_value num_processes; /* the total over all machines */
    struct tg_plan_value num_machines;
    char config_file[128]; /* --config_file; "" when not given (the default config may exist) */
};

/* A DeepSpeed JSON config: inline, from a here-document, or a file not known at admission. */
struct tg_plan_ds_config {
    bool given;                 /* the line names a config */
    char src[128];              /* "inline --deepspeed", "ds_config.json (written on line 3)" */
    struct tg_plan_value train; /* train_batch_size */
    struct tg_plan_value micro; /* train_micro_batch_size_per_gpu */
    struct tg_plan_value gas;   /* gradient_accumulation_steps */
};

struct tg_plan {
    /* ---- how the processes start (outermost first) ---- */
    bool mpi; /* an MPI launcher starts the program: mpi_run is its index in the
                 launch's runs */
    size_t mpi_run;
    bool torch; /* torchrun (under mpirun: each rank runs it), read by the torchrun reader
                   (include/tg/torchrun.h) into tr */
    struct tg_torchrun tr;
    bool deepspeed; /* the DeepSpeed launcher */
    struct tg_plan_ds_launcher ds;
    bool accelerate; /* accelerate launch */
    struct tg_plan_accelerate acc;
    bool nemo_cli;     /* nemo llm ... (NeMo 2): world = trainer.num_nodes x trainer.devices */
    char recipe[64];   /* --factory / -f RECIPE */
    bool direct;       /* the program runs as it is (python script.py): one process, unless
                          the framework spawns (NeMo) */
    char launcher[48]; /* for messages: "mpirun + torchrun", "deepspeed", "accelerate launch" */

    /* ---- the program ---- */
    enum tg_plan_fw fw;
    char program[64]; /* the script's base name: "pretrain_gpt.py", "megatron_gpt_pretraining.py" */
    struct tg_plan_value tp, pp, cp, ep, etp;
    struct tg_plan_value ds_sp;          /* Megatron-DeepSpeed --ds-sequence-parallel-size */
    struct tg_plan_value experts;        /* Megatron-LM --num-experts, NeMo 1 model.num_moe_experts
                                            (absent: a dense model) */
    size_t experts_word;                 /* the word of the command (as struct tg_sh_cmd words)
                                            that gives experts */
    struct tg_plan_value micro, gbs;     /* Megatron --micro-batch-size / --global-batch-size,
                                            NeMo model./data. micro_batch_size, global_batch_size,
                                            HF --per_device_train_batch_size (micro) */
    struct tg_plan_value accum;          /* HF --gradient_accumulation_steps, NeMo
                                            trainer.accumulate_grad_batches */
    struct tg_plan_value rampup;         /* --rampup-batch-size START INCR SAMPLES: value = START */
    bool decrease_if_needed;             /* --decrease-batch-size-if-needed */
    bool auto_batch;                     /* HF --auto_find_batch_size: the micro batch changes */
    struct tg_plan_value nodes, devices; /* NeMo trainer.num_nodes, trainer.devices */
    bool v1_batch;                       /* Megatron v1 --batch-size: per GPU, no global batch */
    char model_size_why[TG_LAUNCH_REASON_MAX]; /* set: TP x PP x CP is not the whole model
                                                  size (encoder sizes, weight shards) */
    bool megatron_model;                       /* a NeMo 1 Megatron model script (megatron_*.py): it
                                                  requires trainer.accumulate_grad_batches 1 */
    char config[128]; /* values not on the line come from this file (Megatron
                         --yaml-cfg, Hydra --config-path/--config-name,
                         accelerate --config_file); "" when none */
    struct tg_plan_ds_config dscfg;

    /* ---- where it is (as struct tg_sh_cmd) ---- */
    int depth;
    int line;
    size_t index;
    size_t argv_index;
};

/* True when word (a path or a name) may start a training launch the plan reader reads: an MPI
 * launcher, torchrun, a Python interpreter, deepspeed, accelerate, nemo, or a *.py script. */
bool tg_plan_is_command(const char *word);

/* Reads the plan of one simple command. run is the MPI launcher the command runs (NULL when it
 * is not one; its prog tells where its program starts), files what the script wrote before the
 * command, cwd the directory the command runs in (NULL: the container's starting directory, not
 * known), torch the torchrun reads of this command so far (include/tg/torchrun.h; NULL: none).
 * Returns 1 when the command runs a training launch (out filled), 0 when it does not, -ENOMEM. */
struct tg_mpirun;
int tg_plan_parse(const struct tg_sh_cmd *cmd, const struct tg_mpirun *run,
                  const struct tg_plan_files *files, const char *cwd,
                  struct tg_torchrun_memo *torch, struct tg_plan *out);

/* Is v given and known (state SET)? */
static inline bool tg_pv_known(const struct tg_plan_value *v)
{
    return v->state == TG_PV_SET;
}

/* "Megatron-LM", "NeMo 2", ... for messages. */
const char *tg_plan_fw_name(enum tg_plan_fw fw);

#endif
