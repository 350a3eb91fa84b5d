/* test_spec_conformance.c -- second-author cases written from SPEC sections 3-6 and 9, one YAML
 * file per rule family (tests/fixtures/spec/), run through the real review decoder and pipeline. */
#include "support/cases.h"

Suite *tg_test_spec_conformance_suite(void);
Suite *tg_test_spec_conformance_suite(void)
{
    Suite *s = suite_create("spec_conformance");
    TCase *tc = tcase_create("cases");
    tg_cases_add(tc, "fixtures/spec/efa.yaml");
    tg_cases_add(tc, "fixtures/spec/zone.yaml");
    tg_cases_add(tc, "fixtures/spec/mpi.yaml");
    tg_cases_add(tc, "fixtures/spec/gang.yaml");
    tg_cases_add(tc, "fixtures/spec/nodeset.yaml");
    tg_cases_add(tc, "fixtures/spec/object.yaml");
    tg_cases_add(tc, "fixtures/spec/modes.yaml");
    tg_cases_add(tc, "fixtures/spec/mutate.yaml");
    suite_add_tcase(s, tc);
    return s;
}
