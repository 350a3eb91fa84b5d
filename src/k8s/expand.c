/* expand.c -- a container's env list and Kubernetes $(VAR) expansion (include/tg/expand.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/expand.h"

void tg_k8s_env_init(struct tg_k8s_env *env)
{
    env->v = NULL;
    env->n = env->cap = 0;
}

void tg_k8s_env_release(struct tg_k8s_env *env)
{
    for (size_t i = 0; i < env->n; i++) {
        free(env->v[i].name);
        free(env->v[i].value);
    }
    free(env->v);
    tg_k8s_env_init(env);
}

const struct tg_k8s_env_var *tg_k8s_env_get(const struct tg_k8s_env *env, const char *name)
{
    for (size_t i = 0; i < env->n; i++)
        if (strcmp(env->v[i].name, name) == 0)
            return &env->v[i];
    return NULL;
}

/* tg_k8s_env_set with the value nv (malloc'd, or NULL: unknown) handed over: freed on error. */
static int env_put(struct tg_k8s_env *env, const char *name, char *nv)
{
    for (size_t i = 0; i < env->n; i++) {
        if (strcmp(env->v[i].name, name) == 0) {
            free(env->v[i].value);
            env->v[i].value = nv;
            env->v[i].too_long = false;
            return 0;
        }
    }
    if (env->n == env->cap) {
        size_t cap = env->cap ? env->cap * 2 : 16;
        struct tg_k8s_env_var *v = realloc(env->v, cap * sizeof(*v));
        if (!v)
            goto out_free_value;
        env->v = v;
        env->cap = cap;
    }
    env->v[env->n].name = strdup(name);
    if (!env->v[env->n].name)
        goto out_free_value;
    env->v[env->n].value = nv;
    env->v[env->n].too_long = false;
    env->n++;
    return 0;
out_free_value:
    free(nv);
    return -ENOMEM;
}

int tg_k8s_env_set(struct tg_k8s_env *env, const char *name, const char *value)
{
    char *nv = value ? strdup(value) : NULL;
    if (value && !nv)
        return -ENOMEM;
    return env_put(env, name, nv);
}

/* The value $(NAME) stands for when `name` (len bytes) has a literal value in env, else NULL. */
static const char *lookup(const struct tg_k8s_env *env, const char *name, size_t len)
{
    char buf[256];
    if (len == 0 || len >= sizeof(buf))
        return NULL;
    memcpy(buf, name, len);
    buf[len] = '\0';
    const struct tg_k8s_env_var *v = tg_k8s_env_get(env, buf);
    return v ? v->value : NULL;
}

/* Appends len bytes of src at out + *at (out NULL: only counts them). */
static void put(char *out, size_t *at, const char *src, size_t len)
{
    if (out)
        memcpy(out + *at, src, len);
    *at += len;
}

/* The expansion of s written to out (NULL: not written), its length returned; when only counting,
 * the count stops past TG_K8S_VALUE_MAX (the expansion is not built then). */
static size_t expand_to(const char *s, const struct tg_k8s_env *env, char *out, char *unknown,
                        size_t unknownlen)
{
    size_t at = 0;
    for (const char *p = s; *p && (out || at <= TG_K8S_VALUE_MAX);) {
        const char *d = strchr(p, '$');
        if (!d) {
            put(out, &at, p, strlen(p));
            break;
        }
        put(out, &at, p, (size_t)(d - p));
        p = d;
        const char *close = p[1] == '(' ? strchr(p + 2, ')') : NULL;
        if (p[1] == '$') {
            put(out, &at, "$", 1);
            p += 2;
        } else if (close) {
            const char *value = lookup(env, p + 2, (size_t)(close - (p + 2)));
            if (value) {
                put(out, &at, value, strlen(value));
            } else {
                if (unknown && unknownlen && !unknown[0])
                    snprintf(unknown, unknownlen, "%.*s", (int)(close - p + 1), p);
                put(out, &at, p, (size_t)(close - p + 1));
            }
            p = close + 1;
        } else {
            put(out, &at, p++, 1);
        }
    }
    return at;
}

/* Does s hold a `$$` or a `$(`, the only text expansion changes? */
static bool expands(const char *s)
{
    for (const char *d = strchr(s, '$'); d; d = strchr(d + 1, '$'))
        if (d[1] == '$' || d[1] == '(')
            return true;
    return false;
}

char *tg_k8s_expand(const char *s, const struct tg_k8s_env *env, char *unknown, size_t unknownlen,
                    bool *too_long)
{
    if (unknown && unknownlen)
        unknown[0] = '\0';
    if (too_long)
        *too_long = false;
    /* sized exactly (a long script no longer grows a buffer of 512 bytes doubling): s itself
     * when nothing in it expands, else the length counted first */
    bool x = expands(s);
    size_t n = x ? expand_to(s, env, NULL, NULL, 0) : strlen(s);
    if (x && n > TG_K8S_VALUE_MAX) {
        if (too_long)
            *too_long = true;
        x = false; /* s as written */
        n = strlen(s);
    }
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    if (x)
        expand_to(s, env, out, unknown, unknownlen);
    else
        memcpy(out, s, n);
    out[n] = '\0';
    return out;
}

int tg_k8s_env_read(json_t *container, struct tg_k8s_env *env)
{
    json_t *list = json_object_get(container, "env");
    size_t i;
    json_t *e;
    json_array_foreach (list, i, e) {
        /* the entry's members in one walk (name, value, valueFrom), not a lookup each */
        json_t *jname = NULL, *val = NULL, *from = NULL;
        for (void *it = json_object_iter(e); it; it = json_object_iter_next(e, it)) {
            const char *k = json_object_iter_key(it);
            size_t kl = json_object_iter_key_len(it);
            if (kl == 4 && !memcmp(k, "name", 4))
                jname = json_object_iter_value(it);
            else if (kl == 5 && !memcmp(k, "value", 5))
                val = json_object_iter_value(it);
            else if (kl == 9 && !memcmp(k, "valueFrom", 9))
                from = json_object_iter_value(it);
        }
        const char *name = json_string_value(jname);
        int rc;
        if (!name || !*name)
            continue;
        if (json_is_string(val)) {
            /* the expanded value is the entry's own (no second copy); one too long to follow
             * is unknown */
            bool too_long;
            char *x = tg_k8s_expand(json_string_value(val), env, NULL, 0, &too_long);
            if (!x)
                return -ENOMEM;
            if (too_long) {
                free(x);
                x = NULL;
            }
            rc = env_put(env, name, x);
            if (rc == 0 && too_long)
                ((struct tg_k8s_env_var *)tg_k8s_env_get(env, name))->too_long = true;
        } else {
            rc = tg_k8s_env_set(env, name, from ? NULL : "");
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}
