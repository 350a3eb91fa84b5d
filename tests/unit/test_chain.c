/* test_chain.c -- /mutate then /validate agree (SPEC 10): every object of every fixture file and
 * every corpus manifest goes through /mutate, the patch is applied with the API server's
 * semantics, and /validate of the result must not report a finding (rule and field) that the
 * unmutated object did not have. A second /mutate of the result must return no patch. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/patch.h"
#include "tg/pipeline.h"
#include "tg/review.h"
#include "tg/yaml_json.h"

/* Directories (relative to tests/) whose YAML files are read: case files (their objects) and
 * manifest files (every document). */
static const char *const case_dirs[] = {
    "fixtures/efa",       "fixtures/zone",   "fixtures/mpi",  "fixtures/gang",
    "fixtures/nodeset",   "fixtures/mutate", "fixtures/spec", "fixtures/upstream",
    "fixtures/karpenter", "fixtures/slurm",
};
static const char *const manifest_dirs[] = {"corpus"};

struct counts {
    size_t objects, patched;
};

static int run(const struct tg_policy *pol, json_t *obj, bool mutate, struct tg_result *res,
               struct tg_review *rv)
{
    char err[256];
    struct tg_pipeline_opts opts = {0};
    opts.mutate = mutate;
    opts.skip_validation = mutate;
    if (tg_review_from_object(obj, rv, err, sizeof(err)) < 0)
        return -1;
    return tg_pipeline_run(pol, rv, &opts, res);
}

static bool had(const struct tg_result *before, const struct tg_finding *f)
{
    for (size_t i = 0; i < before->findings.n; i++) {
        if (!strcmp(before->findings.v[i].rule, f->rule) &&
            !strcmp(before->findings.v[i].field, f->field))
            return true;
    }
    return false;
}

/* One object through the chain; `where` names it in a failure. */
static void chain_one(const struct tg_policy *pol, json_t *obj, const char *where, struct counts *c)
{
    struct tg_review rv0, rv1, rv2, rv3;
    struct tg_result before, mut, after, again;
    char err[256];
    if (!json_is_object(obj) || !json_is_string(json_object_get(obj, "kind")))
        return;
    if (run(pol, obj, false, &before, &rv0) != 0)
        return; /* not a review the pipeline takes (no apiVersion...) */
    ck_assert_msg(run(pol, obj, true, &mut, &rv1) == 0, "%s: /mutate failed", where);
    json_t *doc = json_deep_copy(obj);
    ck_assert_msg(tg_patch_apply(&doc, mut.patch.ops, err, sizeof(err)) == 0,
                  "%s: the patch does not apply: %s", where, err);
    c->objects++;
    if (tg_patch_count(&mut.patch) > 0) {
        c->patched++;
        ck_assert_int_eq(run(pol, doc, false, &after, &rv2), 0);
        for (size_t i = 0; i < after.findings.n; i++) {
            const struct tg_finding *f = &after.findings.v[i];
            ck_assert_msg(had(&before, f),
                          "%s: /validate of the mutated object reports [%s] %s: %s, which the "
                          "object did not have before /mutate",
                          where, f->rule, f->field, f->message);
        }
        ck_assert_int_eq(run(pol, doc, true, &again, &rv3), 0);
        ck_assert_msg(tg_patch_count(&again.patch) == 0, "%s: a second /mutate patches again",
                      where);
        tg_result_release(&after);
        tg_result_release(&again);
        tg_review_release(&rv2);
        tg_review_release(&rv3);
    }
    json_decref(doc);
    tg_result_release(&before);
    tg_result_release(&mut);
    tg_review_release(&rv0);
    tg_review_release(&rv1);
}

static bool yaml_name(const char *n)
{
    size_t l = strlen(n);
    return (l > 5 && !strcmp(n + l - 5, ".yaml")) || (l > 4 && !strcmp(n + l - 4, ".yml"));
}

/* Every document of every YAML file under dir (recursively); case files contribute the objects
 * of their cases instead. Returns the number of files read. */
static size_t walk(const struct tg_policy *pol, const char *dir, bool cases, struct counts *c)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t files = 0;
    if (!d)
        return 0;
    while ((e = readdir(d))) {
        char path[512], err[256], where[640];
        size_t len;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        DIR *sub = opendir(path);
        if (sub) {
            closedir(sub);
            files += walk(pol, path, cases, c);
            continue;
        }
        if (!yaml_name(e->d_name))
            continue;
        char *text = tg_read_file(path, 16u << 20, &len, err, sizeof(err));
        ck_assert_msg(text != NULL, "%s: %s", path, err);
        struct tg_yaml_docs docs;
        ck_assert_int_eq(tg_yaml_parse_stream(text, len, &docs), 0);
        free(text);
        files++;
        for (size_t i = 0; i < docs.n; i++) {
            json_t *v = docs.v[i].value, *cs = json_object_get(v, "cases");
            size_t k;
            json_t *cv;
            if (!v)
                continue;
            if (cases && json_is_array(cs)) {
                json_array_foreach (cs, k, cv) {
                    snprintf(where, sizeof(where), "%s: case %zu (%s)", path, k,
                             json_string_value(json_object_get(cv, "name")));
                    chain_one(pol, json_object_get(cv, "object"), where, c);
                }
            } else if (!cases) {
                snprintf(where, sizeof(where), "%s: document %zu", path, i);
                chain_one(pol, v, where, c);
            }
        }
        tg_yaml_docs_release(&docs);
    }
    closedir(d);
    return files;
}

START_TEST(mutate_then_validate_adds_no_finding)
{
    struct tg_policy *pol = tg_policy_new_default();
    struct counts c = {0, 0};
    size_t files = 0;
    ck_assert_ptr_nonnull(pol);
    for (size_t i = 0; i < sizeof(case_dirs) / sizeof(case_dirs[0]); i++)
        files += walk(pol, case_dirs[i], true, &c);
    for (size_t i = 0; i < sizeof(manifest_dirs) / sizeof(manifest_dirs[0]); i++)
        files += walk(pol, manifest_dirs[i], false, &c);
    /* the fixtures exist in the repository: finding none is a broken checkout, not a pass */
    ck_assert_uint_gt(files, 10);
    ck_assert_uint_gt(c.objects, 500);
    ck_assert_uint_gt(c.patched, 50);
    tg_policy_unref(pol);
}
END_TEST

Suite *tg_test_chain_suite(void);
Suite *tg_test_chain_suite(void)
{
    Suite *s = suite_create("chain");
    TCase *tc = tcase_create("chain");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, mutate_then_validate_adds_no_finding);
    suite_add_tcase(s, tc);
    return s;
}
