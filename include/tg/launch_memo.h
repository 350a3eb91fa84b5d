/* launch_memo.h -- one parse of each launcher command line per evaluation, shared by the rules
 * and the env mutator (it is the costliest read on the request path). */
#ifndef TG_LAUNCH_MEMO_H
#define TG_LAUNCH_MEMO_H

#include <stdbool.h>

#include "tg/eval.h"
#include "tg/launch.h"
#include "tg/mpirun.h"
#include "tg/workload.h"

/* The launcher command line of container c read for `impl`, parsed once per evaluation and shared
 * by every rule and mutator that asks. The first read also reports command/args of the wrong type
 * (tg_check_command_types), so no caller has to. *out is borrowed until the evaluation ends.
 * Returns 0 or -ENOMEM. */
int tg_eval_launch(struct tg_eval *ev, const struct tg_container *c, enum tg_mpi_impl impl,
                   const struct tg_launch **out);
/* Frees the memo (the pipeline calls it). */
void tg_eval_launch_release(struct tg_eval *ev);

/* `command` and `args` must be lists of strings, or the line is not read at all (mpirun -np goes
 * unchecked). tg_eval_launch calls this for every container it reads; call it directly only for
 * containers no rule reads but that must still be checked (the MPI Launcher's other containers).
 * Reports object.invalid-field at c's command/args when one is not a list, and at each item
 * (command[i], args[i]) that is not a string. Returns true when both are usable (absent counts).
 * Repeated calls are harmless: findings are deduplicated by rule and field. */
bool tg_check_command_types(struct tg_eval *ev, const struct tg_container *c);

#endif
