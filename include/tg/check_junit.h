/* check_junit.h -- `trainguard check --output junit`: the CheckReport as JUnit XML, the test
 * report format GitLab, Jenkins and most CI systems show natively.
 *
 * Shape (valid against Jenkins xunit-plugin's junit-10.xsd, tests/schemas/junit-10.xsd):
 *   <testsuites name="trainguard check" tests failures errors>
 *     <testsuite name=FILE tests failures errors skipped>   one per file, in input order
 *       <testcase classname=FILE name="FILE:DOC KIND NS/NAME">   one per object
 *         <failure type=RULE message="[RULE] FIELD: MESSAGE"/>    one per finding that fails the
 *                                                                run under --fail-on
 *         <skipped message=WHY/>                                  an object the rules do not judge
 *         <system-out>WARN/AUDIT lines of the other findings, NOTE lines</system-out>
 *       <testcase name="FILE:DOC"><error .../></testcase>        one per error (parse, read)
 * Text is UTF-8; characters XML 1.0 cannot carry (control characters) become '?'. */
#ifndef TG_CHECK_JUNIT_H
#define TG_CHECK_JUNIT_H

#include <jansson.h>
#include <stdio.h>

#include "tg/catalogue.h"

/* Writes the JUnit XML of report (a CheckReport, borrowed) to out. Returns 0, or -EIO when the
 * stream fails. */
int tg_check_junit_write(const json_t *report, enum tg_action fail_on, FILE *out);

#endif
