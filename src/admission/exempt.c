/* exempt.c -- the trainguard.dev/exempt-rules annotation: which rules one object turns off. */
#include <stdio.h>
#include <string.h>

#include "tg/exempt.h"
#include "tg/obj.h"

#define ANNOTATION_FIELD "metadata.annotations[" TG_EXEMPT_ANNOTATION "]"
/* Rule ids are short ("efa.env-without-device"); a longer token is not one. */
#define ID_MAX 64

/* Edit distance of two ids of at most ID_MAX bytes. */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[ID_MAX + 1], prev, tmp;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            tmp = row[j];
            row[j] = prev + (a[i - 1] != b[j - 1]);
            if (row[j - 1] + 1 < row[j])
                row[j] = row[j - 1] + 1;
            if (tmp + 1 < row[j])
                row[j] = tmp + 1;
            prev = tmp;
        }
    }
    return row[lb];
}

/* The rule id within edit distance 2 of id, or NULL. */
static const char *closest_rule(const char *id)
{
    size_t best = 3;
    const char *hit = NULL;
    for (size_t i = 0; i < tg_rule_count; i++) {
        size_t d = distance(id, tg_rule_defs[i].id);
        if (d < best) {
            best = d;
            hit = tg_rule_defs[i].id;
        }
    }
    return hit;
}

static void add_unknown(struct tg_exemption *ex, const char *id, size_t *nunknown)
{
    size_t at = strlen(ex->unknown);
    const char *hint = strlen(id) <= ID_MAX ? closest_rule(id) : NULL;
    char shown[ID_MAX + 4];
    snprintf(shown, sizeof(shown), "%.*s%s", ID_MAX, id, strlen(id) > ID_MAX ? "..." : "");
    if (hint)
        snprintf(ex->unknown + at, sizeof(ex->unknown) - at, "%s\"%s\" (did you mean %s?)",
                 at ? ", " : "", shown, hint);
    else
        snprintf(ex->unknown + at, sizeof(ex->unknown) - at, "%s\"%s\"", at ? ", " : "", shown);
    (*nunknown)++;
}

static void add_rule(struct tg_exemption *ex, int idx)
{
    for (size_t i = 0; i < ex->n; i++) {
        if (ex->rules[i] == idx)
            return;
    }
    if (ex->n < TG_RULE_COUNT)
        ex->rules[ex->n++] = idx;
}

void tg_exemption_read(json_t *obj, bool allowed, struct tg_exemption *ex)
{
    static const char *const key[] = {TG_EXEMPT_ANNOTATION};
    json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations"), *v;
    /* nearly every annotation map is small (the reader keeps no last-applied-configuration):
     * walked for the key, not hashed */
    if (json_object_size(ann) <= 4)
        tg_members_named(ann, key, 1, &v);
    else
        v = json_object_get(ann, TG_EXEMPT_ANNOTATION);
    const char *s = json_string_value(v);
    size_t nunknown = 0;
    ex->n = 0;
    ex->unknown[0] = '\0';
    while (s && *s) {
        char id[256];
        size_t n = strcspn(s, ",");
        const char *start = s, *end = s + n;
        s = *end ? end + 1 : end;
        while (start < end && (*start == ' ' || *start == '\t'))
            start++;
        while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        if (start == end)
            continue;
        snprintf(id, sizeof(id), "%.*s", (int)(end - start), start);
        int idx = tg_rule_index(id);
        if (idx < 0)
            add_unknown(ex, id, &nunknown);
        else if (allowed)
            add_rule(ex, idx);
    }
    if (nunknown) {
        size_t at = strlen(ex->unknown);
        snprintf(ex->unknown + at, sizeof(ex->unknown) - at,
                 nunknown == 1 ? " is not a rule id, so it exempts nothing; write the id as the "
                                 "rule table spells it"
                               : " are not rule ids, so they exempt nothing; write the ids as the "
                                 "rule table spells them");
    }
}

void tg_exemption_apply(const struct tg_exemption *ex, enum tg_action *actions)
{
    for (size_t i = 0; i < ex->n; i++)
        actions[ex->rules[i]] = TG_ACTION_OFF;
}

void tg_exemption_report(const struct tg_exemption *ex, struct tg_eval *ev)
{
    if (ex->unknown[0])
        tg_report(ev, TG_RULE_EXEMPT_UNKNOWN_RULE, ANNOTATION_FIELD, "%s", ex->unknown);
}
