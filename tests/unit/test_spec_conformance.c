/* test_spec_conformance.c -- second-author cases written from SPEC sections 3-6 and 9, one YAML
 * file per rule family (tests/fixtures/spec/), run through the real review decoder and pipeline,
 * plus the section 4 and 9 response shape that the case format cannot express (deny lines,
 * warning lines, audit annotations). */
#include <string.h>

#include "support/cases.h"
#include "tg/pipeline.h"

/* A Pod that sets FI_PROVIDER=efa without an EFA device (deny) and mounts /dev/infiniband (warn).
 */
static const char *const bad_pod =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\",\"namespace\":\"ml\"},"
    "\"spec\":{\"volumes\":[{\"name\":\"ib\",\"hostPath\":{\"path\":\"/dev/infiniband\"}}],"
    "\"containers\":[{\"name\":\"t\",\"image\":\"nccl\","
    "\"env\":[{\"name\":\"FI_PROVIDER\",\"value\":\"efa\"}],"
    "\"volumeMounts\":[{\"name\":\"ib\",\"mountPath\":\"/dev/infiniband\"}]}]}}";

/* A clean p5.48xlarge Pod with 32 EFA and hugepages that /mutate gives env to. */
static const char *const efa_pod =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\",\"namespace\":\"ml\"},"
    "\"spec\":{\"nodeSelector\":{\"node.kubernetes.io/instance-type\":\"p5.48xlarge\"},"
    "\"containers\":[{\"name\":\"t\",\"image\":\"nccl\",\"resources\":{\"limits\":{"
    "\"nvidia.com/gpu\":8,\"vpc.amazonaws.com/efa\":32,\"hugepages-2Mi\":\"5120Mi\","
    "\"memory\":\"64Gi\"}}}]}}";

struct run {
    json_t *obj;
    struct tg_review rv;
    struct tg_result res;
    struct tg_policy *pol;
};

static void run_start(struct run *r, const char *json, enum tg_mode mode, bool mutate)
{
    char err[256];
    struct tg_pipeline_opts opts = {0};
    json_error_t jerr;
    opts.mutate = mutate;
    r->obj = json_loads(json, 0, &jerr);
    ck_assert_msg(r->obj != NULL, "fixture JSON: %s", jerr.text);
    ck_assert_int_eq(tg_review_from_object(r->obj, &r->rv, err, sizeof(err)), 0);
    r->pol = tg_policy_new_default();
    ck_assert_ptr_nonnull(r->pol);
    r->pol->mode = mode;
    ck_assert_int_eq(tg_pipeline_run(r->pol, &r->rv, &opts, &r->res), 0);
}

static void run_end(struct run *r)
{
    tg_result_release(&r->res);
    tg_review_release(&r->rv);
    tg_policy_unref(r->pol);
    json_decref(r->obj);
}

static const char *audit(const struct run *r, const char *key)
{
    return json_string_value(json_object_get(r->res.audit, key));
}

/* SPEC 4: every finding is "[rule-id] field: message", one per line of the deny message and one
 * per warning; SPEC 9: warn findings are warnings also when the response denies. */
START_TEST(enforce_lines)
{
    struct run r;
    size_t i;
    json_t *w;
    run_start(&r, bad_pod, TG_MODE_ENFORCE, false);
    ck_assert(!r.res.allowed);
    ck_assert_int_eq(r.res.code, 403);
    ck_assert_ptr_nonnull(r.res.message);
    ck_assert_msg(!strncmp(r.res.message, "[efa.env-without-device] spec.containers[0]", 43),
                  "deny message: %s", r.res.message);
    ck_assert_ptr_null(strstr(r.res.message, "efa.infiniband-hostpath"));
    ck_assert_int_eq(json_array_size(r.res.warnings), 1);
    json_array_foreach (r.res.warnings, i, w) {
        const char *s = json_string_value(w);
        ck_assert_msg(s && !strncmp(s, "[efa.infiniband-hostpath] spec.", 31), "warning: %s", s);
        ck_assert_uint_le(strlen(s), 256);
    }
    run_end(&r);
}
END_TEST

/* SPEC 6: warn mode turns deny findings into warnings; both findings come back as warnings. */
START_TEST(warn_mode_lines)
{
    struct run r;
    size_t i;
    json_t *w;
    bool saw_deny_rule = false;
    run_start(&r, bad_pod, TG_MODE_WARN, false);
    ck_assert(r.res.allowed);
    ck_assert_int_eq(json_array_size(r.res.warnings), 2);
    json_array_foreach (r.res.warnings, i, w) {
        const char *s = json_string_value(w);
        ck_assert_msg(s && s[0] == '[', "warning: %s", s);
        if (!strncmp(s, "[efa.env-without-device] ", 25))
            saw_deny_rule = true;
    }
    ck_assert(saw_deny_rule);
    run_end(&r);
}
END_TEST

/* SPEC 6 and 9: audit allows with no warnings; the annotations carry `findings` ("[rule] field",
 * "; "-separated) and `would-deny`. */
START_TEST(audit_annotations)
{
    struct run r;
    run_start(&r, bad_pod, TG_MODE_AUDIT, false);
    ck_assert(r.res.allowed);
    ck_assert_int_eq(json_array_size(r.res.warnings), 0);
    const char *f = audit(&r, "findings");
    ck_assert_ptr_nonnull(f);
    ck_assert_msg(strstr(f, "[efa.env-without-device] spec.containers[0]") != NULL, "%s", f);
    ck_assert_msg(strstr(f, "; [efa.infiniband-hostpath] spec.") != NULL, "%s", f);
    ck_assert_str_eq(audit(&r, "would-deny"), "true");
    run_end(&r);
}
END_TEST

START_TEST(audit_would_deny_false)
{
    struct run r;
    run_start(&r, efa_pod, TG_MODE_AUDIT, false);
    ck_assert(r.res.allowed);
    ck_assert_str_eq(audit(&r, "would-deny"), "false");
    run_end(&r);
}
END_TEST

/* SPEC 6 and 9: in audit mode /mutate returns no patch and names what it would change. */
START_TEST(audit_would_patch)
{
    struct run r;
    run_start(&r, efa_pod, TG_MODE_AUDIT, true);
    ck_assert(r.res.allowed);
    ck_assert_uint_eq(tg_patch_count(&r.res.patch), 0);
    const char *p = audit(&r, "would-patch");
    ck_assert_ptr_nonnull(p);
    ck_assert_msg(strstr(p, "/spec/containers/0/env") != NULL, "would-patch: %s", p);
    run_end(&r);
}
END_TEST

/* The same review in enforce mode does return the patch. */
START_TEST(enforce_patch)
{
    struct run r;
    run_start(&r, efa_pod, TG_MODE_ENFORCE, true);
    ck_assert(r.res.allowed);
    ck_assert_uint_gt(tg_patch_count(&r.res.patch), 0);
    run_end(&r);
}
END_TEST

/* SPEC 2: warnings are one line each, no control characters, at most 256 characters -- also when
 * the user's value carries a newline and a long string (FI_PROVIDER names another provider). */
START_TEST(warning_lines_sanitized)
{
    static const char *const pod =
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\",\"namespace\":\"ml\"}"
        ","
        "\"spec\":{\"containers\":[{\"name\":\"t\",\"image\":\"nccl\",\"env\":[{\"name\":"
        "\"FI_PROVIDER\",\"value\":\"tcp\\nX-Injected: 1\\r\\t"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xx\"}],"
        "\"resources\":{\"limits\":{\"vpc.amazonaws.com/efa\":1,\"hugepages-2Mi\":\"2Mi\","
        "\"memory\":\"1Gi\"}}}]}}";
    struct run r;
    size_t i;
    json_t *w;
    run_start(&r, pod, TG_MODE_ENFORCE, false);
    ck_assert(r.res.allowed);
    ck_assert_int_ge(json_array_size(r.res.warnings), 1);
    json_array_foreach (r.res.warnings, i, w) {
        const char *s = json_string_value(w);
        ck_assert_ptr_nonnull(s);
        ck_assert_uint_le(strlen(s), 256);
        for (const char *c = s; *c; c++)
            ck_assert_msg((unsigned char)*c >= 0x20 && *c != 0x7f, "control character in: %s", s);
    }
    run_end(&r);
}
END_TEST

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
    TCase *resp = tcase_create("response");
    tcase_add_test(resp, enforce_lines);
    tcase_add_test(resp, warn_mode_lines);
    tcase_add_test(resp, audit_annotations);
    tcase_add_test(resp, audit_would_deny_false);
    tcase_add_test(resp, audit_would_patch);
    tcase_add_test(resp, enforce_patch);
    tcase_add_test(resp, warning_lines_sanitized);
    suite_add_tcase(s, resp);
    return s;
}
