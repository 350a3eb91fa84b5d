/* roles.h -- what a pod template does in its job: run ranks, or only start ranks on other hosts
 * (a launcher), and how the ranks it starts get their environment. The EFA rules judge where the
 * ranks run, never a launcher (SPEC 10); the env mutator puts the variables where they reach the
 * ranks. Facts per framework: docs/references.md (ref-mpi-launcher-container, ref-trainingop,
 * ref-volcano-mpi-plugin, ref-trainer). */
#ifndef TG_ROLES_H
#define TG_ROLES_H

#include <stdbool.h>

#include "tg/eval.h"
#include "tg/launch.h"
#include "tg/mpirun.h"
#include "tg/workload.h"

/* How the ranks that a launcher starts on other hosts get their environment. */
enum tg_rank_env {
    TG_RANK_ENV_OWN = 0, /* no launcher: each container's processes have its own env */
    TG_RANK_ENV_SSH,     /* Open MPI over ssh (mpi-operator v2beta1, Volcano, Kubeflow Trainer
                            MPI): only what mpirun
                            forwards (-x, OMPI_MCA_mca_base_env_list) */
    TG_RANK_ENV_HYDRA,   /* Intel MPI / MPICH hydra, horovodrun: the launcher's whole env */
    TG_RANK_ENV_EXEC,    /* kubectl exec (training-operator kubeflow.org/v1): the worker
                            container's env, plus what mpirun forwards */
};

/* The MPI implementation whose grammar a workload's launcher lines are read with. */
enum tg_mpi_impl tg_workload_mpi_impl(const struct tg_workload *wl);

/* Does template t only start ranks on other hosts? MPIJob: the Launcher, unless it runs ranks
 * itself (runLauncherAsWorker, training-operator's GPU launcher, or no Worker spec). Volcano Job:
 * a task whose containers run an MPI launcher while other tasks exist. Pod: a launcher Pod that
 * requests no GPU, Neuron device or EFA and that an operator marks as one (mpi-operator job-role
 * launcher / K_MPI_JOB_ROLE, training-operator replica-type launcher or its kubexec rsh agent,
 * Volcano's MPI_HOST, Kubeflow Trainer's launcher container) or whose mpirun, mpiexec, horovodrun
 * or hydra line names other hosts (-H, --host, --hostfile, -f, or a hostfile from the env).
 * Other kinds: a coordinator role (Ray head, LWS leader, Trainer launcher or initializer, RayJob
 * submitter), or a template judged like a Pod (mpi-operator's launcher batch Job), without
 * devices. Returns 1 yes, 0 no, or -ENOMEM. */
int tg_template_launcher_only(struct tg_eval *ev, const struct tg_template *t);

/* Does the template's pod hold the given kind of accelerator or EFA (any container)? */
bool tg_template_has_devices(const struct tg_template *t);

/* How the ranks of workload wl get their env (TG_RANK_ENV_OWN when it runs no MPI launcher). */
enum tg_rank_env tg_workload_rank_env(struct tg_eval *ev, const struct tg_workload *wl);

/* Is the Pod an ssh rank host that an operator created (mpi-operator v2beta1 worker, the worker
 * task of a Volcano MPI job): its container's env never reaches the ranks. */
bool tg_pod_is_ssh_rank_host(const struct tg_workload *wl);

#endif
