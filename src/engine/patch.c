/* patch.c -- RFC 6902 JSON Patch: build ops, encode them, and apply them as kube-apiserver does
 * (gopkg.in/evanphx/json-patch.v4, add needs an existing parent:
 * docs/references.md#ref-jsonpatch-add-parent). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/base64.h"
#include "tg/jsonw.h"
#include "tg/patch.h"
#include "tg/path.h"

int tg_patch_init(struct tg_patch *p)
{
    p->ops = json_array();
    return p->ops ? 0 : -ENOMEM;
}

void tg_patch_release(struct tg_patch *p)
{
    json_decref(p->ops);
    p->ops = NULL;
}

size_t tg_patch_count(const struct tg_patch *p)
{
    return p->ops ? json_array_size(p->ops) : 0;
}

/* Appends {"op": "add", "path": path, "value": value}, members in that order (what json_pack
 * built, without parsing its format on every op). path and value are stolen, also on failure:
 * ops of one append share their path string. The constant keys and "add" are ASCII: no UTF-8
 * check for them. */
static int add_op(struct tg_patch *p, json_t *path, json_t *value)
{
    json_t *op = path && value ? json_object() : NULL;
    if (!op || json_object_set_new_nocheck(op, "op", json_stringn_nocheck("add", 3))) {
        json_decref(op);
        json_decref(path);
        json_decref(value);
        return -ENOMEM;
    }
    if (json_object_set_new_nocheck(op, "path", path)) {
        json_decref(op);
        json_decref(value);
        return -ENOMEM;
    }
    if (json_object_set_new_nocheck(op, "value", value)) {
        json_decref(op);
        return -ENOMEM;
    }
    return json_array_append_new(p->ops, op) ? -ENOMEM : 0;
}

int tg_patch_add_new(struct tg_patch *p, const char *ptr, json_t *value)
{
    if (!value)
        return -ENOMEM;
    return add_op(p, json_string(ptr), value);
}

int tg_patch_append_items(struct tg_patch *p, json_t *parent, const char *parent_ptr,
                          const char *key, json_t *items)
{
    char ptr[TG_PATH_MAX];
    int rc = 0;
    if (!items)
        return -ENOMEM;
    if (json_array_size(items) == 0)
        goto out;
    if (!json_is_object(parent)) {
        rc = -EINVAL;
        goto out;
    }
    size_t plen = strlen(parent_ptr);
    if (plen >= sizeof(ptr)) { /* cut as snprintf did; the append below then fails */
        memcpy(ptr, parent_ptr, sizeof(ptr) - 1);
        ptr[sizeof(ptr) - 1] = '\0';
    } else {
        memcpy(ptr, parent_ptr, plen + 1);
    }
    if ((rc = tg_ptr_append(ptr, sizeof(ptr), key)) < 0)
        goto out;
    json_t *cur = json_object_get(parent, key);
    if (!cur || json_is_null(cur)) {
        rc = tg_patch_add_new(p, ptr, json_incref(items));
        goto out;
    }
    if (!json_is_array(cur)) {
        rc = -EINVAL;
        goto out;
    }
    if ((rc = tg_ptr_append(ptr, sizeof(ptr), "-")) < 0)
        goto out;
    size_t i;
    json_t *item;
    json_t *path = json_string(ptr);
    if (!path) {
        rc = -ENOMEM;
        goto out;
    }
    json_array_foreach (items, i, item) {
        if ((rc = add_op(p, json_incref(path), json_incref(item))) < 0)
            break;
    }
    json_decref(path);
out:
    json_decref(items);
    return rc;
}

char *tg_patch_base64(const struct tg_patch *p)
{
    struct tg_buf b;
    tg_buf_init(&b);
    if (tg_patch_base64_to(p, &b) < 0) {
        tg_buf_release(&b);
        return NULL;
    }
    return tg_buf_steal(&b, NULL);
}

int tg_patch_base64_to(const struct tg_patch *p, struct tg_buf *out)
{
    struct tg_buf b;
    size_t len;
    tg_buf_init(&b);
    tg_buf_json(&b, p->ops);
    char *text = tg_buf_steal(&b, &len);
    char *at = text ? tg_buf_tail(out, 4 * ((len + 2) / 3)) : NULL;
    if (at)
        tg_buf_commit(out, tg_base64_encode_to(at, (const unsigned char *)text, len));
    free(text);
    return at ? 0 : -ENOMEM;
}

/* ---- apply ------------------------------------------------------------------------------- */

/* Decodes the next reference token of ptr (after a '/') into tok; returns the rest, or NULL. */
static const char *ptr_next(const char *ptr, char *tok, size_t toklen, bool *bad)
{
    size_t n = 0;
    *bad = false;
    if (*ptr != '/')
        return NULL;
    ptr++;
    while (*ptr && *ptr != '/') {
        char c = *ptr++;
        if (c == '~') {
            if (*ptr == '0')
                c = '~';
            else if (*ptr == '1')
                c = '/';
            else {
                *bad = true;
                return NULL;
            }
            ptr++;
        }
        if (n + 1 >= toklen) {
            *bad = true;
            return NULL;
        }
        tok[n++] = c;
    }
    tok[n] = '\0';
    return ptr;
}

static bool parse_index(const char *tok, size_t *out)
{
    if (!*tok)
        return false;
    size_t v = 0;
    for (const char *c = tok; *c; c++) {
        if (*c < '0' || *c > '9' || v > (SIZE_MAX - 9) / 10)
            return false;
        v = v * 10 + (size_t)(*c - '0');
    }
    *out = v;
    return true;
}

/* Finds the container of the last token of ptr. Returns the parent or NULL, and the last token. */
static json_t *find_parent(json_t *doc, const char *ptr, char *last, size_t lastlen)
{
    char tok[TG_PATH_MAX];
    json_t *cur = doc;
    bool bad;
    const char *rest = ptr_next(ptr, tok, sizeof(tok), &bad);
    if (!rest)
        return NULL;
    while (*rest) {
        json_t *next = NULL;
        size_t idx;
        if (json_is_object(cur))
            next = json_object_get(cur, tok);
        else if (json_is_array(cur) && parse_index(tok, &idx))
            next = json_array_get(cur, idx);
        if (!next)
            return NULL;
        cur = next;
        rest = ptr_next(rest, tok, sizeof(tok), &bad);
        if (!rest)
            return NULL;
    }
    snprintf(last, lastlen, "%s", tok);
    return cur;
}

static json_t *get_at(json_t *doc, const char *ptr)
{
    char last[TG_PATH_MAX];
    size_t idx;
    if (!*ptr)
        return doc;
    json_t *parent = find_parent(doc, ptr, last, sizeof(last));
    if (json_is_object(parent))
        return json_object_get(parent, last);
    if (json_is_array(parent) && parse_index(last, &idx))
        return json_array_get(parent, idx);
    return NULL;
}

static int op_add(json_t **doc, const char *ptr, json_t *value, char *err, size_t errlen)
{
    char last[TG_PATH_MAX];
    size_t idx;
    if (!*ptr) {
        json_decref(*doc);
        *doc = json_deep_copy(value);
        return *doc ? 0 : -ENOMEM;
    }
    json_t *parent = find_parent(*doc, ptr, last, sizeof(last));
    if (!parent) {
        snprintf(err, errlen, "add operation does not apply: doc is missing path: \"%s\"", ptr);
        return -EINVAL;
    }
    json_t *copy = json_deep_copy(value);
    if (!copy)
        return -ENOMEM;
    if (json_is_object(parent))
        return json_object_set_new(parent, last, copy) ? -ENOMEM : 0;
    if (json_is_array(parent)) {
        if (!strcmp(last, "-"))
            return json_array_append_new(parent, copy) ? -ENOMEM : 0;
        if (parse_index(last, &idx) && idx <= json_array_size(parent))
            return json_array_insert_new(parent, idx, copy) ? -ENOMEM : 0;
    }
    json_decref(copy);
    snprintf(err, errlen, "Unable to access invalid index: %s (path \"%s\")", last, ptr);
    return -EINVAL;
}

static int op_remove(json_t *doc, const char *ptr, char *err, size_t errlen)
{
    char last[TG_PATH_MAX];
    size_t idx;
    json_t *parent = *ptr ? find_parent(doc, ptr, last, sizeof(last)) : NULL;
    if (json_is_object(parent) && !json_object_del(parent, last))
        return 0;
    if (json_is_array(parent) && parse_index(last, &idx) && !json_array_remove(parent, idx))
        return 0;
    snprintf(err, errlen, "remove operation does not apply: doc is missing path: \"%s\"", ptr);
    return -EINVAL;
}

int tg_patch_apply(json_t **doc, const json_t *ops, char *err, size_t errlen)
{
    size_t i;
    json_t *op;
    if (!json_is_array(ops)) {
        snprintf(err, errlen, "patch is not a JSON array");
        return -EINVAL;
    }
    json_array_foreach (ops, i, op) {
        const char *kind = json_string_value(json_object_get(op, "op"));
        const char *path = json_string_value(json_object_get(op, "path"));
        json_t *value = json_object_get(op, "value");
        int rc;
        if (!kind || !path || (*path && *path != '/')) {
            snprintf(err, errlen, "operation %zu: missing or invalid op/path", i);
            return -EINVAL;
        }
        if (!strcmp(kind, "add")) {
            if (!value) {
                snprintf(err, errlen, "operation %zu: add without value", i);
                return -EINVAL;
            }
            rc = op_add(doc, path, value, err, errlen);
        } else if (!strcmp(kind, "remove")) {
            rc = op_remove(*doc, path, err, errlen);
        } else if (!strcmp(kind, "replace")) {
            if (!value || !get_at(*doc, path)) {
                snprintf(err, errlen, "replace operation does not apply: doc is missing key: %s",
                         path);
                return -EINVAL;
            }
            rc = op_remove(*doc, path, err, errlen);
            if (!rc)
                rc = op_add(doc, path, value, err, errlen);
        } else if (!strcmp(kind, "test")) {
            json_t *cur = get_at(*doc, path);
            rc = (cur && value && json_equal(cur, value)) ? 0 : -EINVAL;
            if (rc)
                snprintf(err, errlen, "testing value %s failed", path);
        } else {
            snprintf(err, errlen, "operation %zu: unsupported op \"%s\"", i, kind);
            return -EINVAL;
        }
        if (rc)
            return rc;
    }
    return 0;
}
