/* efa_env.c -- /mutate: add the policy's EFA/NCCL env to every container that requests EFA, and
 * make it reach MPI ranks that sshd starts on MPIJob workers (SPEC sections 5 and 9; the
 * mechanism and its sources are in docs/mutation.md).
 *
 * Contract (idempotent by construction, reinvocationPolicy IfNeeded):
 * - A variable the container already names in `env` (value or valueFrom) is never added again, so a
 *   second run on the patched object finds nothing to add and returns no patch.
 * - A container with envFrom gets nothing unless the policy says injectWithEnvFrom: env would
 *   silently override the ConfigMap or Secret. A note (a warning) says so.
 * - Patches go through tg_patch_append_items: one `add` of the whole env array when it is absent,
 *   one `add .../env/-` per variable otherwise, pointers escaped by tg_path.
 * - Nothing here fails the request for a bad object: a field of the wrong type is skipped with a
 *   note (the validators report it). Only ENOMEM is an error. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/instances.h"
#include "tg/launch_memo.h"
#include "tg/launcher.h"
#include "tg/obj.h"
#include "tg/patch.h"
#include "tg/pod.h"
#include "tg/policy.h"
#include "tg/registry.h"

#define NOTE_ID "mutate.efa-env"
/* Open MPI's environment form of `mpirun -x` (OMPI_MCA_<param>, param mca_base_env_list). */
#define ENV_LIST_VAR "OMPI_MCA_mca_base_env_list"
/* Kubernetes warnings are cut at 256 characters (api-facts 1.7); notes stay under that. */
#define NOTE_MAX 256
/* A template pinned to more instance types than this is treated as not pinned (a list that long is
 * a family-wide selector in disguise; conditions are then not proven). */
#define MAX_PINS 32

/* The EC2 instance types a pod template is pinned to (nodeSelector or required node affinity). */
struct pins {
    const char *type[MAX_PINS];
    size_t n;
};

/* ---- notes --------------------------------------------------------------------------------- */

static void note(struct tg_eval *ev, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends "[mutate.efa-env] field: message" to ev->notes (they become warnings; the pipeline cuts
 * each at 256 characters). */
static void note(struct tg_eval *ev, const char *field, const char *fmt, ...)
{
    char msg[NOTE_MAX], line[NOTE_MAX + TG_PATH_MAX + 32];
    va_list ap;
    if (!ev->notes)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(line, sizeof(line), "[%s] %s: %s", NOTE_ID, field, msg);
    if (json_array_append_new(ev->notes, json_string(line)) && !ev->error)
        ev->error = -ENOMEM;
}

/* ---- what a container asks for ------------------------------------------------------------- */

/* Does the container request vpc.amazonaws.com/efa? The shared predicate of include/tg/pod.h: a
 * count above 0 in limits or requests, or an unusable value ("$EFA_PER_NODE", which
 * efa.invalid-quantity reports): the author meant EFA, so `check --mutate` on a template still
 * shows the env it will get. */
static bool requests_efa(json_t *c)
{
    return tg_container_requests_efa(c);
}

static bool has_env_from(json_t *c)
{
    json_t *ef = json_object_get(c, "envFrom");
    if (!ef || json_is_null(ef))
        return false;
    /* A wrong type counts as present: better to add nothing than to shadow an unknown source. */
    return !json_is_array(ef) || json_array_size(ef) > 0;
}

static bool env_defined(json_t *c, const char *name)
{
    bool defined;
    tg_env_value(c, name, &defined);
    return defined;
}

/* ---- instance-type pins -------------------------------------------------------------------- */

/* The instance types template t is pinned to (nodeSelector and required node affinity, as
 * include/tg/pod.h reads them), copied into p. Not pinned, pinned to no node, or more than
 * MAX_PINS types leave p empty: no condition can then be proven. Wrong JSON types are not
 * reported here (ev NULL): the validators report them, and /mutate must not deny. */
static int template_pins(const struct tg_template *t, struct pins *p)
{
    struct tg_label_pin lp;
    int rc;
    p->n = 0;
    if (!t)
        return 0;
    tg_label_pin_init(&lp);
    if ((rc = tg_template_instance_types(NULL, t, &lp)) == 0 && lp.finite && lp.n <= MAX_PINS) {
        for (size_t i = 0; i < lp.n; i++)
            p->type[p->n++] = lp.values[i];
    }
    tg_label_pin_release(&lp);
    return rc;
}

/* dst = dst united with src (both non-empty); too many types make dst empty (not pinned). */
static void pins_union(struct pins *dst, const struct pins *src)
{
    for (size_t i = 0; i < src->n; i++) {
        bool seen = false;
        for (size_t j = 0; j < dst->n && !seen; j++)
            seen = !strcmp(dst->type[j], src->type[i]);
        if (seen)
            continue;
        if (dst->n == MAX_PINS) {
            dst->n = 0;
            return;
        }
        dst->type[dst->n++] = src->type[i];
    }
}

/* Does entry e apply to a template pinned to p? gpuDirectRDMAOnly: every pinned type is known and
 * has GPUDirect RDMA. instanceFamilies: every pinned type is in one of the families. No pin means
 * neither condition holds (SPEC section 5: "when no type is pinned, leave it out"). */
static bool entry_applies(const struct tg_policy *pol, const struct tg_env_entry *e,
                          const struct pins *p)
{
    if ((e->gdr_only || e->nfamilies) && p->n == 0)
        return false;
    for (size_t i = 0; i < p->n; i++) {
        if (e->gdr_only) {
            const struct tg_instance *it = tg_policy_instance(pol, p->type[i]);
            if (!it || !it->gdr)
                return false;
        }
        if (e->nfamilies) {
            char fam[64];
            bool found = false;
            tg_instance_family(p->type[i], fam, sizeof(fam));
            for (size_t f = 0; f < e->nfamilies && !found; f++)
                found = !strcmp(e->families[f], fam);
            if (!found)
                return false;
        }
    }
    return true;
}

/* ---- building and emitting the items -------------------------------------------------------- */

static bool items_have(json_t *items, const char *name)
{
    size_t i;
    json_t *it;
    json_array_foreach (items, i, it) {
        if (!strcmp(json_string_value(json_object_get(it, "name")), name))
            return true;
    }
    return false;
}

static int items_add(json_t *items, const char *name, const char *value)
{
    if (items_have(items, name))
        return 0;
    json_t *it = json_pack("{s:s, s:s}", "name", name, "value", value ? value : "");
    return !it || json_array_append_new(items, it) ? -ENOMEM : 0;
}

/* The policy entries that apply under p, in policy order (names, no duplicates). */
static int wanted_names(const struct tg_policy *pol, const struct pins *p, json_t *names)
{
    for (size_t i = 0; i < pol->ninject; i++) {
        const struct tg_env_entry *e = &pol->inject_env[i];
        if (!e->name || !entry_applies(pol, e, p))
            continue;
        bool dup = false;
        size_t j;
        json_t *n;
        json_array_foreach (names, j, n)
            dup |= !strcmp(json_string_value(n), e->name);
        if (!dup && json_array_append_new(names, json_string(e->name)))
            return -ENOMEM;
    }
    return 0;
}

/* Adds to items every applicable entry the container does not define yet. */
static int missing_items(const struct tg_policy *pol, json_t *c, const struct pins *p,
                         json_t *items)
{
    for (size_t i = 0; i < pol->ninject; i++) {
        const struct tg_env_entry *e = &pol->inject_env[i];
        if (!e->name || !entry_applies(pol, e, p) || env_defined(c, e->name))
            continue;
        if (items_add(items, e->name, e->value) < 0)
            return -ENOMEM;
    }
    return 0;
}

/* May the mutator touch this container's env at all? Notes why not. */
static bool env_writable(struct tg_eval *ev, const struct tg_container *k, json_t *items)
{
    char field[TG_PATH_MAX + 16];
    json_t *env = json_object_get(k->c, "env");
    if (env && !json_is_null(env) && !json_is_array(env)) {
        note(ev, tg_path_sub(field, sizeof(field), &k->path, "env"),
             "is not a list; EFA variables were not added");
        return false;
    }
    if (k->path.overflow) {
        note(ev, k->path.field, "path too long to patch; EFA variables were not added");
        return false;
    }
    if (has_env_from(k->c) && !ev->policy->inject_with_env_from) {
        char names[160] = "";
        size_t i, at = 0;
        json_t *it;
        json_array_foreach (items, i, it) {
            int n = snprintf(names + at, sizeof(names) - at, "%s%s", i ? "," : "",
                             json_string_value(json_object_get(it, "name")));
            if (n < 0 || (size_t)n >= sizeof(names) - at)
                break;
            at += (size_t)n;
        }
        note(ev, tg_path_sub(field, sizeof(field), &k->path, "envFrom"),
             "set, so %s not added (env would override the ConfigMap/Secret); policy "
             "injectWithEnvFrom: true adds them",
             names);
        return false;
    }
    return true;
}

/* Patches items (stolen) into the container's env. */
static int emit(struct tg_eval *ev, const struct tg_container *k, json_t *items)
{
    int rc = tg_patch_append_items(ev->patch, k->c, k->path.ptr, "env", items);
    if (rc == -ENOMEM)
        return rc;
    if (rc < 0)
        note(ev, k->path.field, "env could not be patched (%s); EFA variables were not added",
             strerror(-rc));
    return 0;
}

/* ---- MPIJob launcher: forwarding to the ranks ----------------------------------------------- */

/* Is name forwarded to the ranks of run: forward-all (horovodrun, -genvall), Hydra's default (any
 * implementation but Open MPI, unless -genvnone), or -x NAME / -genv NAME / the --mca env list. */
static bool run_forwards(const struct tg_mpirun *r, const char *name)
{
    return r->forward_all || (r->impl != TG_MPI_OPENMPI && !r->forward_none) ||
           tg_mpirun_find_fwd(r, name) != NULL;
}

/* Comma-joins into buf the names of `names` that some run of l does not forward (l NULL: all of
 * them). Returns how many. */
static size_t unforwarded(const struct tg_launch *l, json_t *names, char *buf, size_t len)
{
    size_t i, count = 0, at = 0;
    json_t *v;
    buf[0] = '\0';
    json_array_foreach (names, i, v) {
        const char *name = json_string_value(v);
        bool ok = l && l->nruns > 0;
        for (size_t r = 0; l && r < l->nruns && ok; r++)
            ok = run_forwards(&l->runs[r], name);
        if (ok)
            continue;
        int n = snprintf(buf + at, len - at, "%s%s", count ? "," : "", name);
        if (n > 0 && (size_t)n < len - at)
            at += (size_t)n;
        count++;
    }
    return count;
}

/* Which of `names` the user's own OMPI_MCA_mca_base_env_list value leaves out. */
static size_t env_list_missing(const char *list, json_t *names, char *buf, size_t len)
{
    struct tg_mpirun run;
    struct tg_launch l = {.runs = &run, .nruns = 1};
    memset(&run, 0, sizeof(run));
    run.impl = TG_MPI_OPENMPI;
    size_t count = tg_mpirun_add_env_list(&run, list) < 0 ? 0 : unforwarded(&l, names, buf, len);
    tg_mpirun_release(&run);
    return count;
}

/* Removes from items the variables the user's list does not forward: in a launcher that runs no
 * rank itself they would only sit in mpirun's env, never reaching a rank (the note says to add
 * them to the list; the next /mutate then adds their values). */
static int drop_unlisted(const char *list, json_t *items)
{
    struct tg_mpirun run;
    memset(&run, 0, sizeof(run));
    run.impl = TG_MPI_OPENMPI;
    int rc = tg_mpirun_add_env_list(&run, list);
    for (size_t i = json_array_size(items); rc == 0 && i-- > 0;) {
        const char *name = json_string_value(json_object_get(json_array_get(items, i), "name"));
        if (name && !tg_mpirun_find_fwd(&run, name))
            json_array_remove(items, i);
    }
    tg_mpirun_release(&run);
    return rc;
}

/* Does any run pass env on its own command line (-x, --mca mca_base_env_list, horovodrun)? */
static bool cmdline_forwarding(const struct tg_launch *l)
{
    for (size_t i = 0; i < l->nruns; i++) {
        if (l->runs[i].nfwd || l->runs[i].forward_all || l->runs[i].horovod)
            return true;
    }
    return false;
}

/* Could the reader have missed an option (a script it could not finish, an unknown option)? */
static bool launch_uncertain(const struct tg_launch *l)
{
    for (size_t i = 0; i < l->nruns; i++) {
        if (l->runs[i].note[0])
            return true;
    }
    return l->script_error;
}

static bool runs_entrypoint(json_t *c)
{
    return !json_array_size(json_object_get(c, "command")) &&
           !json_array_size(json_object_get(c, "args"));
}

/* Open MPI: ranks see a variable only when mpirun forwards it. Decides whether adding
 * OMPI_MCA_mca_base_env_list to the launcher is safe; adds it to items, or notes why not. When the
 * user set the list, it is kept as written (SPEC 5), and, unless the launcher runs ranks itself
 * (runs_ranks: it requests EFA or runLauncherAsWorker), the variables it leaves out are taken out
 * of items: they would never reach a rank, and /validate would then blame the webhook's own patch.
 *
 * Sources (all Open MPI's or PRRTE's own):
 * - open-mpi/ompi: orte/tools/orterun/orterun.1in (4.x), "Exported Environment Variables":
 *   variables can be "set/forwarded to the new processes using the MCA parameter
 *   mca_base_env_list", and "the -mca switch is simply a shortcut for setting environment
 *   variables" of the form OMPI_MCA_<key>=<value>. The list separator is ';' (the parameter
 *   mca_base_env_list_delimiter, "Default: semicolon ';'", opal/runtime/opal_params.c).
 * - open-mpi/ompi 4.x orte/mca/schizo/ompi/schizo_ompi.c: when mpirun gets -x while
 *   OMPI_MCA_mca_base_env_list is set in the environment it aborts ("orterun:conflict-env-set").
 *   So the variable is only safe when no run uses -x.
 * - open-mpi/ompi: docs/man-openmpi/man1/mpirun.1.rst (5.x), same section, same parameter; 5.x
 *   mpirun is PRRTE's prterun with the ompi personality, and openpmix/prrte:
 *   src/mca/schizo/ompi/schizo_ompi.c parse_env() reads getenv("OMPI_MCA_mca_base_env_list") and
 *   splits it on ';' (the OMPI_ spelling, not PRTE_MCA_). */
static int openmpi_forwarding(struct tg_eval *ev, const struct tg_container *k, json_t *names,
                              json_t *items, bool runs_ranks)
{
    char miss[160], field[TG_PATH_MAX + 16];
    const struct tg_launch *l;
    bool defined;
    int rc;
    const char *list = tg_env_value(k->c, ENV_LIST_VAR, &defined);
    if (defined) {
        /* Never override the user's list: check it, and say what it leaves out. */
        if (!list) {
            note(ev, k->path.field,
                 "%s comes from valueFrom; make sure it lists the EFA variables or ranks on "
                 "workers will not see them",
                 ENV_LIST_VAR);
        } else if (!env_list_missing(list, names, miss, sizeof(miss))) {
            return 0;
        } else if (runs_ranks) {
            /* its own ranks inherit its env: the variables still belong there */
            note(ev, k->path.field,
                 "%s does not list %s: ranks on workers will not see them; add them to it",
                 ENV_LIST_VAR, miss);
        } else {
            /* the launcher runs no rank: what the list leaves out would reach none */
            note(ev, k->path.field,
                 "%s does not list %s: not added to the launcher (ranks on workers would not "
                 "see them); add them to the list",
                 ENV_LIST_VAR, miss);
            return drop_unlisted(list, items) < 0 ? -ENOMEM : 0;
        }
        return 0;
    }
    if ((rc = tg_eval_launch(ev, k, TG_MPI_OPENMPI, &l)) < 0)
        return rc;
    tg_path_sub(field, sizeof(field), &k->path, "command");
    if (runs_entrypoint(k->c) || l->nruns == 0 || launch_uncertain(l)) {
        const char *why = runs_entrypoint(k->c) ? "image entrypoint"
                          : l->nruns == 0       ? "no mpirun seen"
                                                : "mpirun not fully readable";
        unforwarded(NULL, names, miss, sizeof(miss));
        note(ev, runs_entrypoint(k->c) ? k->path.field : field,
             "%s: %s not set (Open MPI 4 rejects it with -x); forward %s with -x", why,
             ENV_LIST_VAR, miss);
    } else if (cmdline_forwarding(l)) {
        if (unforwarded(l, names, miss, sizeof(miss)))
            note(ev, field, "mpirun uses -x, so %s cannot be used; add -x %s", ENV_LIST_VAR, miss);
    } else {
        char value[512];
        size_t i, at = 0;
        json_t *v;
        json_array_foreach (names, i, v) {
            int n = snprintf(value + at, sizeof(value) - at, "%s%s", i ? ";" : "",
                             json_string_value(v));
            if (n < 0 || (size_t)n >= sizeof(value) - at)
                break;
            at += (size_t)n;
        }
        rc = items_add(items, ENV_LIST_VAR, value);
    }
    return rc;
}

/* Intel MPI and MPICH (Hydra): the launcher's environment reaches the ranks by default.
 * pmodels/mpich: doc/wiki/how_to/Using_the_Hydra_Process_Manager.md ("By default, hydra ...
 * inherits environment variables from the shell on which mpiexec is launched, and passes it to
 * the launched processes"); Intel MPI Developer Reference, Hydra options (-genvall/-envall
 * propagate all, -genvnone/-envnone suppress propagation). Only -genvnone breaks that. */
static int hydra_forwarding(struct tg_eval *ev, const struct tg_container *k, json_t *names,
                            enum tg_mpi_impl impl)
{
    char miss[160], field[TG_PATH_MAX + 16];
    const struct tg_launch *l;
    bool none = false;
    int rc = tg_eval_launch(ev, k, impl, &l);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < l->nruns; i++)
        none |= l->runs[i].forward_none;
    if (none && unforwarded(l, names, miss, sizeof(miss)))
        note(ev, tg_path_sub(field, sizeof(field), &k->path, "command"),
             "mpiexec -genvnone stops %s from reaching the ranks; add -genv for them", miss);
    return 0;
}

/* ---- per workload ---------------------------------------------------------------------------- */

/* The launcher's containers[0] (the one the operator runs mpirun in), or NULL. */
static const struct tg_container *launcher_main(const struct tg_template *t)
{
    json_t *first = json_array_get(json_object_get(t->spec, "containers"), 0);
    for (size_t i = 0; first && i < t->ncontainers; i++) {
        if (t->containers[i].c == first)
            return &t->containers[i];
    }
    return NULL;
}

/* Injects into one container requesting EFA. */
static int inject_container(struct tg_eval *ev, const struct tg_container *k, const struct pins *p)
{
    json_t *items = json_array();
    if (!items || missing_items(ev->policy, k->c, p, items) < 0) {
        json_decref(items);
        return -ENOMEM;
    }
    if (json_array_size(items) == 0 || !env_writable(ev, k, items)) {
        json_decref(items);
        return 0;
    }
    return emit(ev, k, items);
}

/* MPIJob launcher containers[0]: the variables the workers' ranks need (conditions evaluated on
 * the workers' instance types, and the launcher's own when it requests EFA too), plus the Open MPI
 * forwarding. SPEC section 5; api-facts 2.7: the operator only sets up containers[0]. */
static int inject_launcher(struct tg_eval *ev, const struct tg_container *k, struct pins *p)
{
    const struct tg_mpi *m = &ev->wl->mpi;
    json_t *items = json_array(), *names = json_array();
    enum tg_mpi_impl impl;
    int rc = -ENOMEM;
    if (!items || !names)
        goto out;
    if (requests_efa(k->c)) {
        struct pins own;
        if ((rc = template_pins(m->launcher, &own)) < 0)
            goto out;
        if (own.n == 0)
            p->n = 0;
        else if (p->n)
            pins_union(p, &own);
    }
    if ((rc = wanted_names(ev->policy, p, names)) < 0 ||
        (rc = missing_items(ev->policy, k->c, p, items)) < 0)
        goto out;
    if (json_array_size(names) == 0)
        goto out;
    /* spec.mpiImplementation (api-facts 2.2): OpenMPI (default), Intel, MPICH. */
    if (tg_mpi_impl_parse(m->implementation, &impl) < 0)
        note(ev, "spec.mpiImplementation",
             "unknown value \"%.40s\": EFA variables are not forwarded to the ranks",
             m->implementation);
    else if (impl == TG_MPI_OPENMPI)
        rc = openmpi_forwarding(ev, k, names, items,
                                requests_efa(k->c) || m->run_launcher_as_worker);
    else
        rc = hydra_forwarding(ev, k, names, impl);
    /* envFrom (not opted in) or an unusable env: nothing is added, the forwarding list included. */
    if (rc == 0 && json_array_size(items) && env_writable(ev, k, items)) {
        rc = emit(ev, k, items);
        items = NULL;
    }
out:
    json_decref(items);
    json_decref(names);
    return rc;
}

int tg_mutate_efa_env(struct tg_eval *ev)
{
    const struct tg_workload *wl = ev->wl;
    const struct tg_container *lmain = NULL;
    struct pins worker_pins = {.n = 0};
    int rc = 0;
    if (!ev->patch || !ev->policy || !wl)
        return 0;
    if (wl->kind == TG_KIND_MPIJOB && wl->mpi.launcher && wl->mpi.worker &&
        tg_template_requests_efa(wl->mpi.worker)) {
        lmain = launcher_main(wl->mpi.launcher);
        rc = template_pins(wl->mpi.worker, &worker_pins);
    }
    for (size_t t = 0; t < wl->ntpl && rc == 0; t++) {
        const struct tg_template *tpl = &wl->tpl[t];
        struct pins p;
        rc = template_pins(tpl, &p);
        for (size_t i = 0; i < tpl->ncontainers && rc == 0; i++) {
            const struct tg_container *k = &tpl->containers[i];
            if (k == lmain)
                rc = inject_launcher(ev, k, &worker_pins);
            else if (requests_efa(k->c))
                rc = inject_container(ev, k, &p);
        }
    }
    if (rc == 0 && ev->error)
        rc = ev->error;
    return rc;
}
