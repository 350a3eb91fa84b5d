/* test_upstream.c -- cases written by a second author from upstream sources (the controllers'
 * code and the projects' published manifests), one family per file under
 * tests/fixtures/upstream/. Each case cites its source; see docs/testing.md. */
#include <check.h>
#include <stdlib.h>

#include "support/cases.h"

/* One TCase per file, so a failure names its family. */
static const char *const files[] = {
    "fixtures/upstream/mpi-operator.yaml",   "fixtures/upstream/training-operator.yaml",
    "fixtures/upstream/volcano.yaml",        "fixtures/upstream/trainer-mpi.yaml",
    "fixtures/upstream/slurm-operator.yaml", "fixtures/upstream/aws.yaml",
    "fixtures/upstream/launchers.yaml",
};

/* Issue 17 (batch Job, JobSet, LeaderWorkerSet, PyTorchJob, Kubeflow Trainer, Ray, Kueue, and the
 * Pods these controllers create): always run. */
static const char *const workload_files[] = {
    "fixtures/upstream/batch-job.yaml", "fixtures/upstream/jobset.yaml",
    "fixtures/upstream/lws.yaml",       "fixtures/upstream/pytorchjob.yaml",
    "fixtures/upstream/trainer.yaml",   "fixtures/upstream/ray.yaml",
    "fixtures/upstream/kueue.yaml",     "fixtures/upstream/pods-of-controllers.yaml",
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
    add_files(s, workload_files, sizeof(workload_files) / sizeof(workload_files[0]));
    /* TODO(issue 15): the behaviours these cases expect are being built; until then the suite
     * runs only on request (TG_TEST_UPSTREAM=1). This gate goes when they pass. */
    if (getenv("TG_TEST_UPSTREAM"))
        add_files(s, files, sizeof(files) / sizeof(files[0]));
    return s;
}
