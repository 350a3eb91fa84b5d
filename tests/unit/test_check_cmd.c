/* test_check_cmd.c -- `trainguard check` end to end on fixture manifests: output, exit codes
 * (SPEC 12), and every output format checked against its published schema (tests/schemas). */
#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tg/catalogue.h"
#include "tg/check_cmd.h"
#include "tg/check_policyreport.h"
#include "tg/check_report.h"
#include "tg/check_sarif.h"

#define FIX "fixtures/yaml/"
#define CI "fixtures/check/"

struct run {
    int rc;
    char *out;
    char *err;
};

static char *slurp(FILE *f)
{
    long n;
    char *buf;

    fflush(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = calloc(1, (size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    return buf;
}

/* Runs tg_cmd_check with the NULL-terminated arguments, stdin from in_path (or unchanged), and
 * captures stdout and stderr. */
static struct run run_check(const char *in_path, ...)
{
    char *argv[16];
    int argc = 0, saved_out, saved_err, saved_in = -1;
    FILE *out = tmpfile(), *err = tmpfile();
    struct run r;
    va_list ap;

    ck_assert_ptr_nonnull(out);
    ck_assert_ptr_nonnull(err);
    argv[argc++] = "check";
    va_start(ap, in_path);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && argc < 15;)
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    saved_out = dup(1);
    saved_err = dup(2);
    dup2(fileno(out), 1);
    dup2(fileno(err), 2);
    if (in_path) {
        int fd = open(in_path, O_RDONLY);

        ck_assert_int_ge(fd, 0);
        saved_in = dup(0);
        dup2(fd, 0);
        close(fd);
        clearerr(stdin);
    }
    r.rc = tg_cmd_check(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    if (saved_in >= 0) {
        dup2(saved_in, 0);
        close(saved_in);
        clearerr(stdin);
    }
    r.out = slurp(out);
    r.err = slurp(err);
    fclose(out);
    fclose(err);
    return r;
}

static void run_free(struct run *r)
{
    free(r->out);
    free(r->err);
}

/* Outputs gathered for one run of tests/schemas/validate.py: starting Python and jsonschema costs
 * a good part of a second, so each format is validated in one go. */
#define BATCH_MAX 32
struct batch {
    char dir[64];
    char path[BATCH_MAX][96];
    size_t n;
};

static void batch_init(struct batch *b)
{
    snprintf(b->dir, sizeof(b->dir), "/tmp/tg-check-report-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(b->dir));
    b->n = 0;
}

static void batch_add(struct batch *b, const char *text)
{
    char path[sizeof(b->path[0])];
    FILE *f;

    ck_assert_uint_lt(b->n, BATCH_MAX);
    snprintf(path, sizeof(path), "%s/%02zu", b->dir, b->n);
    memcpy(b->path[b->n], path, sizeof(path));
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    fclose(f);
    b->n++;
}

/* Runs validate.py [--invalid] FORMAT on the batch and removes its files. Returns the exit status:
 * 0 all valid (with --invalid: all invalid), 1 not. */
static int batch_validate(struct batch *b, const char *format, bool invalid)
{
    char cmd[BATCH_MAX * 100 + 128];
    size_t at;
    int st;

    at = (size_t)snprintf(cmd, sizeof(cmd), "python3 schemas/validate.py %s%s",
                          invalid ? "--invalid " : "", format);
    for (size_t i = 0; i < b->n; i++)
        at += (size_t)snprintf(cmd + at, sizeof(cmd) - at, " %s", b->path[i]);
    st = system(cmd);
    for (size_t i = 0; i < b->n; i++)
        unlink(b->path[i]);
    rmdir(b->dir);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 3,
                  "the schema validator cannot run: make deps (python3-jsonschema, libxml2-utils)");
    return WEXITSTATUS(st);
}

static json_t *parse(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, 0, &jerr);

    ck_assert_msg(v != NULL, "not JSON: %s\n%s", jerr.text, text);
    return v;
}

/* Runs check with -o json on the arguments and returns the report parsed (every_format_validates
 * checks reports of the same inputs against the schema). */
#define JSON_REPORT(rc_out, in_path, ...)                                                          \
    json_report(&(rc_out), (in_path), (const char *[]){__VA_ARGS__, NULL})

static json_t *json_report(int *rc, const char *in_path, const char **args)
{
    struct run r;
    json_t *v;
    const char *a[8] = {"-o", "json"};
    int n = 2;

    for (; *args && n < 7; args++)
        a[n++] = *args;
    a[n] = NULL;
    r = run_check(in_path, a[0], a[1], a[2], a[3], a[4], a[5], a[6], NULL);
    *rc = r.rc;
    v = parse(r.out);
    run_free(&r);
    return v;
}

static const char *sget(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static json_int_t iget(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

#define HAS(hay, needle)                                                                           \
    ck_assert_msg(strstr((hay), (needle)) != NULL, "'%s' not in:\n%s", (needle), (hay))
#define LACKS(hay, needle)                                                                         \
    ck_assert_msg(strstr((hay), (needle)) == NULL, "'%s' in:\n%s", (needle), (hay))

START_TEST(clean_file_exits_0)
{
    struct run r = run_check(NULL, FIX "clean-pod.yaml", NULL);

    ck_assert_int_eq(r.rc, 0);
    HAS(r.out, "1 file, 1 document, 1 object (1 evaluated, 0 skipped): 0 would be denied");
    HAS(r.out, ": PASS\n");
    LACKS(r.out, "DENY");
    ck_assert_str_eq(r.err, "");
    run_free(&r);
}
END_TEST

START_TEST(deny_exits_1)
{
    struct run r = run_check(NULL, FIX "efa-pod-deny.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    HAS(r.out, "fixtures/yaml/efa-pod-deny.yaml:1 Pod efa-no-limit: DENY [efa.limit-required] "
               "spec.containers[0].resources.requests[vpc.amazonaws.com/efa]: ");
    HAS(r.out, "1 would be denied");
    HAS(r.out, ": FAIL (2 findings at --fail-on deny or above)");
    run_free(&r);
}
END_TEST

/* --mode changes the labels and `allowed`; the exit status follows the rule's action (SPEC 12). */
START_TEST(modes)
{
    struct run r = run_check(NULL, "--mode", "warn", FIX "efa-pod-deny.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    HAS(r.out, "Pod efa-no-limit: WARN [efa.limit-required]");
    HAS(r.out, "0 would be denied; findings: 0 deny, 2 warn, 0 audit");
    LACKS(r.out, "DENY");
    run_free(&r);
    r = run_check(NULL, "--mode=audit", FIX "efa-pod-deny.yaml", NULL);
    ck_assert_int_eq(r.rc, 1);
    HAS(r.out, "Pod efa-no-limit: AUDIT [efa.limit-required]");
    HAS(r.out, "findings: 0 deny, 0 warn, 2 audit");
    run_free(&r);
}
END_TEST

START_TEST(config_file)
{
    struct run r =
        run_check(NULL, "--config", FIX "policy-limit-off.yaml", FIX "efa-pod-deny.yaml", NULL);

    ck_assert_int_eq(r.rc, 0);
    LACKS(r.out, "efa.limit-required");
    run_free(&r);
    r = run_check(NULL, "--config", FIX "policy-bad.yaml", FIX "efa-pod-deny.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    HAS(r.err, "policy-bad.yaml: line 2, column 7: ");
    ck_assert_str_eq(r.out, "");
    run_free(&r);
}
END_TEST

START_TEST(json_output)
{
    struct run r =
        run_check(NULL, "--output", "json", FIX "efa-pod-deny.yaml", FIX "clean-pod.yaml", NULL);
    json_t *v, *results, *e, *f, *sum;

    ck_assert_int_eq(r.rc, 1);
    v = parse(r.out);
    ck_assert_str_eq(sget(v, "apiVersion"), "trainguard.dev/v1");
    ck_assert_str_eq(sget(v, "kind"), "CheckReport");
    results = json_object_get(v, "results");
    ck_assert_uint_eq(json_array_size(results), 2);
    e = json_array_get(results, 0);
    ck_assert_str_eq(sget(e, "file"), FIX "efa-pod-deny.yaml");
    ck_assert_int_eq(iget(e, "doc"), 1);
    ck_assert_int_eq(iget(e, "line"), 2); /* after the leading comment */
    ck_assert_ptr_null(json_object_get(e, "item"));
    ck_assert_ptr_null(json_object_get(e, "namespace"));
    ck_assert_str_eq(sget(e, "kind"), "Pod");
    ck_assert_str_eq(sget(e, "name"), "efa-no-limit");
    ck_assert_str_eq(sget(e, "apiVersion"), "v1");
    ck_assert(json_is_false(json_object_get(e, "allowed")));
    f = json_array_get(json_object_get(e, "findings"), 0);
    ck_assert_str_eq(sget(f, "rule"), "efa.limit-required");
    ck_assert_str_eq(sget(f, "action"), "deny");
    ck_assert_str_eq(sget(f, "ruleAction"), "deny");
    ck_assert_str_eq(sget(f, "field"),
                     "spec.containers[0].resources.requests[vpc.amazonaws.com/efa]");
    ck_assert_ptr_nonnull(sget(f, "message"));
    ck_assert_ptr_null(json_object_get(e, "patch"));
    ck_assert(json_is_true(json_object_get(json_array_get(results, 1), "allowed")));
    sum = json_object_get(v, "summary");
    ck_assert_int_eq(iget(sum, "files"), 2);
    ck_assert_int_eq(iget(sum, "objects"), 2);
    ck_assert_int_eq(iget(sum, "denied"), 1);
    ck_assert_int_eq(iget(json_object_get(sum, "findings"), "deny"), 2);
    ck_assert_uint_eq(json_array_size(json_object_get(v, "errors")), 0);
    /* stdout is the report alone; the summary line goes to stderr */
    HAS(r.err, "2 files, 2 documents");
    json_decref(v);
    run_free(&r);
}
END_TEST

START_TEST(multi_document_and_lists)
{
    struct run r = run_check(NULL, FIX "multi.yaml", NULL);

    ck_assert_int_eq(r.rc, 0);
    HAS(r.out, "1 file, 5 documents, 2 objects (2 evaluated, 0 skipped)");
    HAS(r.out, "0 errors, 4 ignored: PASS");
    HAS(r.err, "multi.yaml:3.items[1] not a Kubernetes object (the item is a scalar); ignored");
    HAS(r.err, "multi.yaml:4 line 23, column 1: not a Kubernetes object (the document is a list)");
    HAS(r.err, "multi.yaml:5 line 26, column 1: not a Kubernetes object (document has no "
               "apiVersion and kind)");
    HAS(r.err, "multi.yaml:7 line 29, column 1: not a Kubernetes object");
    LACKS(r.err, "multi.yaml:2 ");
    LACKS(r.err, "multi.yaml:6 ");
    run_free(&r);
}
END_TEST

START_TEST(multi_document_json)
{
    int rc;
    json_t *v = JSON_REPORT(rc, NULL, FIX "multi.yaml");
    json_t *results = json_object_get(v, "results"), *ignored = json_object_get(v, "ignored");
    json_t *e;

    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(json_array_size(results), 2);
    e = json_array_get(results, 1);
    ck_assert_int_eq(iget(e, "doc"), 3);
    ck_assert_int_eq(iget(e, "item"), 0);
    ck_assert_str_eq(sget(e, "name"), "in-list");
    ck_assert_uint_eq(json_array_size(ignored), 4);
    e = json_array_get(ignored, 0);
    ck_assert_int_eq(iget(e, "doc"), 3);
    ck_assert_int_eq(iget(e, "item"), 1);
    ck_assert_str_eq(sget(e, "message"), "not a Kubernetes object (the item is a scalar)");
    ck_assert_int_eq(iget(json_array_get(ignored, 1), "line"), 23);
    ck_assert_int_eq(iget(json_object_get(v, "summary"), "ignored"), 4);
    json_decref(v);
}
END_TEST

START_TEST(templates_and_parse_errors_exit_2)
{
    struct run r = run_check(NULL, FIX "template.yaml", FIX "clean-pod.yaml", NULL);
    json_t *v, *e;
    int rc;

    ck_assert_int_eq(r.rc, 2);
    HAS(r.err, "fixtures/yaml/template.yaml:1 line 4, column 10: ");
    HAS(r.err, "fixtures/yaml/template.yaml:3 line 19, column 3: ");
    HAS(r.err, "helm template");
    /* The run goes on: the pod after the template and the next file are checked. */
    HAS(r.out, "2 files, 4 documents, 2 objects (2 evaluated, 0 skipped)");
    HAS(r.out, "2 errors, 0 ignored: ERROR");
    run_free(&r);
    r = run_check(NULL, FIX "dup.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    HAS(r.err, "dup.yaml:1 line 5, column 3: duplicate mapping key \"name\"");
    run_free(&r);
    /* In the report: line and column apart from the message. */
    v = JSON_REPORT(rc, NULL, FIX "dup.yaml");
    ck_assert_int_eq(rc, 2);
    e = json_array_get(json_object_get(v, "errors"), 0);
    ck_assert_str_eq(sget(e, "file"), FIX "dup.yaml");
    ck_assert_int_eq(iget(e, "doc"), 1);
    ck_assert_int_eq(iget(e, "line"), 5);
    ck_assert_int_eq(iget(e, "column"), 3);
    ck_assert_str_eq(sget(e, "message"), "duplicate mapping key \"name\"");
    ck_assert_int_eq(iget(json_object_get(v, "summary"), "errors"), 1);
    json_decref(v);
}
END_TEST

START_TEST(unreadable_and_usage)
{
    struct run r = run_check(NULL, "no/such/file.yaml", FIX "efa-pod-deny.yaml", NULL);

    /* A missing file is an error even when something else was denied (SPEC 12). */
    ck_assert_int_eq(r.rc, 2);
    HAS(r.err, "trainguard check: no/such/file.yaml: No such file or directory");
    HAS(r.out, "2 files, 1 document");
    HAS(r.out, "1 would be denied");
    HAS(r.out, "1 error, 0 ignored: ERROR");
    run_free(&r);
    r = run_check(NULL, NULL);
    ck_assert_int_eq(r.rc, 2);
    HAS(r.err, "no input files");
    run_free(&r);
    r = run_check(NULL, "--output", "xml", FIX "clean-pod.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    HAS(r.err, "--output must be text, json, junit, sarif or policyreport");
    run_free(&r);
    r = run_check(NULL, "--fail-on", "audit", FIX "clean-pod.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    HAS(r.err, "--fail-on must be deny or warn, not 'audit'");
    run_free(&r);
    r = run_check(NULL, "--mutate", "-o", "sarif", FIX "clean-pod.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    HAS(r.err, "--mutate prints manifests on stdout");
    ck_assert_str_eq(r.out, "");
    run_free(&r);
    r = run_check(NULL, "--mode", "strict", FIX "clean-pod.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    HAS(r.err, "--mode must be enforce, warn or audit");
    run_free(&r);
    r = run_check(NULL, "--frobnicate", FIX "clean-pod.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    HAS(r.err, "--frobnicate");
    run_free(&r);
    r = run_check(NULL, "--config", "no/such/policy.yaml", FIX "clean-pod.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    HAS(r.err, "no/such/policy.yaml");
    run_free(&r);
    r = run_check(NULL, "--help", NULL);
    ck_assert_int_eq(r.rc, 0);
    HAS(r.out, "usage: trainguard check");
    HAS(r.out, "Exit status");
    run_free(&r);
}
END_TEST

START_TEST(directory_input)
{
    struct run r = run_check(NULL, "fixtures/yaml", NULL);

    /* dup.yaml and template.yaml do not parse: exit 2, after checking every file. */
    ck_assert_int_eq(r.rc, 2);
    HAS(r.out, "fixtures/yaml/efa-pod-deny.yaml:1 Pod efa-no-limit: DENY");
    HAS(r.err, "fixtures/yaml/dup.yaml:1 line 5, column 3: duplicate mapping key");
    HAS(r.err, "fixtures/yaml/template.yaml:1 line 4, column 10: ");
    HAS(r.out, "8 files, 14 documents");
    run_free(&r);
}
END_TEST

START_TEST(stdin_input)
{
    struct run r = run_check(FIX "efa-pod-deny.yaml", "-", NULL);

    ck_assert_int_eq(r.rc, 1);
    HAS(r.out, "<stdin>:1 Pod efa-no-limit: DENY [efa.limit-required]");
    run_free(&r);
}
END_TEST

START_TEST(mutate_prints_yaml)
{
    struct run r = run_check(NULL, "--mutate", FIX "yaml11.yaml", FIX "clean-pod.yaml", NULL);

    ck_assert_int_eq(r.rc, 0);
    /* YAML 1.1 as kubectl reads it: hex integer, "no" boolean, merge key, quoted "yes". */
    HAS(r.out, "vpc.amazonaws.com/efa: 4\n");
    HAS(r.out, "hostNetwork: false\n");
    HAS(r.out, "  - name: b\n");
    HAS(r.out, "app: \"yes\"\n");
    HAS(r.out, "- name: FI_PROVIDER\n      value: efa\n");
    HAS(r.out, "\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: hello\n");
    HAS(r.err, "2 files, 2 documents");
    run_free(&r);
}
END_TEST

START_TEST(mutate_keeps_every_document)
{
    struct run r = run_check(NULL, "--mutate", FIX "multi.yaml", NULL);

    ck_assert_int_eq(r.rc, 0);
    HAS(r.out, "kind: List\nitems:\n- apiVersion: v1\n");
    HAS(r.out, "- just a string\n");
    HAS(r.out, "---\n- a\n- list\n---\nreplicaCount: 2\n");
    HAS(r.out, "|\n  a literal block document\n");
    HAS(r.err, "multi.yaml:4 line 23, column 1: not a Kubernetes object");
    run_free(&r);
}
END_TEST

START_TEST(mutate_json)
{
    int rc;
    json_t *v = JSON_REPORT(rc, NULL, "--mutate", FIX "yaml11.yaml");
    json_t *e = json_array_get(json_object_get(v, "results"), 0);

    ck_assert_int_eq(rc, 0);
    ck_assert(json_array_size(json_object_get(e, "patch")) > 0);
    ck_assert(json_is_object(json_object_get(e, "mutated")));
    json_decref(v);
}
END_TEST

/* SPEC 12: the mutator's notes go to stderr; stdout stays the mutated manifests. */
START_TEST(mutate_notes_on_stderr)
{
    struct run r = run_check(NULL, "--mutate", CI "envfrom-pod.yaml", NULL);
    json_t *v;
    int rc;

    ck_assert_int_eq(r.rc, 0);
    HAS(r.err, CI "envfrom-pod.yaml:1 Pod team-a/envfrom: NOTE [mutate.efa-env] "
                  "spec.containers[0].envFrom: ");
    LACKS(r.out, "NOTE");
    LACKS(r.out, "mutate.efa-env");
    HAS(r.out, "kind: Pod\n");
    run_free(&r);
    v = JSON_REPORT(rc, NULL, "--mutate", CI "envfrom-pod.yaml");
    HAS(json_string_value(json_array_get(
            json_object_get(json_array_get(json_object_get(v, "results"), 0), "notes"), 0)),
        "[mutate.efa-env] spec.containers[0].envFrom: ");
    json_decref(v);
}
END_TEST

/* ---- exit codes: SPEC 12 --------------------------------------------------------------------- */

static const struct {
    const char *name, *stdin_path;
    const char *args[6];
    int rc;
} exit_cases[] = {
    {"clean", NULL, {FIX "clean-pod.yaml"}, 0},
    {"deny", NULL, {FIX "efa-pod-deny.yaml"}, 1},
    {"warn finding, --fail-on deny", NULL, {CI "warn-pod.yaml"}, 0},
    {"warn finding, --fail-on warn", NULL, {"--fail-on", "warn", CI "warn-pod.yaml"}, 1},
    {"deny finding, --fail-on warn", NULL, {"--fail-on=warn", FIX "efa-pod-deny.yaml"}, 1},
    {"deny rule in audit mode", NULL, {"--mode", "audit", FIX "efa-pod-deny.yaml"}, 1},
    {"warn rule in audit mode, --fail-on warn",
     NULL,
     {"--mode", "audit", "--fail-on", "warn", CI "warn-pod.yaml"},
     1},
    {"rule turned off",
     NULL,
     {"--config", FIX "policy-limit-off.yaml", FIX "efa-pod-deny.yaml"},
     0},
    {"missing file and a deny", NULL, {"no/such.yaml", FIX "efa-pod-deny.yaml"}, 2},
    {"missing file only", NULL, {"no/such.yaml"}, 2},
    {"unparseable document", NULL, {FIX "template.yaml"}, 2},
    {"directory without manifests", NULL, {CI "no-manifests"}, 2},
    {"directory without manifests and a clean file",
     NULL,
     {CI "no-manifests", FIX "clean-pod.yaml"},
     2},
    {"empty kind: List", NULL, {CI "empty-list.json"}, 0},
    {"empty kind: List on stdin", CI "empty-list.json", {"-"}, 0},
    {"tree with a deny", NULL, {"-R", CI "tree"}, 1},
    {"cluster List on stdin", CI "cluster-list.json", {"-"}, 1},
    {"cluster List as a file", NULL, {CI "cluster-list.json"}, 1},
    {"bad --fail-on", NULL, {"--fail-on", "never", FIX "clean-pod.yaml"}, 2},
    {"--mutate with junit", NULL, {"--mutate", "-o", "junit", FIX "clean-pod.yaml"}, 2},
};

START_TEST(exit_codes)
{
    const char *const *a = exit_cases[_i].args;
    const char *formats[] = {"text", "json", "junit", "sarif", "policyreport"};

    /* The exit status does not depend on the output format. */
    for (size_t k = 0; k < sizeof(formats) / sizeof(formats[0]); k++) {
        struct run r = run_check(exit_cases[_i].stdin_path, "-o", formats[k], a[0], a[1], a[2],
                                 a[3], a[4], a[5], NULL);

        ck_assert_msg(r.rc == exit_cases[_i].rc, "%s (-o %s): exit %d, want %d\nstderr:\n%s",
                      exit_cases[_i].name, formats[k], r.rc, exit_cases[_i].rc, r.err);
        run_free(&r);
    }
}
END_TEST

/* ---- input walking --------------------------------------------------------------------------- */

START_TEST(recursion_skips_hidden)
{
    int rc;
    json_t *v = JSON_REPORT(rc, NULL, CI "tree");
    json_t *results = json_object_get(v, "results"), *sum = json_object_get(v, "summary");
    char *dump;

    ck_assert_int_eq(rc, 1);
    ck_assert_int_eq(iget(sum, "files"), 4);
    ck_assert_uint_eq(json_array_size(results), 3);
    /* Byte order of names, depth first: a-clean.yaml, apps/nested/..., apps/train.yml. */
    ck_assert_str_eq(sget(json_array_get(results, 0), "file"), CI "tree/a-clean.yaml");
    ck_assert_str_eq(sget(json_array_get(results, 1), "file"),
                     CI "tree/apps/nested/deeper/list.json");
    ck_assert_int_eq(iget(json_array_get(results, 1), "item"), 0);
    ck_assert_str_eq(sget(json_array_get(results, 2), "file"), CI "tree/apps/train.yml");
    ck_assert_str_eq(sget(json_array_get(json_object_get(v, "ignored"), 0), "file"),
                     CI "tree/values/values.yaml");
    ck_assert_uint_eq(json_array_size(json_object_get(v, "errors")), 0);
    dump = json_dumps(v, 0);
    LACKS(dump, ".hidden");
    LACKS(dump, ".git");
    LACKS(dump, ".draft");
    LACKS(dump, "notes.txt");
    free(dump);
    json_decref(v);
    /* A trailing slash gives the same paths (no "//"). */
    v = JSON_REPORT(rc, NULL, CI "tree/");
    ck_assert_str_eq(sget(json_array_get(json_object_get(v, "results"), 0), "file"),
                     CI "tree/a-clean.yaml");
    json_decref(v);
}
END_TEST

START_TEST(directory_without_manifests)
{
    struct run r = run_check(NULL, CI "no-manifests", NULL);

    ck_assert_int_eq(r.rc, 2);
    HAS(r.err, "trainguard check: " CI "no-manifests: no *.yaml, *.yml or *.json file");
    HAS(r.err, "nothing was checked: no readable manifest file");
    run_free(&r);
}
END_TEST

/* ---- the report -------------------------------------------------------------------------------
 */

START_TEST(text_names_namespace)
{
    struct run r = run_check(NULL, CI "tree", NULL);

    HAS(r.out, CI "tree/apps/train.yml:1 Pod team-a/train: DENY [efa.limit-required]");
    run_free(&r);
}
END_TEST

START_TEST(name_falls_back_to_generate_name)
{
    int rc;
    json_t *v = JSON_REPORT(rc, NULL, CI "generate-name.yaml");
    json_t *e = json_array_get(json_object_get(v, "results"), 0);

    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(sget(e, "name"), "nccl-test-");
    ck_assert_str_eq(sget(e, "namespace"), "team-a");
    json_decref(v);
}
END_TEST

/* The audit recipe: kubectl get mpijobs,pods,services -A -o json | trainguard check - */
START_TEST(audit_recipe_on_kubectl_list)
{
    int rc;
    json_t *v = JSON_REPORT(rc, CI "cluster-list.json", "-");
    json_t *results = json_object_get(v, "results"), *sum = json_object_get(v, "summary");
    json_t *e;

    ck_assert_int_eq(rc, 1);
    ck_assert_uint_eq(json_array_size(results), 6);
    for (size_t i = 0; i < 6; i++) {
        e = json_array_get(results, i);
        ck_assert_str_eq(sget(e, "file"), "<stdin>");
        ck_assert_int_eq(iget(e, "doc"), 1);
        ck_assert_int_eq(iget(e, "item"), (json_int_t)i);
        ck_assert_ptr_nonnull(sget(e, "uid"));
    }
    e = json_array_get(results, 0);
    ck_assert_str_eq(sget(e, "kind"), "MPIJob");
    ck_assert_str_eq(sget(e, "namespace"), "team-a");
    ck_assert_str_eq(sget(json_array_get(json_object_get(e, "findings"), 0), "rule"),
                     "mpi.np-exceeds-slots");
    e = json_array_get(results, 2);
    ck_assert_str_eq(sget(e, "name"), "efa-debug");
    ck_assert_str_eq(sget(json_array_get(json_object_get(e, "findings"), 0), "rule"),
                     "efa.env-without-device");
    e = json_array_get(results, 4); /* kube-system: exempt */
    ck_assert(json_is_false(json_object_get(e, "evaluated")));
    ck_assert_str_eq(sget(e, "skipReason"), "namespace is exempt");
    e = json_array_get(results, 5); /* a Service: not a kind trainguard judges */
    ck_assert(json_is_false(json_object_get(e, "evaluated")));
    ck_assert_int_eq(iget(sum, "objects"), 6);
    ck_assert_int_eq(iget(sum, "evaluated"), 4);
    ck_assert_int_eq(iget(sum, "skipped"), 2);
    ck_assert_int_eq(iget(sum, "objects"), iget(sum, "evaluated") + iget(sum, "skipped"));
    ck_assert_int_eq(iget(sum, "denied"), 2);
    ck_assert_int_eq(iget(json_object_get(sum, "findings"), "warn"), 1);
    json_decref(v);
}
END_TEST

START_TEST(audit_recipe_policyreport)
{
    struct run r = run_check(CI "cluster-list.json", "-o", "policyreport", "-", NULL);
    json_t *v, *items, *a, *b, *res;

    ck_assert_int_eq(r.rc, 1);
    v = parse(r.out);
    items = json_object_get(v, "items");
    /* team-a and team-b; kube-system is exempt, the Service not judged: no report, no result. */
    ck_assert_uint_eq(json_array_size(items), 2);
    a = json_array_get(items, 0);
    b = json_array_get(items, 1);
    ck_assert_str_eq(sget(a, "kind"), "PolicyReport");
    ck_assert_str_eq(sget(json_object_get(a, "metadata"), "namespace"), "team-a");
    ck_assert_str_eq(sget(json_object_get(b, "metadata"), "namespace"), "team-b");
    ck_assert_int_eq(iget(json_object_get(a, "summary"), "fail"), 1);
    ck_assert_int_eq(iget(json_object_get(a, "summary"), "pass"), 1);
    ck_assert_int_eq(iget(json_object_get(b, "summary"), "fail"), 1);
    ck_assert_int_eq(iget(json_object_get(b, "summary"), "warn"), 1);
    res = json_array_get(json_object_get(a, "results"), 0);
    ck_assert_str_eq(sget(res, "policy"), "trainguard");
    ck_assert_str_eq(sget(res, "rule"), "mpi.np-exceeds-slots");
    ck_assert_str_eq(sget(res, "result"), "fail");
    ck_assert_str_eq(sget(res, "severity"), "high");
    ck_assert_str_eq(sget(json_array_get(json_object_get(res, "resources"), 0), "uid"),
                     "6f1c1f0e-8a43-4a55-9d2e-0b4f1d2b7c11");
    res = json_array_get(json_object_get(b, "results"), 1);
    ck_assert_str_eq(sget(res, "rule"), "efa.no-hugepages");
    ck_assert_str_eq(sget(res, "result"), "warn");
    json_decref(v);
    run_free(&r);
}
END_TEST

/* A scope predicate for the test: NodePool is cluster-scoped (kubernetes-sigs/karpenter
 * pkg/apis/crds/karpenter.sh_nodepools.yaml, scope: Cluster). */
static bool nodepool_is_cluster(const char *api_version, const char *kind)
{
    return strcmp(api_version, "karpenter.sh/v1") == 0 && strcmp(kind, "NodePool") == 0;
}

/* Objects without a namespace: a cluster-scoped kind goes to the ClusterPolicyReport, a namespaced
 * one to a PolicyReport without metadata.namespace. The report is made by hand, and the scope comes
 * from a predicate, so that the ClusterPolicyReport is tested whatever kinds the catalogue has. */
START_TEST(policyreport_scopes)
{
    json_t *report = json_pack(
        "{s:s, s:s, s:{}, s:[{s:s, s:i, s:s, s:s, s:s, s:b, s:b, s:[{s:s, s:s, s:s, s:s, s:s}]},"
        " {s:s, s:i, s:s, s:s, s:s, s:b, s:b, s:[]}], s:[]}",
        "apiVersion", "trainguard.dev/v1", "kind", "CheckReport", "summary", "results", "file",
        "np.yaml", "doc", 1, "apiVersion", "karpenter.sh/v1", "kind", "NodePool", "name", "gpu",
        "allowed", 0, "evaluated", 1, "findings", "rule", "efa.below-instance", "action", "warn",
        "ruleAction", "warn", "field", "spec.template", "message", "m", "file", "p.yaml", "doc", 1,
        "apiVersion", "v1", "kind", "Pod", "name", "p", "allowed", 1, "evaluated", 1, "findings",
        "errors");
    json_t *pr, *items, *cluster;
    struct batch b;
    char *text;

    ck_assert_ptr_nonnull(report);
    /* The default predicate is the catalogue's scope column. */
    for (size_t i = 0; i < tg_api_count; i++) {
        const struct tg_api_def *a = &tg_api_defs[i];
        char av[128];

        snprintf(av, sizeof(av), "%s%s%s", a->group, *a->group ? "/" : "",
                 a->version ? a->version : "v1");
        ck_assert_msg(tg_check_cluster_scoped(av, a->kind_name) == (a->scope == TG_SCOPE_CLUSTER),
                      "%s %s", av, a->kind_name);
    }
    ck_assert(!tg_check_cluster_scoped("v1", "Pod"));
    ck_assert(!tg_check_cluster_scoped("example.com/v1", "Unknown"));
    pr = tg_check_policyreport(report, nodepool_is_cluster);
    ck_assert_ptr_nonnull(pr);
    items = json_object_get(pr, "items");
    ck_assert_uint_eq(json_array_size(items), 2);
    ck_assert_str_eq(sget(json_array_get(items, 0), "kind"), "PolicyReport");
    ck_assert_ptr_null(
        json_object_get(json_object_get(json_array_get(items, 0), "metadata"), "namespace"));
    cluster = json_array_get(items, 1);
    ck_assert_str_eq(sget(cluster, "kind"), "ClusterPolicyReport");
    ck_assert_int_eq(iget(json_object_get(cluster, "summary"), "warn"), 1);
    ck_assert_str_eq(
        sget(json_array_get(json_object_get(json_array_get(json_object_get(cluster, "results"), 0),
                                            "resources"),
                            0),
             "kind"),
        "NodePool");
    text = json_dumps(pr, 0);
    batch_init(&b);
    batch_add(&b, text);
    ck_assert_msg(batch_validate(&b, "policyreport", false) == 0, "not valid:\n%s", text);
    free(text);
    json_decref(pr);
    json_decref(report);
}
END_TEST

START_TEST(junit_failures_follow_fail_on)
{
    struct run r =
        run_check(NULL, "-o", "junit", CI "warn-pod.yaml", FIX "efa-pod-deny.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    HAS(r.out, "<testsuites name=\"trainguard check\" tests=\"2\" failures=\"1\" errors=\"0\">");
    HAS(r.out, "<testcase classname=\"" CI "warn-pod.yaml\" name=\"" CI
               "warn-pod.yaml:1 Pod team-a/efa-no-hugepages\">");
    HAS(r.out, "<system-out>WARN [efa.no-hugepages] spec.containers[0].resources.limits: ");
    HAS(r.out, "<failure type=\"efa.limit-required\" message=\"[efa.limit-required] "
               "spec.containers[0].resources.requests[vpc.amazonaws.com/efa]: ");
    LACKS(r.out, "<failure type=\"efa.no-hugepages\"");
    run_free(&r);
    r = run_check(NULL, "-o", "junit", "--fail-on", "warn", CI "warn-pod.yaml", NULL);
    ck_assert_int_eq(r.rc, 1);
    HAS(r.out, "<failure type=\"efa.no-hugepages\"");
    LACKS(r.out, "<system-out>");
    run_free(&r);
    /* Errors are <error> testcases; unevaluated objects <skipped>. */
    r = run_check(NULL, "-o", "junit", FIX "dup.yaml", FIX "policy-limit-off.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    HAS(r.out, "<error type=\"error\" message=\"line 5, column 3: duplicate mapping key "
               "&quot;name&quot;\"/>");
    HAS(r.out, "<skipped message=\"kind is not evaluated\"/>");
    run_free(&r);
}
END_TEST

START_TEST(sarif_log)
{
    struct run r = run_check(NULL, "-o", "sarif", "./" CI "tree", NULL);
    json_t *v, *run, *rules, *res, *loc, *ll;

    ck_assert_int_eq(r.rc, 1);
    v = parse(r.out);
    ck_assert_str_eq(sget(v, "version"), "2.1.0");
    run = json_array_get(json_object_get(v, "runs"), 0);
    rules = json_object_get(json_object_get(json_object_get(run, "tool"), "driver"), "rules");
    ck_assert_uint_eq(json_array_size(rules), tg_rule_count);
    ck_assert_str_eq(sget(json_array_get(rules, 0), "id"), tg_rule_defs[0].id);
    ck_assert_str_eq(sget(json_object_get(json_array_get(rules, 0), "help"), "text"),
                     tg_rule_defs[0].help);
    ck_assert_uint_eq(json_array_size(json_object_get(run, "results")), 2);
    res = json_array_get(json_object_get(run, "results"), 0);
    ck_assert_str_eq(sget(res, "ruleId"), "efa.limit-required");
    ck_assert_int_eq(iget(res, "ruleIndex"), tg_rule_index("efa.limit-required"));
    ck_assert_str_eq(sget(res, "level"), "error");
    loc = json_array_get(json_object_get(res, "locations"), 0);
    ck_assert_str_eq(
        sget(json_object_get(json_object_get(loc, "physicalLocation"), "artifactLocation"), "uri"),
        CI "tree/apps/train.yml");
    ck_assert_int_eq(
        iget(json_object_get(json_object_get(loc, "physicalLocation"), "region"), "startLine"), 2);
    ll = json_array_get(json_object_get(loc, "logicalLocations"), 0);
    ck_assert_str_eq(
        sget(ll, "fullyQualifiedName"),
        "Pod/team-a/train:spec.containers[0].resources.requests[vpc.amazonaws.com/efa]");
    ck_assert_str_eq(sget(json_object_get(ll, "properties"), "namespace"), "team-a");
    json_decref(v);
    run_free(&r);
    /* A warn rule is a warning; standard input has no artifact to point at. */
    r = run_check(CI "warn-pod.yaml", "-o", "sarif", "-", NULL);
    ck_assert_int_eq(r.rc, 0);
    v = parse(r.out);
    res = json_array_get(json_object_get(json_array_get(json_object_get(v, "runs"), 0), "results"),
                         0);
    ck_assert_str_eq(sget(res, "level"), "warning");
    loc = json_array_get(json_object_get(res, "locations"), 0);
    ck_assert_ptr_null(json_object_get(loc, "physicalLocation"));
    ck_assert_ptr_nonnull(json_object_get(loc, "logicalLocations"));
    json_decref(v);
    run_free(&r);
}
END_TEST

START_TEST(sarif_uris)
{
    static const struct {
        const char *path, *uri;
    } cases[] = {
        {"deploy/job.yaml", "deploy/job.yaml"},
        {"./deploy/job.yaml", "deploy/job.yaml"},
        {"././a.yaml", "a.yaml"},
        {"my dir/a#1.yaml", "my%20dir/a%231.yaml"},
        {"/srv/repo/a.yaml", "file:///srv/repo/a.yaml"},
        {"caf\xc3\xa9.yaml", "caf%C3%A9.yaml"},
    };
    char buf[256];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_str_eq(tg_check_sarif_uri(cases[i].path, buf, sizeof(buf)), cases[i].uri);
    /* Never past the buffer. */
    ck_assert_str_eq(tg_check_sarif_uri("abcdefgh", buf, 5), "ab");
}
END_TEST

/* Every format, on inputs with findings at deny and warn, audit mode, errors, ignored documents,
 * skipped objects, Lists, standard input, --mutate and nothing at all, validates against its
 * schema. */
static const struct {
    const char *stdin_path;
    const char *args[5];
} schema_inputs[] = {
    {NULL, {CI "tree"}},
    {NULL, {"fixtures/yaml", "no/such.yaml"}},
    {NULL, {CI "empty-list.json"}},
    {CI "cluster-list.json", {"-"}},
    {NULL, {"--fail-on", "warn", CI "generate-name.yaml", CI "warn-pod.yaml"}},
    {NULL, {"--mode", "audit", FIX "efa-pod-deny.yaml", FIX "multi.yaml"}},
    {NULL, {CI "no-manifests"}},
    {NULL, {"--mutate", CI "envfrom-pod.yaml", FIX "yaml11.yaml"}}, /* json only */
};

START_TEST(every_format_validates)
{
    static const char *const formats[][2] = {
        {"json", "checkreport"},
        {"junit", "junit"},
        {"sarif", "sarif"},
        {"policyreport", "policyreport"},
    };
    struct batch b;

    for (size_t f = 0; f < 4; f++) {
        batch_init(&b);
        for (size_t i = 0; i < sizeof(schema_inputs) / sizeof(schema_inputs[0]); i++) {
            const char *const *a = schema_inputs[i].args;
            struct run r;

            if (f > 0 && strcmp(a[0], "--mutate") == 0)
                continue;
            r = run_check(schema_inputs[i].stdin_path, "-o", formats[f][0], a[0], a[1], a[2], a[3],
                          a[4], NULL);
            ck_assert_msg(r.out[0] != '\0', "-o %s %s: no output", formats[f][0], a[0]);
            batch_add(&b, r.out);
            run_free(&r);
        }
        ck_assert_msg(batch_validate(&b, formats[f][1], false) == 0,
                      "-o %s: an output does not validate (validate.py says which above)",
                      formats[f][0]);
    }
}
END_TEST

/* The validator is strict: a missing member, an undocumented one, a wrong enum or a missing
 * attribute fails. */
START_TEST(validator_rejects_bad_reports)
{
    static const char *const bad[][2] = {
        {"checkreport", "{\"apiVersion\": \"trainguard.dev/v1\", \"kind\": \"CheckReport\", "
                        "\"summary\": {}, \"results\": [], \"errors\": []}"},
        {"checkreport",
         "{\"apiVersion\": \"trainguard.dev/v1\", \"kind\": \"CheckReport\", \"summary\": "
         "{\"files\": 0, \"documents\": 0, \"objects\": 0, \"evaluated\": 0, \"denied\": 0, "
         "\"findings\": {\"deny\": 0, \"warn\": 0, \"audit\": 0}, \"errors\": 0, \"skipped\": 0, "
         "\"surprise\": 1}, \"results\": [], \"errors\": []}"},
        {"sarif", "{\"version\": \"2.1.0\", \"runs\": [{\"tool\": {\"driver\": {}}}]}"},
        {"policyreport",
         "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [{\"apiVersion\": "
         "\"wgpolicyk8s.io/v1alpha2\", \"kind\": \"PolicyReport\", \"results\": [{\"policy\": "
         "\"p\", \"result\": \"denied\"}]}]}"},
        {"junit", "<testsuites><testsuite name=\"x\"/></testsuites>"},
    };
    const size_t n = sizeof(bad) / sizeof(bad[0]);
    struct batch b;

    for (size_t i = 0; i < n;) {
        size_t k = i;

        batch_init(&b);
        for (; k < n && strcmp(bad[k][0], bad[i][0]) == 0; k++)
            batch_add(&b, bad[k][1]);
        ck_assert_msg(batch_validate(&b, bad[i][0], true) == 0, "%s: a bad document passed",
                      bad[i][0]);
        i = k;
    }
}
END_TEST

/* SPEC 10: "The mutator's notes go to the response warnings and to check --mutate's stderr". */
START_TEST(mutate_prints_notes_on_stderr)
{
    struct run r = run_check(NULL, "--mutate", "fixtures/mutate/check-note.yaml", NULL);

    ck_assert_int_eq(r.rc, 0);
    HAS(r.err, "[mutate.efa-env] spec.containers[0].envFrom: set, so FI_PROVIDER not added");
    LACKS(r.out, "FI_PROVIDER");
    run_free(&r);
}
END_TEST

Suite *tg_test_check_cmd_suite(void);
Suite *tg_test_check_cmd_suite(void)
{
    Suite *s = suite_create("check_cmd");
    TCase *tc = tcase_create("core");
    TCase *ci = tcase_create("ci");

    tcase_add_test(tc, clean_file_exits_0);
    tcase_add_test(tc, deny_exits_1);
    tcase_add_test(tc, modes);
    tcase_add_test(tc, config_file);
    tcase_add_test(tc, json_output);
    tcase_add_test(tc, multi_document_and_lists);
    tcase_add_test(tc, multi_document_json);
    tcase_add_test(tc, templates_and_parse_errors_exit_2);
    tcase_add_test(tc, unreadable_and_usage);
    tcase_add_test(tc, directory_input);
    tcase_add_test(tc, stdin_input);
    tcase_add_test(tc, mutate_prints_yaml);
    tcase_add_test(tc, mutate_keeps_every_document);
    tcase_add_test(tc, mutate_json);
    tcase_add_test(tc, mutate_notes_on_stderr);
    tcase_add_test(tc, mutate_prints_notes_on_stderr);
    suite_add_tcase(s, tc);
    /* Schema validation starts python3: give it room on a loaded machine. */
    tcase_set_timeout(ci, 120);
    tcase_add_loop_test(ci, exit_codes, 0, (int)(sizeof(exit_cases) / sizeof(exit_cases[0])));
    tcase_add_test(ci, recursion_skips_hidden);
    tcase_add_test(ci, directory_without_manifests);
    tcase_add_test(ci, text_names_namespace);
    tcase_add_test(ci, name_falls_back_to_generate_name);
    tcase_add_test(ci, audit_recipe_on_kubectl_list);
    tcase_add_test(ci, audit_recipe_policyreport);
    tcase_add_test(ci, policyreport_scopes);
    tcase_add_test(ci, junit_failures_follow_fail_on);
    tcase_add_test(ci, sarif_log);
    tcase_add_test(ci, sarif_uris);
    tcase_add_test(ci, every_format_validates);
    tcase_add_test(ci, validator_rejects_bad_reports);
    suite_add_tcase(s, ci);
    return s;
}
