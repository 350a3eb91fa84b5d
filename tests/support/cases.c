/* cases.c -- runs the YAML case files of tests/fixtures/<family>/cases.yaml through the real
 * review decoder and pipeline, and checks findings, verdicts and patches. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/cases.h"
#include "tg/launch.h"
#include "tg/mpirun.h"
#include "tg/pipeline.h"
#include "tg/policy_yaml.h"
#include "tg/yaml_json.h"

#define MAX_CASES 4096

struct case_ref {
    const char *file;
    size_t index;
};
static struct case_ref refs[MAX_CASES];
static size_t nrefs;
#define MAX_BAD 64
static const char *bad_files[MAX_BAD];
static size_t nbad;

/* The loaded file must also hold a non-empty `cases` list. */
static void tg_json_decref_quiet(json_t *root)
{
    ck_assert_msg(json_array_size(json_object_get(root, "cases")) > 0, "no cases");
    json_decref(root);
}

/* Loads without aborting: NULL with the reason in err. */
static json_t *load_quiet(const char *file, char *err, size_t errlen)
{
    size_t len;
    char *text = tg_read_file(file, 16u << 20, &len, err, errlen);
    if (!text)
        return NULL;
    json_t *v = tg_yaml_parse_one(text, len, err, errlen);
    free(text);
    return v;
}

json_t *tg_test_load(const char *file)
{
    char err[256];
    json_t *v = load_quiet(file, err, sizeof(err));
    if (!v)
        ck_abort_msg("%s: %s", file, err);
    return v;
}

/* objectFile: a path relative to tests/ that stays inside the repository (the copies of published
 * manifests are under corpus/, docs/testing.md). */
static bool inside_repo(const char *file)
{
    if (file[0] == '/' || !strncmp(file, "../", 3) || strstr(file, "/../"))
        return false;
    size_t n = strlen(file);
    return !(n >= 3 && !strcmp(file + n - 3, "/.."));
}

/* Document `doc` of a multi-document file; a missing file fails the case. */
static json_t *load_doc(const char *case_name, const char *file, size_t doc)
{
    char err[256];
    size_t len, seen = 0;
    struct tg_yaml_docs docs;
    json_t *out = NULL;
    ck_assert_msg(inside_repo(file),
                  "%s: objectFile %s must be a path under tests/ without \"..\" (copy the manifest "
                  "into tests/corpus/, see docs/testing.md)",
                  case_name, file);
    char *text = tg_read_file(file, 16u << 20, &len, err, sizeof(err));
    if (!text)
        ck_abort_msg("%s: objectFile tests/%s: %s", case_name, file, err);
    ck_assert_int_eq(tg_yaml_parse_stream(text, len, &docs), 0);
    free(text);
    for (size_t i = 0; i < docs.n; i++) {
        if (!docs.v[i].value)
            continue;
        if (seen++ == doc) {
            out = json_incref(docs.v[i].value);
            break;
        }
    }
    tg_yaml_docs_release(&docs);
    if (!out)
        ck_abort_msg("%s: objectFile tests/%s has no document %zu (objectDoc counts non-empty "
                     "documents from 0)",
                     case_name, file, doc);
    return out;
}

int tg_json_subset(const json_t *want, const json_t *got, char *where, size_t wherelen)
{
    if (json_is_object(want)) {
        const char *k;
        json_t *v;
        if (!json_is_object(got))
            goto diff;
        json_object_foreach ((json_t *)want, k, v) {
            size_t n = strlen(where);
            snprintf(where + n, wherelen - n, "/%s", k);
            if (tg_json_subset(v, json_object_get(got, k), where, wherelen))
                return 1;
            where[n] = '\0';
        }
        return 0;
    }
    if (json_is_array(want)) {
        size_t i;
        json_t *v;
        if (!json_is_array(got) || json_array_size(got) != json_array_size(want))
            goto diff;
        json_array_foreach ((json_t *)want, i, v) {
            size_t n = strlen(where);
            snprintf(where + n, wherelen - n, "/%zu", i);
            if (tg_json_subset(v, json_array_get(got, i), where, wherelen))
                return 1;
            where[n] = '\0';
        }
        return 0;
    }
    if (got && json_equal((json_t *)want, (json_t *)got))
        return 0;
diff:
    return 1;
}

static bool rule_compared(json_t *prefixes, const char *rule)
{
    size_t i;
    json_t *p;
    if (!json_array_size(prefixes))
        return true;
    json_array_foreach (prefixes, i, p) {
        const char *s = json_string_value(p);
        if (s && !strncmp(rule, s, strlen(s)))
            return true;
    }
    return false;
}

static void describe(const struct tg_result *res, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < res->findings.n && at + 1 < len; i++) {
        int n = snprintf(buf + at, len - at, "\n    [%s] (%s) %s: %s", res->findings.v[i].rule,
                         tg_action_name(res->findings.v[i].action), res->findings.v[i].field,
                         res->findings.v[i].message);
        if (n < 0)
            break;
        at += (size_t)n;
    }
}

static void check_findings(const char *name, json_t *prefixes, json_t *want,
                           const struct tg_result *res)
{
    char got[8192];
    bool used[256] = {false};
    size_t i, compared = 0;
    json_t *w;
    describe(res, got, sizeof(got));
    ck_assert_msg(res->findings.n < 256, "%s: too many findings", name);
    json_array_foreach (want, i, w) {
        const char *rule = json_string_value(json_object_get(w, "rule"));
        const char *field = json_string_value(json_object_get(w, "field"));
        const char *text = json_string_value(json_object_get(w, "message")); /* a part of it */
        const char *action = json_string_value(json_object_get(w, "action"));
        bool found = false;
        ck_assert_msg(rule != NULL, "%s: expected finding %zu has no rule", name, i);
        for (size_t k = 0; k < res->findings.n && !found; k++) {
            const struct tg_finding *f = &res->findings.v[k];
            if (used[k] || strcmp(f->rule, rule) || (field && strcmp(f->field, field)) ||
                (action && strcmp(tg_action_name(f->action), action)) ||
                (text && !strstr(f->message, text)))
                continue;
            used[k] = found = true;
        }
        ck_assert_msg(found, "%s: expected [%s] %s%s%s, got:%s", name, rule, field ? field : "*",
                      action ? " at " : "", action ? action : "", got[0] ? got : " (none)");
    }
    for (size_t k = 0; k < res->findings.n; k++) {
        if (rule_compared(prefixes, res->findings.v[k].rule)) {
            compared++;
            ck_assert_msg(used[k], "%s: unexpected [%s] %s: %s", name, res->findings.v[k].rule,
                          res->findings.v[k].field, res->findings.v[k].message);
        }
    }
    (void)compared;
}

/* Builds an AdmissionReview request around the case and decodes it like the server does. */
static void make_review(json_t *c, json_t *obj, json_t *old, struct tg_review *rv)
{
    char err[256];
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *slash = av ? strchr(av, '/') : NULL;
    json_t *gvk = json_object_get(c, "kind");
    json_t *k = gvk ? json_deep_copy(gvk)
                    : json_pack("{s:s%, s:s, s:s}", "group", av ? av : "",
                                slash ? (size_t)(slash - av) : (size_t)0, "version",
                                slash ? slash + 1 : (av ? av : "v1"), "kind", kind ? kind : "");
    const char *op = json_string_value(json_object_get(c, "operation"));
    const char *ns = json_string_value(json_object_get(c, "namespace"));
    if (!ns)
        ns = json_string_value(json_object_get(json_object_get(obj, "metadata"), "namespace"));
    json_t *req = json_pack("{s:s, s:o, s:s, s:s, s:{s:s}, s:b, s:O}", "uid", "case-uid", "kind", k,
                            "operation", op ? op : "CREATE", "namespace", ns ? ns : "default",
                            "userInfo", "username", "tester", "dryRun", 0, "object", obj);
    ck_assert_ptr_nonnull(req);
    if (old)
        json_object_set(req, "oldObject", old);
    json_t *root = json_pack("{s:s, s:s, s:o}", "apiVersion", "admission.k8s.io/v1", "kind",
                             "AdmissionReview", "request", req);
    ck_assert_ptr_nonnull(root);
    /* Through the bytes and the request reader, exactly as the server decodes a review. */
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    ck_assert_ptr_nonnull(text);
    int rc = tg_review_parse(text, strlen(text), rv, err, sizeof(err));
    free(text);
    ck_assert_msg(rc == 0, "review: %s", err);
}

static struct tg_policy *case_policy(json_t *c)
{
    char err[1024];
    const char *yaml = json_string_value(json_object_get(c, "policy"));
    struct tg_policy *p = yaml ? tg_policy_load_yaml(yaml, strlen(yaml), "case", err, sizeof(err))
                               : tg_policy_new_default();
    if (!p && yaml)
        ck_abort_msg("case policy: %s", err);
    const char *mode = json_string_value(json_object_get(c, "mode"));
    json_t *actions = json_object_get(c, "ruleActions");
    const char *id;
    json_t *a;
    ck_assert_ptr_nonnull(p);
    if (mode)
        ck_assert_int_eq(tg_mode_parse(mode, &p->mode), 0);
    json_object_foreach (actions, id, a) {
        int idx = tg_rule_index(id);
        ck_assert_msg(idx >= 0, "unknown rule %s in ruleActions", id);
        ck_assert_int_eq(tg_action_parse(json_string_value(a), &p->actions[idx]), 0);
    }
    return p;
}

/* ---- env expectations (after /mutate) ------------------------------------------------------- */

/* The value at a JSON pointer (RFC 6901, "~1" and "~0" unescaped), or NULL. Borrowed. */
static json_t *at_pointer(json_t *doc, const char *ptr)
{
    char tok[256];
    json_t *v = doc;
    while (v && *ptr == '/') {
        size_t n = 0;
        ptr++;
        while (*ptr && *ptr != '/' && n + 1 < sizeof(tok)) {
            if (ptr[0] == '~' && (ptr[1] == '0' || ptr[1] == '1')) {
                tok[n++] = ptr[1] == '0' ? '~' : '/';
                ptr += 2;
            } else {
                tok[n++] = *ptr++;
            }
        }
        tok[n] = '\0';
        if (json_is_array(v)) {
            char *end;
            long i = strtol(tok, &end, 10);
            v = *end || i < 0 ? NULL : json_array_get(v, (size_t)i);
        } else {
            v = json_object_get(v, tok);
        }
    }
    return *ptr ? NULL : v;
}

/* name -> value of a container's env as the kubelet builds it (the last entry of a name wins;
 * valueFrom gives "<valueFrom>"). New object. */
static json_t *env_map(json_t *container)
{
    json_t *m = json_object();
    size_t i;
    json_t *e;
    json_array_foreach (json_object_get(container, "env"), i, e) {
        const char *n = json_string_value(json_object_get(e, "name"));
        const char *v = json_string_value(json_object_get(e, "value"));
        if (!n)
            continue;
        json_object_set_new(m, n,
                            json_string(v                                 ? v
                                        : json_object_get(e, "valueFrom") ? "<valueFrom>"
                                                                          : ""));
    }
    return m;
}

static void check_env_set(const char *name, const char *what, json_t *env, json_t *want)
{
    const char *k;
    json_t *v;
    size_t i;
    json_object_foreach (json_object_get(want, "has"), k, v) {
        json_t *got = json_object_get(env, k);
        ck_assert_msg(got != NULL, "%s: %s lacks %s (want %s)", name, what, k,
                      json_string_value(v));
        ck_assert_msg(json_equal(got, v), "%s: %s has %s=%s, want %s", name, what, k,
                      json_string_value(got), json_string_value(v));
    }
    json_array_foreach (json_object_get(want, "lacks"), i, v) {
        json_t *got = json_object_get(env, json_string_value(v));
        ck_assert_msg(got == NULL, "%s: %s has %s=%s, want it absent", name, what,
                      json_string_value(v), json_string_value(got));
    }
}

/* The first container of the template at tpl (a PodTemplateSpec), or NULL. */
static json_t *first_container(json_t *tpl)
{
    return json_array_get(json_object_get(json_object_get(tpl, "spec"), "containers"), 0);
}

/* The launcher container of an MPI workload and how its ranks get their env: MPIJob (Launcher
 * containers[0]), the launcher replicated job of a Trainer MPI runtime or JobSet, or the Volcano
 * Job task whose first container runs mpirun. */
static json_t *mpi_launcher(json_t *obj, json_t **worker, enum tg_mpi_impl *impl, bool *exec)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    json_t *spec = json_object_get(obj, "spec");
    *impl = TG_MPI_OPENMPI;
    *exec = false;
    *worker = NULL;
    if (kind && !strcmp(kind, "MPIJob")) {
        json_t *rs = json_object_get(spec, "mpiReplicaSpecs");
        if (tg_mpi_impl_parse(json_string_value(json_object_get(spec, "mpiImplementation")), impl) <
            0)
            *impl = TG_MPI_OPENMPI;
        /* training-operator (kubeflow.org/v1) starts ranks with kubectl exec (kubexec.sh) */
        *exec = av && !strcmp(av, "kubeflow.org/v1");
        *worker = first_container(json_object_get(json_object_get(rs, "Worker"), "template"));
        return first_container(json_object_get(json_object_get(rs, "Launcher"), "template"));
    }
    size_t i;
    json_t *task, *launcher = NULL;
    /* Kubeflow Trainer's MPI runtime (and the JobSet built from it): the launcher replicated job
     * runs mpirun over ssh into the node job's sshd pods */
    json_t *tspec = json_object_get(json_object_get(spec, "template"), "spec");
    json_t *rjobs = json_object_get(json_object_get(spec, "mlPolicy"), "mpi")
                        ? json_object_get(tspec, "replicatedJobs")
                        : json_object_get(spec, "replicatedJobs");
    json_array_foreach (rjobs, i, task) {
        const char *rn = json_string_value(json_object_get(task, "name"));
        json_t *c = first_container(json_object_get(
            json_object_get(json_object_get(task, "template"), "spec"), "template"));
        if (rn && !strcmp(rn, "launcher"))
            launcher = c;
        else if (rn && !strcmp(rn, "node"))
            *worker = c;
    }
    if (launcher)
        return launcher;
    json_array_foreach (json_object_get(spec, "tasks"), i, task) {
        json_t *c = first_container(json_object_get(task, "template"));
        struct tg_launch l;
        tg_launch_init(&l);
        if (c && tg_launch_parse_container(c, TG_MPI_OPENMPI, &l) == 0 && l.nruns && !launcher)
            launcher = c;
        else if (c && !*worker)
            *worker = c;
        tg_launch_release(&l);
    }
    return launcher;
}

/* The env an MPI rank sees (docs/mutation.md): over ssh only what the launcher forwards; through
 * kubectl exec the worker container's env plus what is forwarded; hydra the launcher's whole env.
 * New object, or NULL when obj runs no readable launcher. */
static json_t *rank_env(json_t *obj)
{
    json_t *worker, *out;
    enum tg_mpi_impl impl;
    bool exec;
    struct tg_launch l;
    json_t *launcher = mpi_launcher(obj, &worker, &impl, &exec);
    if (!launcher)
        return NULL;
    json_t *lenv = env_map(launcher);
    out = exec && worker ? env_map(worker) : json_object();
    tg_launch_init(&l);
    ck_assert_int_eq(tg_launch_parse_container(launcher, impl, &l), 0);
    if (l.nruns > 0) {
        const struct tg_mpirun *r = &l.runs[l.nruns - 1];
        if (tg_mpirun_forwards_all(r))
            json_object_update(out, lenv);
        for (size_t i = 0; i < r->nfwd; i++) {
            const char *v = r->fwd[i].value;
            json_t *own = json_object_get(lenv, r->fwd[i].name);
            if (v)
                json_object_set_new(out, r->fwd[i].name, json_string(v));
            else if (own)
                json_object_set(out, r->fwd[i].name, own);
        }
    }
    tg_launch_release(&l);
    json_decref(lenv);
    return out;
}

static void check_env(const char *name, json_t *expect, json_t *doc)
{
    size_t i;
    json_t *e;
    json_array_foreach (json_object_get(expect, "env"), i, e) {
        const char *at = json_string_value(json_object_get(e, "at"));
        json_t *c = at ? at_pointer(doc, at) : NULL;
        ck_assert_msg(json_is_object(c), "%s: no container at %s", name, at ? at : "(no at)");
        json_t *env = env_map(c);
        check_env_set(name, at, env, e);
        json_decref(env);
    }
    json_t *want = json_object_get(expect, "rankEnv");
    if (want) {
        json_t *env = rank_env(doc);
        ck_assert_msg(env != NULL, "%s: rankEnv expected but no MPI launcher was read", name);
        check_env_set(name, "the ranks' env", env, want);
        json_decref(env);
    }
}

/* Runs the case's object through /mutate once more after applying the patch: must not patch. */
static void check_patch(const char *name, json_t *c, json_t *expect, struct tg_policy *pol,
                        const struct tg_pipeline_opts *opts, json_t *obj, struct tg_result *res)
{
    char err[256], where[512] = "";
    json_t *doc = json_deep_copy(obj);
    json_t *want = json_object_get(expect, "patched");
    if (json_is_true(json_object_get(expect, "noPatch")))
        ck_assert_msg(tg_patch_count(&res->patch) == 0, "%s: expected no patch, got %zu ops", name,
                      tg_patch_count(&res->patch));
    int rc = tg_patch_apply(&doc, res->patch.ops, err, sizeof(err));
    ck_assert_msg(rc == 0, "%s: patch does not apply: %s", name, err);
    if (want)
        ck_assert_msg(!tg_json_subset(want, doc, where, sizeof(where)),
                      "%s: patched object differs at %s", name, where);
    check_env(name, expect, doc);
    if (tg_patch_count(&res->patch) > 0) {
        struct tg_review rv2;
        struct tg_result res2;
        make_review(c, doc, NULL, &rv2);
        ck_assert_int_eq(tg_pipeline_run(pol, &rv2, opts, &res2), 0);
        ck_assert_msg(tg_patch_count(&res2.patch) == 0,
                      "%s: second /mutate patches again (%zu ops)", name,
                      tg_patch_count(&res2.patch));
        tg_result_release(&res2);
        tg_review_release(&rv2);
    }
    json_decref(doc);
}

/* ---- the parallel plan (--explain and unresolved) ------------------------------------------ */

/* expect.explain: {role: {world, tp, pp, cp, ep, dp, micro, accumulation, globalBatch}} (a
 * subset per role): each value must be what the report says for that role; `world` is the
 * report's worldSize. */
static void check_explain(const char *name, json_t *want, const struct tg_result *res)
{
    const char *role, *key;
    json_t *plan, *v;
    json_object_foreach (want, role, plan) {
        json_t *got = json_object_get(res->explain, role);
        char *dump = res->explain ? json_dumps(res->explain, JSON_COMPACT) : NULL;
        ck_assert_msg(got != NULL, "%s: no plan for role %s in %s", name, role,
                      dump ? dump : "(no explain)");
        json_object_foreach (plan, key, v) {
            json_t *g = json_object_get(got, strcmp(key, "world") ? key : "worldSize");
            ck_assert_msg(g && json_equal(g, v), "%s: %s.%s is %s, expected %lld (plan %s)", name,
                          role, key, g && json_is_integer(g) ? "another number" : "not a number",
                          (long long)json_integer_value(v), dump ? dump : "");
        }
        free(dump);
    }
}

/* expect.unresolved: names that must be listed as `what` in the report's unresolved. */
static void check_unresolved(const char *name, json_t *want, const struct tg_result *res)
{
    size_t i, k;
    json_t *w, *u;
    json_array_foreach (want, i, w) {
        bool found = false;
        json_array_foreach (res->unresolved, k, u) {
            found |= json_equal(json_object_get(u, "what"), w);
        }
        char *dump = res->unresolved ? json_dumps(res->unresolved, JSON_COMPACT) : NULL;
        ck_assert_msg(found, "%s: %s is not listed as unresolved: %s", name, json_string_value(w),
                      dump ? dump : "(none)");
        free(dump);
    }
}

static void run_one(json_t *root, json_t *c)
{
    struct tg_review rv;
    struct tg_result res;
    struct tg_pipeline_opts opts = {0};
    const char *name = json_string_value(json_object_get(c, "name"));
    json_t *expect = json_object_get(c, "expect");
    json_t *obj = json_object_get(c, "object");
    const char *file = json_string_value(json_object_get(c, "objectFile"));
    if (!name)
        name = "(unnamed case)";
    if (file) {
        json_int_t doc = json_integer_value(json_object_get(c, "objectDoc"));
        obj = load_doc(name, file, (size_t)doc);
    } else {
        ck_assert_msg(json_is_object(obj), "%s: no object", name);
        obj = json_incref(obj);
    }
    json_t *old = json_object_get(c, "oldObject");
    opts.mutate = json_is_true(json_object_get(c, "mutate"));
    opts.offline = json_is_true(json_object_get(c, "offline"));
    struct tg_policy *pol = case_policy(c);
    make_review(c, obj, old, &rv);
    int rc = tg_pipeline_run(pol, &rv, &opts, &res);
    ck_assert_msg(rc == 0, "%s: pipeline failed: %d", name, rc);
    json_t *allowed = json_object_get(expect, "allowed");
    if (allowed)
        ck_assert_msg(res.allowed == json_is_true(allowed), "%s: allowed is %d, message: %s", name,
                      res.allowed, res.message ? res.message : "");
    json_t *findings = json_object_get(expect, "findings");
    if (findings)
        check_findings(name, json_object_get(root, "rules"), findings, &res);
    if (json_object_get(expect, "explain"))
        check_explain(name, json_object_get(expect, "explain"), &res);
    if (json_object_get(expect, "unresolved"))
        check_unresolved(name, json_object_get(expect, "unresolved"), &res);
    json_t *audit = json_object_get(expect, "audit");
    if (audit) {
        char where[256] = "";
        ck_assert_msg(!tg_json_subset(audit, res.audit, where, sizeof(where)),
                      "%s: auditAnnotations differ at %s", name, where);
    }
    size_t ai;
    json_t *absent;
    json_array_foreach (json_object_get(expect, "noAudit"), ai, absent)
        ck_assert_msg(!json_object_get(res.audit, json_string_value(absent)),
                      "%s: unexpected auditAnnotation %s", name, json_string_value(absent));
    json_t *warnings = json_object_get(expect, "warnings");
    if (warnings)
        ck_assert_msg(json_array_size(res.warnings) == (size_t)json_integer_value(warnings),
                      "%s: %zu warnings, expected %lld", name, json_array_size(res.warnings),
                      (long long)json_integer_value(warnings));
    size_t wi;
    json_t *part;
    json_array_foreach (json_object_get(expect, "warningHas"), wi, part) {
        /* a part of some warning line (a mutator note is "[mutate.efa-env] field: message") */
        bool seen = false;
        size_t k;
        json_t *w;
        json_array_foreach (res.warnings, k, w) {
            seen |= strstr(json_string_value(w), json_string_value(part)) != NULL;
        }
        char *dump = json_dumps(res.warnings, JSON_COMPACT);
        ck_assert_msg(seen, "%s: no warning has \"%s\": %s", name, json_string_value(part),
                      dump ? dump : "");
        free(dump);
    }
    if (opts.mutate)
        check_patch(name, c, expect, pol, &opts, obj, &res);
    else
        check_env(name, expect, obj);
    tg_result_release(&res);
    tg_review_release(&rv);
    tg_policy_unref(pol);
    json_decref(obj);
}

START_TEST(run_case)
{
    json_t *root = tg_test_load(refs[_i].file);
    json_t *c = json_array_get(json_object_get(root, "cases"), refs[_i].index);
    ck_assert_ptr_nonnull(c);
    const char *bug = json_string_value(json_object_get(c, "knownBug"));
    if (bug) {
        /* Visible in every run until it is fixed; the case itself stays in the file. */
        fprintf(stderr, "KNOWN BUG (not run): %s: %s\n",
                json_string_value(json_object_get(c, "name")), bug);
        json_decref(root);
        return;
    }
    run_one(root, c);
    json_decref(root);
}
END_TEST

/* A case file that does not load is one failing test (suite construction runs outside any test,
 * where Check cannot report a failure). */
START_TEST(case_file_loads)
{
    tg_json_decref_quiet(tg_test_load(bad_files[_i]));
}
END_TEST

void tg_cases_add(TCase *tc, const char *file)
{
    char err[256];
    json_t *root = load_quiet(file, err, sizeof(err));
    size_t n = json_array_size(json_object_get(root, "cases"));
    size_t start = nrefs;
    json_decref(root);
    if (!root || n == 0 || nrefs + n > MAX_CASES) {
        if (nbad < MAX_BAD) {
            bad_files[nbad] = file;
            tcase_add_loop_test(tc, case_file_loads, (int)nbad, (int)nbad + 1);
            nbad++;
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        refs[nrefs].file = file;
        refs[nrefs].index = i;
        nrefs++;
    }
    tcase_add_loop_test(tc, run_case, (int)start, (int)nrefs);
}

void tg_run_policy_case(const struct tg_policy_case *pc, const char *prefix)
{
    char err[256];
    struct tg_review rv;
    struct tg_result res;
    struct tg_policy *pol =
        tg_policy_load_yaml(pc->policy, strlen(pc->policy), "test", err, sizeof(err));
    ck_assert_msg(pol != NULL, "%s: policy: %s", pc->name, err);
    json_t *obj = tg_yaml_parse_one(pc->object, strlen(pc->object), err, sizeof(err));
    ck_assert_msg(obj != NULL, "%s: object: %s", pc->name, err);
    ck_assert_int_eq(tg_review_from_object(obj, &rv, err, sizeof(err)), 0);
    ck_assert_int_eq(tg_pipeline_run(pol, &rv, NULL, &res), 0);
    size_t seen = 0;
    for (size_t i = 0; i < res.findings.n; i++) {
        const struct tg_finding *f = &res.findings.v[i];
        if (strncmp(f->rule, prefix, strlen(prefix)))
            continue;
        seen++;
        ck_assert_msg(pc->rule && !strcmp(f->rule, pc->rule) && !strcmp(f->field, pc->field),
                      "%s: unexpected [%s] %s: %s", pc->name, f->rule, f->field, f->message);
    }
    ck_assert_msg(seen == (pc->rule ? 1u : 0u), "%s: %zu %s findings", pc->name, seen, prefix);
    tg_result_release(&res);
    tg_review_release(&rv);
    json_decref(obj);
    tg_policy_unref(pol);
}

int tg_each_golden_request(void (*fn)(const char *body, size_t len, void *arg), void *arg)
{
    DIR *d = opendir("fixtures/reviews");
    struct dirent *e;
    int n = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d))) {
        char path[512], err[256];
        size_t len;
        if (!strstr(e->d_name, ".request.json"))
            continue;
        snprintf(path, sizeof(path), "fixtures/reviews/%s", e->d_name);
        char *body = tg_read_file(path, 8u << 20, &len, err, sizeof(err));
        ck_assert_msg(body != NULL, "%s", err);
        fn(body, len, arg);
        free(body);
        n++;
    }
    closedir(d);
    return n;
}
