/* check_policyreport.c -- the CheckReport as wgpolicyk8s.io/v1alpha2 (Cluster)PolicyReports. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/catalogue.h"
#include "tg/check_policyreport.h"
#include "tg/check_report.h"
#include "tg/finding.h"

#define PR_API_VERSION "wgpolicyk8s.io/v1alpha2"
#define PR_NAME "trainguard"

bool tg_check_cluster_scoped(const char *api_version, const char *kind)
{
    char group[256];
    const char *slash = strchr(api_version, '/');
    const struct tg_api_def *api;

    if (!slash)
        return (api = tg_api_lookup("", api_version, kind)) && api->scope == TG_SCOPE_CLUSTER;
    snprintf(group, sizeof(group), "%.*s", (int)(slash - api_version), api_version);
    api = tg_api_lookup(group, slash + 1, kind);
    return api && api->scope == TG_SCOPE_CLUSTER;
}

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));

    return s ? s : "";
}

/* The object reference of a result: [{apiVersion, kind, name[, namespace][, uid]}]. */
static json_t *resources(const json_t *result)
{
    json_t *ref = json_pack("{s:s, s:s, s:s}", "apiVersion", str(result, "apiVersion"), "kind",
                            str(result, "kind"), "name", str(result, "name"));

    if (ref && *str(result, "namespace") &&
        json_object_set_new(ref, "namespace", json_string(str(result, "namespace"))))
        goto fail;
    if (ref && *str(result, "uid") &&
        json_object_set_new(ref, "uid", json_string(str(result, "uid"))))
        goto fail;
    return json_pack("[o]", ref);
fail:
    json_decref(ref);
    return NULL;
}

static json_t *finding_result(const json_t *result, const json_t *f)
{
    char msg[TG_FIELD_MAX + TG_MSG_MAX + 8], category[64];
    const char *rule = str(f, "rule"), *field = str(f, "field"), *dot = strchr(rule, '.');
    bool deny = tg_check_finding_rule_action(f) == TG_ACTION_DENY;

    snprintf(msg, sizeof(msg), "%s%s%s", field, *field ? ": " : "", str(f, "message"));
    snprintf(category, sizeof(category), "%.*s", dot ? (int)(dot - rule) : (int)strlen(rule), rule);
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:b, s:s, s:{s:s, s:s}}", "policy",
                     PR_NAME, "rule", rule, "category", category, "result", deny ? "fail" : "warn",
                     "severity", deny ? "high" : "medium", "message", msg, "resources",
                     resources(result), "scored", 1, "source", PR_NAME, "properties", "field",
                     field, "action", str(f, "action"));
}

static json_t *pass_result(const json_t *result)
{
    return json_pack("{s:s, s:s, s:s, s:o, s:b, s:s}", "policy", PR_NAME, "result", "pass",
                     "message", "no finding", "resources", resources(result), "scored", 1, "source",
                     PR_NAME);
}

static json_t *new_report(const char *kind, const char *ns)
{
    json_t *r = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:[], s:{s:i, s:i, s:i, s:i, s:i}}",
                          "apiVersion", PR_API_VERSION, "kind", kind, "metadata", "name", PR_NAME,
                          "labels", "app.kubernetes.io/managed-by", "trainguard", "results",
                          "summary", "pass", 0, "fail", 0, "warn", 0, "error", 0, "skip", 0);

    if (r && ns && *ns &&
        json_object_set_new(json_object_get(r, "metadata"), "namespace", json_string(ns))) {
        json_decref(r);
        return NULL;
    }
    return r;
}

/* Appends a result to a report and counts it in the summary. */
static int add(json_t *report, json_t *result)
{
    json_t *summary = json_object_get(report, "summary"), *count;

    if (!result)
        return -ENOMEM;
    count = json_object_get(summary, str(result, "result"));
    json_integer_set(count, json_integer_value(count) + 1);
    return json_array_append_new(json_object_get(report, "results"), result) ? -ENOMEM : 0;
}

static int add_object(json_t *report, const json_t *result)
{
    const json_t *f;
    size_t i;

    if (json_array_size(json_object_get(result, "findings")) == 0)
        return add(report, pass_result(result));
    json_array_foreach (json_object_get(result, "findings"), i, f) {
        if (add(report, finding_result(result, f)) < 0)
            return -ENOMEM;
    }
    return 0;
}

/* The report an evaluated object belongs in, created on first use. by_ns maps a namespace ("" for
 * none) to its PolicyReport; *cluster is the ClusterPolicyReport. Borrowed; NULL on ENOMEM. */
static json_t *report_for(const json_t *result, json_t *by_ns, json_t **cluster,
                          bool (*cluster_scoped)(const char *, const char *))
{
    const char *ns = str(result, "namespace");
    json_t *r;

    if (!*ns && cluster_scoped(str(result, "apiVersion"), str(result, "kind"))) {
        if (!*cluster)
            *cluster = new_report("ClusterPolicyReport", NULL);
        return *cluster;
    }
    if ((r = json_object_get(by_ns, ns)))
        return r;
    r = new_report("PolicyReport", ns);
    return json_object_set_new(by_ns, ns, r) ? NULL : r;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends the namespaced reports in namespace order, then the cluster report. */
static int collect(json_t *items, json_t *by_ns, json_t *cluster)
{
    size_t n = json_object_size(by_ns), i = 0;
    const char **keys = calloc(n ? n : 1, sizeof(*keys));
    const char *key;
    json_t *v;
    int rc = 0;

    if (!keys)
        return -ENOMEM;
    json_object_foreach (by_ns, key, v)
        keys[i++] = key;
    qsort(keys, n, sizeof(*keys), cmp_str);
    for (i = 0; i < n && rc == 0; i++)
        rc = json_array_append(items, json_object_get(by_ns, keys[i])) ? -ENOMEM : 0;
    if (rc == 0 && cluster)
        rc = json_array_append(items, cluster) ? -ENOMEM : 0;
    free(keys);
    return rc;
}

json_t *tg_check_policyreport(const json_t *report,
                              bool (*cluster_scoped)(const char *api_version, const char *kind))
{
    json_t *by_ns = json_object(), *cluster = NULL, *items = json_array(), *list = NULL;
    const json_t *e;
    size_t i;

    if (!by_ns || !items)
        goto out;
    json_array_foreach (json_object_get(report, "results"), i, e) {
        json_t *r;

        if (!json_is_true(json_object_get(e, "evaluated")))
            continue;
        r = report_for(e, by_ns, &cluster,
                       cluster_scoped ? cluster_scoped : tg_check_cluster_scoped);
        if (!r || add_object(r, e) < 0)
            goto out;
    }
    if (collect(items, by_ns, cluster) == 0)
        list = json_pack("{s:s, s:s, s:O, s:{s:s}}", "apiVersion", "v1", "kind", "List", "items",
                         items, "metadata", "resourceVersion", "");
out:
    json_decref(by_ns);
    json_decref(cluster);
    json_decref(items);
    return list;
}
