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

Suite *tg_test_upstream_suite(void);
Suite *tg_test_upstream_suite(void)
{
    Suite *s = suite_create("upstream");
    /* TODO(issue 15): the behaviours these cases expect are being built; until then the suite
     * runs only on request (TG_TEST_UPSTREAM=1). This gate goes when they pass. */
    if (!getenv("TG_TEST_UPSTREAM"))
        return s;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        TCase *tc = tcase_create(files[i] + sizeof("fixtures/upstream/") - 1);
        tg_cases_add(tc, files[i]);
        suite_add_tcase(s, tc);
    }
    return s;
}
