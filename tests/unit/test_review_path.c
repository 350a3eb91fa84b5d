/* test_review_path.c -- reviewer's regressions for the request path (reader -> review ->
 * pipeline -> response) as the server runs it: through tg_admission_handle and the arena. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/arena.h"
#include "tg/handler.h"
#include "tg/reader.h"
#include "tg/yaml_json.h"

/* The request of a golden fixture, turned into an UPDATE whose oldObject equals the object
 * except for `label` in metadata (a metadata-only update). */
static char *update_body(const char *fixture, const char *label)
{
    char err[256];
    json_error_t jerr;
    size_t len;
    char *text = tg_read_file(fixture, 8u << 20, &len, err, sizeof(err));
    ck_assert_msg(text != NULL, "%s", err);
    json_t *root = json_loadb(text, len, 0, &jerr);
    free(text);
    ck_assert_ptr_nonnull(root);
    json_t *req = json_object_get(root, "request");
    json_t *old = json_deep_copy(json_object_get(req, "object"));
    json_object_set_new(req, "operation", json_string("UPDATE"));
    json_object_set_new(json_object_get(old, "metadata"), "labels",
                        json_pack("{s:s}", "changed", label));
    json_object_set_new(req, "oldObject", old);
    char *body = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    return body;
}

static bool answer_allowed(struct tg_policy *pol, const char *body)
{
    struct tg_admission_out out;
    tg_admission_handle(pol, NULL, false, body, strlen(body), &out);
    ck_assert_int_eq(out.http_status, 200);
    bool allowed = out.result.allowed;
    tg_admission_out_release(&out);
    return allowed;
}

/* efa/zone/mpi/gang skip an UPDATE whose spec is unchanged (a finalizer or label change on a job
 * made before the policy must stay possible); the server's reader used to drop oldObject for
 * every kind but NodeSet, so the skip never happened behind /validate. */
START_TEST(metadata_only_update_of_a_denied_mpijob_is_allowed_on_the_server_path)
{
    struct tg_policy *pol = tg_policy_new_default();
    char *body =
        update_body("fixtures/reviews/validate-enforce-mpijob-np-exceeds-slots.request.json", "x");
    ck_assert(answer_allowed(pol, body));
    tg_arena_install();
    ck_assert(answer_allowed(pol, body));
    json_set_alloc_funcs(malloc, free);
    free(body);
    tg_policy_unref(pol);
}
END_TEST

START_TEST(metadata_only_update_of_a_denied_pod_is_allowed_on_the_server_path)
{
    struct tg_policy *pol = tg_policy_new_default();
    char *body = update_body(
        "fixtures/reviews/validate-enforce-pod-fi-provider-without-device.request.json", "y");
    ck_assert(answer_allowed(pol, body));
    free(body);
    tg_policy_unref(pol);
}
END_TEST

/* The reader keeps oldObject (pruned like object) for every kind. */
START_TEST(reader_keeps_old_object_of_every_kind)
{
    static const char body[] =
        "{\"request\":{\"kind\":{\"kind\":\"MPIJob\"},\"oldObject\":{\"spec\":{\"a\":1},"
        "\"status\":{\"s\":1},\"metadata\":{\"managedFields\":[],\"name\":\"n\"}}}}";
    char err[256];
    json_t *root = tg_reader_load(body, strlen(body), err, sizeof(err));
    ck_assert_ptr_nonnull(root);
    json_t *old = json_object_get(json_object_get(root, "request"), "oldObject");
    ck_assert_ptr_nonnull(old);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(old, "spec"), "a")), 1);
    ck_assert_ptr_null(json_object_get(old, "status"));
    ck_assert_ptr_null(json_object_get(json_object_get(old, "metadata"), "managedFields"));
    json_error_t jerr;
    json_t *full = json_loads(body, 0, &jerr);
    tg_reader_prune(full);
    ck_assert(json_equal(root, full));
    json_decref(full);
    json_decref(root);
}
END_TEST

/* A Pod with wrong JSON types: object.invalid-field (deny) from the decoder. */
static const char bad_pod[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
    "\"uid\":\"u1\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
    "\"operation\":\"CREATE\",\"namespace\":\"a\",\"object\":{\"apiVersion\":\"v1\","
    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":\"oops\"},"
    "\"spec\":{\"containers\":[\"x\"]}}}}";

/* /mutate only mutates (README): the decoder's deny findings used to deny on /mutate. */
START_TEST(mutate_never_denies_and_validate_still_does)
{
    struct tg_policy *pol = tg_policy_new_default();
    struct tg_admission_out out;
    tg_admission_handle(pol, NULL, true, bad_pod, strlen(bad_pod), &out);
    ck_assert_int_eq(out.http_status, 200);
    ck_assert(out.result.allowed);
    ck_assert_ptr_null(strstr(out.body, "\"allowed\":false"));
    ck_assert_uint_eq(json_array_size(out.result.warnings), 0);
    tg_admission_out_release(&out);
    tg_admission_handle(pol, NULL, false, bad_pod, strlen(bad_pod), &out);
    ck_assert_int_eq(out.http_status, 200);
    ck_assert(!out.result.allowed);
    ck_assert_ptr_nonnull(strstr(out.body, "object.invalid-field"));
    tg_admission_out_release(&out);
    tg_policy_unref(pol);
}
END_TEST

/* `check --mutate` runs validators and mutators together: there findings still deny. */
START_TEST(check_mutate_still_denies)
{
    struct tg_policy *pol = tg_policy_new_default();
    struct tg_review rv;
    struct tg_result res;
    char err[256];
    ck_assert_int_eq(tg_review_parse(bad_pod, strlen(bad_pod), &rv, err, sizeof(err)), 0);
    struct tg_pipeline_opts opts = {.mutate = true};
    ck_assert_int_eq(tg_pipeline_run(pol, &rv, &opts, &res), 0);
    ck_assert(!res.allowed);
    tg_result_release(&res);
    tg_review_release(&rv);
    tg_policy_unref(pol);
}
END_TEST

/* A body of tiny values is refused before it costs ~50 bytes a value (OOM under a 128 MiB
 * limit); the same values in a skipped member (managedFields) cost nothing and are accepted. */
static char *many_values(const char *where, int n)
{
    char *b = malloc((size_t)n * 2 + 1024), *p = b;
    p += sprintf(p,
                 "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                 "\"request\":{\"uid\":\"u\",\"kind\":{\"group\":\"\",\"version\":\"v1\","
                 "\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"object\":{\"apiVersion\":"
                 "\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"%s\":[",
                 where);
    for (int i = 0; i < n; i++) {
        *p++ = i ? ',' : ' ';
        *p++ = '0';
    }
    sprintf(p, "]},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}}");
    return b;
}

START_TEST(a_review_with_too_many_values_is_refused_with_400)
{
    struct tg_policy *pol = tg_policy_new_default();
    struct tg_admission_out out;
    char *big = many_values("x", TG_READER_MAX_VALUES + 10);
    tg_admission_handle(pol, NULL, false, big, strlen(big), &out);
    ck_assert_int_eq(out.http_status, 400);
    ck_assert_ptr_nonnull(strstr(out.body, "review too large"));
    tg_admission_out_release(&out);
    free(big);
    char *skipped = many_values("managedFields", TG_READER_MAX_VALUES + 10);
    tg_admission_handle(pol, NULL, false, skipped, strlen(skipped), &out);
    ck_assert_int_eq(out.http_status, 200);
    tg_admission_out_release(&out);
    free(skipped);
    char *ok = many_values("x", 1000);
    tg_admission_handle(pol, NULL, false, ok, strlen(ok), &out);
    ck_assert_int_eq(out.http_status, 200);
    tg_admission_out_release(&out);
    free(ok);
    tg_policy_unref(pol);
}
END_TEST

/* A 400 that quotes the client's apiVersion keeps its message when the value is long and
 * non-ASCII (a byte cut used to split a UTF-8 sequence: the Status had no message at all). */
START_TEST(a_long_non_ascii_api_version_still_gets_a_message)
{
    struct tg_policy *pol = tg_policy_new_default();
    struct tg_admission_out out;
    char av[200], body[512];
    memset(av, 'a', 63);
    strcpy(av + 63, "\xc3\xa9\xc3\xa9\xc3\xa9");
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"%s\",\"kind\":\"AdmissionReview\","
             "\"request\":{\"uid\":\"u\"}}",
             av);
    tg_admission_handle(pol, NULL, false, body, strlen(body), &out);
    ck_assert_int_eq(out.http_status, 400);
    ck_assert_ptr_nonnull(out.body);
    ck_assert_ptr_nonnull(strstr(out.body, "unsupported apiVersion"));
    tg_admission_out_release(&out);
    tg_policy_unref(pol);
}
END_TEST

Suite *tg_test_review_path_suite(void);
Suite *tg_test_review_path_suite(void)
{
    Suite *s = suite_create("review_path");
    TCase *tc = tcase_create("path");
    tcase_add_test(tc, metadata_only_update_of_a_denied_mpijob_is_allowed_on_the_server_path);
    tcase_add_test(tc, metadata_only_update_of_a_denied_pod_is_allowed_on_the_server_path);
    tcase_add_test(tc, reader_keeps_old_object_of_every_kind);
    tcase_add_test(tc, mutate_never_denies_and_validate_still_does);
    tcase_add_test(tc, check_mutate_still_denies);
    tcase_add_test(tc, a_review_with_too_many_values_is_refused_with_400);
    tcase_add_test(tc, a_long_non_ascii_api_version_still_gets_a_message);
    suite_add_tcase(s, tc);
    return s;
}
