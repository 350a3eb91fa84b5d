/* expand.h -- a container's env as the kubelet builds it, and the Kubernetes $(VAR) expansion of
 * its command, args and env values.
 *
 * Contract (kubernetes/kubernetes: pkg/kubelet/kubelet_pods.go, makeEnvironmentVariables, and
 * third_party/forked/golang/expansion/expand.go, Expand and MappingFuncFor):
 * - $(NAME) is replaced by the value of NAME, $$ is a literal $, and a reference to a name
 *   without a known value stays as written (so does a `$(` without its `)`).
 * - An env value sees only the entries defined before it in the same list; command and args see
 *   the whole list. A later entry of the same name replaces the earlier one.
 * - Values the webhook cannot know at admission (valueFrom: fieldRef, secretKeyRef, ...) are
 *   kept as "defined, value unknown" (value NULL). envFrom and the service variables the kubelet
 *   adds are not read: their names are unknown here.
 * - Everything returned is owned by the env (or, for tg_k8s_expand, by the caller). Nothing here
 *   reports findings; wrong JSON types are skipped (object.invalid-field is the rules' to
 *   report). */
#ifndef TG_EXPAND_H
#define TG_EXPAND_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The longest expansion followed: Linux's MAX_ARG_STRLEN, the longest string execve(2) passes as
 * one argument or environment entry (docs/references.md#ref-linux-arg-max). A longer one (env
 * values that double $(A)$(A) down a list reach gigabytes in a few dozen entries) is not built. */
#define TG_K8S_VALUE_MAX 131072

struct tg_k8s_env_var {
    char *name;
    char *value;   /* expanded literal value; NULL: unknown at admission (valueFrom, or too_long) */
    bool too_long; /* value NULL because it expands past TG_K8S_VALUE_MAX */
};

/* Invariant: names are distinct and in the order of their first definition. */
struct tg_k8s_env {
    struct tg_k8s_env_var *v;
    size_t n, cap;
};

void tg_k8s_env_init(struct tg_k8s_env *env);
void tg_k8s_env_release(struct tg_k8s_env *env);

/* Sets (or replaces, keeping its place) name. value NULL: defined, value unknown. Returns 0 or
 * -ENOMEM. */
int tg_k8s_env_set(struct tg_k8s_env *env, const char *name, const char *value);

/* The entry of name, or NULL when the list never defines it. Borrowed. */
const struct tg_k8s_env_var *tg_k8s_env_get(const struct tg_k8s_env *env, const char *name);

/* Reads container.env (container borrowed) into env, in list order: `value` strings are
 * expanded against the entries before them; an entry with neither a string value nor valueFrom
 * has the value "" (the API default); entries that are not objects or have no name or an empty
 * one are skipped, and so is an env that is not a list. Returns 0 or -ENOMEM. */
int tg_k8s_env_read(json_t *container, struct tg_k8s_env *env);

/* Kubernetes $(VAR) expansion of one command/args item or env value s against env. *unknown
 * (may be NULL) gets the first $(NAME) left as written ("" when none). An expansion longer than
 * TG_K8S_VALUE_MAX is not built: s is returned as written and *too_long (may be NULL) set.
 * Returns a malloc'd string or NULL on ENOMEM. */
char *tg_k8s_expand(const char *s, const struct tg_k8s_env *env, char *unknown, size_t unknownlen,
                    bool *too_long);

#endif
