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

int tg_get_int(struct tg_eval *ev, json_t *parent, const struct tg_path *path, const char *key,
               long long *out)
{
    if (!json_is_object(parent))
        return 0;
    json_t *v = json_object_get(parent, key);
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

const char *tg_env_value(json_t *container, const char *name, bool *defined)
{
    json_t *env = json_object_get(container, "env");
    const char *value = NULL;
    size_t i;
    json_t *e;
    if (defined)
        *defined = false;
    if (!json_is_array(env))
        return NULL;
    json_array_foreach (env, i, e) {
        const char *n = json_string_value(json_object_get(e, "name"));
        if (!n || strcmp(n, name))
            continue;
        if (defined)
            *defined = true;
        /* A later definition replaces an earlier one, as the kubelet builds the env. */
        value = json_string_value(json_object_get(e, "value"));
        if (!value && !json_object_get(e, "valueFrom"))
            value = "";
    }
    return value;
}
