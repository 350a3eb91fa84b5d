/* test_rules_gang.c -- the gang.* rules: table-driven cases from fixtures/gang/cases.yaml, and the
 * policy's Volcano scheduler names for gang.scheduler-mismatch. */
#include <string.h>

#include "support/cases.h"
#include "tg/pipeline.h"
#include "tg/policy_yaml.h"

/* A Pod in PodGroup pg with the given schedulerName (NULL: none). */
static json_t *group_pod(const char *scheduler)
{
    json_t *pod =
        json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:[{s:s, s:s}]}}", "apiVersion", "v1", "kind",
                  "Pod", "metadata", "name", "p", "annotations", "scheduling.k8s.io/group-name",
                  "pg", "spec", "containers", "name", "c", "image", "i");
    ck_assert_ptr_nonnull(pod);
    if (scheduler)
        json_object_set_new(json_object_get(pod, "spec"), "schedulerName", json_string(scheduler));
    return pod;
}

/* Runs pod through /validate under a policy naming Volcano schedulers vc-batch and vc-gpu, and
 * returns how many gang.scheduler-mismatch findings came out (message copied to msg). */
static size_t mismatches(const char *scheduler, char *msg, size_t msglen)
{
    static const char policy[] = "volcanoSchedulerNames: [vc-batch, vc-gpu]\n";
    char err[512];
    struct tg_review rv;
    struct tg_result res;
    size_t n = 0;
    struct tg_policy *p = tg_policy_load_yaml(policy, strlen(policy), "test", err, sizeof(err));
    ck_assert_msg(p != NULL, "policy: %s", err);
    json_t *pod = group_pod(scheduler);
    ck_assert_int_eq(tg_review_from_object(pod, &rv, err, sizeof(err)), 0);
    ck_assert_int_eq(tg_pipeline_run(p, &rv, NULL, &res), 0);
    msg[0] = '\0';
    for (size_t i = 0; i < res.findings.n; i++) {
        if (strcmp(res.findings.v[i].rule, "gang.scheduler-mismatch"))
            continue;
        ck_assert_str_eq(res.findings.v[i].field, "spec.schedulerName");
        snprintf(msg, msglen, "%s", res.findings.v[i].message);
        n++;
    }
    tg_result_release(&res);
    tg_review_release(&rv);
    json_decref(pod);
    tg_policy_unref(p);
    return n;
}

START_TEST(policy_scheduler_names_are_volcano)
{
    char msg[512];
    ck_assert_uint_eq(mismatches("vc-batch", msg, sizeof(msg)), 0);
    ck_assert_uint_eq(mismatches("vc-gpu", msg, sizeof(msg)), 0);
}
END_TEST

START_TEST(plain_volcano_is_a_mismatch_when_the_policy_does_not_list_it)
{
    char msg[512];
    ck_assert_uint_eq(mismatches("volcano", msg, sizeof(msg)), 1);
    /* The fix names the policy's first scheduler, and the message the value it saw. */
    ck_assert_ptr_nonnull(strstr(msg, "vc-batch"));
    ck_assert_ptr_nonnull(strstr(msg, "\"volcano\""));
}
END_TEST

START_TEST(missing_scheduler_is_a_mismatch)
{
    char msg[512];
    ck_assert_uint_eq(mismatches(NULL, msg, sizeof(msg)), 1);
}
END_TEST

Suite *tg_test_rules_gang_suite(void);
Suite *tg_test_rules_gang_suite(void)
{
    Suite *s = suite_create("rules_gang");
    TCase *tc = tcase_create("cases");
    tg_cases_add(tc, "fixtures/gang/cases.yaml");
    suite_add_tcase(s, tc);
    TCase *pol = tcase_create("policy");
    tcase_add_test(pol, policy_scheduler_names_are_volcano);
    tcase_add_test(pol, plain_volcano_is_a_mismatch_when_the_policy_does_not_list_it);
    tcase_add_test(pol, missing_scheduler_is_a_mismatch);
    suite_add_tcase(s, pol);
    return s;
}
