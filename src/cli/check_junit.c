/* check_junit.c -- the CheckReport as JUnit XML (`trainguard check --output junit`). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tg/catalogue.h"
#include "tg/check_junit.h"
#include "tg/check_report.h"

/* A label, a kind and a 253-character name with its namespace fit. */
#define CASE_NAME_MAX 4608

struct suite_counts {
    unsigned tests, failures, errors, skipped;
};

/* Writes s as XML character data, or as an attribute value when attr. Characters XML 1.0 does
 * not allow (C0 controls but tab, newline and return; U+FFFE, U+FFFF) become '?'. */
static void xml_put(FILE *out, const char *s, bool attr)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == 0xEF && p[1] == 0xBF && (p[2] == 0xBE || p[2] == 0xBF)) {
            fputc('?', out);
            p += 2;
        } else if (*p == '&') {
            fputs("&amp;", out);
        } else if (*p == '<') {
            fputs("&lt;", out);
        } else if (*p == '>') {
            fputs("&gt;", out);
        } else if (attr && *p == '"') {
            fputs("&quot;", out);
        } else if (attr && (*p == '\n' || *p == '\t' || *p == '\r')) {
            fprintf(out, "&#%d;", *p);
        } else if (*p < 0x20 && *p != '\n' && *p != '\t' && *p != '\r') {
            fputc('?', out);
        } else {
            fputc(*p, out);
        }
    }
}

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));

    return s ? s : "";
}

static bool same_file(const json_t *entry, const char *file)
{
    return strcmp(str(entry, "file"), file) == 0;
}

static unsigned failing_findings(const json_t *result, enum tg_action fail_on)
{
    const json_t *f;
    size_t i;
    unsigned n = 0;

    json_array_foreach (json_object_get(result, "findings"), i, f)
        n += tg_check_fails(tg_check_finding_rule_action(f), fail_on);
    return n;
}

static void count_suite(const json_t *report, const char *file, enum tg_action fail_on,
                        struct suite_counts *c)
{
    const json_t *e;
    size_t i;

    memset(c, 0, sizeof(*c));
    json_array_foreach (json_object_get(report, "results"), i, e) {
        if (!same_file(e, file))
            continue;
        c->tests++;
        c->failures += failing_findings(e, fail_on) > 0;
        c->skipped += json_is_false(json_object_get(e, "evaluated"));
    }
    json_array_foreach (json_object_get(report, "errors"), i, e) {
        if (same_file(e, file)) {
            c->tests++;
            c->errors++;
        }
    }
}

/* "[rule] field: message" of a report finding. */
static void finding_line(const json_t *f, char *buf, size_t len)
{
    const char *field = str(f, "field");

    snprintf(buf, len, "[%s] %s%s%s", str(f, "rule"), field, *field ? ": " : "", str(f, "message"));
}

static void write_failure(FILE *out, const json_t *f)
{
    char line[TG_FIELD_MAX + TG_MSG_MAX + 160];
    int idx = tg_rule_index(str(f, "rule"));

    finding_line(f, line, sizeof(line));
    fputs("      <failure type=\"", out);
    xml_put(out, str(f, "rule"), true);
    fputs("\" message=\"", out);
    xml_put(out, line, true);
    fputs("\">", out);
    xml_put(out, line, false);
    if (idx >= 0) {
        fputs("\nrule: ", out);
        xml_put(out, tg_rule_defs[idx].summary, false);
    }
    fputs("</failure>\n", out);
}

/* WARN/AUDIT lines of the findings that do not fail the run, and the mutator notes. */
static void write_system_out(FILE *out, const json_t *result, enum tg_action fail_on)
{
    char line[TG_FIELD_MAX + TG_MSG_MAX + 64];
    const json_t *f;
    size_t i;
    bool open = false;

    json_array_foreach (json_object_get(result, "findings"), i, f) {
        char upper[8] = "";
        const char *shown = str(f, "action");

        if (tg_check_fails(tg_check_finding_rule_action(f), fail_on))
            continue;
        for (size_t k = 0; shown[k] && k + 1 < sizeof(upper); k++)
            upper[k] = (char)(shown[k] - ('a' <= shown[k] && shown[k] <= 'z' ? 32 : 0));
        finding_line(f, line, sizeof(line));
        fputs(open ? "\n" : "      <system-out>", out);
        open = true;
        fprintf(out, "%s ", upper);
        xml_put(out, line, false);
    }
    json_array_foreach (json_object_get(result, "notes"), i, f) {
        fputs(open ? "\nNOTE " : "      <system-out>NOTE ", out);
        open = true;
        xml_put(out, json_string_value(f), false);
    }
    if (open)
        fputs("</system-out>\n", out);
}

static void write_result(FILE *out, const json_t *e, enum tg_action fail_on)
{
    char lab[4200], name[CASE_NAME_MAX];
    const char *ns = str(e, "namespace"), *obj = str(e, "name");
    const json_t *f;
    size_t i;

    snprintf(name, sizeof(name), "%s %s %s%s%s", tg_check_label(e, lab, sizeof(lab)),
             str(e, "kind"), ns, *ns ? "/" : "", *obj ? obj : "<unnamed>");
    fputs("    <testcase classname=\"", out);
    xml_put(out, str(e, "file"), true);
    fputs("\" name=\"", out);
    xml_put(out, name, true);
    fputs("\">\n", out);
    if (json_is_false(json_object_get(e, "evaluated"))) {
        fputs("      <skipped message=\"", out);
        xml_put(out, str(e, "skipReason"), true);
        fputs("\"/>\n", out);
    }
    json_array_foreach (json_object_get(e, "findings"), i, f) {
        if (tg_check_fails(tg_check_finding_rule_action(f), fail_on))
            write_failure(out, f);
    }
    write_system_out(out, e, fail_on);
    fputs("    </testcase>\n", out);
}

static void write_error(FILE *out, const json_t *e)
{
    char lab[4200], msg[700];
    json_int_t line = json_integer_value(json_object_get(e, "line"));
    json_int_t col = json_integer_value(json_object_get(e, "column"));

    if (line > 0 && col > 0)
        snprintf(msg, sizeof(msg),
                 "line %" JSON_INTEGER_FORMAT ", column %" JSON_INTEGER_FORMAT ": %s", line, col,
                 str(e, "message"));
    else
        snprintf(msg, sizeof(msg), "%s", str(e, "message"));
    fputs("    <testcase classname=\"", out);
    xml_put(out, str(e, "file"), true);
    fputs("\" name=\"", out);
    xml_put(out, tg_check_label(e, lab, sizeof(lab)), true);
    fputs("\">\n      <error type=\"error\" message=\"", out);
    xml_put(out, msg, true);
    fputs("\"/>\n    </testcase>\n", out);
}

static void write_suite(FILE *out, const json_t *report, const char *file, enum tg_action fail_on)
{
    struct suite_counts c;
    const json_t *e;
    size_t i;

    count_suite(report, file, fail_on, &c);
    fputs("  <testsuite name=\"", out);
    xml_put(out, file, true);
    fprintf(out, "\" tests=\"%u\" failures=\"%u\" errors=\"%u\" skipped=\"%u\">\n", c.tests,
            c.failures, c.errors, c.skipped);
    json_array_foreach (json_object_get(report, "results"), i, e) {
        if (same_file(e, file))
            write_result(out, e, fail_on);
    }
    json_array_foreach (json_object_get(report, "errors"), i, e) {
        if (same_file(e, file))
            write_error(out, e);
    }
    fputs("  </testsuite>\n", out);
}

/* The files with a testcase, in input order (results first, then files with errors only); a
 * new reference to an array of strings, or NULL on ENOMEM. */
static json_t *suite_files(const json_t *report)
{
    static const char *const lists[] = {"results", "errors"};
    json_t *files = json_array(), *e;
    size_t i, k;

    for (size_t l = 0; files && l < 2; l++) {
        json_array_foreach (json_object_get(report, lists[l]), i, e) {
            size_t n = json_array_size(files);
            bool dup = n && same_file(e, json_string_value(json_array_get(files, n - 1)));

            /* A file's results are consecutive; its errors may come anywhere. */
            for (k = 0; l == 1 && !dup && k < n; k++)
                dup = same_file(e, json_string_value(json_array_get(files, k)));
            if (!dup && json_array_append(files, json_object_get(e, "file"))) {
                json_decref(files);
                return NULL;
            }
        }
    }
    return files;
}

int tg_check_junit_write(const json_t *report, enum tg_action fail_on, FILE *out)
{
    struct suite_counts all = {0}, c;
    json_t *files = suite_files(report), *f;
    size_t i;

    if (!files)
        return -ENOMEM;
    json_array_foreach (files, i, f) {
        count_suite(report, json_string_value(f), fail_on, &c);
        all.tests += c.tests;
        all.failures += c.failures;
        all.errors += c.errors;
    }
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
    fprintf(out,
            "<testsuites name=\"trainguard check\" tests=\"%u\" failures=\"%u\" errors=\"%u\">\n",
            all.tests, all.failures, all.errors);
    json_array_foreach (files, i, f)
        write_suite(out, report, json_string_value(f), fail_on);
    fputs("</testsuites>\n", out);
    json_decref(files);
    return ferror(out) ? -EIO : 0;
}
