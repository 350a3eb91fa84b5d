/* obj.h -- typed accessors over JSON objects for decoders and rules: a member of the wrong JSON
 * type is reported as object.invalid-field (into the evaluation's sink) and treated as absent. */
#ifndef TG_OBJ_H
#define TG_OBJ_H

#include <jansson.h>
#include <stdbool.h>

#include "tg/eval.h"
#include "tg/path.h"

/* Each returns the member `key` of `parent` (an object; a NULL parent gives NULL). Absent and JSON
 * null count as absent. A member of the wrong JSON type is reported as object.invalid-field at
 * `path`.key and treated as absent. All returned json_t are borrowed. */
json_t *tg_get_object(struct tg_eval *ev, json_t *parent, const struct tg_path *path,
                      const char *key);
json_t *tg_get_array(struct tg_eval *ev, json_t *parent, const struct tg_path *path,
                     const char *key);
const char *tg_get_string(struct tg_eval *ev, json_t *parent, const struct tg_path *path,
                          const char *key); /* NULL when absent */
/* Integer member: 1 and sets *out when present and an integer (a float with no fraction counts,
 * as Kubernetes decodes 2.0 as 2); 0 when absent; -1 when of the wrong type (reported; with ev
 * NULL nothing is reported and path is not read, so it may be NULL). */
int tg_get_int(struct tg_eval *ev, json_t *parent, const struct tg_path *path, const char *key,
               long long *out);
/* Boolean member: 1 and *out, 0 absent, -1 wrong type (reported). */
int tg_get_bool(struct tg_eval *ev, json_t *parent, const struct tg_path *path, const char *key,
                bool *out);
/* A member value that tg_get_object/array/string would report: present, not null, not of type
 * want. A reader that checks its members with this first can skip building their parent's path
 * when none is, and read them through the getters (which report) only when one is. */
bool tg_wrong_type(const json_t *v, json_type want);

/* tg_get_int's answer for a member value v read before (NULL when absent), reporting nothing:
 * 0 absent or null, 1 and *out an integer, -1 another type. */
int tg_int_value(const json_t *v, long long *out);

/* The getters for a member of parent whose json_object_get answer raw was read before (e.g. by
 * tg_members_named): the same answers and the same reports, parent looked up again (and path
 * read) only to report a wrong type. */
json_t *tg_read_object(struct tg_eval *ev, json_t *raw, json_t *parent, const struct tg_path *path,
                       const char *key);
json_t *tg_read_array(struct tg_eval *ev, json_t *raw, json_t *parent, const struct tg_path *path,
                      const char *key);
const char *tg_read_string(struct tg_eval *ev, json_t *raw, json_t *parent,
                           const struct tg_path *path, const char *key);
int tg_read_int(struct tg_eval *ev, json_t *raw, json_t *parent, const struct tg_path *path,
                const char *key, long long *out);
int tg_read_bool(struct tg_eval *ev, json_t *raw, json_t *parent, const struct tg_path *path,
                 const char *key, bool *out);

/* The members of obj named keys[0..n) (NULL when absent, or when obj is no object), found in one
 * walk over obj: a lookup hashes its key, so reading several members of a small object (labels,
 * annotations, metadata) this way costs less than a json_object_get each. */
void tg_members_named(json_t *obj, const char *const *keys, size_t n, json_t **out);

/* The members name, value and valueFrom of one env entry (NULL when absent), found in one walk
 * over the entry (a few members), not a lookup each. */
struct tg_env_members {
    json_t *name, *value, *value_from;
};
void tg_env_entry_read(json_t *e, struct tg_env_members *out);
/* The string name of env entry e, or NULL: a walk that stops at "name" (nearly always the first
 * member). */
const char *tg_env_entry_name(json_t *e);

/* Env of one container: the literal value of variable `name` (last definition wins, as the
 * kubelet does), or NULL. *defined is set when the name appears at all (value or valueFrom). */
const char *tg_env_value(json_t *container, const char *name, bool *defined);
/* The same for a container's env member (json_object_get's answer), read before. */
const char *tg_env_value_in(json_t *env, const char *name, bool *defined);
/* The value tg_env_value_in gives when entry i of env (an array) is the last entry of the name
 * asked for. */
const char *tg_env_value_at(json_t *env, size_t i);

/* The first string of the container's command, then args, for which match(s, ctx) is true, or
 * NULL (items that are not strings are skipped). Borrowed. */
const char *tg_command_find(json_t *container, bool (*match)(const char *s, void *ctx), void *ctx);

/* Longest expanded env value tg_env_get() returns (a longer one counts as unknown). */
#define TG_ENV_VALUE_MAX 512
/* The value variable `name` has in the container, as the kubelet computes it: the last entry of
 * the name, with $(NAME) references expanded from the entries defined before it ($$ is a literal $;
 * a reference that cannot be resolved here (an unknown name, a valueFrom entry) stays as written;
 * docs/references.md#ref-k8s-env-expansion). Returns the value (borrowed from the object, or
 * written into buf), or NULL when the name is not set or its own value is not known (valueFrom, or
 * longer than buf). *defined is set when the name appears at all. */
const char *tg_env_get(json_t *container, const char *name, char *buf, size_t len, bool *defined);
/* The same for a container's env member (json_object_get's answer), read before. */
const char *tg_env_get_in(json_t *env, const char *name, char *buf, size_t len, bool *defined);
/* The value tg_env_get_in gives when entry i of env (an array) is the last entry of the name
 * asked for: the entry's value as the kubelet expands it, or NULL. */
const char *tg_env_get_at(json_t *env, size_t i, char *buf, size_t len);

#endif
