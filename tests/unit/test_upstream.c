/* test_upstream.c -- cases written by a second author from upstream sources (the controllers'
 * code and the projects' published manifests), one family per file under
 * tests/fixtures/upstream/. Each case cites its source; see docs/testing.md. */
#include <check.h>

#include "support/cases.h"

/* Issue 15 (launchers and rank hosts of every framework, /mutate and /validate agreeing, AWS's
 * published manifests). One TCase per file, so a failure names its family. */
static const char *const files[] = {
    "fixtures/upstream/mpi-operator.yaml",
    "fixtures/upstream/training-operator.yaml",
    "fixtures/upstream/volcano.yaml",
    "fixtures/upstream/trainer-mpi.yaml",
    "fixtures/upstream/trainer-mpi-mutate.yaml",
    "fixtures/upstream/slurm-operator.yaml",
    "fixtures/upstream/aws.yaml",
    "fixtures/upstream/launchers.yaml",
    /* round 2 (a second author again, from the same sources): */
    "fixtures/upstream/mpi-operator-objects.yaml",
    "fixtures/upstream/training-operator-ranks.yaml",
    "fixtures/upstream/volcano-mpi-plugin.yaml",
    "fixtures/upstream/launcher-jobs.yaml",
    "fixtures/upstream/efa-pods.yaml",
    "fixtures/upstream/mpi-script-ranks.yaml",
    "fixtures/upstream/slurm-nodeset-pods.yaml",
    "fixtures/upstream/trainer-jobsets.yaml",
};

/* The parallel plan (issue 18): always run. */
static const char *const plan_files[] = {
    "fixtures/upstream/plan-megatron.yaml",
    "fixtures/upstream/plan-nemo.yaml",
    "fixtures/upstream/plan-deepspeed.yaml",
    "fixtures/upstream/plan-hf-accelerate.yaml",
};

/* Issue 17 (batch Job, JobSet, LeaderWorkerSet, PyTorchJob, Kubeflow Trainer, Ray, Kueue, and the
 * Pods these controllers create): always run. */
static const char *const workload_files[] = {
    "fixtures/upstream/batch-job.yaml", "fixtures/upstream/jobset.yaml",
    "fixtures/upstream/lws.yaml",       "fixtures/upstream/pytorchjob.yaml",
    "fixtures/upstream/trainer.yaml",   "fixtures/upstream/ray.yaml",
    "fixtures/upstream/kueue.yaml",     "fixtures/upstream/pods-of-controllers.yaml",
};

/* Second round (issues 17, 18, 19): cases written from the projects' examples and source by a
 * second test author, every rule compared. */
static const char *const second_files[] = {
    "fixtures/upstream/kinds-second.yaml",
    "fixtures/upstream/kinds-second-defaults.yaml",
    "fixtures/upstream/torchrun-shell-second.yaml",
    "fixtures/upstream/plan-second.yaml",
    "fixtures/upstream/nodepool-controller-second.yaml",
};

static void add_files(Suite *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        TCase *tc = tcase_create(list[i] + sizeof("fixtures/upstream/") - 1);
        tg_cases_add(tc, list[i]);
        suite_add_tcase(s, tc);
    }
}

Suite *tg_test_upstream_suite(void);
Suite *tg_test_upstream_suite(void)
{
    Suite *s = suite_create("upstream");
    add_files(s, files, sizeof(files) / sizeof(files[0]));
    add_files(s, workload_files, sizeof(workload_files) / sizeof(workload_files[0]));
    add_files(s, plan_files, sizeof(plan_files) / sizeof(plan_files[0]));
    add_files(s, second_files, sizeof(second_files) / sizeof(second_files[0]));
    return s;
}
