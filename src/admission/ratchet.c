/* ratchet.c -- the UPDATE ratchet: deny findings the old object already had become warnings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/ratchet.h"

/* The key of a finding: "<rule> <field identity>". */
#define KEY_MAX (TG_FIELD_MAX * 2 + 64)
#define RATCHET_NOTE "already in the object before this update, so a warning, not a deny: "

/* The name that identifies a list element: its `name`, else Ray's `groupName`; NULL when none. */
static const char *element_name(json_t *elem)
{
    const char *n = json_string_value(json_object_get(elem, "name"));
    return n ? n : json_string_value(json_object_get(elem, "groupName"));
}

static void append(char *out, size_t len, size_t *at, const char *s, size_t n)
{
    if (*at + n + 1 > len)
        n = *at + 1 < len ? len - *at - 1 : 0;
    memcpy(out + *at, s, n);
    *at += n;
    out[*at] = '\0';
}

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
    }
    return n > 0;
}

/* One bracketed part [tok] of the path at cur: an index into a list (written by name when the
 * element has one) or a map key. Returns the value it leads to (NULL when it does not resolve). */
static json_t *bracket(json_t *cur, const char *tok, size_t n, char *out, size_t len, size_t *at)
{
    char key[TG_FIELD_MAX];
    snprintf(key, sizeof(key), "%.*s", (int)n, tok);
    if (json_is_array(cur) && all_digits(tok, n)) {
        json_t *elem = json_array_get(cur, strtoul(key, NULL, 10));
        const char *name = element_name(elem);
        append(out, len, at, "[", 1);
        if (name) {
            append(out, len, at, "name=", 5);
            append(out, len, at, name, strlen(name));
        } else {
            append(out, len, at, tok, n);
        }
        append(out, len, at, "]", 1);
        return elem;
    }
    append(out, len, at, "[", 1);
    append(out, len, at, tok, n);
    append(out, len, at, "]", 1);
    return json_object_get(cur, key);
}

void tg_ratchet_key(json_t *obj, const char *field, char *out, size_t len)
{
    json_t *cur = obj;
    size_t at = 0;
    const char *p = field;
    out[0] = '\0';
    while (*p) {
        if (*p == '[') {
            const char *end = strchr(p, ']');
            size_t n = end ? (size_t)(end - p - 1) : strlen(p + 1);
            cur = bracket(cur, p + 1, n, out, len, &at);
            p += n + 1 + (end ? 1 : 0);
            continue;
        }
        if (*p == '.') {
            append(out, len, &at, ".", 1);
            p++;
        }
        size_t n = strcspn(p, ".[");
        char key[TG_FIELD_MAX];
        snprintf(key, sizeof(key), "%.*s", (int)n, p);
        append(out, len, &at, p, n);
        cur = json_object_get(cur, key);
        p += n;
    }
}

static void finding_key(const struct tg_finding *f, json_t *obj, char *out, size_t len)
{
    size_t n = (size_t)snprintf(out, len, "%s ", f->rule);
    if (n < len)
        tg_ratchet_key(obj, f->field, out + n, len - n);
}

/* Puts the ratchet note before a finding's message (warnings are cut at 256 characters: the note
 * must survive), cutting the message's tail when both do not fit. */
static void note(struct tg_finding *f)
{
    char msg[sizeof(f->message)];
    size_t add = strlen(RATCHET_NOTE), n = strlen(f->message);
    if (add + n >= sizeof(f->message)) {
        n = sizeof(f->message) - add - 1;
        while (n > 0 && ((unsigned char)f->message[n] & 0xC0) == 0x80)
            n--; /* never cut a UTF-8 sequence */
    }
    memcpy(msg, RATCHET_NOTE, add);
    memcpy(msg + add, f->message, n);
    msg[add + n] = '\0';
    memcpy(f->message, msg, add + n + 1);
}

size_t tg_ratchet_apply(struct tg_findings *now, json_t *obj, const struct tg_findings *before,
                        json_t *old_obj)
{
    char a[KEY_MAX], b[KEY_MAX];
    size_t downgraded = 0;
    for (size_t i = 0; i < now->n; i++) {
        struct tg_finding *f = &now->v[i];
        if (f->action != TG_ACTION_DENY)
            continue;
        finding_key(f, obj, a, sizeof(a));
        for (size_t k = 0; k < before->n; k++) {
            if (before->v[k].rule_index != f->rule_index)
                continue;
            finding_key(&before->v[k], old_obj, b, sizeof(b));
            if (!strcmp(a, b)) {
                f->action = TG_ACTION_WARN;
                note(f);
                downgraded++;
                break;
            }
        }
    }
    return downgraded;
}
