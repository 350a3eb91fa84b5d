/* obj.c -- typed getters over JSON objects that report wrong types as object.invalid-field. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tg/obj.h"

static const char *json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "a list";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "unknown";
}

static json_t *member(struct tg_eval *ev, json_t *parent, const struct tg_path *path,
                      const char *key, json_type want, const char *want_name)
{
    if (!json_is_object(parent))
        return NULL;
    json_t *v = json_object_get(parent, key);
    if (!v || json_is_null(v))
        return NULL;
    if (json_typeof(v) == want)
        return v;
    if (ev) {
        struct tg_path p;
        tg_path_key(&p, path, key);
        tg_report(ev, TG_RULE_OBJECT_INVALID_FIELD, p.field, "must be %s, got %s", want_name,
                  json_type_name(v));
    }
    return NULL;
}

bool tg_wrong_type(const json_t *v, json_type want)
{
    return v && !json_is_null(v) && json_typeof(v) != want;
}

json_t *tg_get_object(struct tg_eval *ev, json_t *parent, const struct tg_path *path,
                      const char *key)
{
    return member(ev, parent, path, key, JSON_OBJECT, "an object");
}

json_t *tg_get_array(struct tg_eval *ev, json_t *parent, const struct tg_path *path,
                     const char *key)
{
    return member(ev, parent, path, key, JSON_ARRAY, "a list");
}

const char *tg_get_string(struct tg_eval *ev, json_t *parent, const struct tg_path *path,
                          const char *key)
{
    return json_string_value(member(ev, parent, path, key, JSON_STRING, "a string"));
}

int tg_int_value(const json_t *v, long long *out)
{
    if (!v || json_is_null(v))
        return 0;
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return 1;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d == floor(d) && fabs(d) < 9.0e15) {
            *out = (long long)d;
            return 1;
        }
    }
    return -1;
}

int tg_get_int(struct tg_eval *ev, json_t *parent, const struct tg_path *path, const char *key,
               long long *out)
{
    if (!json_is_object(parent))
        return 0;
    json_t *v = json_object_get(parent, key);
    int rc = tg_int_value(v, out);
    if (rc >= 0)
        return rc;
    if (ev) {
        struct tg_path p;
        tg_path_key(&p, path, key);
        tg_report(ev, TG_RULE_OBJECT_INVALID_FIELD, p.field, "must be an integer, got %s",
                  json_is_real(v) ? "a fraction" : json_type_name(v));
    }
    return -1;
}

int tg_get_bool(struct tg_eval *ev, json_t *parent, const struct tg_path *path, const char *key,
                bool *out)
{
    if (!json_is_object(parent))
        return 0;
    json_t *v = json_object_get(parent, key);
    if (!v || json_is_null(v))
        return 0;
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return 1;
    }
    if (ev) {
        struct tg_path p;
        tg_path_key(&p, path, key);
        tg_report(ev, TG_RULE_OBJECT_INVALID_FIELD, p.field, "must be a boolean, got %s",
                  json_type_name(v));
    }
    return -1;
}

json_t *tg_read_object(struct tg_eval *ev, json_t *raw, json_t *parent, const struct tg_path *path,
                       const char *key)
{
    if (tg_wrong_type(raw, JSON_OBJECT))
        return tg_get_object(ev, parent, path, key); /* reports it */
    return json_is_object(raw) ? raw : NULL;
}

json_t *tg_read_array(struct tg_eval *ev, json_t *raw, json_t *parent, const struct tg_path *path,
                      const char *key)
{
    if (tg_wrong_type(raw, JSON_ARRAY))
        return tg_get_array(ev, parent, path, key); /* reports it */
    return json_is_array(raw) ? raw : NULL;
}

const char *tg_read_string(struct tg_eval *ev, json_t *raw, json_t *parent,
                           const struct tg_path *path, const char *key)
{
    if (tg_wrong_type(raw, JSON_STRING))
        return tg_get_string(ev, parent, path, key); /* reports it */
    return json_string_value(raw);
}

int tg_read_int(struct tg_eval *ev, json_t *raw, json_t *parent, const struct tg_path *path,
                const char *key, long long *out)
{
    int rc = tg_int_value(raw, out);
    return rc < 0 ? tg_get_int(ev, parent, path, key, out) : rc;
}

int tg_read_bool(struct tg_eval *ev, json_t *raw, json_t *parent, const struct tg_path *path,
                 const char *key, bool *out)
{
    if (!raw || json_is_null(raw))
        return 0;
    if (json_is_boolean(raw)) {
        *out = json_is_true(raw);
        return 1;
    }
    return tg_get_bool(ev, parent, path, key, out); /* reports it */
}

void tg_members_named(json_t *obj, const char *const *keys, size_t n, json_t **out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = NULL;
    for (void *it = json_object_iter(obj); it; it = json_object_iter_next(obj, it)) {
        const char *k = json_object_iter_key(it);
        for (size_t i = 0; i < n; i++) {
            /* a key with a NUL inside is another key (json_object_get compares lengths) */
            if (k[0] == keys[i][0] && !strcmp(k, keys[i]) &&
                json_object_iter_key_len(it) == strlen(keys[i])) {
                out[i] = json_object_iter_value(it);
                break;
            }
        }
    }
}

/* An env entry with more members than this is looked up (the walks below read every member). */
#define ENTRY_WALK_MAX 8

void tg_env_entry_read(json_t *e, struct tg_env_members *out)
{
    out->name = out->value = out->value_from = NULL;
    if (json_object_size(e) > ENTRY_WALK_MAX) {
        out->name = json_object_get(e, "name");
        out->value = json_object_get(e, "value");
        out->value_from = json_object_get(e, "valueFrom");
        return;
    }
    for (void *it = json_object_iter(e); it; it = json_object_iter_next(e, it)) {
        const char *k = json_object_iter_key(it);
        size_t kl = json_object_iter_key_len(it);
        if (kl == 4 && !memcmp(k, "name", 4))
            out->name = json_object_iter_value(it);
        else if (kl == 5 && !memcmp(k, "value", 5))
            out->value = json_object_iter_value(it);
        else if (kl == 9 && !memcmp(k, "valueFrom", 9))
            out->value_from = json_object_iter_value(it);
    }
}

const char *tg_env_entry_name(json_t *e)
{
    if (json_object_size(e) > ENTRY_WALK_MAX)
        return json_string_value(json_object_get(e, "name"));
    for (void *it = json_object_iter(e); it; it = json_object_iter_next(e, it)) {
        if (json_object_iter_key_len(it) == 4 && !memcmp(json_object_iter_key(it), "name", 4))
            return json_string_value(json_object_iter_value(it));
    }
    return NULL;
}

const char *tg_env_value(json_t *container, const char *name, bool *defined)
{
    return tg_env_value_in(json_object_get(container, "env"), name, defined);
}

const char *tg_env_value_in(json_t *env, const char *name, bool *defined)
{
    const char *value = NULL;
    size_t i;
    json_t *e;
    if (defined)
        *defined = false;
    if (!json_is_array(env))
        return NULL;
    json_array_foreach (env, i, e) {
        const char *n = tg_env_entry_name(e);
        if (!n || strcmp(n, name))
            continue;
        if (defined)
            *defined = true;
        /* A later definition replaces an earlier one, as the kubelet builds the env. */
        value = tg_env_value_at(env, i);
    }
    return value;
}

const char *tg_env_value_at(json_t *env, size_t i)
{
    struct tg_env_members m;
    tg_env_entry_read(json_array_get(env, i), &m);
    const char *value = json_string_value(m.value);
    return !value && !m.value_from ? "" : value;
}

/* Appends src[0..n) to buf at *at, keeping room for the NUL; false when it does not fit. */
static bool put(char *buf, size_t len, size_t *at, const char *src, size_t n)
{
    if (*at + n >= len)
        return false;
    memcpy(buf + *at, src, n);
    *at += n;
    buf[*at] = '\0';
    return true;
}

/* The literal value entry e has after the kubelet expanded it against env[0..upto), or NULL when
 * it is not known (valueFrom, a reference to a valueFrom entry, or too long for buf). */
static const char *expand_entry(json_t *env, size_t upto, json_t *e, char *buf, size_t len,
                                int depth);

/* The expanded value of the last entry of name among env[0..upto), or NULL. */
static const char *value_before(json_t *env, size_t upto, const char *name, size_t nlen, char *buf,
                                size_t len, int depth)
{
    for (size_t i = upto; i-- > 0;) {
        json_t *e = json_array_get(env, i);
        const char *n = tg_env_entry_name(e);
        if (n && strlen(n) == nlen && !strncmp(n, name, nlen))
            return depth > 8 ? NULL : expand_entry(env, i, e, buf, len, depth + 1);
    }
    return NULL;
}

static const char *expand_entry(json_t *env, size_t upto, json_t *e, char *buf, size_t len,
                                int depth)
{
    struct tg_env_members m;
    tg_env_entry_read(e, &m);
    const char *v = json_string_value(m.value);
    char ref[TG_ENV_VALUE_MAX];
    size_t at = 0;
    if (!v)
        return m.value_from ? NULL : "";
    if (!strchr(v, '$'))
        return v;
    buf[0] = '\0';
    while (*v) {
        const char *close = v[0] == '$' && v[1] == '(' ? strchr(v + 2, ')') : NULL;
        if (v[0] == '$' && v[1] == '$') {
            if (!put(buf, len, &at, "$", 1))
                return NULL;
            v += 2;
        } else if (close) {
            const char *r =
                value_before(env, upto, v + 2, (size_t)(close - v - 2), ref, sizeof(ref), depth);
            /* an unknown reference stays as written, as the kubelet leaves it */
            if (r ? !put(buf, len, &at, r, strlen(r))
                  : !put(buf, len, &at, v, (size_t)(close - v + 1)))
                return NULL;
            v = close + 1;
        } else {
            if (!put(buf, len, &at, v, 1))
                return NULL;
            v++;
        }
    }
    return buf;
}

const char *tg_env_get(json_t *container, const char *name, char *buf, size_t len, bool *defined)
{
    return tg_env_get_in(json_object_get(container, "env"), name, buf, len, defined);
}

const char *tg_env_get_in(json_t *env, const char *name, char *buf, size_t len, bool *defined)
{
    if (defined)
        *defined = false;
    if (!json_is_array(env) || len == 0)
        return NULL;
    for (size_t i = json_array_size(env); i-- > 0;) {
        json_t *e = json_array_get(env, i);
        const char *n = tg_env_entry_name(e);
        if (!n || strcmp(n, name))
            continue;
        if (defined)
            *defined = true;
        return expand_entry(env, i, e, buf, len, 0);
    }
    return NULL;
}

const char *tg_env_get_at(json_t *env, size_t i, char *buf, size_t len)
{
    if (len == 0)
        return NULL;
    return expand_entry(env, i, json_array_get(env, i), buf, len, 0);
}

const char *tg_command_find(json_t *container, bool (*match)(const char *s, void *ctx), void *ctx)
{
    static const char *const keys[] = {"command", "args"};
    for (size_t k = 0; k < 2; k++) {
        size_t i;
        json_t *w;
        json_array_foreach (json_object_get(container, keys[k]), i, w) {
            const char *s = json_string_value(w);
            if (s && match(s, ctx))
                return s;
        }
    }
    return NULL;
}
