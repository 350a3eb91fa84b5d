/* launch_memo.c -- one parse of each launcher command line per evaluation, shared by the EFA and
 * MPI rules and the env mutator. */
#include <errno.h>
#include <stdlib.h>

#include "tg/rules.h"

struct tg_launch_memo {
    json_t *container;
    enum tg_mpi_impl impl;
    struct tg_launch launch;
    struct tg_launch_memo *next;
};

int tg_eval_launch(struct tg_eval *ev, json_t *container, enum tg_mpi_impl impl,
                   const struct tg_launch **out)
{
    for (struct tg_launch_memo *m = ev->launches; m; m = m->next) {
        if (m->container == container && m->impl == impl) {
            *out = &m->launch;
            return 0;
        }
    }
    struct tg_launch_memo *m = calloc(1, sizeof(*m));
    if (!m)
        return -ENOMEM;
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
