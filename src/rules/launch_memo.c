/* launch_memo.c -- one parse of each launcher command line per evaluation, shared by the EFA and
 * MPI rules and the env mutator. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tg/arena.h"
#include "tg/launch_memo.h"
#include "tg/obj.h"

/* At most this many bad items are reported per list (the whole line is unread after one). */
#define BAD_ITEMS_MAX 4

static const char *item_type(const json_t *v)
{
    if (json_is_null(v))
        return "null";
    if (json_is_number(v))
        return "a number";
    if (json_is_boolean(v))
        return "a boolean";
    return json_is_array(v) ? "a list" : "an object";
}

/* tg_check_command_types of c's command and args, raws[0] and raws[1] (as found in c->c). */
static bool check_types(struct tg_eval *ev, const struct tg_container *c, json_t *const raws[2])
{
    static const char *const keys[] = {"command", "args"};
    bool ok = true;
    for (size_t k = 0; c && k < 2; k++) {
        json_t *raw = raws[k];
        if (raw && !json_is_null(raw) && !json_is_array(raw)) {
            /* reports "must be a list" at the container path + key */
            tg_get_array(ev, c->c, &c->path, keys[k]);
            ok = false;
            continue;
        }
        size_t i, bad = 0;
        json_t *it;
        json_array_foreach (raw, i, it) {
            struct tg_path p;
            if (json_is_string(it))
                continue;
            ok = false;
            if (bad++ >= BAD_ITEMS_MAX)
                break;
            tg_path_key(&p, &c->path, keys[k]);
            tg_path_index(&p, &p, i);
            tg_report(ev, TG_RULE_OBJECT_INVALID_FIELD, p.field,
                      "must be a string, got %s: the command line is not read, so no launcher "
                      "in it is checked; quote the value",
                      item_type(it));
        }
    }
    return ok;
}

bool tg_check_command_types(struct tg_eval *ev, const struct tg_container *c)
{
    json_t *raws[2] = {c ? json_object_get(c->c, "command") : NULL,
                       c ? json_object_get(c->c, "args") : NULL};
    return check_types(ev, c, raws);
}

struct tg_launch_memo {
    const json_t *container;
    enum tg_mpi_impl impl;
    bool run; /* read with the controller's env (tg_eval_launch_run) */
    struct tg_launch launch;
    struct tg_launch_memo *next;
};

/* ---- the container as its controller runs it ---------------------------------------------- */

static bool operator_sets(const struct tg_template *t, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach (t->operator_env, i, e) {
        if (!strcmp(json_string_value(json_object_get(e, "name")), name))
            return true;
    }
    return false;
}

/* A copy of container c whose env ends with the controller's entries (the user's entries of the
 * same names dropped). A value the controller sets at run time is a valueFrom entry: defined,
 * unknown. New reference, or NULL on ENOMEM. */
static json_t *with_operator_env(const struct tg_template *t, json_t *c)
{
    json_t *copy = json_copy(c), *env = json_array();
    size_t i;
    json_t *e;
    if (!copy || !env)
        goto fail;
    json_array_foreach (json_object_get(c, "env"), i, e) {
        const char *n = json_string_value(json_object_get(e, "name"));
        if ((!n || !operator_sets(t, n)) && json_array_append(env, e))
            goto fail;
    }
    json_array_foreach (t->operator_env, i, e) {
        json_t *v = json_object_get(e, "value");
        json_t *entry =
            v ? json_pack("{s:O, s:O}", "name", json_object_get(e, "name"), "value", v)
              : json_pack("{s:O, s:{}}", "name", json_object_get(e, "name"), "valueFrom");
        if (!entry || json_array_append_new(env, entry))
            goto fail;
    }
    if (json_object_set_new(copy, "env", env))
        goto fail_env_owned;
    return copy;
fail:
    json_decref(env);
fail_env_owned:
    json_decref(copy);
    return NULL;
}

static int memo_get(struct tg_eval *ev, const struct tg_template *t, const struct tg_container *c,
                    enum tg_mpi_impl impl, const struct tg_launch **out)
{
    json_t *container = c->c;
    bool run = t != NULL;
    for (struct tg_launch_memo *m = ev->launches; m; m = m->next) {
        if (m->container == container && m->impl == impl && m->run == run) {
            *out = &m->launch;
            return 0;
        }
    }
    /* every member is set below; from the request's arena while it is active */
    struct tg_launch_memo *m = tg_arena_malloc(sizeof(*m));
    json_t *eff = run ? with_operator_env(t, container) : json_incref(container);
    if (!m || !eff) {
        tg_arena_free(m);
        json_decref(eff);
        return -ENOMEM;
    }
    /* A command or args of the wrong type is a finding wherever a rule reads the command line,
     * never a launcher silently skipped (reported once per container and implementation). Both
     * are found once for the check and the read (the copy with the controller's env holds the
     * same ones). */
    json_t *items[2] = {json_object_get(container, "command"), json_object_get(container, "args")};
    check_types(ev, c, items);
    m->container = container;
    m->impl = impl;
    m->run = run;
    tg_launch_init(&m->launch);
    int rc = tg_launch_parse_container_items(eff, items[0], items[1], impl, &m->launch);
    json_decref(eff);
    if (rc < 0) {
        tg_launch_release(&m->launch);
        tg_arena_free(m);
        return rc;
    }
    m->next = ev->launches;
    ev->launches = m;
    *out = &m->launch;
    return 0;
}

int tg_eval_launch(struct tg_eval *ev, const struct tg_container *c, enum tg_mpi_impl impl,
                   const struct tg_launch **out)
{
    return memo_get(ev, NULL, c, impl, out);
}

int tg_eval_launch_run(struct tg_eval *ev, const struct tg_template *t,
                       const struct tg_container *c, enum tg_mpi_impl impl,
                       const struct tg_launch **out)
{
    return memo_get(ev, t->operator_env ? t : NULL, c, impl, out);
}

void tg_eval_launch_release(struct tg_eval *ev)
{
    struct tg_launch_memo *m = ev->launches;
    while (m) {
        struct tg_launch_memo *next = m->next;
        tg_launch_release(&m->launch);
        tg_arena_free(m);
        m = next;
    }
    ev->launches = NULL;
}
