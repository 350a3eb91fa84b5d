/* pipeline.c -- review -> workload view -> validators and mutators -> verdict under the mode. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/exempt.h"
#include "tg/launch_memo.h"
#include "tg/pipeline.h"
#include "tg/ratchet.h"

/* Kubernetes warnings: 256 runes each before the apiserver truncates
 * (docs/references.md#ref-admission-warning-limits). */
#define TG_WARNING_RUNES 256

static int run_table(struct tg_eval *ev, const struct tg_validator *tab, size_t n)
{
    unsigned kind_bit = TG_KIND_BIT(ev->wl->kind);
    for (size_t i = 0; i < n; i++) {
        if (!(tab[i].kinds & kind_bit) || !(tab[i].ops & ev->wl->op))
            continue;
        int rc = tab[i].run(ev);
        if (rc < 0)
            return rc;
        if (ev->error)
            return ev->error;
    }
    return 0;
}

/* The API server keeps 4096 runes of warnings per response in total, and past that cuts every one
 * to 256 runes or drops the rest (docs/references.md#ref-admission-warning-limits): the warnings
 * are kept under the total, the last line saying how many more there are (all of them are in the
 * findings audit annotation and the deny message). */
#define TG_WARNINGS_TOTAL_RUNES 4096

static size_t runes(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static int cap_warnings(json_t *warnings)
{
    char text[200];
    size_t n = json_array_size(warnings), total = 0, keep = 0;
    for (size_t i = 0; i < n; i++)
        total += runes(json_string_value(json_array_get(warnings, i)));
    if (total <= TG_WARNINGS_TOTAL_RUNES)
        return 0;
    /* room for the last line: its text is at most ~140 runes */
    for (total = 0; keep < n; keep++) {
        size_t r = runes(json_string_value(json_array_get(warnings, keep)));
        if (total + r > TG_WARNINGS_TOTAL_RUNES - 160)
            break;
        total += r;
    }
    while (json_array_size(warnings) > keep)
        json_array_remove(warnings, json_array_size(warnings) - 1);
    snprintf(text, sizeof(text),
             "[trainguard] %zu more warnings not shown: the findings audit annotation lists every "
             "finding, and `trainguard check` prints them all",
             n - keep);
    return json_array_append_new(warnings, json_string(text)) ? -ENOMEM : 0;
}

/* Appends text as a warning unless an identical one is there (the apiserver dedups too). */
static int add_warning(json_t *warnings, const char *text)
{
    char clean[TG_WARNING_RUNES * 4 + 1];
    size_t i;
    json_t *w;
    tg_text_sanitize(text, clean, sizeof(clean), TG_WARNING_RUNES);
    if (!clean[0])
        return 0;
    json_array_foreach (warnings, i, w) {
        if (!strcmp(json_string_value(w), clean))
            return 0;
    }
    return json_array_append_new(warnings, json_string(clean)) ? -ENOMEM : 0;
}

/* Deny lines, warnings and audit annotations from the sorted findings. */
static int build_verdict(struct tg_result *res, bool mutating, bool judge)
{
    char line[TG_FIELD_MAX + TG_MSG_MAX + 96];
    size_t msglen = 0, cap = 0;
    char *msg = NULL;
    char *findings_ann = NULL;
    size_t annlen = 0;
    bool would_deny = false;
    int rc = 0;
    for (size_t i = 0; i < res->findings.n; i++) {
        const struct tg_finding *f = &res->findings.v[i];
        bool deny = f->action == TG_ACTION_DENY;
        would_deny |= deny;
        /* auditAnnotation "findings": "[rule] field" of each finding, "; "-separated. */
        int n = snprintf(line, sizeof(line), "%s[%s] %s", annlen ? "; " : "", f->rule, f->field);
        char *grown = realloc(findings_ann, annlen + (size_t)n + 1);
        if (!grown) {
            rc = -ENOMEM;
            goto out;
        }
        findings_ann = grown;
        memcpy(findings_ann + annlen, line, (size_t)n + 1);
        annlen += (size_t)n;
        /* /mutate (validators skipped) only mutates: a finding there (the decoder's
         * object.invalid-field) neither denies nor warns; /validate, called on the mutated
         * object, judges it (README). */
        if (res->mode == TG_MODE_AUDIT || !judge)
            continue;
        if (deny && res->mode == TG_MODE_ENFORCE) {
            size_t len = tg_finding_format(f, line, sizeof(line));
            len = len < sizeof(line) ? len : sizeof(line) - 1;
            if (msglen + len + 2 > cap) {
                cap = (msglen + len + 2) * 2;
                char *m = realloc(msg, cap);
                if (!m) {
                    rc = -ENOMEM;
                    goto out;
                }
                msg = m;
            }
            if (msglen)
                msg[msglen++] = '\n';
            memcpy(msg + msglen, line, len);
            msglen += len;
            msg[msglen] = '\0';
            continue;
        }
        if (deny) {
            /* warn mode: say that enforce would deny, keeping the [rule] field: prefix. */
            snprintf(line, sizeof(line), "[%s] %s%swould deny: %s", f->rule, f->field,
                     f->field[0] ? ": " : "", f->message);
        } else {
            tg_finding_format(f, line, sizeof(line));
        }
        if ((rc = add_warning(res->warnings, line)) < 0)
            goto out;
    }
    if (msg) {
        res->allowed = false;
        res->code = 403;
        res->message = msg;
        msg = NULL;
    }
    /* /mutate records only would-patch (SPEC 9); /validate records findings and would-deny. */
    if (findings_ann && judge) {
        if (json_object_set_new(res->audit, "findings", json_string(findings_ann)) ||
            json_object_set_new(res->audit, "would-deny",
                                json_string(would_deny ? "true" : "false"))) {
            rc = -ENOMEM;
            goto out;
        }
    } else if (res->mode == TG_MODE_AUDIT && !mutating) {
        if (json_object_set_new(res->audit, "would-deny", json_string("false")))
            rc = -ENOMEM;
    }
out:
    free(msg);
    free(findings_ann);
    return rc;
}

/* The pointers a patch changes, for the would-patch annotation: ".../env/-" counts as ".../env". */
static json_t *patch_pointers(const struct tg_patch *p)
{
    json_t *out = json_array();
    size_t i, j;
    json_t *op, *seen;
    if (!out)
        return NULL;
    json_array_foreach (p->ops, i, op) {
        char ptr[TG_PATH_MAX];
        snprintf(ptr, sizeof(ptr), "%s", json_string_value(json_object_get(op, "path")));
        size_t n = strlen(ptr);
        if (n >= 2 && !strcmp(ptr + n - 2, "/-"))
            ptr[n - 2] = '\0';
        bool dup = false;
        json_array_foreach (out, j, seen)
            dup |= !strcmp(json_string_value(seen), ptr);
        if (!dup && json_array_append_new(out, json_string(ptr))) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

static int finish_mutation(struct tg_result *res, json_t *notes)
{
    size_t i;
    json_t *note;
    if (res->mode != TG_MODE_AUDIT) {
        json_array_foreach (notes, i, note) {
            if (add_warning(res->warnings, json_string_value(note)) < 0)
                return -ENOMEM;
        }
        return 0;
    }
    if (tg_patch_count(&res->patch) == 0)
        return 0;
    /* audit: record the pointers, return no patch. */
    res->would_patch = patch_pointers(&res->patch);
    if (!res->would_patch)
        return -ENOMEM;
    size_t len = 0;
    json_t *ptr;
    json_array_foreach (res->would_patch, i, ptr)
        len += json_string_length(ptr) + 2;
    char *joined = calloc(1, len + 1);
    size_t at = 0;
    if (!joined)
        return -ENOMEM;
    json_array_foreach (res->would_patch, i, ptr) {
        if (i) {
            memcpy(joined + at, "; ", 2);
            at += 2;
        }
        memcpy(joined + at, json_string_value(ptr), json_string_length(ptr));
        at += json_string_length(ptr);
    }
    joined[at] = '\0';
    int rc = json_object_set_new(res->audit, "would-patch", json_string(joined)) ? -ENOMEM : 0;
    free(joined);
    json_array_clear(res->patch.ops);
    return rc;
}

static int result_init(struct tg_result *res)
{
    memset(res, 0, sizeof(*res));
    res->allowed = true;
    res->code = 200;
    tg_findings_init(&res->findings);
    res->warnings = json_array();
    res->audit = json_object();
    if (!res->warnings || !res->audit || tg_patch_init(&res->patch) < 0)
        return -ENOMEM;
    return 0;
}

static const char *review_namespace(const struct tg_review *rv)
{
    if (rv->namespace && *rv->namespace)
        return rv->namespace;
    const char *ns =
        json_string_value(json_object_get(json_object_get(rv->object, "metadata"), "namespace"));
    return ns ? ns : "";
}

/* The effective action of every rule for one object: the policy's actions after its caps
 * (rulesVersion), then the object's own exemptions (SPEC 13 "Effective action": every reader of a
 * finding's action, the response, the ratchet and `check --fail-on`, sees these). */
static void object_actions(const struct tg_policy *policy, const struct tg_review *rv, json_t *obj,
                           const char *ns, enum tg_action *actions, struct tg_exemption *ex)
{
    const struct tg_api_def *api = tg_api_lookup(rv->group, rv->version, rv->kind);
    bool namespaced = api && api->scope == TG_SCOPE_NAMESPACED;
    tg_policy_effective_actions(policy, actions);
    tg_exemption_read(obj, namespaced && tg_policy_allows_exceptions(policy, ns), ex);
    tg_exemption_apply(ex, actions);
}

/* Decodes obj and runs the validators (unless opts->skip_validation) and, when patch is set, the
 * mutators, filing findings into `findings` under `actions`. */
static int evaluate(const struct tg_policy *policy, const struct tg_review *rv,
                    const struct tg_pipeline_opts *opts, enum tg_kind kind, const char *ns,
                    json_t *obj, json_t *old, const enum tg_action *actions,
                    const struct tg_exemption *ex, struct tg_findings *findings,
                    struct tg_patch *patch, json_t *notes, struct tg_result *plan_out)
{
    struct tg_workload wl;
    struct tg_eval ev;
    memset(&ev, 0, sizeof(ev));
    ev.policy = policy;
    ev.actions = actions;
    ev.wl = &wl;
    ev.findings = findings;
    ev.notes = notes;
    ev.offline = opts->offline;
    ev.no_plan_view = opts->no_plan_view;
    int rc = tg_workload_decode(&wl, kind, rv->op, obj, old, &ev);
    wl.req_kind = rv->kind;
    wl.req_version = rv->version;
    wl.req_namespace = ns;
    if (rc == 0 && ev.error)
        rc = ev.error;
    if (rc == 0 && !opts->skip_validation) {
        tg_exemption_report(ex, &ev);
        rc = run_table(&ev, opts->validators ? opts->validators : tg_validators,
                       opts->validators ? opts->nvalidators : tg_validator_count);
    }
    if (rc == 0 && patch) {
        ev.patch = patch;
        rc = run_table(&ev, opts->mutators ? opts->mutators : tg_mutators,
                       opts->mutators ? opts->nmutators : tg_mutator_count);
    }
    tg_eval_launch_release(&ev);
    tg_workload_release(&wl);
    /* the plan read from the launch lines (check --explain, the report's unresolved) */
    if (plan_out) {
        plan_out->explain = ev.explain;
        plan_out->unresolved = ev.unresolved;
    } else {
        json_decref(ev.explain);
        json_decref(ev.unresolved);
    }
    return rc;
}

/* UPDATE: judges the old object exactly as the new one (its own exemptions included) and turns
 * the deny findings it already had into warnings (include/tg/ratchet.h). */
static int ratchet(const struct tg_policy *policy, const struct tg_review *rv,
                   const struct tg_pipeline_opts *opts, const char *ns, struct tg_result *res)
{
    struct tg_pipeline_opts vopts = *opts;
    struct tg_findings before;
    struct tg_exemption ex;
    enum tg_action actions[TG_RULE_COUNT];
    if (rv->op != TG_OP_UPDATE || !rv->old_object || opts->skip_validation)
        return 0;
    vopts.mutate = false;
    tg_findings_init(&before);
    object_actions(policy, rv, rv->old_object, ns, actions, &ex);
    int rc = evaluate(policy, rv, &vopts, res->kind, ns, rv->old_object, NULL, actions, &ex,
                      &before, NULL, NULL, NULL);
    if (rc == 0)
        res->nratcheted = tg_ratchet_apply(&res->findings, rv->object, &before, rv->old_object);
    tg_findings_release(&before);
    return rc;
}

/* The audit annotation `exempted`: the rule ids the object turned off, comma-separated. */
static int record_exemptions(struct tg_result *res, const struct tg_exemption *ex, bool judge)
{
    char ids[TG_RULE_COUNT * 48];
    size_t at = 0;
    if (!judge || !ex->n)
        return 0;  /* /mutate runs no rule: it neither uses nor counts exemptions */
    ids[0] = '\0'; /* not the whole buffer: most objects exempt nothing */
    for (size_t i = 0; i < ex->n; i++) {
        const char *id = tg_rule_defs[ex->rules[i]].id;
        res->exempted[res->nexempted++] = id;
        at += (size_t)snprintf(ids + at, sizeof(ids) - at, "%s%s", i ? "," : "", id);
        if (at >= sizeof(ids))
            at = sizeof(ids) - 1;
    }
    return json_object_set_new(res->audit, "exempted", json_string(ids)) ? -ENOMEM : 0;
}

int tg_pipeline_run(const struct tg_policy *policy, const struct tg_review *rv,
                    const struct tg_pipeline_opts *opts, struct tg_result *res)
{
    static const struct tg_pipeline_opts defaults;
    struct tg_exemption ex;
    enum tg_action actions[TG_RULE_COUNT];
    json_t *notes = NULL;
    int rc;
    if (!opts)
        opts = &defaults;
    if ((rc = result_init(res)) < 0)
        goto fail;
    /* Cluster-scoped kinds (NodePool, ClusterTrainingRuntime) have no namespace: exemptNamespaces
     * and namespaceModes do not apply to them, the global mode does (SPEC 11, 13). A NULL
     * namespace matches none. */
    const struct tg_api_def *api = tg_api_lookup(rv->group, rv->version, rv->kind);
    const char *ns = api && api->scope == TG_SCOPE_CLUSTER ? NULL : review_namespace(rv);
    res->mode = tg_policy_mode_for(policy, ns);
    if (opts->has_mode_override && !tg_policy_has_ns_mode(policy, ns))
        res->mode = opts->mode_override;
    res->kind = api ? api->kind : TG_KIND_UNKNOWN;
    if (rv->op != TG_OP_CREATE && rv->op != TG_OP_UPDATE) {
        res->skip_reason = "operation is not evaluated";
        return 0;
    }
    if (tg_policy_is_exempt(policy, ns)) {
        res->skip_reason = "namespace is exempt";
        return 0;
    }
    if (res->kind == TG_KIND_UNKNOWN || !rv->object) {
        res->skip_reason = "kind is not evaluated";
        return 0;
    }
    res->evaluated = true;
    if (!(notes = json_array())) {
        rc = -ENOMEM;
        goto fail;
    }
    object_actions(policy, rv, rv->object, ns, actions, &ex);
    rc = evaluate(policy, rv, opts, res->kind, ns, rv->object,
                  rv->op == TG_OP_UPDATE ? rv->old_object : NULL, actions, &ex, &res->findings,
                  opts->mutate ? &res->patch : NULL, notes, res);
    if (rc == 0)
        rc = ratchet(policy, rv, opts, ns, res);
    if (rc < 0)
        goto fail;
    tg_findings_sort(&res->findings);
    if ((rc = record_exemptions(res, &ex, !opts->skip_validation)) < 0)
        goto fail;
    if ((rc = build_verdict(res, opts->mutate, !opts->skip_validation)) < 0)
        goto fail;
    if (opts->mutate && (rc = finish_mutation(res, notes)) < 0)
        goto fail;
    if ((rc = cap_warnings(res->warnings)) < 0)
        goto fail;
    json_decref(notes);
    return 0;
fail:
    json_decref(notes);
    tg_result_release(res);
    return rc < 0 ? rc : -EINVAL;
}

void tg_result_release(struct tg_result *res)
{
    free(res->message);
    json_decref(res->warnings);
    json_decref(res->audit);
    json_decref(res->would_patch);
    json_decref(res->explain);
    json_decref(res->unresolved);
    tg_patch_release(&res->patch);
    tg_findings_release(&res->findings);
    memset(res, 0, sizeof(*res));
}
