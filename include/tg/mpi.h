/* mpi.h -- what the MPI rules (src/rules/mpi.c) know of an MPIJob that other rule families use:
 * the slots of the hostfile the operator writes (docs/references.md#ref-mpi-slots-np,
 * #ref-mpi-launcher-container). */
#ifndef TG_MPI_H
#define TG_MPI_H

#include <stdbool.h>

#include "tg/eval.h"
#include "tg/workload.h"

/* The hostfile of an MPIJob: per_worker slots on each of its hosts. */
struct tg_mpi_slots {
    long long per_worker, workers, total;
    long long nodes;    /* hosts in the hostfile: workers (+ the launcher) */
    bool slots_default; /* slotsPerWorker not written: the operator's 1 */
    bool launcher_host; /* the launcher is a host of the hostfile too */
};

/* The text of slots s, "slotsPerWorker 8 x 2 workers", written into buf (len bytes, 96 is
 * enough) only where a message shows it. Returns buf. */
const char *tg_mpi_slots_what(const struct tg_mpi_slots *s, char *buf, size_t len);

/* The slots of MPIJob wl's hostfile: the workers and, when it is a host of the hostfile too
 * (runLauncherAsWorker, or training-operator's GPU launcher), the launcher. Returns 1 with *s
 * filled, 0 when they are not known (replicas unusable, a launcher-only job), -ENOMEM. */
int tg_mpi_slots(struct tg_eval *ev, const struct tg_workload *wl, struct tg_mpi_slots *s);

#endif
