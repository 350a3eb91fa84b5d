/* plan_args.h -- the training program's own arguments read into a plan (include/tg/launch_plan.h):
 * Megatron-LM / Megatron-Core and Megatron-DeepSpeed flags, NeMo Hydra overrides (NeMo 1 and the
 * NeMo 2 CLI), Hugging Face Trainer flags, and the DeepSpeed JSON config they name.
 *
 * Contract: as include/tg/launch_plan.h. argv[0] is the program (a script path, or the first word
 * after `nemo llm pretrain` for the NeMo 2 CLI); reading never looks before it. */
#ifndef TG_PLAN_ARGS_H
#define TG_PLAN_ARGS_H

#include "tg/launch_plan.h"

/* Reads the program's arguments into p (the launcher part of p is left as it is), then decides
 * the framework and fills the values the line does not give: the framework's default where the
 * source fixes one, else unknown with the reason (a config file, a NeMo 2 recipe, a script's own
 * default). Returns 0 or -ENOMEM. */
int tg_plan_read_args(const struct tg_sh_word *argv, size_t argc, const struct tg_plan_files *files,
                      const char *cwd, struct tg_plan *p);

/* Sets v from a word holding a count (a non-negative decimal integer): SET, or UNKNOWN with the
 * word's reason or "is not a number". src names the option ("--tensor-model-parallel-size"). */
void tg_plan_value_read(struct tg_plan_value *v, const struct tg_sh_word *w, const char *value,
                        const char *src);

/* Reads the DeepSpeed config named by word w (whose value is value: inline JSON, or a path
 * that a here-document of the script wrote, found in files relative to cwd) into p->dscfg. */
void tg_plan_read_ds_config(struct tg_plan *p, const struct tg_sh_word *w, const char *value,
                            const struct tg_plan_files *files, const char *cwd);

/* The path p resolved against cwd as a normalised path ("a/./b/../c" is "a/c"); relative when
 * p is relative and cwd is NULL. Writes at most len bytes. */
void tg_plan_path(const char *cwd, const char *p, char *out, size_t len);

#endif
