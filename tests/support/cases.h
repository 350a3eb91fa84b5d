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

#endif
