/* workload_trainer.h -- Kubeflow Trainer (trainer.kubeflow.org/v1alpha1) decoded into the workload
 * view: a TrainJob's trainer node, and the JobSet template of a TrainingRuntime or
 * ClusterTrainingRuntime (SPEC 11 and 13; sources in docs/references.md#ref-trainer).
 *
 * TrainJob: one template, the trainer node ("node"), that runs spec.trainer.numNodes pods (one
 * world; unknown when the TrainJob leaves the count to its runtime). Its one container is made
 * from spec.trainer (image, command, args, env; resourcesPerNode as its resources) at the path
 * spec.trainer; its pod spec is the first per-job override that targets the "node" job, in any
 * of the three v1alpha1 shapes: spec.podSpecOverrides[] (v2.0), spec.podTemplateOverrides[]
 * (v2.1), spec.runtimePatches[] (v2.2+). Without resourcesPerNode the runtime's resources apply
 * (resources_unknown). The torch plugin's PET_NNODES and PET_NPROC_PER_NODE are operator env.
 *
 * (Cluster)TrainingRuntime: the replicated jobs of spec.template; the trainer job (label
 * trainer.kubeflow.org/trainjob-ancestor-step: trainer, else the job named "node") runs
 * mlPolicy.numNodes pods (default 1) whatever its parallelism says; in an MPI runtime the
 * launcher runs 1 pod and the node job numNodes (numNodes - 1, at least 1, with
 * runLauncherAsNode). Trainer, launcher and node jobs are one world; initializers and other jobs
 * are each their own.
 *
 * Contract: as include/tg/workload_jobs.h. */
#ifndef TG_WORKLOAD_TRAINER_H
#define TG_WORKLOAD_TRAINER_H

#include <jansson.h>

#include "tg/eval.h"
#include "tg/path.h"
#include "tg/workload.h"

int tg_decode_trainjob(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                       const struct tg_path *sp);
int tg_decode_trainingruntime(struct tg_eval *ev, struct tg_workload *wl, json_t *spec,
                              const struct tg_path *sp);

#endif
