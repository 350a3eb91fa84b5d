/* check_cmd.c -- `trainguard check`: the admission engine, offline, on manifest files (SPEC 1, 12).
 *
 * Input: files, directories (walked: tg/check_walk.h) and - for stdin; every document, kind: List
 * expanded into its items. Every object goes through the pipeline as a CREATE; what it says is
 * gathered in a CheckReport (tg/check_report.h), from which every output format is made. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/check_cmd.h"
#include "tg/check_junit.h"
#include "tg/check_policyreport.h"
#include "tg/check_report.h"
#include "tg/check_sarif.h"
#include "tg/check_walk.h"
#include "tg/patch.h"
#include "tg/pipeline.h"
#include "tg/policy.h"
#include "tg/policy_yaml.h"
#include "tg/review.h"
#include "tg/yaml_emit.h"
#include "tg/yaml_json.h"

/* A manifest file is kilobytes; a whole rendered chart or `kubectl get -A -o json` of a large
 * cluster tens of MiB. 256 MiB stops a wrong file (an image, a log) from eating memory while
 * leaving every real input room. */
#define TG_CHECK_MAX_BYTES (256u * 1024 * 1024)
/* kind: List inside kind: List is legal; real files nest at most once. */
#define TG_CHECK_MAX_LIST_DEPTH 8
/* "file:doc.items[N]" for messages: a path plus the item path. */
#define LABEL_MAX 4200

enum check_format { FMT_TEXT, FMT_JSON, FMT_JUNIT, FMT_SARIF, FMT_POLICYREPORT };
static const char *const format_names[] = {"text", "json", "junit", "sarif", "policyreport"};

enum { OPT_OUTPUT = 256, OPT_MUTATE, OPT_EXPLAIN, OPT_CONFIG, OPT_MODE, OPT_FAIL_ON, OPT_HELP };

static const struct option options[] = {
    {"output", required_argument, NULL, OPT_OUTPUT},
    {"mutate", no_argument, NULL, OPT_MUTATE},
    {"explain", no_argument, NULL, OPT_EXPLAIN},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"mode", required_argument, NULL, OPT_MODE},
    {"fail-on", required_argument, NULL, OPT_FAIL_ON},
    {"recursive", no_argument, NULL, 'R'},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

struct check_run {
    const struct tg_policy *policy;
    struct tg_pipeline_opts opts;
    enum check_format format;
    enum tg_action fail_on; /* --fail-on: TG_ACTION_DENY or TG_ACTION_WARN */
    bool mutate;
    bool explain;    /* --explain: the parallel plan per role, and what is unresolved */
    FILE *text;      /* text findings and summary: stdout, or stderr when stdout is not text */
    bool first_yaml; /* --mutate text: no "---" before the first manifest */
    struct tg_check_report rep;
};

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: trainguard check [OPTIONS] FILE|DIR|-...\n"
        "\n"
        "Runs the admission engine of `serve` offline on YAML or JSON manifests: every\n"
        "document of every file (kind: List expanded into its items, empty documents\n"
        "skipped), as a CREATE. A directory means every *.yaml, *.yml and *.json file below\n"
        "it (hidden files and directories skipped, byte order of names); - reads stdin, e.g.\n"
        "`kubectl get mpijobs,pods -A -o json | trainguard check -`.\n"
        "\n"
        "  -o, --output FORMAT          text (default): one line per finding,\n"
        "                                 FILE:DOC KIND NAMESPACE/NAME: DENY|WARN|AUDIT [rule]\n"
        "                                 field: message\n"
        "                               json: the trainguard.dev/v1 CheckReport\n"
        "                               junit: JUnit XML (GitLab, Jenkins test reports)\n"
        "                               sarif: SARIF 2.1.0 (GitHub code scanning)\n"
        "                               policyreport: wgpolicyk8s.io/v1alpha2 PolicyReports\n"
        "  --fail-on deny|warn          exit 1 when a finding of a rule acting at deny (or at\n"
        "                               warn too) is found, whatever the mode (default deny)\n"
        "  --mutate                     also run the mutators and print the mutated manifests\n"
        "                               as YAML on stdout (findings and notes go to stderr);\n"
        "                               with -o json, each result carries them instead\n"
        "  --explain                    also print the parallel plan read from each launch line,\n"
        "                               per role: world size, TP, PP, CP, EP, DP, micro batch,\n"
        "                               accumulation, global batch; and what cannot be read and\n"
        "                               why (text: PLAN and UNRESOLVED lines; json: explain)\n"
        "  --config FILE                policy file (default: the embedded policy)\n"
        "  --mode enforce|warn|audit    override the policy's mode (labels and `allowed`)\n"
        "  -R, --recursive              accepted for kubectl habits: directories always recurse\n"
        "  --help                       this text\n"
        "\n"
        "DOC is the 1-based document index in the file (DOC.items[N] for an item of a List).\n"
        "Errors (a file that cannot be read, a document that does not parse: YAML error,\n"
        "duplicate key, unrendered template) and documents that are not Kubernetes objects\n"
        "(ignored) are reported on stderr as FILE:DOC line L, column C: reason; the run goes\n"
        "on. The summary goes to stdout with text output, to stderr otherwise.\n"
        "\n"
        "Exit status: 0 nothing fails; 1 a finding fails the run (--fail-on); 2 bad usage,\n"
        "nothing readable to check, a directory without manifests, a file that cannot be\n"
        "read or a document that cannot be parsed (also when something failed: input that\n"
        "could not be checked never passes silently).\n");
}

/* ---- what the run reports as it goes --------------------------------------------------------- */

/* Prints the last entry of an errors or ignored list on stderr. */
static void print_problem(const json_t *list, const char *suffix)
{
    const json_t *e = json_array_get(list, json_array_size(list) - 1);
    json_int_t line = json_integer_value(json_object_get(e, "line"));
    json_int_t col = json_integer_value(json_object_get(e, "column"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    char lab[LABEL_MAX];

    fflush(stdout); /* keep findings and problems in order on a terminal or in a CI log */
    if (!json_object_get(e, "doc")) {
        fprintf(stderr, "trainguard check: %s: %s%s\n",
                json_string_value(json_object_get(e, "file")), msg, suffix);
        return;
    }
    tg_check_label(e, lab, sizeof(lab));
    if (line > 0 && (col > 0 || !json_object_get(e, "item")))
        fprintf(stderr, "%s line %" JSON_INTEGER_FORMAT ", column %" JSON_INTEGER_FORMAT ": %s%s\n",
                lab, line, col > 0 ? col : 1, msg, suffix);
    else
        fprintf(stderr, "%s %s%s\n", lab, msg, suffix);
}

static int add_error(struct check_run *r, const struct tg_check_where *w, const char *msg)
{
    if (tg_check_report_add_error(&r->rep, w, msg) < 0)
        return -ENOMEM;
    print_problem(r->rep.errors, "");
    return 0;
}

/* A document or item that parsed but is not something the engine can evaluate. */
static int add_ignored(struct check_run *r, const struct tg_check_where *w, const char *why)
{
    char msg[400];

    snprintf(msg, sizeof(msg), "not a Kubernetes object (%s)", why);
    if (tg_check_report_add_ignored(&r->rep, w, msg) < 0)
        return -ENOMEM;
    print_problem(r->rep.ignored, "; ignored");
    return 0;
}

/* "KIND NAMESPACE/NAME" of a results entry, sanitized: no manifest may forge an output line. */
static const char *object_label(const json_t *e, char *buf, size_t len)
{
    char kind[128], ns[260], name[300];
    const char *n = json_string_value(json_object_get(e, "name"));
    const char *nspace = json_string_value(json_object_get(e, "namespace"));

    tg_text_sanitize(json_string_value(json_object_get(e, "kind")), kind, sizeof(kind), 63);
    tg_text_sanitize(nspace ? nspace : "", ns, sizeof(ns), 63);
    tg_text_sanitize(n && *n ? n : "<unnamed>", name, sizeof(name), 253);
    snprintf(buf, len, "%s %s%s%s", *kind ? kind : "?", ns, *ns ? "/" : "", name);
    return buf;
}

/* " TP 8" of a plan member, "" when it is null. */
static void plan_part(char *buf, size_t len, const json_t *plan, const char *key, const char *name,
                      const char *sep)
{
    const json_t *v = json_object_get(plan, key);
    size_t at = strlen(buf);
    if (json_is_integer(v) && at < len)
        snprintf(buf + at, len - at, "%s%s %" JSON_INTEGER_FORMAT, at ? sep : "", name,
                 json_integer_value(v));
}

/* --explain in text: a PLAN line per role and an UNRESOLVED line per value not read. */
static void print_plan(FILE *out, const char *lab, const char *obj, const json_t *e)
{
    const char *role;
    const json_t *plan, *u;
    size_t i;
    char clean[TG_MSG_MAX];
    json_object_foreach ((json_t *)json_object_get(e, "explain"), role, plan) {
        char sizes[160] = "", batch[160] = "", world[48] = "world ?";
        const json_t *ws = json_object_get(plan, "worldSize");
        if (json_is_integer(ws))
            snprintf(world, sizeof(world), "world %" JSON_INTEGER_FORMAT, json_integer_value(ws));
        plan_part(sizes, sizeof(sizes), plan, "tp", "TP", " x ");
        plan_part(sizes, sizeof(sizes), plan, "pp", "PP", " x ");
        plan_part(sizes, sizeof(sizes), plan, "cp", "CP", " x ");
        plan_part(sizes, sizeof(sizes), plan, "dp", "DP", " x ");
        plan_part(sizes, sizeof(sizes), plan, "ep", "EP", ", ");
        plan_part(sizes, sizeof(sizes), plan, "experts", "experts", ", ");
        /* micro x accumulation x DP = global batch when all are known, else what is */
        bool all = json_is_integer(json_object_get(plan, "micro")) &&
                   json_is_integer(json_object_get(plan, "accumulation")) &&
                   json_is_integer(json_object_get(plan, "dp")) &&
                   json_is_integer(json_object_get(plan, "globalBatch"));
        plan_part(batch, sizeof(batch), plan, "micro", "micro", all ? " x " : ", ");
        plan_part(batch, sizeof(batch), plan, "accumulation", "accumulation", all ? " x " : ", ");
        if (all)
            plan_part(batch, sizeof(batch), plan, "dp", "DP", " x ");
        plan_part(batch, sizeof(batch), plan, "globalBatch",
                  all ? "= global batch" : "global batch", all ? " " : ", ");
        tg_text_sanitize(json_string_value(json_object_get(plan, "worldFrom")), clean,
                         sizeof(clean), 200);
        fprintf(out, "%s %s: PLAN %s (%s) %s: %s (%s)%s%s%s%s\n", lab, obj, role,
                json_string_value(json_object_get(plan, "container")),
                json_string_value(json_object_get(plan, "framework")), world, clean,
                *sizes ? "; " : "", sizes, *batch ? "; " : "", batch);
    }
    json_array_foreach (json_object_get(e, "unresolved"), i, u) {
        tg_text_sanitize(json_string_value(json_object_get(u, "why")), clean, sizeof(clean), 300);
        fprintf(out, "%s %s: UNRESOLVED %s: %s\n", lab, obj,
                json_string_value(json_object_get(u, "what")), clean);
    }
}

/* Text lines of one results entry: findings to r->text, mutator notes to stderr. */
static void print_result(struct check_run *r, const json_t *e)
{
    char lab[LABEL_MAX], obj[720], line[TG_FIELD_MAX + TG_MSG_MAX + 64];
    const json_t *f;
    size_t i;

    tg_check_label(e, lab, sizeof(lab));
    object_label(e, obj, sizeof(obj));
    json_array_foreach (r->format == FMT_TEXT ? json_object_get(e, "findings") : NULL, i, f) {
        const char *field = json_string_value(json_object_get(f, "field"));
        const char *action = json_string_value(json_object_get(f, "action"));
        char upper[8] = "";

        for (size_t k = 0; action[k] && k + 1 < sizeof(upper); k++)
            upper[k] = (char)(action[k] - 32);
        snprintf(line, sizeof(line), "[%s] %s%s%s", json_string_value(json_object_get(f, "rule")),
                 field, *field ? ": " : "", json_string_value(json_object_get(f, "message")));
        fprintf(r->text, "%s %s: %s %s\n", lab, obj, upper, line);
    }
    json_array_foreach (json_object_get(e, "notes"), i, f) {
        fflush(stdout);
        fprintf(stderr, "%s %s: NOTE %s\n", lab, obj, json_string_value(f));
    }
    if (r->explain && r->format == FMT_TEXT)
        print_plan(r->text, lab, obj, e);
}

/* ---- checking -------------------------------------------------------------------------------- */

static int emit_yaml(struct check_run *r, const json_t *obj)
{
    if (!r->first_yaml)
        fputs("---\n", stdout);
    r->first_yaml = false;
    return tg_yaml_emit(obj, stdout);
}

/* The mutated object (new reference), or a copy of obj when there is nothing to apply. */
static json_t *mutated(json_t *obj, const struct tg_result *res, char *err, size_t errlen)
{
    json_t *copy = json_deep_copy(obj);

    if (!copy) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (tg_patch_count(&res->patch) > 0 && tg_patch_apply(&copy, res->patch.ops, err, errlen) < 0) {
        json_decref(copy);
        return NULL;
    }
    return copy;
}

/* --mutate: *out gets the mutated object; with -o json the entry carries patch and result. */
static int mutate_object(struct check_run *r, const struct tg_check_where *w, json_t *obj,
                         const struct tg_result *res, json_t *entry, json_t **out)
{
    char err[256], msg[320];
    json_t *patched = mutated(obj, res, err, sizeof(err));

    if (!patched) {
        *out = json_incref(obj);
        snprintf(msg, sizeof(msg), "the patch does not apply: %s", err);
        return add_error(r, w, msg);
    }
    *out = patched;
    if (r->format != FMT_JSON)
        return 0;
    if (json_object_set(entry, "patch", res->patch.ops) ||
        (res->would_patch && json_object_set(entry, "wouldPatch", res->would_patch)) ||
        json_object_set(entry, "mutated", patched))
        return -ENOMEM;
    return 0;
}

/* Evaluates one object. *out gets a new reference to what --mutate prints for it (the mutated
 * object, or the object itself when it is not evaluated or cannot be patched). */
static int check_object(struct check_run *r, const struct tg_check_where *w, json_t *obj,
                        json_t **out)
{
    struct tg_review rv;
    struct tg_result res;
    char err[256];
    json_t *entry;
    int rc;

    *out = NULL;
    if (tg_review_from_object(obj, &rv, err, sizeof(err)) < 0) {
        *out = json_incref(obj);
        return add_ignored(r, w, err);
    }
    r->rep.objects++;
    rc = tg_pipeline_run(r->policy, &rv, &r->opts, &res);
    if (rc < 0) {
        *out = json_incref(obj);
        snprintf(err, sizeof(err), "the engine could not decide: %s", strerror(-rc));
        rc = rc == -ENOMEM ? -ENOMEM : add_error(r, w, err);
        goto out_review;
    }
    entry = tg_check_report_add_result(&r->rep, w, obj, &res);
    if (!entry)
        rc = -ENOMEM;
    else if (r->explain && res.explain && json_object_set(entry, "explain", res.explain))
        rc = -ENOMEM;
    if (rc == 0 && entry && r->mutate)
        rc = mutate_object(r, w, obj, &res, entry, out);
    if (rc == 0) {
        print_result(r, entry);
        if (!*out)
            *out = json_incref(obj);
    }
    tg_result_release(&res);
out_review:
    tg_review_release(&rv);
    return rc;
}

/* kind: List (or any *List with an items array) is what kubectl expands into its items. */
static bool is_list(json_t *obj)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    size_t n = kind ? strlen(kind) : 0;

    return n >= 4 && strcmp(kind + n - 4, "List") == 0 &&
           json_is_array(json_object_get(obj, "items"));
}

/* Where item i of the List at w sits: its index in the outermost List, and for a nested List the
 * whole path. */
static void item_where(const struct tg_check_where *w, size_t i, int depth,
                       struct tg_check_where *sub)
{
    *sub = *w;
    if (depth == 0) {
        sub->item = (long)i;
        sub->item_path[0] = '\0';
        return;
    }
    char outer[sizeof(sub->item_path)];
    int n;

    if (w->item_path[0])
        snprintf(outer, sizeof(outer), "%s", w->item_path);
    else
        snprintf(outer, sizeof(outer), "items[%ld]", w->item);
    n = snprintf(sub->item_path, sizeof(sub->item_path), "%s.items[%zu]", outer, i);
    if (n < 0 || (size_t)n >= sizeof(sub->item_path))
        snprintf(sub->item_path, sizeof(sub->item_path), "items[%ld]...items[%zu]", w->item, i);
}

static int check_value(struct check_run *r, const struct tg_check_where *w, json_t *v, int depth,
                       json_t **out);

/* Checks every item of a List; *out is the List with each item replaced by what --mutate prints. */
static int check_list(struct check_run *r, const struct tg_check_where *w, json_t *v, int depth,
                      json_t **out)
{
    json_t *items = json_object_get(v, "items"), *item;
    json_t *newitems = json_array(), *list = json_copy(v);
    size_t i;
    int rc = 0;

    if (!newitems || !list || json_object_set(list, "items", newitems) < 0)
        rc = -ENOMEM;
    json_array_foreach (items, i, item) {
        struct tg_check_where sub;
        json_t *m = NULL;

        if (rc < 0)
            break;
        item_where(w, i, depth, &sub);
        rc = check_value(r, &sub, item, depth + 1, &m);
        if (rc == 0 && (!m || json_array_append_new(newitems, m) < 0))
            rc = -ENOMEM;
    }
    json_decref(newitems);
    if (rc < 0) {
        json_decref(list);
        return rc;
    }
    *out = list;
    return 0;
}

/* Checks a document or List item; *out as for check_object. */
static int check_value(struct check_run *r, const struct tg_check_where *w, json_t *v, int depth,
                       json_t **out)
{
    *out = NULL;
    if (json_is_object(v) && is_list(v) && depth < TG_CHECK_MAX_LIST_DEPTH)
        return check_list(r, w, v, depth, out);
    if (json_is_object(v))
        return check_object(r, w, v, out);
    *out = json_incref(v);
    if (json_is_array(v))
        return add_ignored(r, w, w->item < 0 ? "the document is a list" : "the item is a list");
    return add_ignored(r, w, w->item < 0 ? "the document is a scalar" : "the item is a scalar");
}

static int check_docs(struct check_run *r, const char *file, const struct tg_yaml_docs *docs)
{
    int rc = 0;

    for (size_t i = 0; i < docs->n && rc == 0; i++) {
        const struct tg_yaml_doc *d = &docs->v[i];
        struct tg_check_where w = {.file = file, .doc = d->index + 1, .item = -1, .line = d->line};
        json_t *out = NULL;

        if (d->empty)
            continue;
        r->rep.documents++;
        if (!d->value) {
            rc = add_error(r, &w, d->error);
            continue;
        }
        rc = check_value(r, &w, d->value, 0, &out);
        if (rc == 0 && r->mutate && r->format == FMT_TEXT && out)
            rc = emit_yaml(r, out);
        json_decref(out);
    }
    return rc;
}

/* The walk's file callback: reads, splits and checks one file. */
static int check_file(void *ctx, const char *path)
{
    struct check_run *r = ctx;
    const char *file = strcmp(path, "-") == 0 ? TG_CHECK_STDIN : path;
    struct tg_check_where w = {.file = file, .item = -1};
    struct tg_yaml_docs docs;
    char err[256];
    size_t len = 0;
    char *text = tg_read_file(path, TG_CHECK_MAX_BYTES, &len, err, sizeof(err));
    int rc;

    r->rep.files++;
    if (!text)
        return add_error(r, &w, err);
    r->rep.readable++;
    if (tg_yaml_parse_stream(text, len, &docs) < 0) {
        free(text);
        return -ENOMEM;
    }
    rc = check_docs(r, file, &docs);
    tg_yaml_docs_release(&docs);
    free(text);
    return rc;
}

static int walk_error(void *ctx, const char *path, const char *msg)
{
    struct tg_check_where w = {.file = path, .item = -1};

    return add_error(ctx, &w, msg);
}

static int check_arg(struct check_run *r, const char *arg)
{
    static const struct tg_check_walk_ops ops = {check_file, walk_error};
    struct tg_check_where w = {.file = arg, .item = -1};
    long n = tg_check_walk(arg, &ops, r);

    if (n == 0)
        return add_error(r, &w,
                         "no *.yaml, *.yml or *.json file in this directory (hidden files and "
                         "directories are skipped)");
    return n < 0 ? (int)n : 0;
}

/* ---- results --------------------------------------------------------------------------------- */

static bool run_fails(const struct check_run *r)
{
    return r->rep.rule_deny > 0 || (r->fail_on == TG_ACTION_WARN && r->rep.rule_warn > 0);
}

static void print_summary(const struct check_run *r, FILE *out)
{
    const struct tg_check_report *p = &r->rep;
    unsigned failing = p->rule_deny + (r->fail_on == TG_ACTION_WARN ? p->rule_warn : 0);
    size_t errors = json_array_size(p->errors);

    fprintf(out,
            "trainguard check: %u file%s, %u document%s, %u object%s (%u evaluated, %u skipped): "
            "%u would be denied; findings: %u deny, %u warn, %u audit; %zu error%s, %zu ignored",
            p->files, p->files == 1 ? "" : "s", p->documents, p->documents == 1 ? "" : "s",
            p->objects, p->objects == 1 ? "" : "s", p->evaluated, p->skipped, p->denied,
            p->shown_deny, p->shown_warn, p->shown_audit, errors, errors == 1 ? "" : "s",
            json_array_size(p->ignored));
    if (errors)
        fprintf(out, ": ERROR (input that could not be checked)\n");
    else if (failing)
        fprintf(out, ": FAIL (%u finding%s at --fail-on %s or above)\n", failing,
                failing == 1 ? "" : "s", r->fail_on == TG_ACTION_WARN ? "warn" : "deny");
    else
        fprintf(out, ": PASS\n");
}

/* Writes the report in the chosen machine format to stdout. 0 or -ENOMEM / -EIO. */
static int write_report(const struct check_run *r)
{
    json_t *report = tg_check_report_json(&r->rep), *doc = NULL;
    int rc = 0;

    if (!report)
        return -ENOMEM;
    if (r->format == FMT_JUNIT) {
        rc = tg_check_junit_write(report, r->fail_on, stdout);
        json_decref(report);
        return rc;
    }
    if (r->format == FMT_JSON)
        doc = json_incref(report);
    else if (r->format == FMT_SARIF)
        doc = tg_check_sarif(report);
    else
        doc = tg_check_policyreport(report, NULL);
    if (!doc)
        rc = -ENOMEM;
    else if (json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 ||
             fputc('\n', stdout) == EOF)
        rc = -EIO;
    json_decref(doc);
    json_decref(report);
    return rc;
}

/* ---- arguments ------------------------------------------------------------------------------- */

static int parse_format(const char *s, enum check_format *out)
{
    for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++) {
        if (strcmp(s, format_names[i]) == 0) {
            *out = (enum check_format)i;
            return 0;
        }
    }
    fprintf(stderr,
            "trainguard check: --output must be text, json, junit, sarif or policyreport, not "
            "'%s'\n",
            s);
    return -EINVAL;
}

static int parse_fail_on(const char *s, enum tg_action *out)
{
    if (strcmp(s, "deny") == 0 || strcmp(s, "warn") == 0) {
        *out = s[0] == 'd' ? TG_ACTION_DENY : TG_ACTION_WARN;
        return 0;
    }
    fprintf(stderr, "trainguard check: --fail-on must be deny or warn, not '%s'\n", s);
    return -EINVAL;
}

static int parse_option(int c, struct check_run *r, const char **config, char **argv)
{
    switch (c) {
    case 'o':
    case OPT_OUTPUT:
        return parse_format(optarg, &r->format);
    case OPT_FAIL_ON:
        return parse_fail_on(optarg, &r->fail_on);
    case OPT_MUTATE:
        r->mutate = true;
        return 0;
    case OPT_EXPLAIN:
        r->explain = true;
        return 0;
    case 'R':
        return 0;
    case OPT_CONFIG:
        *config = optarg;
        return 0;
    case OPT_MODE:
        if (tg_mode_parse(optarg, &r->opts.mode_override) < 0) {
            fprintf(stderr, "trainguard check: --mode must be enforce, warn or audit, not '%s'\n",
                    optarg);
            return -EINVAL;
        }
        r->opts.has_mode_override = true;
        return 0;
    case 'h':
    case OPT_HELP:
        usage(stdout);
        return 1;
    default:
        if (optopt && optopt < 256)
            fprintf(stderr, "trainguard check: bad option -%c or missing value\n", optopt);
        else
            fprintf(stderr, "trainguard check: unknown option or missing value: %s\n",
                    argv[optind - 1]);
        return -EINVAL;
    }
}

/* 0 to run, 1 when --help was answered, -EINVAL on bad usage (said on stderr). */
static int parse_args(int argc, char **argv, struct check_run *r, const char **config)
{
    int c, rc;

    optind = 0; /* GNU getopt: full re-initialisation (check may run twice in one process) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:hR", options, NULL)) != -1) {
        if ((rc = parse_option(c, r, config, argv)) != 0)
            return rc;
    }
    if (r->mutate && r->format != FMT_TEXT && r->format != FMT_JSON) {
        fprintf(stderr, "trainguard check: --mutate prints manifests on stdout; it goes with "
                        "--output text or json only\n");
        return -EINVAL;
    }
    if (optind >= argc) {
        fprintf(stderr, "trainguard check: no input files (use - for stdin)\n");
        return -EINVAL;
    }
    return 0;
}

/* ---- the command ----------------------------------------------------------------------------- */

static int run_inputs(struct check_run *r, int argc, char **argv)
{
    for (int i = optind; i < argc; i++) {
        int rc = check_arg(r, argv[i]);

        if (rc < 0)
            return rc;
    }
    if (r->rep.readable == 0) {
        fflush(stdout);
        fprintf(stderr, "trainguard check: nothing was checked: no readable manifest file\n");
    }
    return 0;
}

int tg_cmd_check(int argc, char **argv)
{
    struct check_run r = {.first_yaml = true, .fail_on = TG_ACTION_DENY};
    const char *config = NULL;
    struct tg_policy *policy = NULL;
    char err[512];
    int rc, status = 2;

    rc = parse_args(argc, argv, &r, &config);
    if (rc != 0) {
        if (rc < 0)
            fprintf(stderr, "Try 'trainguard check --help'.\n");
        return rc > 0 ? 0 : 2;
    }
    r.opts.offline = true;
    r.opts.mutate = r.mutate;
    r.text = r.format == FMT_TEXT && !r.mutate ? stdout : stderr;
    policy = config ? tg_policy_load_file(config, err, sizeof(err)) : tg_policy_new_default();
    if (!policy) {
        fprintf(stderr, "trainguard check: %s\n", config ? err : "out of memory");
        return 2;
    }
    r.policy = policy;
    if (tg_check_report_init(&r.rep) < 0 || (rc = run_inputs(&r, argc, argv)) < 0 ||
        (r.format != FMT_TEXT && (rc = write_report(&r)) < 0)) {
        fprintf(stderr, "trainguard check: %s\n", strerror(rc < 0 ? -rc : ENOMEM));
        goto out;
    }
    print_summary(&r, r.text);
    if (fflush(stdout) != 0)
        goto out;
    status = json_array_size(r.rep.errors) || r.rep.readable == 0 ? 2 : run_fails(&r) ? 1 : 0;
out:
    tg_check_report_release(&r.rep);
    tg_policy_unref(policy);
    return status;
}
