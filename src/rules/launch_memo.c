/* launch_memo.c -- one parse of each launcher command line per evaluation, shared by the EFA and
 * MPI rules and the env mutator. */
#include <errno.h>
#include <stdlib.h>

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

bool tg_check_command_types(struct tg_eval *ev, const struct tg_container *c)
{
    static const char *const keys[] = {"command", "args"};
    bool ok = true;
    for (size_t k = 0; c && k < 2; k++) {
        json_t *raw = json_object_get(c->c, keys[k]);
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

struct tg_launch_memo {
    const json_t *container;
    enum tg_mpi_impl impl;
    struct tg_launch launch;
    struct tg_launch_memo *next;
};

int tg_eval_launch(struct tg_eval *ev, const struct tg_container *c, enum tg_mpi_impl impl,
                   const struct tg_launch **out)
{
    json_t *container = c->c;
    for (struct tg_launch_memo *m = ev->launches; m; m = m->next) {
        if (m->container == container && m->impl == impl) {
            *out = &m->launch;
            return 0;
        }
    }
    struct tg_launch_memo *m = calloc(1, sizeof(*m));
    if (!m)
        return -ENOMEM;
    /* A command or args of the wrong type is a finding wherever a rule reads the command line,
     * never a launcher silently skipped (reported once per container and implementation). */
    tg_check_command_types(ev, c);
    m->container = container;
    m->impl = impl;
    tg_launch_init(&m->launch);
    int rc = tg_launch_parse_container(container, impl, &m->launch);
    if (rc < 0) {
        tg_launch_release(&m->launch);
        free(m);
        return rc;
    }
    m->next = ev->launches;
    ev->launches = m;
    *out = &m->launch;
    return 0;
}

void tg_eval_launch_release(struct tg_eval *ev)
{
    struct tg_launch_memo *m = ev->launches;
    while (m) {
        struct tg_launch_memo *next = m->next;
        tg_launch_release(&m->launch);
        free(m);
        m = next;
    }
    ev->launches = NULL;
}
