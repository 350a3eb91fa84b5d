/* check_sarif.c -- the CheckReport as a SARIF 2.1.0 log (`trainguard check --output sarif`). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tg/catalogue.h"
#include "tg/check_report.h"
#include "tg/check_sarif.h"
#include "tg/version.h"

/* A path of PATH_MAX bytes, each percent-encoded, plus "file://". */
#define URI_MAX (4096 * 3 + 16)

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));

    return s ? s : "";
}

static bool unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~' || c == '/';
}

const char *tg_check_sarif_uri(const char *path, char *buf, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t at = 0;

    while (path[0] == '.' && path[1] == '/')
        path += 2;
    if (path[0] == '/' && len > 8) {
        memcpy(buf, "file://", 7);
        at = 7;
    }
    for (const unsigned char *p = (const unsigned char *)path; *p && at + 4 <= len; p++) {
        if (unreserved(*p)) {
            buf[at++] = (char)*p;
        } else {
            buf[at++] = '%';
            buf[at++] = hex[*p >> 4];
            buf[at++] = hex[*p & 15];
        }
    }
    if (len)
        buf[at < len ? at : len - 1] = '\0';
    return buf;
}

static const char *level_of(enum tg_action action)
{
    return action == TG_ACTION_DENY ? "error" : "warning";
}

static json_t *rule_json(size_t i)
{
    const struct tg_rule_def *d = &tg_rule_defs[i];

    const char *help = d->help && *d->help ? d->help : d->summary; /* catalogue: help */

    return json_pack("{s:s, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}", "id", d->id, "shortDescription",
                     "text", d->summary, "help", "text", help, "defaultConfiguration", "level",
                     level_of(d->default_action), "properties", "since", d->since ? d->since : "");
}

static json_t *driver_json(void)
{
    json_t *rules = json_array();

    for (size_t i = 0; rules && i < tg_rule_count; i++) {
        if (json_array_append_new(rules, rule_json(i))) {
            json_decref(rules);
            return NULL;
        }
    }
    return json_pack("{s:s, s:s, s:s, s:s, s:o}", "name", "trainguard", "version", TG_VERSION,
                     "semanticVersion", TG_VERSION, "informationUri", TG_INFORMATION_URI, "rules",
                     rules);
}

/* {physicalLocation: {artifactLocation: {uri}[, region]}} for an entry of the report, or an
 * empty location for standard input. column 0 leaves startColumn out. */
static json_t *physical_location(const json_t *entry, json_t *loc)
{
    char uri[URI_MAX];
    const char *file = str(entry, "file");
    json_int_t line = json_integer_value(json_object_get(entry, "line"));
    json_int_t col = json_integer_value(json_object_get(entry, "column"));
    json_t *phys, *region = NULL;

    if (!loc || strcmp(file, TG_CHECK_STDIN) == 0)
        return loc;
    phys = json_pack("{s:{s:s}}", "artifactLocation", "uri",
                     tg_check_sarif_uri(file, uri, sizeof(uri)));
    if (phys && line > 0) {
        region = col > 0 ? json_pack("{s:I, s:I}", "startLine", line, "startColumn", col)
                         : json_pack("{s:I}", "startLine", line);
        if (json_object_set_new(phys, "region", region)) {
            json_decref(phys);
            phys = NULL;
        }
    }
    if (json_object_set_new(loc, "physicalLocation", phys)) {
        json_decref(loc);
        return NULL;
    }
    return loc;
}

/* The object and field a finding is about, as a SARIF logicalLocation. */
static json_t *logical_location(const json_t *result, const json_t *finding)
{
    char fqn[1200];
    const char *ns = str(result, "namespace"), *field = str(finding, "field");
    json_t *props, *ll;

    snprintf(fqn, sizeof(fqn), "%s/%s%s%s%s%s", str(result, "kind"), ns, *ns ? "/" : "",
             str(result, "name"), *field ? ":" : "", field);
    props = json_pack("{s:s, s:s, s:s, s:s}", "apiVersion", str(result, "apiVersion"), "kind",
                      str(result, "kind"), "name", str(result, "name"), "field", field);
    if (props && *ns && json_object_set_new(props, "namespace", json_string(ns))) {
        json_decref(props);
        props = NULL;
    }
    ll = json_pack("{s:s, s:s, s:s, s:o}", "name", *field ? field : str(result, "name"),
                   "fullyQualifiedName", fqn, "kind", *field ? "property" : "object", "properties",
                   props);
    return ll;
}

static json_t *result_json(const json_t *result, const json_t *f)
{
    char text[TG_FIELD_MAX + TG_MSG_MAX + 8];
    const char *field = str(f, "field");
    int idx = tg_rule_index(str(f, "rule"));
    json_t *loc = physical_location(result, json_object());
    json_t *r;

    snprintf(text, sizeof(text), "%s%s%s", field, *field ? ": " : "", str(f, "message"));
    if (!loc || json_object_set_new(loc, "logicalLocations",
                                    json_pack("[o]", logical_location(result, f)))) {
        json_decref(loc);
        return NULL;
    }
    r = json_pack("{s:s, s:s, s:{s:s}, s:[o], s:{s:s}}", "ruleId", str(f, "rule"), "level",
                  level_of(tg_check_finding_rule_action(f)), "message", "text", text, "locations",
                  loc, "properties", "action", str(f, "action"));
    if (r && idx >= 0 && json_object_set_new(r, "ruleIndex", json_integer(idx))) {
        json_decref(r);
        r = NULL;
    }
    return r;
}

static int add_results(json_t *out, const json_t *report)
{
    const json_t *e, *f;
    size_t i, k;

    json_array_foreach (json_object_get(report, "results"), i, e) {
        json_array_foreach (json_object_get(e, "findings"), k, f) {
            if (json_array_append_new(out, result_json(e, f)))
                return -ENOMEM;
        }
    }
    return 0;
}

/* An error ("error") or ignored document ("note") as a tool execution notification. */
static json_t *notification(const json_t *entry, const char *level)
{
    char lab[4200], text[4800];
    json_t *loc = physical_location(entry, json_object());

    snprintf(text, sizeof(text), "%s: %s", tg_check_label(entry, lab, sizeof(lab)),
             str(entry, "message"));
    if (loc && json_object_size(loc) == 0) {
        json_decref(loc);
        return json_pack("{s:s, s:{s:s}}", "level", level, "message", "text", text);
    }
    return json_pack("{s:s, s:{s:s}, s:[o]}", "level", level, "message", "text", text, "locations",
                     loc);
}

static json_t *invocation_json(const json_t *report)
{
    const json_t *errors = json_object_get(report, "errors");
    json_t *notes = json_array(), *e;
    size_t i;

    json_array_foreach (errors, i, e) {
        if (!notes || json_array_append_new(notes, notification(e, "error")))
            goto fail;
    }
    json_array_foreach (json_object_get(report, "ignored"), i, e) {
        if (!notes || json_array_append_new(notes, notification(e, "note")))
            goto fail;
    }
    return json_pack("{s:b, s:o}", "executionSuccessful", json_array_size(errors) == 0,
                     "toolExecutionNotifications", notes);
fail:
    json_decref(notes);
    return NULL;
}

json_t *tg_check_sarif(const json_t *report)
{
    json_t *results = json_array();

    if (!results || add_results(results, report) < 0) {
        json_decref(results);
        return NULL;
    }
    return json_pack("{s:s, s:s, s:[{s:{s:o}, s:[o], s:o}]}", "$schema", TG_SARIF_SCHEMA, "version",
                     "2.1.0", "runs", "tool", "driver", driver_json(), "invocations",
                     invocation_json(report), "results", results);
}
