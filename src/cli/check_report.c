/* check_report.c -- the trainguard.dev/v1 CheckReport: results, errors and counts of a check run.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tg/catalogue.h"
#include "tg/check_report.h"

int tg_check_report_init(struct tg_check_report *r)
{
    memset(r, 0, sizeof(*r));
    r->results = json_array();
    r->errors = json_array();
    r->ignored = json_array();
    if (!r->results || !r->errors || !r->ignored) {
        tg_check_report_release(r);
        return -ENOMEM;
    }
    return 0;
}

void tg_check_report_release(struct tg_check_report *r)
{
    json_decref(r->results);
    json_decref(r->errors);
    json_decref(r->ignored);
    r->results = r->errors = r->ignored = NULL;
}

const char *tg_check_shown_action(const struct tg_result *res, const struct tg_finding *f)
{
    if (res->mode == TG_MODE_AUDIT)
        return "audit";
    if (f->action == TG_ACTION_DENY && res->mode == TG_MODE_ENFORCE)
        return "deny";
    return "warn";
}

bool tg_check_fails(enum tg_action action, enum tg_action fail_on)
{
    return action != TG_ACTION_OFF && action >= fail_on;
}

enum tg_action tg_check_finding_rule_action(const json_t *finding)
{
    const char *a = json_string_value(json_object_get(finding, "ruleAction"));

    return a && strcmp(a, "warn") == 0 ? TG_ACTION_WARN : TG_ACTION_DENY;
}

bool tg_check_is_note(const char *warning)
{
    char id[128];
    const char *end;
    size_t n;

    if (!warning || warning[0] != '[' || !(end = strchr(warning, ']')))
        return false;
    n = (size_t)(end - warning - 1);
    if (n == 0 || n >= sizeof(id))
        return false;
    memcpy(id, warning + 1, n);
    id[n] = '\0';
    /* the mutator's notes carry its catalogue id (mutate.*); "[trainguard] N more warnings" and
     * "[internal]" are the engine's own */
    if (!strncmp(id, "mutate.", 7))
        return true;
    return tg_rule_index(id) < 0 && strcmp(id, "trainguard") != 0 && strcmp(id, "internal") != 0;
}

const char *tg_check_label(const json_t *entry, char *buf, size_t len)
{
    const char *file = json_string_value(json_object_get(entry, "file"));
    const char *path = json_string_value(json_object_get(entry, "itemPath"));
    json_t *doc = json_object_get(entry, "doc"), *item = json_object_get(entry, "item");

    if (!doc)
        snprintf(buf, len, "%s", file ? file : "?");
    else if (path)
        snprintf(buf, len, "%s:%" JSON_INTEGER_FORMAT ".%s", file, json_integer_value(doc), path);
    else if (item)
        snprintf(buf, len, "%s:%" JSON_INTEGER_FORMAT ".items[%" JSON_INTEGER_FORMAT "]", file,
                 json_integer_value(doc), json_integer_value(item));
    else
        snprintf(buf, len, "%s:%" JSON_INTEGER_FORMAT, file, json_integer_value(doc));
    return buf;
}

/* {file[, doc][, item][, itemPath]} of an entry; NULL on ENOMEM. */
static json_t *where_json(const struct tg_check_where *w)
{
    json_t *e = json_object();

    if (!e || json_object_set_new(e, "file", json_string(w->file)))
        goto fail;
    if (w->doc && json_object_set_new(e, "doc", json_integer((json_int_t)w->doc)))
        goto fail;
    if (w->doc && w->item >= 0 && json_object_set_new(e, "item", json_integer(w->item)))
        goto fail;
    if (w->doc && w->item_path[0] && json_object_set_new(e, "itemPath", json_string(w->item_path)))
        goto fail;
    return e;
fail:
    json_decref(e);
    return NULL;
}

/* A string member from the manifest, "" when absent or not a string. */
static const char *str_member(json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));

    return s ? s : "";
}

/* metadata.name, else metadata.generateName (SPEC 13), else "". */
static const char *object_name(json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *name = str_member(meta, "name");

    return *name ? name : str_member(meta, "generateName");
}

static json_t *finding_json(const struct tg_result *res, const struct tg_finding *f)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s}", "rule", f->rule, "action",
                     tg_check_shown_action(res, f), "ruleAction",
                     f->action == TG_ACTION_WARN ? "warn" : "deny", "field", f->field, "message",
                     f->message);
}

static int count_findings(struct tg_check_report *r, const struct tg_result *res, json_t *out)
{
    for (size_t k = 0; k < res->findings.n; k++) {
        const struct tg_finding *f = &res->findings.v[k];
        const char *shown = tg_check_shown_action(res, f);

        if (json_array_append_new(out, finding_json(res, f)))
            return -ENOMEM;
        r->shown_deny += shown[0] == 'd';
        r->shown_warn += shown[0] == 'w';
        r->shown_audit += shown[0] == 'a';
        r->rule_deny += f->action == TG_ACTION_DENY;
        r->rule_warn += f->action == TG_ACTION_WARN;
    }
    return 0;
}

/* Mutator notes among the warnings (findings are listed on their own). */
static int add_notes(json_t *e, const struct tg_result *res)
{
    json_t *notes = NULL, *w;
    size_t i;

    json_array_foreach (res->warnings, i, w) {
        if (!tg_check_is_note(json_string_value(w)))
            continue;
        if (!notes && (!(notes = json_array()) || json_object_set_new(e, "notes", notes)))
            return -ENOMEM;
        if (json_array_append(notes, w))
            return -ENOMEM;
    }
    return 0;
}

static int fill_result(json_t *e, const struct tg_check_where *w, json_t *obj,
                       const struct tg_result *res, json_t *findings)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *ns = str_member(meta, "namespace"), *uid = str_member(meta, "uid");

    if (w->line > 0 && json_object_set_new(e, "line", json_integer(w->line)))
        return -ENOMEM;
    if (json_object_set_new(e, "apiVersion", json_string(str_member(obj, "apiVersion"))) ||
        json_object_set_new(e, "kind", json_string(str_member(obj, "kind"))))
        return -ENOMEM;
    if (*ns && json_object_set_new(e, "namespace", json_string(ns)))
        return -ENOMEM;
    if (json_object_set_new(e, "name", json_string(object_name(obj))) ||
        (*uid && json_object_set_new(e, "uid", json_string(uid))) ||
        json_object_set_new(e, "allowed", json_boolean(res->allowed)) ||
        json_object_set_new(e, "evaluated", json_boolean(res->evaluated)))
        return -ENOMEM;
    if (!res->evaluated && res->skip_reason &&
        json_object_set_new(e, "skipReason", json_string(res->skip_reason)))
        return -ENOMEM;
    if (json_object_set(e, "findings", findings))
        return -ENOMEM;
    return add_notes(e, res);
}

json_t *tg_check_report_add_result(struct tg_check_report *r, const struct tg_check_where *w,
                                   json_t *obj, const struct tg_result *res)
{
    json_t *e = where_json(w), *findings = json_array();

    if (!e || !findings || count_findings(r, res, findings) < 0 ||
        fill_result(e, w, obj, res, findings) < 0 || json_array_append(r->results, e)) {
        json_decref(findings);
        json_decref(e);
        return NULL;
    }
    json_decref(findings);
    json_decref(e);
    r->evaluated += res->evaluated;
    r->skipped += !res->evaluated;
    r->denied += !res->allowed;
    return e;
}

int tg_check_report_add_error(struct tg_check_report *r, const struct tg_check_where *w,
                              const char *msg)
{
    char clean[512];
    int line = 0, column = 0, used = 0;
    json_t *e = where_json(w);

    if (!e)
        return -ENOMEM;
    if (sscanf(msg, "line %d, column %d: %n", &line, &column, &used) == 2 && used > 0) {
        msg += used;
    } else {
        line = w->line;
        column = 0;
    }
    tg_text_sanitize(msg, clean, sizeof(clean), 400);
    if ((line > 0 && json_object_set_new(e, "line", json_integer(line))) ||
        (column > 0 && json_object_set_new(e, "column", json_integer(column))) ||
        json_object_set_new(e, "message", json_string(clean)) ||
        json_array_append_new(r->errors, e))
        goto fail;
    return 0;
fail:
    json_decref(e);
    return -ENOMEM;
}

int tg_check_report_add_ignored(struct tg_check_report *r, const struct tg_check_where *w,
                                const char *why)
{
    char clean[400];
    json_t *e = where_json(w);

    if (!e)
        return -ENOMEM;
    tg_text_sanitize(why, clean, sizeof(clean), 300);
    if ((w->line > 0 && json_object_set_new(e, "line", json_integer(w->line))) ||
        json_object_set_new(e, "message", json_string(clean)) ||
        json_array_append_new(r->ignored, e)) {
        json_decref(e);
        return -ENOMEM;
    }
    return 0;
}

static json_t *summary_json(const struct tg_check_report *r)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:{s:I, s:I, s:I}, s:I, s:I, s:I}", "files",
                     (json_int_t)r->files, "documents", (json_int_t)r->documents, "objects",
                     (json_int_t)r->objects, "evaluated", (json_int_t)r->evaluated, "denied",
                     (json_int_t)r->denied, "findings", "deny", (json_int_t)r->shown_deny, "warn",
                     (json_int_t)r->shown_warn, "audit", (json_int_t)r->shown_audit, "errors",
                     (json_int_t)json_array_size(r->errors), "skipped", (json_int_t)r->skipped,
                     "ignored", (json_int_t)json_array_size(r->ignored));
}

json_t *tg_check_report_json(const struct tg_check_report *r)
{
    return json_pack("{s:s, s:s, s:o, s:O, s:O, s:O}", "apiVersion", TG_CHECK_API_VERSION, "kind",
                     TG_CHECK_KIND, "summary", summary_json(r), "results", r->results, "errors",
                     r->errors, "ignored", r->ignored);
}
