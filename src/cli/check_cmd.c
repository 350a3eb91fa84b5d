/* check_cmd.c -- `trainguard check`: the admission engine, offline, on manifest files. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tg/check_cmd.h"
#include "tg/patch.h"
#include "tg/pipeline.h"
#include "tg/policy.h"
#include "tg/policy_yaml.h"
#include "tg/review.h"
#include "tg/yaml_emit.h"
#include "tg/yaml_json.h"

/* A manifest file is kilobytes; a whole rendered chart a few MiB. 64 MiB stops a wrong file
 * (an image, a log) from eating memory while leaving every real input room. */
#define TG_CHECK_MAX_BYTES (64u * 1024 * 1024)
/* kind: List inside kind: List is legal; real files nest at most once. */
#define TG_CHECK_MAX_LIST_DEPTH 8
/* "file:doc.items[N]" for messages: a path plus the item path. */
#define PATH_MAX_LABEL 4200

enum { OPT_OUTPUT = 256, OPT_MUTATE, OPT_CONFIG, OPT_MODE, OPT_HELP };

static const struct option options[] = {
    {"output", required_argument, NULL, OPT_OUTPUT}, {"mutate", no_argument, NULL, OPT_MUTATE},
    {"config", required_argument, NULL, OPT_CONFIG}, {"mode", required_argument, NULL, OPT_MODE},
    {"help", no_argument, NULL, OPT_HELP},           {NULL, 0, NULL, 0},
};

/* Where an object sits: file, 1-based document, path of a List item ("" for the document itself)
 * and the line where the document starts. */
struct where {
    const char *file;
    size_t doc;
    char item[96];
    int line;
};

struct check_run {
    const struct tg_policy *policy;
    struct tg_pipeline_opts opts;
    bool json;
    bool mutate;
    FILE *report;    /* text findings: stdout, or stderr with --mutate (stdout is YAML) */
    json_t *results; /* --output json */
    bool first_yaml;
    /* counters for the summary */
    unsigned files, docs, objects, evaluated, denied, deny_findings, warn_findings, audit_findings;
    unsigned errors, skipped;
    bool unreadable;
};

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: trainguard check [OPTIONS] FILE|DIR|-...\n"
        "\n"
        "Runs the admission engine of `serve` offline on YAML or JSON manifests: every\n"
        "document of every file (kind: List expanded, empty documents skipped), as a CREATE.\n"
        "A directory means its *.yaml, *.yml and *.json files; - reads stdin.\n"
        "\n"
        "  -o, --output text|json       text: one line per finding,\n"
        "                               FILE:DOC KIND/NAME: DENY|WARN|AUDIT [rule] field: message\n"
        "                               json: an array with one entry per object\n"
        "  --mutate                     also run the mutators and print the mutated manifests\n"
        "                               as YAML on stdout (findings then go to stderr)\n"
        "  --config FILE                policy file (default: the embedded policy)\n"
        "  --mode enforce|warn|audit    override the policy's mode\n"
        "  --help                       this text\n"
        "\n"
        "DOC is the 1-based document index in the file (DOC.items[N] for an item of a List;\n"
        "in JSON, \"doc\" and \"item\"). Problems with a document go to stderr (in JSON,\n"
        "entries with \"error\").\n"
        "A document that does not parse (YAML error, duplicate key, unrendered Go template)\n"
        "is reported as FILE:DOC line L, column C: reason and the run goes on; so is a\n"
        "document that is not a Kubernetes object (it is skipped).\n"
        "\n"
        "Exit status: 0 nothing would be denied; 1 something would be denied (enforce mode);\n"
        "2 bad usage, a file that cannot be read, or a document that cannot be parsed (input\n"
        "that could not be checked never passes silently).\n");
}

static const char *object_name(json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));

    if (name && *name)
        return name;
    name = json_string_value(json_object_get(meta, "generateName"));
    return name && *name ? name : "<unnamed>";
}

static const char *str_or(json_t *obj, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(obj, key));

    return s && *s ? s : dflt;
}

/* How a finding shows under the effective mode: warn mode downgrades, audit only records. */
static const char *finding_label(const struct tg_result *res, const struct tg_finding *f,
                                 bool upper)
{
    if (res->mode == TG_MODE_AUDIT)
        return upper ? "AUDIT" : "audit";
    if (f->action == TG_ACTION_DENY && res->mode == TG_MODE_ENFORCE)
        return upper ? "DENY" : "deny";
    return upper ? "WARN" : "warn";
}

static void count_finding(struct check_run *r, const struct tg_result *res,
                          const struct tg_finding *f)
{
    if (res->mode == TG_MODE_AUDIT)
        r->audit_findings++;
    else if (f->action == TG_ACTION_DENY && res->mode == TG_MODE_ENFORCE)
        r->deny_findings++;
    else
        r->warn_findings++;
}

/* "file:doc" or "file:doc.items[N]" */
static const char *label(const struct where *w, char *buf, size_t len)
{
    snprintf(buf, len, "%s:%zu%s%s", w->file, w->doc, w->item[0] ? "." : "", w->item);
    return buf;
}

/* The JSON entry of one document or item: {file, doc[, item]}. NULL on ENOMEM. */
static json_t *json_where(const struct where *w)
{
    json_t *e = json_pack("{s:s, s:I}", "file", w->file, "doc", (json_int_t)w->doc);

    if (e && w->item[0] && json_object_set_new(e, "item", json_string(w->item))) {
        json_decref(e);
        return NULL;
    }
    return e;
}

/* A document-level problem: text on stderr, or an entry in the JSON array. msg starts with
 * "line L, column C: " when it has a position. */
static int report_error(struct check_run *r, const struct where *w, const char *msg, bool fatal)
{
    char clean[512], lab[PATH_MAX_LABEL];
    json_t *e;

    tg_text_sanitize(msg, clean, sizeof(clean), 400);
    if (fatal)
        r->errors++;
    else
        r->skipped++;
    if (r->json) {
        if (!(e = json_where(w)))
            return -ENOMEM;
        if (json_object_set_new(e, "error", json_string(clean)) ||
            json_object_set_new(e, "skipped", json_boolean(!fatal))) {
            json_decref(e);
            return -ENOMEM;
        }
        return json_array_append_new(r->results, e) ? -ENOMEM : 0;
    }
    fflush(stdout); /* keep the order of findings and errors on a terminal or in a CI log */
    fprintf(stderr, "%s %s\n", label(w, lab, sizeof(lab)), clean);
    return 0;
}

/* A skipped document or item: it parsed but is not something the engine can evaluate. */
static int report_skip(struct check_run *r, const struct where *w, const char *why)
{
    char msg[400];

    if (w->item[0])
        snprintf(msg, sizeof(msg), "not a Kubernetes object (%s); skipped", why);
    else
        snprintf(msg, sizeof(msg), "line %d, column 1: not a Kubernetes object (%s); skipped",
                 w->line, why);
    return report_error(r, w, msg, false);
}

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

static int report_text(struct check_run *r, const struct where *wh, json_t *obj,
                       const struct tg_result *res)
{
    char lab[PATH_MAX_LABEL];
    char kind[128], name[300];
    char line[TG_FIELD_MAX + TG_MSG_MAX + 64];
    size_t i;
    json_t *w;

    /* Names come from the manifest: no control character may forge an output line. */
    tg_text_sanitize(str_or(obj, "kind", "?"), kind, sizeof(kind), 63);
    tg_text_sanitize(object_name(obj), name, sizeof(name), 253);
    for (size_t k = 0; k < res->findings.n; k++) {
        const struct tg_finding *f = &res->findings.v[k];

        tg_finding_format(f, line, sizeof(line));
        fprintf(r->report, "%s %s/%s: %s %s\n", label(wh, lab, sizeof(lab)), kind, name,
                finding_label(res, f, true), line);
    }
    /* Mutator remarks (not findings) reach users as warnings; show them too. */
    json_array_foreach (res->warnings, i, w) {
        const char *s = json_string_value(w);

        if (s && s[0] != '[')
            fprintf(r->report, "%s %s/%s: NOTE %s\n", label(wh, lab, sizeof(lab)), kind, name, s);
    }
    return 0;
}

static int report_json(struct check_run *r, const struct where *wh, json_t *obj,
                       const struct tg_result *res, json_t *patched)
{
    json_t *e, *fs = json_array();

    if (!fs)
        return -ENOMEM;
    for (size_t k = 0; k < res->findings.n; k++) {
        const struct tg_finding *f = &res->findings.v[k];

        if (json_array_append_new(fs, json_pack("{s:s, s:s, s:s, s:s}", "rule", f->rule, "action",
                                                finding_label(res, f, false), "field", f->field,
                                                "message", f->message))) {
            json_decref(fs);
            return -ENOMEM;
        }
    }
    e = json_where(wh);
    if (!e ||
        json_object_update_new(
            e, json_pack("{s:s, s:s, s:s, s:b, s:b, s:o}", "kind", str_or(obj, "kind", ""), "name",
                         object_name(obj), "apiVersion", str_or(obj, "apiVersion", ""), "allowed",
                         res->allowed, "evaluated", res->evaluated, "findings", fs))) {
        json_decref(e);
        return -ENOMEM;
    }
    if (!res->evaluated && res->skip_reason)
        json_object_set_new(e, "skipReason", json_string(res->skip_reason));
    if (r->mutate) {
        json_object_set(e, "patch", res->patch.ops);
        if (res->would_patch)
            json_object_set(e, "wouldPatch", res->would_patch);
        if (patched)
            json_object_set(e, "mutated", patched);
    }
    return json_array_append_new(r->results, e) ? -ENOMEM : 0;
}

/* Evaluates one object. With --mutate, *out gets the mutated object (a new reference; the object
 * itself when it is not evaluated or cannot be patched), so that every document can be printed. */
static int check_object(struct check_run *r, const struct where *wh, json_t *obj, json_t **out)
{
    struct tg_review rv;
    struct tg_result res;
    char err[256];
    json_t *patched = NULL;
    int rc;

    if (tg_review_from_object(obj, &rv, err, sizeof(err)) < 0) {
        *out = json_incref(obj);
        return report_skip(r, wh, err);
    }
    r->objects++;
    rc = tg_pipeline_run(r->policy, &rv, &r->opts, &res);
    if (rc < 0) {
        *out = json_incref(obj);
        snprintf(err, sizeof(err), "the engine could not decide: %s", strerror(-rc));
        rc = rc == -ENOMEM ? -ENOMEM : report_error(r, wh, err, true);
        goto out_review;
    }
    r->evaluated += res.evaluated;
    r->denied += !res.allowed;
    for (size_t k = 0; k < res.findings.n; k++)
        count_finding(r, &res, &res.findings.v[k]);
    if (r->mutate && !(patched = mutated(obj, &res, err, sizeof(err)))) {
        char msg[320];

        *out = json_incref(obj);
        snprintf(msg, sizeof(msg), "the patch does not apply: %s", err);
        rc = report_error(r, wh, msg, true);
        goto out_result;
    }
    rc = r->json ? report_json(r, wh, obj, &res, patched) : report_text(r, wh, obj, &res);
    *out = patched ? patched : json_incref(obj);
out_result:
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

/* Checks a document or List item; *out as for check_object (a List keeps its shape, with each
 * item replaced by its mutated form). */
static int check_value(struct check_run *r, const struct where *wh, json_t *v, int depth,
                       json_t **out)
{
    json_t *items, *item, *newitems, *list;
    size_t i;

    *out = NULL;
    if (!json_is_object(v) || !is_list(v) || depth >= TG_CHECK_MAX_LIST_DEPTH) {
        if (json_is_object(v))
            return check_object(r, wh, v, out);
        *out = json_incref(v);
        return report_skip(
            r, wh, json_is_array(v) ? "the document is a list" : "the document is a scalar");
    }
    items = json_object_get(v, "items");
    newitems = json_array();
    list = json_copy(v);
    if (!newitems || !list || json_object_set(list, "items", newitems) < 0)
        goto fail;
    json_array_foreach (items, i, item) {
        struct where sub = *wh;
        json_t *m = NULL;
        int rc, n;

        n = snprintf(sub.item, sizeof(sub.item), "%s%sitems[%zu]", wh->item, wh->item[0] ? "." : "",
                     i);
        if (n < 0 || (size_t)n >= sizeof(sub.item))
            snprintf(sub.item, sizeof(sub.item), "items[%zu]", i); /* nested too deep */
        rc = check_value(r, &sub, item, depth + 1, &m);
        if (rc < 0 || !m || json_array_append_new(newitems, m) < 0) {
            if (rc == 0)
                rc = -ENOMEM;
            json_decref(newitems);
            json_decref(list);
            return rc;
        }
    }
    json_decref(newitems);
    *out = list;
    return 0;
fail:
    json_decref(newitems);
    json_decref(list);
    return -ENOMEM;
}

static int check_file(struct check_run *r, const char *path)
{
    const char *file = strcmp(path, "-") == 0 ? "<stdin>" : path;
    struct tg_yaml_docs docs;
    char err[256];
    size_t len = 0;
    char *text = tg_read_file(path, TG_CHECK_MAX_BYTES, &len, err, sizeof(err));
    int rc = 0;

    r->files++;
    if (!text) {
        fprintf(stderr, "trainguard check: %s: %s\n", file, err);
        r->unreadable = true;
        return 0;
    }
    if (tg_yaml_parse_stream(text, len, &docs) < 0) {
        free(text);
        return -ENOMEM;
    }
    for (size_t i = 0; i < docs.n && rc == 0; i++) {
        const struct tg_yaml_doc *d = &docs.v[i];
        struct where w = {.file = file, .doc = d->index + 1, .line = d->line};

        if (d->empty)
            continue;
        r->docs++;
        if (!d->value) {
            rc = report_error(r, &w, d->error, true);
        } else {
            json_t *out = NULL;

            rc = check_value(r, &w, d->value, 0, &out);
            if (rc == 0 && r->mutate && !r->json && out)
                rc = emit_yaml(r, out);
            json_decref(out);
        }
    }
    tg_yaml_docs_release(&docs);
    free(text);
    return rc;
}

static int is_manifest_name(const struct dirent *e)
{
    size_t n = strlen(e->d_name);

    if (e->d_name[0] == '.')
        return 0;
    return (n > 5 && strcmp(e->d_name + n - 5, ".yaml") == 0) ||
           (n > 4 && strcmp(e->d_name + n - 4, ".yml") == 0) ||
           (n > 5 && strcmp(e->d_name + n - 5, ".json") == 0);
}

/* A directory stands for its *.yaml, *.yml and *.json files, in name order (kubectl -f DIR,
 * without recursion). Anything else is read as a file. */
static int check_path(struct check_run *r, const char *path)
{
    struct stat st;
    struct dirent **names = NULL;
    int n, rc = 0;

    if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return check_file(r, path);
    n = scandir(path, &names, is_manifest_name, alphasort);
    if (n < 0) {
        fprintf(stderr, "trainguard check: %s: %s\n", path, strerror(errno));
        r->unreadable = true;
        return 0;
    }
    for (int i = 0; i < n; i++) {
        char full[4096];
        int len = snprintf(full, sizeof(full), "%s%s%s", path,
                           path[strlen(path) - 1] == '/' ? "" : "/", names[i]->d_name);

        if (rc == 0 && len > 0 && (size_t)len < sizeof(full))
            rc = check_file(r, full);
        free(names[i]);
    }
    free(names);
    return rc;
}

static void print_summary(const struct check_run *r)
{
    fprintf(r->report,
            "trainguard check: %u file%s, %u document%s, %u object%s (%u evaluated): %u would be "
            "denied; findings: %u deny, %u warn, %u audit; %u error%s, %u skipped\n",
            r->files, r->files == 1 ? "" : "s", r->docs, r->docs == 1 ? "" : "s", r->objects,
            r->objects == 1 ? "" : "s", r->evaluated, r->denied, r->deny_findings, r->warn_findings,
            r->audit_findings, r->errors, r->errors == 1 ? "" : "s", r->skipped);
}

static int parse_args(int argc, char **argv, struct check_run *r, const char **config)
{
    int c;

    optind = 0; /* GNU getopt: full re-initialisation (check may run twice in one process) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", options, NULL)) != -1) {
        switch (c) {
        case 'o':
        case OPT_OUTPUT:
            if (strcmp(optarg, "json") == 0) {
                r->json = true;
            } else if (strcmp(optarg, "text") != 0) {
                fprintf(stderr, "trainguard check: --output must be text or json, not '%s'\n",
                        optarg);
                return -EINVAL;
            }
            break;
        case OPT_MUTATE:
            r->mutate = true;
            break;
        case OPT_CONFIG:
            *config = optarg;
            break;
        case OPT_MODE:
            if (tg_mode_parse(optarg, &r->opts.mode_override) < 0) {
                fprintf(stderr,
                        "trainguard check: --mode must be enforce, warn or audit, not '%s'\n",
                        optarg);
                return -EINVAL;
            }
            r->opts.has_mode_override = true;
            break;
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
    if (optind >= argc) {
        fprintf(stderr, "trainguard check: no input files (use - for stdin)\n");
        return -EINVAL;
    }
    return 0;
}

int tg_cmd_check(int argc, char **argv)
{
    struct check_run r = {.first_yaml = true};
    const char *config = NULL;
    struct tg_policy *policy = NULL;
    char err[512];
    int rc, status = 2;

    rc = parse_args(argc, argv, &r, &config);
    if (rc != 0) {
        if (rc > 0)
            return 0;
        fprintf(stderr, "Try 'trainguard check --help'.\n");
        return 2;
    }
    r.opts.offline = true;
    r.opts.mutate = r.mutate;
    r.report = r.mutate ? stderr : stdout;
    policy = config ? tg_policy_load_file(config, err, sizeof(err)) : tg_policy_new_default();
    if (!policy) {
        fprintf(stderr, "trainguard check: %s\n", config ? err : "out of memory");
        return 2;
    }
    r.policy = policy;
    if (r.json && !(r.results = json_array()))
        goto out;
    for (int i = optind; i < argc; i++) {
        if ((rc = check_path(&r, argv[i])) < 0) {
            fprintf(stderr, "trainguard check: %s\n", strerror(-rc));
            goto out;
        }
    }
    if (r.json) {
        /* stdout is the JSON array alone (with --mutate each entry carries "mutated"); the
         * summary goes to stderr. */
        if (json_dumpf(r.results, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
            goto out;
        fputc('\n', stdout);
        r.report = stderr;
    }
    print_summary(&r);
    if (fflush(stdout) != 0)
        goto out;
    status = r.unreadable || r.errors ? 2 : r.denied ? 1 : 0;
out:
    json_decref(r.results);
    tg_policy_unref(policy);
    return status;
}
