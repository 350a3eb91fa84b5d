/* cases.h -- table-driven rule and mutation cases from YAML files (format: docs/testing.md). */
#ifndef TG_TEST_CASES_H
#define TG_TEST_CASES_H

#include <check.h>
#include <jansson.h>

/* Adds one loop test per case of `file` (path relative to tests/) to tc. */
void tg_cases_add(TCase *tc, const char *file);

/* Loads a YAML or JSON file (relative to tests/) as one JSON value; aborts the test on error. */
json_t *tg_test_load(const char *file);

/* Recursive subset match: every member of want is in got with an equal value; arrays must have the
 * same length with matching elements. On mismatch writes the JSON pointer of the first difference.
 */
int tg_json_subset(const json_t *want, const json_t *got, char *where, size_t wherelen);

/* A case that needs its own policy: runs object_yaml under policy_yaml (both YAML text) and checks
 * that among findings whose rule starts with prefix there is exactly the one (rule, field), or none
 * when rule is NULL. */
struct tg_policy_case {
    const char *name;
    const char *policy;
    const char *object;
    const char *rule;
    const char *field;
};
void tg_run_policy_case(const struct tg_policy_case *pc, const char *prefix);

/* Calls fn with the body of every golden request (tests/fixtures/reviews/<name>.request.json,
 * read relative to tests/); returns how many there were. */
int tg_each_golden_request(void (*fn)(const char *body, size_t len, void *arg), void *arg);

#endif
