/* test_metrics.c -- counters and the Prometheus text exposition (format 0.0.4). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tg/metrics.h"
#include "tg/procstat.h"

static const struct tg_rule_def rules[] = {
    {.id = "efa.env-without-device", .default_action = TG_ACTION_DENY, .summary = "a"},
    {.id = "zone.missing", .default_action = TG_ACTION_DENY, .summary = "b"},
    {.id = "efa.no-hugepages", .default_action = TG_ACTION_WARN, .summary = "c"},
};

static void setup(void)
{
    ck_assert_int_eq(tg_metrics_init(rules, 3, "1.2.3"), 0);
}

static void teardown(void)
{
    tg_metrics_release();
}

static char *render(void)
{
    size_t len = 0;
    char *s = tg_metrics_render(&len);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(strlen(s), len);
    return s;
}

/* The value of the exposition line that starts with `series ` (exact series), or -1. */
static double value_of(const char *text, const char *series)
{
    size_t n = strlen(series);
    const char *p = text;

    while ((p = strstr(p, series)) != NULL) {
        if ((p == text || p[-1] == '\n') && p[n] == ' ')
            return strtod(p + n + 1, NULL);
        p += n;
    }
    return -1;
}

START_TEST(fresh_metrics_show_families_and_build_info)
{
    char *s = render();

    ck_assert_ptr_nonnull(strstr(s, "# TYPE trainguard_admission_requests_total counter\n"));
    ck_assert_ptr_nonnull(strstr(s, "# TYPE trainguard_admission_duration_seconds histogram\n"));
    ck_assert_ptr_nonnull(strstr(s, "# TYPE trainguard_findings_total counter\n"));
    ck_assert_ptr_nonnull(strstr(s, "# TYPE trainguard_patches_total counter\n"));
    ck_assert_ptr_nonnull(
        strstr(s, "# TYPE trainguard_certificate_expiry_timestamp_seconds gauge"));
    ck_assert_ptr_nonnull(strstr(s, "# TYPE trainguard_inflight_requests gauge\n"));
    ck_assert_double_eq(value_of(s, "trainguard_build_info{version=\"1.2.3\"}"), 1);
    ck_assert_double_eq(value_of(s, "trainguard_certificate_reloads_total{result=\"failure\"}"), 0);
    ck_assert_double_eq(value_of(s, "trainguard_policy_reloads_total{result=\"success\"}"), 0);
    /* No request yet: no request series, but the histogram is there with zeros. */
    ck_assert_ptr_null(strstr(s, "trainguard_admission_requests_total{"));
    ck_assert_double_eq(
        value_of(s, "trainguard_admission_duration_seconds_count{endpoint=\"mutate\"}"), 0);
    ck_assert(s[strlen(s) - 1] == '\n');
    free(s);
}
END_TEST

START_TEST(admissions_are_counted_by_labels)
{
    tg_metrics_admission(TG_EP_VALIDATE, tg_metrics_kind_index("Pod"),
                         tg_metrics_op_index("CREATE"), TG_VERDICT_DENIED, 0.0002);
    tg_metrics_admission(TG_EP_VALIDATE, tg_metrics_kind_index("Pod"),
                         tg_metrics_op_index("CREATE"), TG_VERDICT_DENIED, 0.003);
    tg_metrics_admission(TG_EP_MUTATE, tg_metrics_kind_index("Widget"),
                         tg_metrics_op_index("PATCH"), TG_VERDICT_ALLOWED, 5.0);
    tg_metrics_admission(TG_EP_MUTATE, tg_metrics_kind_index(NULL), tg_metrics_op_index(NULL),
                         TG_VERDICT_ERROR, 0.00001);
    char *s = render();
    ck_assert_double_eq(value_of(s, "trainguard_admission_requests_total{endpoint=\"validate\","
                                    "kind=\"Pod\",operation=\"CREATE\",verdict=\"denied\"}"),
                        2);
    ck_assert_double_eq(value_of(s, "trainguard_admission_requests_total{endpoint=\"mutate\","
                                    "kind=\"other\",operation=\"unknown\",verdict=\"allowed\"}"),
                        1);
    ck_assert_double_eq(value_of(s, "trainguard_admission_requests_total{endpoint=\"mutate\","
                                    "kind=\"unknown\",operation=\"unknown\",verdict=\"error\"}"),
                        1);
    /* Buckets are cumulative; 5 s lands only in +Inf. */
    ck_assert_double_eq(value_of(s, "trainguard_admission_duration_seconds_bucket{endpoint="
                                    "\"validate\",le=\"0.0001\"}"),
                        0);
    ck_assert_double_eq(value_of(s, "trainguard_admission_duration_seconds_bucket{endpoint="
                                    "\"validate\",le=\"0.00025\"}"),
                        1);
    ck_assert_double_eq(value_of(s, "trainguard_admission_duration_seconds_bucket{endpoint="
                                    "\"validate\",le=\"0.005\"}"),
                        2);
    ck_assert_double_eq(value_of(s, "trainguard_admission_duration_seconds_bucket{endpoint="
                                    "\"validate\",le=\"+Inf\"}"),
                        2);
    ck_assert_double_eq(value_of(s, "trainguard_admission_duration_seconds_bucket{endpoint="
                                    "\"mutate\",le=\"1\"}"),
                        1);
    ck_assert_double_eq(value_of(s, "trainguard_admission_duration_seconds_bucket{endpoint="
                                    "\"mutate\",le=\"+Inf\"}"),
                        2);
    ck_assert_double_eq(value_of(s, "trainguard_admission_duration_seconds_count{endpoint="
                                    "\"mutate\"}"),
                        2);
    double sum = value_of(s, "trainguard_admission_duration_seconds_sum{endpoint=\"validate\"}");
    ck_assert(sum > 0.0031 && sum < 0.0033);
    free(s);
}
END_TEST

START_TEST(findings_patches_reloads_errors_and_gauges)
{
    tg_metrics_finding(0, TG_MACTION_DENY, NULL);
    tg_metrics_finding(0, TG_MACTION_DENY, NULL);
    tg_metrics_finding(2, TG_MACTION_AUDIT, NULL);
    tg_metrics_finding(3, TG_MACTION_DENY, NULL);  /* out of range: ignored */
    tg_metrics_finding(-1, TG_MACTION_WARN, NULL); /* ignored */
    tg_metrics_patch(tg_metrics_kind_index("MPIJob"));
    tg_metrics_policy_reloads(3, 1);
    tg_metrics_cert_reload(TG_RESULT_SUCCESS);
    tg_metrics_cert_reload(TG_RESULT_FAILURE);
    tg_metrics_cert_reload(TG_RESULT_FAILURE);
    tg_metrics_cert_expiry(1798761600);
    tg_metrics_http_error(413);
    tg_metrics_http_error(418);
    tg_metrics_inflight_add(2);
    tg_metrics_inflight_add(-1);
    char *s = render();
    ck_assert_double_eq(value_of(s, "trainguard_findings_total{rule=\"efa.env-without-device\","
                                    "action=\"deny\"}"),
                        2);
    ck_assert_double_eq(value_of(s, "trainguard_findings_total{rule=\"efa.no-hugepages\","
                                    "action=\"audit\"}"),
                        1);
    ck_assert_ptr_null(strstr(s, "zone.missing"));
    ck_assert_double_eq(value_of(s, "trainguard_patches_total{kind=\"MPIJob\"}"), 1);
    ck_assert_double_eq(value_of(s, "trainguard_policy_reloads_total{result=\"success\"}"), 3);
    ck_assert_double_eq(value_of(s, "trainguard_policy_reloads_total{result=\"failure\"}"), 1);
    ck_assert_double_eq(value_of(s, "trainguard_certificate_reloads_total{result=\"failure\"}"), 2);
    ck_assert_double_eq(value_of(s, "trainguard_certificate_expiry_timestamp_seconds"), 1798761600);
    ck_assert_double_eq(value_of(s, "trainguard_http_errors_total{code=\"413\"}"), 1);
    ck_assert_double_eq(value_of(s, "trainguard_http_errors_total{code=\"other\"}"), 1);
    ck_assert_double_eq(value_of(s, "trainguard_inflight_requests"), 1);
    ck_assert_int_eq(tg_metrics_inflight(), 1);
    free(s);
}
END_TEST

START_TEST(every_sample_belongs_to_a_declared_family)
{
    tg_metrics_admission(TG_EP_VALIDATE, 0, 0, TG_VERDICT_ALLOWED, 0.001);
    tg_metrics_finding(1, TG_MACTION_WARN, NULL);
    tg_metrics_http_error(404);
    char *s = render();
    char *save = NULL;
    char family[128] = "";
    int samples = 0;

    for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "# TYPE ", 7)) {
            sscanf(line + 7, "%127s", family);
            continue;
        }
        if (line[0] == '#')
            continue;
        ck_assert_msg(family[0] && !strncmp(line, family, strlen(family)),
                      "sample outside its family (%s): %s", family, line);
        /* name{labels} value: exactly one space before the value */
        const char *sp = strrchr(line, ' ');
        ck_assert_ptr_nonnull(sp);
        char *end;
        strtod(sp + 1, &end);
        ck_assert_msg(*end == '\0', "bad value in: %s", line);
        samples++;
    }
    ck_assert_int_gt(samples, 20);
    free(s);
}
END_TEST

START_TEST(label_indexes_are_bounded)
{
    ck_assert_int_eq(tg_metrics_kind_index("Pod"), 0);
    ck_assert_int_eq(tg_metrics_kind_index("SlurmNodeSet"), 5);
    ck_assert_int_eq(tg_metrics_kind_index("NodePool"), 6);
    ck_assert_int_eq(tg_metrics_kind_index("Controller"), 7);
    ck_assert_int_eq(tg_metrics_kind_index("pod"), tg_metrics_kind_index("Deployment"));
    ck_assert_int_ne(tg_metrics_kind_index(NULL), tg_metrics_kind_index("Deployment"));
    ck_assert_int_eq(tg_metrics_op_index("DELETE"), 2);
    ck_assert_int_eq(tg_metrics_op_index("delete"), tg_metrics_op_index(NULL));
    /* Out-of-range indexes never crash or count. */
    tg_metrics_admission(TG_EP_COUNT, 0, 0, TG_VERDICT_ALLOWED, 0);
    tg_metrics_admission(TG_EP_MUTATE, 99, 0, TG_VERDICT_ALLOWED, 0);
    tg_metrics_admission(TG_EP_MUTATE, 0, -1, TG_VERDICT_ALLOWED, 0);
    tg_metrics_patch(-3);
    char *s = render();
    ck_assert_ptr_null(strstr(s, "trainguard_admission_requests_total{"));
    free(s);
}
END_TEST

START_TEST(finding_actions_follow_the_mode)
{
    ck_assert_int_eq(tg_metrics_action_for(TG_MODE_ENFORCE, TG_ACTION_DENY), TG_MACTION_DENY);
    ck_assert_int_eq(tg_metrics_action_for(TG_MODE_ENFORCE, TG_ACTION_WARN), TG_MACTION_WARN);
    ck_assert_int_eq(tg_metrics_action_for(TG_MODE_WARN, TG_ACTION_DENY), TG_MACTION_WARN);
    ck_assert_int_eq(tg_metrics_action_for(TG_MODE_WARN, TG_ACTION_WARN), TG_MACTION_WARN);
    ck_assert_int_eq(tg_metrics_action_for(TG_MODE_AUDIT, TG_ACTION_DENY), TG_MACTION_AUDIT);
    ck_assert_int_eq(tg_metrics_action_for(TG_MODE_AUDIT, TG_ACTION_WARN), TG_MACTION_AUDIT);
}
END_TEST

START_TEST(reload_gauges_and_policy_info)
{
    char *s = render();
    /* fresh: both healthy, no policy named yet */
    ck_assert_double_eq(value_of(s, "trainguard_policy_last_reload_successful"), 1);
    ck_assert_double_eq(value_of(s, "trainguard_certificate_last_reload_successful"), 1);
    ck_assert_ptr_null(strstr(s, "trainguard_policy_info"));
    free(s);

    tg_metrics_reload_state(false, true);
    tg_metrics_policy_info("audit", "00ff");
    s = render();
    ck_assert_double_eq(value_of(s, "trainguard_policy_last_reload_successful"), 0);
    ck_assert_double_eq(value_of(s, "trainguard_certificate_last_reload_successful"), 1);
    ck_assert_ptr_nonnull(strstr(s, "# TYPE trainguard_policy_info gauge\n"));
    ck_assert_double_eq(value_of(s, "trainguard_policy_info{mode=\"audit\",sha256=\"00ff\"}"), 1);
    free(s);

    tg_metrics_reload_state(true, false);
    tg_metrics_policy_info("enforce", "abcd");
    s = render();
    ck_assert_double_eq(value_of(s, "trainguard_policy_last_reload_successful"), 1);
    ck_assert_double_eq(value_of(s, "trainguard_certificate_last_reload_successful"), 0);
    ck_assert_double_eq(value_of(s, "trainguard_policy_info{mode=\"enforce\",sha256=\"abcd\"}"), 1);
    ck_assert_ptr_null(strstr(s, "00ff")); /* one series: the policy in force */
    free(s);

    /* a label value that would need escaping is never written */
    tg_metrics_policy_info("enforce", "ab\"}\n");
    s = render();
    ck_assert_ptr_null(strstr(s, "trainguard_policy_info{"));
    free(s);
}
END_TEST

START_TEST(namespace_label_only_when_turned_on)
{
    tg_metrics_finding(0, TG_MACTION_DENY, "ml");
    char *s = render();
    ck_assert_double_eq(value_of(s, "trainguard_findings_total{rule=\"efa.env-without-device\","
                                    "action=\"deny\"}"),
                        1);
    ck_assert_ptr_null(strstr(s, "namespace="));
    free(s);

    ck_assert_int_eq(tg_metrics_namespace_label(), 0);
    tg_metrics_finding(0, TG_MACTION_DENY, "ml");
    tg_metrics_finding(0, TG_MACTION_DENY, "ml");
    tg_metrics_finding(1, TG_MACTION_WARN, "team-b");
    tg_metrics_finding(2, TG_MACTION_AUDIT, "");   /* cluster-scoped */
    tg_metrics_finding(2, TG_MACTION_AUDIT, NULL); /* likewise */
    tg_metrics_finding(1, TG_MACTION_WARN, "Not\"A}Namespace");
    tg_metrics_finding(1, TG_MACTION_WARN, "-bad");
    s = render();
    ck_assert_double_eq(value_of(s, "trainguard_findings_total{rule=\"efa.env-without-device\","
                                    "action=\"deny\",namespace=\"ml\"}"),
                        2);
    ck_assert_double_eq(value_of(s, "trainguard_findings_total{rule=\"zone.missing\","
                                    "action=\"warn\",namespace=\"team-b\"}"),
                        1);
    ck_assert_double_eq(value_of(s, "trainguard_findings_total{rule=\"efa.no-hugepages\","
                                    "action=\"audit\",namespace=\"\"}"),
                        2);
    ck_assert_double_eq(value_of(s, "trainguard_findings_total{rule=\"zone.missing\","
                                    "action=\"warn\",namespace=\"_other\"}"),
                        2);
    /* every findings sample has the label */
    for (const char *p = s; (p = strstr(p, "\ntrainguard_findings_total{")); p++)
        ck_assert_ptr_nonnull(strstr(p, "namespace=\""));
    ck_assert_ptr_null(strstr(s, "Namespace"));
    free(s);
}
END_TEST

/* Past TG_METRICS_MAX_NAMESPACES names, new ones count under _other: memory stays bounded. */
START_TEST(namespace_label_is_capped)
{
    char ns[32];

    ck_assert_int_eq(tg_metrics_namespace_label(), 0);
    for (int i = 0; i < TG_METRICS_MAX_NAMESPACES + 50; i++) {
        snprintf(ns, sizeof ns, "ns-%d", i);
        tg_metrics_finding(0, TG_MACTION_WARN, ns);
    }
    tg_metrics_finding(0, TG_MACTION_WARN, "ns-0"); /* known: still its own */
    char *s = render();
    ck_assert_double_eq(value_of(s, "trainguard_findings_total{rule=\"efa.env-without-device\","
                                    "action=\"warn\",namespace=\"ns-0\"}"),
                        2);
    ck_assert_double_eq(value_of(s, "trainguard_findings_total{rule=\"efa.env-without-device\","
                                    "action=\"warn\",namespace=\"_other\"}"),
                        50);
    snprintf(ns, sizeof ns, "namespace=\"ns-%d\"", TG_METRICS_MAX_NAMESPACES + 10);
    ck_assert_ptr_null(strstr(s, ns));
    free(s);
}
END_TEST

START_TEST(process_metrics_are_present_and_sane)
{
    char *s = render();
    double start = value_of(s, "process_start_time_seconds");
    double now = (double)time(NULL);

    ck_assert_ptr_nonnull(strstr(s, "# TYPE process_cpu_seconds_total counter\n"));
    ck_assert_ptr_nonnull(strstr(s, "# TYPE process_resident_memory_bytes gauge\n"));
    ck_assert_double_ge(value_of(s, "process_cpu_seconds_total"), 0);
    ck_assert_double_gt(value_of(s, "process_resident_memory_bytes"), 1 << 20);
    ck_assert_double_gt(value_of(s, "process_virtual_memory_bytes"),
                        value_of(s, "process_resident_memory_bytes"));
    ck_assert_double_ge(value_of(s, "process_open_fds"), 3);
    ck_assert_double_ge(value_of(s, "process_max_fds"), value_of(s, "process_open_fds"));
    /* this test process started within the last day, and not in the future */
    ck_assert_double_le(start, now + 1);
    ck_assert_double_gt(start, now - 86400);
    free(s);
}
END_TEST

/* A command name with spaces and parentheses, as a process can give itself. */
START_TEST(proc_stat_is_parsed_after_the_last_parenthesis)
{
    static const char line[] =
        "4242 (tg (x) y) S 1 4242 4242 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 3 0 1000 "
        "123456789 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
    struct tg_procstat ps;
    double btime = 0;

    ck_assert_int_eq(tg_procstat_parse_stat(line, 100, 4096, 1700000000, &ps), 0);
    ck_assert_double_eq_tol(ps.cpu_seconds, 3.0, 1e-9); /* (250 + 50) / 100 */
    ck_assert_double_eq_tol(ps.start_time, 1700000010.0, 1e-6);
    ck_assert_double_eq(ps.virtual_bytes, 123456789);
    ck_assert_double_eq(ps.resident_bytes, 2048.0 * 4096);
    ck_assert_int_eq(tg_procstat_parse_stat("4242 (cut short) S 1 2", 100, 4096, 0, &ps), -EINVAL);
    ck_assert_int_eq(tg_procstat_parse_stat("no parenthesis", 100, 4096, 0, &ps), -EINVAL);
    ck_assert_int_eq(tg_procstat_parse_btime("cpu 1 2 3\nctxt 9\nbtime 1700000000\n", &btime), 0);
    ck_assert_double_eq(btime, 1700000000);
    ck_assert_int_eq(tg_procstat_parse_btime("cpu 1 2 3\n", &btime), -EINVAL);
}
END_TEST

Suite *tg_test_metrics_suite(void);
Suite *tg_test_metrics_suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("exposition");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, fresh_metrics_show_families_and_build_info);
    tcase_add_test(tc, admissions_are_counted_by_labels);
    tcase_add_test(tc, findings_patches_reloads_errors_and_gauges);
    tcase_add_test(tc, every_sample_belongs_to_a_declared_family);
    tcase_add_test(tc, label_indexes_are_bounded);
    tcase_add_test(tc, finding_actions_follow_the_mode);
    tcase_add_test(tc, reload_gauges_and_policy_info);
    tcase_add_test(tc, namespace_label_only_when_turned_on);
    tcase_add_test(tc, namespace_label_is_capped);
    tcase_add_test(tc, process_metrics_are_present_and_sane);
    tcase_add_test(tc, proc_stat_is_parsed_after_the_last_parenthesis);
    suite_add_tcase(s, tc);
    return s;
}
