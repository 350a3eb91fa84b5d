/* workload_jobs.h -- the decoders of the batch and training workload kinds of SPEC 11 other than
 * Kubeflow Trainer: batch/v1 Job, JobSet, LeaderWorkerSet, PyTorchJob, RayCluster and RayJob.
 * Each fills wl->tpl with the kind's pod templates: role, pods (replicas), JSON path, world and
 * the env its controller adds (include/tg/workload.h). The pod counts and worlds, with their
 * sources, are in docs/references.md#ref-workloads.
 *
 * Contract: as tg_workload_decode(): wrong JSON types in the fields read are reported into ev
 * (object.invalid-field; ev may be NULL) and treated as absent; each returns 0 or -ENOMEM. spec is
 * the object's spec (NULL when absent), sp its path. */
#ifndef TG_WORKLOAD_JOBS_H
#define TG_WORKLOAD_JOBS_H

#include <jansson.h>

#include "tg/eval.h"
#include "tg/path.h"
#include "tg/workload.h"

int tg_decode_batchjob(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                       const struct tg_path *sp);
int tg_decode_jobset(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                     const struct tg_path *sp);
int tg_decode_lws(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                  const struct tg_path *sp);
int tg_decode_pytorchjob(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                         const struct tg_path *sp);
int tg_decode_raycluster(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                         const struct tg_path *sp);
int tg_decode_rayjob(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                     const struct tg_path *sp);

/* One replicated job of a JobSet template (JobSet, and the template of a (Cluster)TrainingRuntime):
 * adds its template (role WORKER, named after the replicated job, the pods of one child Job in
 * world_pods, all of its child Jobs' pods in replicas) and sets *index to its index in wl->tpl,
 * or to -1 when the entry is not an object. Worlds are left to the caller. */
int tg_decode_replicated_job(struct tg_eval *ev, struct tg_workload *wl, json_t *rjob,
                             const struct tg_path *rp, long *index);

#endif
