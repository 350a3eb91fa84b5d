/* test_blast_radius.c -- what keeps trainguard safe to run cluster-wide (issue 20, SPEC 12/13):
 * exceptions, the rulesVersion cap, the UPDATE ratchet (table-driven from fixtures/exempt,
 * fixtures/upgrade and fixtures/ratchet), and the catalogue data the webhooks' prefilter is
 * generated from. */
#include <stdio.h>
#include <string.h>

#include "support/cases.h"
#include "tg/exempt.h"
#include "tg/policy_yaml.h"
#include "tg/ratchet.h"
#include "tg/version.h"
#include "tg/yaml_json.h"

static json_t *yaml(const char *text)
{
    char err[256];
    json_t *v = tg_yaml_parse_one(text, strlen(text), err, sizeof(err));
    ck_assert_msg(v != NULL, "%s", err);
    return v;
}

/* ---- the ratchet's field identity ----------------------------------------------------------- */

static const struct {
    const char *field, *key;
} key_cases[] = {
    {"spec.containers[1].env[0]", "spec.containers[name=w].env[name=FI_PROVIDER]"},
    {"spec.containers[0].resources.limits[vpc.amazonaws.com/efa]",
     "spec.containers[name=log].resources.limits[vpc.amazonaws.com/efa]"},
    {"spec.containers[1].command[2]", "spec.containers[name=w].command[2]"},
    {"spec.tasks[0].template.spec", "spec.tasks[name=worker].template.spec"},
    {"spec.workerGroupSpecs[0].replicas", "spec.workerGroupSpecs[name=gpu].replicas"},
    {"spec.containers[7].env", "spec.containers[7].env"}, /* does not resolve: as written */
    {"metadata.name", "metadata.name"},
    {"", ""},
};

START_TEST(ratchet_key_names_list_elements)
{
    char out[512];
    json_t *obj =
        yaml("spec:\n"
             "  containers:\n"
             "    - {name: log, resources: {limits: {vpc.amazonaws.com/efa: 1}}}\n"
             "    - {name: w, env: [{name: FI_PROVIDER, value: efa}], command: [a, b, c]}\n"
             "  tasks: [{name: worker, template: {spec: {}}}]\n"
             "  workerGroupSpecs: [{groupName: gpu, replicas: 2}]\n");
    tg_ratchet_key(obj, key_cases[_i].field, out, sizeof(out));
    ck_assert_str_eq(out, key_cases[_i].key);
    json_decref(obj);
}
END_TEST

/* Two findings lists, the second from the old object with the container moved: the deny finding
 * matches by name and becomes a warning with a note; the other rule's finding stays. */
START_TEST(ratchet_downgrades_only_matching_deny_findings)
{
    struct tg_findings now, before;
    json_t *obj = yaml("spec: {containers: [{name: x}, {name: w}]}\n");
    json_t *old = yaml("spec: {containers: [{name: w}]}\n");
    tg_findings_init(&now);
    tg_findings_init(&before);
    tg_findings_add(&now, "efa.limit-required", TG_RULE_EFA_LIMIT_REQUIRED, TG_ACTION_DENY,
                    "spec.containers[1]", "old problem");
    tg_findings_add(&now, "efa.invalid-quantity", TG_RULE_EFA_INVALID_QUANTITY, TG_ACTION_DENY,
                    "spec.containers[1]", "new problem");
    tg_findings_add(&before, "efa.limit-required", TG_RULE_EFA_LIMIT_REQUIRED, TG_ACTION_DENY,
                    "spec.containers[0]", "old problem");
    ck_assert_uint_eq(tg_ratchet_apply(&now, obj, &before, old), 1);
    ck_assert_int_eq(now.v[0].action, TG_ACTION_WARN);
    ck_assert_ptr_nonnull(strstr(now.v[0].message, "already in the object before this update"));
    ck_assert_int_eq(now.v[1].action, TG_ACTION_DENY);
    tg_findings_release(&now);
    tg_findings_release(&before);
    json_decref(obj);
    json_decref(old);
}
END_TEST

/* ---- exceptions ------------------------------------------------------------------------------ */

START_TEST(exemption_parses_ids_spaces_and_unknowns)
{
    struct tg_exemption ex;
    json_t *obj = yaml("metadata:\n  annotations:\n    trainguard.dev/exempt-rules: "
                       "\" zone.missing ,zone.mising,, efa.no-hugepages,zone.missing\"\n");
    tg_exemption_read(obj, true, &ex);
    ck_assert_uint_eq(ex.n, 2); /* a repeated id counts once */
    ck_assert_int_eq(ex.rules[0], TG_RULE_ZONE_MISSING);
    ck_assert_int_eq(ex.rules[1], TG_RULE_EFA_NO_HUGEPAGES);
    ck_assert_ptr_nonnull(strstr(ex.unknown, "\"zone.mising\" (did you mean zone.missing?)"));
    ck_assert_ptr_nonnull(strstr(ex.unknown, "is not a rule id"));
    tg_exemption_read(obj, false, &ex); /* not allowed: nothing off, unknown ids still seen */
    ck_assert_uint_eq(ex.n, 0);
    ck_assert_str_ne(ex.unknown, "");
    json_decref(obj);
}
END_TEST

START_TEST(exemption_turns_rules_off)
{
    struct tg_exemption ex;
    enum tg_action actions[TG_RULE_COUNT];
    json_t *obj = yaml("metadata: {annotations: {trainguard.dev/exempt-rules: zone.missing}}\n");
    for (size_t i = 0; i < TG_RULE_COUNT; i++)
        actions[i] = TG_ACTION_DENY;
    tg_exemption_read(obj, true, &ex);
    tg_exemption_apply(&ex, actions);
    ck_assert_int_eq(actions[TG_RULE_ZONE_MISSING], TG_ACTION_OFF);
    ck_assert_int_eq(actions[TG_RULE_ZONE_MULTIPLE], TG_ACTION_DENY);
    ck_assert_str_eq(ex.unknown, "");
    json_decref(obj);
}
END_TEST

START_TEST(exception_namespaces_default_to_none)
{
    char err[512];
    struct tg_policy *def = tg_policy_new_default();
    const char *text = "kind: Policy\nexceptionNamespaces: [team-a]\n";
    struct tg_policy *p = tg_policy_load_yaml(text, strlen(text), "t", err, sizeof(err));
    ck_assert_msg(p != NULL, "%s", err);
    ck_assert(!tg_policy_allows_exceptions(def, "team-a"));
    ck_assert(tg_policy_allows_exceptions(p, "team-a"));
    ck_assert(!tg_policy_allows_exceptions(p, "team-b"));
    ck_assert(!tg_policy_allows_exceptions(p, "")); /* cluster-scoped: no namespace */
    tg_policy_unref(p);
    tg_policy_unref(def);
}
END_TEST

/* ---- rulesVersion ---------------------------------------------------------------------------- */

static const char *const bad_versions[] = {"0.2.0", "v0.2", "0", ".2", "0.", "latest", "0.2 "};

START_TEST(rules_version_must_be_x_y)
{
    char text[128], err[512];
    snprintf(text, sizeof(text), "kind: Policy\nrulesVersion: \"%s\"\n", bad_versions[_i]);
    struct tg_policy *p = tg_policy_load_yaml(text, strlen(text), "t", err, sizeof(err));
    ck_assert_msg(p == NULL, "accepted rulesVersion \"%s\"", bad_versions[_i]);
    ck_assert_ptr_nonnull(strstr(err, "rulesVersion"));
}
END_TEST

/* Every rule newer than the pinned release runs at warn at most; every other keeps the policy's
 * action; no pin, no cap. */
START_TEST(rules_version_caps_newer_rules_at_warn)
{
    char err[512];
    enum tg_action capped[TG_RULE_COUNT], free_[TG_RULE_COUNT];
    const char *text = "kind: Policy\nrulesVersion: \"0.1\"\n";
    struct tg_policy *p = tg_policy_load_yaml(text, strlen(text), "t", err, sizeof(err));
    ck_assert_msg(p != NULL, "%s", err);
    for (size_t i = 0; i < TG_RULE_COUNT; i++)
        p->actions[i] = TG_ACTION_DENY;
    tg_policy_effective_actions(p, capped);
    free(p->rules_version);
    p->rules_version = NULL;
    tg_policy_effective_actions(p, free_);
    for (size_t i = 0; i < TG_RULE_COUNT; i++) {
        bool newer = tg_release_cmp(tg_rule_defs[i].since, "0.1") > 0;
        ck_assert_int_eq(capped[i], newer ? TG_ACTION_WARN : TG_ACTION_DENY);
        ck_assert_int_eq(free_[i], TG_ACTION_DENY);
    }
    tg_policy_unref(p);
}
END_TEST

/* ---- the catalogue -----------------------------------------------------------------------------
 */

/* SPEC 13: releases X.Y.Z; every rule's `since` is an X.Y no later than this release, the 32
 * first-round rules 0.1 and the rules added since then the next release. */
START_TEST(every_rule_has_a_release_up_to_this_one)
{
    char release[16];
    size_t first = 0;
    snprintf(release, sizeof(release), "%s", TG_VERSION);
    *strrchr(release, '.') = '\0';
    ck_assert_str_eq(release, "0.2");
    for (size_t i = 0; i < tg_rule_count; i++) {
        const char *since = tg_rule_defs[i].since;
        ck_assert_msg(!strcmp(since, "0.1") || !strcmp(since, "0.2"), "%s: since %s",
                      tg_rule_defs[i].id, since);
        ck_assert(tg_release_cmp(since, release) <= 0);
        first += !strcmp(since, "0.1");
    }
    ck_assert_uint_eq(first, 32);
    ck_assert_str_eq(tg_rule_defs[TG_RULE_EXEMPT_UNKNOWN_RULE].since, "0.2");
    ck_assert_int_eq(tg_rule_defs[TG_RULE_EXEMPT_UNKNOWN_RULE].default_action, TG_ACTION_WARN);
}
END_TEST

/* Template paths are well formed, every kind with pod templates has them, and the kinds SPEC 13
 * says always pass (NodePool, the Slurm Controller, the training runtimes; TrainJob, whose shape
 * changes between Trainer releases) have none: a kind without TG_TEMPLATE rows gets no
 * matchCondition (scripts/catalogue_gen.c). */
static bool has_template_row(enum tg_kind k)
{
    for (size_t i = 0; i < tg_template_def_count; i++) {
        if (tg_template_defs[i].kind == k)
            return true;
    }
    return false;
}

START_TEST(templated_kinds_have_template_paths)
{
    static const enum tg_kind with[] = {
        TG_KIND_POD,    TG_KIND_MPIJOB, TG_KIND_NODESET,    TG_KIND_VCJOB,      TG_KIND_BATCHJOB,
        TG_KIND_JOBSET, TG_KIND_LWS,    TG_KIND_PYTORCHJOB, TG_KIND_RAYCLUSTER, TG_KIND_RAYJOB};
    static const enum tg_kind without[] = {TG_KIND_NODEPOOL, TG_KIND_SLURM_CONTROLLER,
                                           TG_KIND_TRAININGRUNTIME, TG_KIND_TRAINJOB};
    for (size_t i = 0; i < tg_template_def_count; i++) {
        const char *p = tg_template_defs[i].path;
        ck_assert_msg(*p && p[strlen(p) - 1] != '.' && !strstr(p, ".."), "bad path %s", p);
    }
    for (size_t i = 0; i < sizeof(with) / sizeof(with[0]); i++)
        ck_assert_msg(has_template_row(with[i]), "%s has no TG_TEMPLATE row",
                      tg_kind_defs[with[i]].display);
    for (size_t i = 0; i < sizeof(without) / sizeof(without[0]); i++)
        ck_assert_msg(!has_template_row(without[i]), "%s must always pass the prefilter",
                      tg_kind_defs[without[i]].display);
    ck_assert(tg_kind_update_immutable(TG_KIND_POD));
    ck_assert(!tg_kind_update_immutable(TG_KIND_MPIJOB));
    ck_assert(tg_kind_create_only(TG_KIND_SLURM_CONTROLLER));
    ck_assert(!tg_kind_create_only(TG_KIND_POD));
}
END_TEST

Suite *tg_test_blast_radius_suite(void);
Suite *tg_test_blast_radius_suite(void)
{
    Suite *s = suite_create("blast_radius");
    TCase *tc = tcase_create("units");
    tcase_add_loop_test(tc, ratchet_key_names_list_elements, 0,
                        (int)(sizeof(key_cases) / sizeof(key_cases[0])));
    tcase_add_test(tc, ratchet_downgrades_only_matching_deny_findings);
    tcase_add_test(tc, exemption_parses_ids_spaces_and_unknowns);
    tcase_add_test(tc, exemption_turns_rules_off);
    tcase_add_test(tc, exception_namespaces_default_to_none);
    tcase_add_loop_test(tc, rules_version_must_be_x_y, 0,
                        (int)(sizeof(bad_versions) / sizeof(bad_versions[0])));
    tcase_add_test(tc, rules_version_caps_newer_rules_at_warn);
    tcase_add_test(tc, every_rule_has_a_release_up_to_this_one);
    tcase_add_test(tc, templated_kinds_have_template_paths);
    suite_add_tcase(s, tc);
    TCase *cases = tcase_create("cases");
    tg_cases_add(cases, "fixtures/exempt/cases.yaml");
    tg_cases_add(cases, "fixtures/upgrade/cases.yaml");
    tg_cases_add(cases, "fixtures/ratchet/cases.yaml");
    suite_add_tcase(s, cases);
    return s;
}
