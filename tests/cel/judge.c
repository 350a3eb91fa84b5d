/* judge.c -- the objects of fixture and manifest files, each with trainguard's verdict, as JSON
 * lines for the prefilter test (tests/cel/prefilter.mjs).
 *
 *   cel_judge FILE...
 *
 * A file whose one document has a `cases` list is a case file (tests/fixtures/<family>/cases.yaml):
 * each case's object (inline, or objectFile relative to the current directory) with its
 * oldObject, operation and namespace. Any other file is a manifest: every document (the items of
 * a kind: List too) as a CREATE. Each object goes through the real review decoder and pipeline
 * twice, as /validate and as /mutate, under the embedded default policy; one line per object:
 *
 *   {"source", "operation", "namespace", "group", "version", "kind", "resource" (null when the
 *    webhooks do not register the kind), "object", "oldObject", "findings": [rule ids],
 *    "patches": N, "expect" (the case's `prefilter` key, when it has one)}
 *
 * Exit 0, or 1 when a file cannot be read or the pipeline fails on an object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/pipeline.h"
#include "tg/review.h"
#include "tg/yaml_json.h"

#define MAX_FILE (16u << 20)

/* Builds the AdmissionReview the API server would send for obj and decodes it like the server. */
static int make_review(json_t *obj, json_t *old, const char *op, const char *ns,
                       struct tg_review *rv)
{
    char err[TG_REVIEW_ERR_MAX];
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *slash = av ? strchr(av, '/') : NULL;
    json_t *k = json_pack("{s:s%, s:s, s:s}", "group", av ? av : "",
                          slash ? (size_t)(slash - av) : (size_t)0, "version",
                          slash ? slash + 1 : (av ? av : "v1"), "kind", kind ? kind : "");
    json_t *req =
        json_pack("{s:s, s:o, s:s, s:s, s:{s:s}, s:O}", "uid", "judge", "kind", k, "operation", op,
                  "namespace", ns, "userInfo", "username", "judge", "object", obj);
    if (!req)
        return -1;
    if (old)
        json_object_set(req, "oldObject", old);
    json_t *root = json_pack("{s:s, s:s, s:o}", "apiVersion", "admission.k8s.io/v1", "kind",
                             "AdmissionReview", "request", req);
    if (!root || tg_review_from_json(root, rv, err, sizeof(err)) != 0) {
        fprintf(stderr, "cel_judge: review: %s\n", err);
        return -1;
    }
    return 0;
}

/* The findings of /validate and the patch size of /mutate, added to line. */
static int judge(struct tg_policy *pol, const struct tg_review *rv, json_t *line)
{
    struct tg_pipeline_opts vopts = {0}, mopts = {.mutate = true, .skip_validation = true};
    struct tg_result res;
    json_t *rules = json_array();
    if (!rules || tg_pipeline_run(pol, rv, &vopts, &res) != 0)
        return -1;
    for (size_t i = 0; i < res.findings.n; i++)
        json_array_append_new(rules, json_string(res.findings.v[i].rule));
    tg_result_release(&res);
    json_object_set_new(line, "findings", rules);
    if (tg_pipeline_run(pol, rv, &mopts, &res) != 0)
        return -1;
    json_object_set_new(line, "patches", json_integer((json_int_t)tg_patch_count(&res.patch)));
    tg_result_release(&res);
    return 0;
}

/* One object: judged and printed. Objects that are not Kubernetes objects are skipped. */
static int emit(struct tg_policy *pol, const char *source, json_t *obj, json_t *old, const char *op,
                const char *ns, json_t *expect)
{
    struct tg_review rv;
    const struct tg_api_def *api;
    if (!json_is_object(obj) || !json_string_value(json_object_get(obj, "kind")))
        return 0;
    if (!ns)
        ns = json_string_value(json_object_get(json_object_get(obj, "metadata"), "namespace"));
    if (make_review(obj, old, op ? op : "CREATE", ns ? ns : "default", &rv) != 0)
        return -1;
    api = tg_api_lookup(rv.group, rv.version, rv.kind);
    json_t *line =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:O, s:O}", "source", source, "operation",
                  rv.operation, "namespace", rv.namespace, "group", rv.group, "version", rv.version,
                  "kind", rv.kind, "object", obj, "oldObject", old ? old : json_null());
    int rc = line ? judge(pol, &rv, line) : -1;
    if (rc == 0) {
        json_object_set_new(line, "resource",
                            api && api->resource[0] ? json_string(api->resource) : json_null());
        if (expect)
            json_object_set(line, "expect", expect);
        char *text = json_dumps(line, JSON_COMPACT);
        rc = text ? 0 : -1;
        if (text)
            puts(text);
        free(text);
    } else {
        fprintf(stderr, "cel_judge: %s: the pipeline failed\n", source);
    }
    json_decref(line);
    tg_review_release(&rv);
    return rc;
}

/* Document `doc` of a manifest file (objectFile/objectDoc of a case). New reference or NULL. */
static json_t *load_doc(const char *file, size_t doc)
{
    char err[256];
    size_t len, seen = 0;
    struct tg_yaml_docs docs;
    json_t *out = NULL;
    char *text = tg_read_file(file, MAX_FILE, &len, err, sizeof(err));
    if (!text || tg_yaml_parse_stream(text, len, &docs) != 0) {
        fprintf(stderr, "cel_judge: %s: %s\n", file, text ? "cannot parse" : err);
        free(text);
        return NULL;
    }
    free(text);
    for (size_t i = 0; i < docs.n && !out; i++) {
        if (docs.v[i].value && seen++ == doc)
            out = json_incref(docs.v[i].value);
    }
    tg_yaml_docs_release(&docs);
    return out;
}

static int run_cases(struct tg_policy *pol, const char *file, json_t *cases)
{
    size_t i;
    json_t *c;
    int rc = 0;
    json_array_foreach (cases, i, c) {
        char source[512];
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *of = json_string_value(json_object_get(c, "objectFile"));
        json_t *obj = of ? load_doc(of, (size_t)json_integer_value(json_object_get(c, "objectDoc")))
                         : json_incref(json_object_get(c, "object"));
        snprintf(source, sizeof(source), "%s: %s", file, name ? name : "(unnamed case)");
        if (of && !obj)
            rc = -1;
        else if (emit(pol, source, obj, json_object_get(c, "oldObject"),
                      json_string_value(json_object_get(c, "operation")),
                      json_string_value(json_object_get(c, "namespace")),
                      json_object_get(c, "prefilter")) != 0)
            rc = -1;
        json_decref(obj);
    }
    return rc;
}

/* A manifest document: the object, or each item of a kind: List. */
static int run_doc(struct tg_policy *pol, const char *file, size_t d, json_t *doc)
{
    char source[512];
    json_t *items = json_object_get(doc, "items");
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    size_t i;
    json_t *item;
    int rc = 0;
    if (!kind || strcmp(kind, "List") || !json_is_array(items)) {
        snprintf(source, sizeof(source), "%s:%zu", file, d + 1);
        return emit(pol, source, doc, NULL, NULL, NULL, NULL);
    }
    json_array_foreach (items, i, item) {
        snprintf(source, sizeof(source), "%s:%zu.items[%zu]", file, d + 1, i);
        rc |= emit(pol, source, item, NULL, NULL, NULL, NULL);
    }
    return rc;
}

static int run_file(struct tg_policy *pol, const char *file)
{
    char err[256];
    size_t len;
    struct tg_yaml_docs docs;
    int rc = 0;
    char *text = tg_read_file(file, MAX_FILE, &len, err, sizeof(err));
    if (!text) {
        fprintf(stderr, "cel_judge: %s\n", err);
        return -1;
    }
    rc = tg_yaml_parse_stream(text, len, &docs);
    free(text);
    if (rc != 0)
        return -1;
    json_t *cases = docs.n == 1 ? json_object_get(docs.v[0].value, "cases") : NULL;
    if (json_is_array(cases))
        rc = run_cases(pol, file, cases);
    for (size_t d = 0; !cases && d < docs.n; d++) {
        /* A document that does not parse is the corpus test's business, not this one's. */
        if (docs.v[d].value && run_doc(pol, file, d, docs.v[d].value) != 0)
            rc = -1;
    }
    tg_yaml_docs_release(&docs);
    return rc;
}

int main(int argc, char **argv)
{
    struct tg_policy *pol = tg_policy_new_default();
    int rc = 0;
    if (!pol) {
        fputs("cel_judge: cannot load the default policy\n", stderr);
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        if (run_file(pol, argv[i]) != 0)
            rc = 1;
    }
    tg_policy_unref(pol);
    return rc;
}
