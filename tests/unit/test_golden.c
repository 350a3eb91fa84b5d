/* test_golden.c -- golden AdmissionReview pairs: tests/fixtures/reviews/<endpoint>-<mode>-<name>
 * .request.json through the real handler must give .response.json ({"status": N, "body": ...}).
 * TG_UPDATE_GOLDEN=1 rewrites the responses (review the diff before committing). */
#include <check.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/handler.h"
#include "tg/yaml_json.h"

#define DIR_REVIEWS "fixtures/reviews"
#define MAX_GOLDEN 256

static char *names[MAX_GOLDEN];
static size_t nnames, nfound; /* nfound: request files seen, even past MAX_GOLDEN */
static bool dir_missing;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void collect(void)
{
    DIR *d = opendir(DIR_REVIEWS);
    struct dirent *e;
    if (!d) {
        dir_missing = true; /* reported by golden_present, inside a test */
        return;
    }
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n <= 13 || strcmp(e->d_name + n - 13, ".request.json"))
            continue;
        if (nnames < MAX_GOLDEN)
            names[nnames++] = strndup(e->d_name, n - 13);
        nfound++;
    }
    closedir(d);
    qsort(names, nnames, sizeof(names[0]), cmp_str);
}

/* "<endpoint>-<mode>-..." */
static void parse_name(const char *name, bool *mutating, enum tg_mode *mode)
{
    *mutating = !strncmp(name, "mutate-", 7);
    const char *m = strchr(name, '-');
    ck_assert_msg(m != NULL, "%s: name must be <endpoint>-<mode>-<case>", name);
    m++;
    *mode = !strncmp(m, "warn-", 5)    ? TG_MODE_WARN
            : !strncmp(m, "audit-", 6) ? TG_MODE_AUDIT
                                       : TG_MODE_ENFORCE;
    ck_assert_msg(!strncmp(name, "mutate-", 7) || !strncmp(name, "validate-", 9),
                  "%s: endpoint must be validate or mutate", name);
}

START_TEST(golden_review)
{
    char path[512], err[256];
    bool mutating;
    enum tg_mode mode;
    size_t len;
    const char *name = names[_i];
    parse_name(name, &mutating, &mode);
    snprintf(path, sizeof(path), DIR_REVIEWS "/%s.request.json", name);
    char *body = tg_read_file(path, 8u << 20, &len, err, sizeof(err));
    ck_assert_msg(body != NULL, "%s", err);
    struct tg_policy *pol = tg_policy_new_default();
    pol->mode = mode;
    struct tg_admission_out out;
    tg_admission_handle(pol, NULL, mutating, body, len, &out);
    json_t *got_body = json_loadb(out.body, out.len, 0, NULL);
    ck_assert_msg(got_body != NULL, "%s: response body is not JSON", name);
    json_t *got = json_pack("{s:i, s:o}", "status", out.http_status, "body", got_body);
    snprintf(path, sizeof(path), DIR_REVIEWS "/%s.response.json", name);
    if (getenv("TG_UPDATE_GOLDEN")) {
        ck_assert_int_eq(json_dump_file(got, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER), 0);
    } else {
        json_error_t jerr;
        json_t *want = json_load_file(path, 0, &jerr);
        ck_assert_msg(want != NULL, "%s: %s", path, jerr.text);
        char *g = json_dumps(got, JSON_INDENT(2) | JSON_SORT_KEYS);
        ck_assert_msg(json_equal(want, got), "%s differs; got:\n%s", name, g);
        free(g);
        json_decref(want);
    }
    json_decref(got);
    tg_admission_out_release(&out);
    tg_policy_unref(pol);
    free(body);
}
END_TEST

/* The golden pairs are there and all of them run: no directory or no pair is a failure, never a
 * suite of zero tests. */
START_TEST(golden_present)
{
    ck_assert_msg(!dir_missing, "tests/" DIR_REVIEWS " not found (unit tests run from tests/)");
    ck_assert_msg(nnames > 0, "no *.request.json in tests/" DIR_REVIEWS);
    ck_assert_msg(nfound == nnames, "%zu golden requests, only %d run: raise MAX_GOLDEN", nfound,
                  MAX_GOLDEN);
}
END_TEST

static void free_names(void)
{
    for (size_t i = 0; i < nnames; i++)
        free(names[i]);
}

Suite *tg_test_golden_suite(void);
Suite *tg_test_golden_suite(void)
{
    Suite *s = suite_create("golden");
    TCase *tc = tcase_create("reviews");
    if (!nnames) {
        collect();
        atexit(free_names);
    }
    tcase_add_test(tc, golden_present);
    tcase_add_loop_test(tc, golden_review, 0, (int)nnames);
    suite_add_tcase(s, tc);
    return s;
}
