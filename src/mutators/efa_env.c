/* efa_env.c -- /mutate: the policy's EFA/NCCL env, put where it reaches the processes that use
 * EFA (SPEC 10 "inject where it makes a difference"; the model and its sources are in
 * docs/mutation.md).
 *
 * Where the variables go, by how the ranks get their environment (include/tg/roles.h):
 * - own env (Pods, Volcano tasks without an MPI launcher, the workload kinds of SPEC 11, and the
 *   training-operator's kubectl-exec ranks): every container that requests EFA.
 * - ssh (mpi-operator v2beta1 with Open MPI, Volcano MPI jobs, Kubeflow Trainer's MPI runtimes and
 *   the JobSets built from them): the launcher's
 *   OMPI_MCA_mca_base_env_list as NAME=value entries; nothing in the launcher's own env (it never
 *   carries FI_PROVIDER=efa without a device) and nothing in the sshd workers. A launcher that
 *   already uses -x gets nothing (Open MPI refuses the list together with -x): a note says which
 *   -x options to add.
 * - hydra (Intel MPI, MPICH, horovodrun): the launcher container's own env, which hydra passes on.
 * - NodeSets, and the sshd rank-host Pods operators create: nothing.
 *
 * Contract (idempotent by construction, reinvocationPolicy IfNeeded):
 * - A value the user set always wins: a variable already named in the container's env, in the
 *   launcher's forwarding, or (for ranks over ssh or hydra) in the worker container, whose literal
 *   value is then the one forwarded. A second run finds nothing to add and returns no patch.
 * - A container with envFrom gets nothing unless the policy says injectWithEnvFrom; a note says so.
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
#include "tg/launch.h"
#include "tg/launch_memo.h"
#include "tg/mpirun.h"
#include "tg/obj.h"
#include "tg/patch.h"
#include "tg/pod.h"
#include "tg/policy.h"
#include "tg/registry.h"
#include "tg/roles.h"

/* Open MPI's environment form of `mpirun -x` (OMPI_MCA_<param>, param mca_base_env_list). */
#define ENV_LIST_VAR "OMPI_MCA_mca_base_env_list"
/* Kubernetes warnings are cut at 256 characters (docs/references.md#ref-admission-warning-limits);
 * notes stay under that. */
#define NOTE_MAX 256

/* ---- notes --------------------------------------------------------------------------------- */

static void note(struct tg_eval *ev, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends "[mutate.efa-env] field: message" to ev->notes (they become warnings; the pipeline cuts
 * each at 256 characters). */
static void note(struct tg_eval *ev, const char *field, const char *fmt, ...)
{
    char msg[NOTE_MAX], line[NOTE_MAX + TG_PATH_MAX + 32];
    va_list ap;
    if (!ev->notes || tg_eval_action(ev, TG_RULE_MUTATE_EFA_ENV) == TG_ACTION_OFF)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(line, sizeof(line), "[%s] %s: %s", tg_rule_defs[TG_RULE_MUTATE_EFA_ENV].id, field,
             msg);
    if (json_array_append_new(ev->notes, json_string(line)) && !ev->error)
        ev->error = -ENOMEM;
}

/* ---- what a container asks for ------------------------------------------------------------- */

static bool has_env_from(json_t *c)
{
    json_t *ef = json_object_get(c, "envFrom");
    if (!ef || json_is_null(ef))
        return false;
    /* A wrong type counts as present: better to add nothing than to shadow an unknown source. */
    return !json_is_array(ef) || json_array_size(ef) > 0;
}

static bool env_defined(const struct tg_container *k, const char *name)
{
    bool defined;
    tg_ctr_env_value(k, name, &defined);
    return defined;
}

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
    /* {"name": name, "value": value}, in that order (constant ASCII keys: no UTF-8 check) */
    json_t *it = json_object();
    if (!it || json_object_set_new_nocheck(it, "name", json_string(name)) ||
        json_object_set_new_nocheck(it, "value", json_string(value ? value : ""))) {
        json_decref(it);
        return -ENOMEM;
    }
    return json_array_append_new(items, it) ? -ENOMEM : 0;
}

/* ---- which defaults apply to a template -------------------------------------------------- */

/* Does entry e apply to the pods of template t, whose possible instance types are `types`? Every
 * condition must hold for every possible type: not pinned (types open) means none holds
 * (docs/mutation.md). */
static bool entry_applies(const struct tg_policy *pol, const struct tg_env_entry *e,
                          const struct tg_template *t, const struct tg_label_pin *types)
{
    if (e->host_network_only && !json_is_true(json_object_get(t->spec, "hostNetwork")))
        return false;
    if (!e->gdr_only && !e->rdma_read_only && !e->nfamilies)
        return true;
    if (!types->finite || types->n == 0)
        return false;
    for (size_t i = 0; i < types->n; i++) {
        const struct tg_instance *it = tg_policy_instance(pol, types->values[i]);
        if ((e->gdr_only && (!it || !it->gdr)) ||
            (e->rdma_read_only && (!it || it->rdma_read != TG_YES)))
            return false;
        if (e->nfamilies) {
            char fam[64];
            bool found = false;
            tg_instance_family(types->values[i], fam, sizeof(fam));
            for (size_t f = 0; f < e->nfamilies && !found; f++)
                found = !strcmp(e->families[f], fam);
            if (!found)
                return false;
        }
    }
    return true;
}

/* The policy's entries that apply to the pods of template t, in policy order, as [{name, value}]
 * (a name listed twice: the first that applies). The possible instance types count the ones a
 * family pin admits that can hold the pod's GPUs, Neuron devices and EFA. */
static int defaults_for(struct tg_eval *ev, const struct tg_template *t, json_t *items)
{
    const struct tg_policy *pol = ev->policy;
    struct tg_label_pin types;
    struct tg_fit need = {0, 0, 0};
    if (tg_template_count(t, TG_RES_GPU, &need.gpus) != 1)
        need.gpus = 0;
    if (tg_template_count(t, TG_RES_NEURON, &need.neuron) != 1)
        need.neuron = 0;
    if (tg_template_count(t, TG_RES_EFA, &need.efa) != 1)
        need.efa = 0;
    if (tg_template_instance_types(NULL, t, pol->instances, pol->ninstances, &need, &types) < 0)
        return -ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < pol->ninject && rc == 0; i++) {
        const struct tg_env_entry *e = &pol->inject_env[i];
        if (e->name && entry_applies(pol, e, t, &types))
            rc = items_add(items, e->name, e->value);
    }
    tg_label_pin_release(&types);
    return rc;
}

/* items without the names container k already defines (the user's value wins). New array. */
#define MISSING_MAX 32

static json_t *missing_in(json_t *items, const struct tg_container *k)
{
    json_t *env = k->env_raw;
    json_t *out = json_array();
    size_t i, j, n = json_array_size(items);
    json_t *it, *e;
    const char *names[MISSING_MAX];
    bool defined[MISSING_MAX];
    /* up to MISSING_MAX items: one pass over the container's env marks the names it defines
     * (the same answer as env_defined per item, which walks the env once for each) */
    for (j = 0; j < n && n <= MISSING_MAX; j++) {
        names[j] = tg_env_entry_name(json_array_get(items, j));
        defined[j] = false;
    }
    json_array_foreach (n <= MISSING_MAX && json_is_array(env) ? env : NULL, i, e) {
        const char *en = tg_ctr_env_name(k, i); /* the container's kept names */
        for (j = 0; en && j < n; j++)
            defined[j] = defined[j] || !strcmp(en, names[j]);
    }
    json_array_foreach (items, i, it) {
        bool have = n <= MISSING_MAX
                        ? defined[i]
                        : env_defined(k, json_string_value(json_object_get(it, "name")));
        if (out && !have && json_array_append(out, it)) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

/* ---- building and emitting the items -------------------------------------------------------- */

/* May the mutator touch this container's env at all? Notes why not. */
static bool env_writable(struct tg_eval *ev, const struct tg_container *k, json_t *items)
{
    char field[TG_PATH_MAX + 16];
    json_t *env = k->env_raw;
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

/* Comma-joins into buf the names of items that the user's OMPI_MCA_mca_base_env_list value does not
 * forward. Returns how many. */
static size_t env_list_missing(const char *list, json_t *items, char *buf, size_t len)
{
    struct tg_mpirun run;
    size_t i, count = 0, at = 0;
    json_t *it;
    memset(&run, 0, sizeof(run));
    run.impl = TG_MPI_OPENMPI;
    buf[0] = '\0';
    if (tg_mpirun_add_env_list(&run, list) < 0) {
        tg_mpirun_release(&run);
        return 0;
    }
    json_array_foreach (items, i, it) {
        const char *name = json_string_value(json_object_get(it, "name"));
        if (tg_mpirun_find_fwd(&run, name))
            continue;
        int n = snprintf(buf + at, len - at, "%s%s", count ? ", " : "", name);
        if (n > 0 && (size_t)n < len - at)
            at += (size_t)n;
        count++;
    }
    tg_mpirun_release(&run);
    return count;
}

/* ---- ranks started by a launcher ------------------------------------------------------------ */

/* Does some run of l forward name to the ranks (-x NAME[=value], -genv, -genvlist, an env list
 * entry, or a forward-all launcher)? A bare -x NAME is the user's choice even when the launcher's
 * env does not show NAME: the image may set it (ENV in its Dockerfile), which the webhook cannot
 * see. */
static bool some_run_forwards(const struct tg_launch *l, const char *name)
{
    for (size_t i = 0; l && i < l->nruns; i++) {
        if (l->runs[i].forward_all || tg_mpirun_find_fwd(&l->runs[i], name))
            return true;
    }
    return false;
}

/* Does a command or args string set mca_base_env_list itself (--mca mca_base_env_list ...)?
 * mpirun then has the list in its own environment, and -x next to it stops Open MPI 4
 * (orterun:conflict-env-set): more entries belong in that list's value. */
static bool sets_env_list(const char *s, void *ctx)
{
    (void)ctx;
    return strstr(s, "mca_base_env_list") != NULL;
}

/* The field of the command or args item that holds the first launch of l (or its script), for
 * the notes: "command" when no launch was read. */
static const char *launch_field(const struct tg_container *k, const struct tg_launch *l, char *buf,
                                size_t len)
{
    json_t *cmd = json_object_get(k->c, "command");
    size_t ncmd = json_is_array(cmd) ? json_array_size(cmd) : 0;
    struct tg_path p;
    if (!l || l->nruns == 0)
        return tg_path_sub(buf, len, &k->path, "command");
    size_t item = l->runs[0].argv_index;
    tg_path_key(&p, &k->path, item < ncmd ? "command" : "args");
    tg_path_index(&p, &p, item < ncmd ? item : item - ncmd);
    snprintf(buf, len, "%s", p.field);
    return buf;
}

/* Does any run pass env on its own command line (-x, --mca mca_base_env_list, -genv)? */
static bool cmdline_forwarding(const struct tg_launch *l)
{
    for (size_t i = 0; i < l->nruns; i++) {
        if (l->runs[i].nfwd || l->runs[i].forward_all)
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

/* Every run is hydra-like: its launcher hands its whole environment to the ranks (Intel MPI,
 * MPICH, horovodrun). */
static bool hydra_like(const struct tg_launch *l)
{
    bool all = l->nruns > 0;
    for (size_t i = 0; i < l->nruns; i++)
        all &= tg_mpirun_forwards_all(&l->runs[i]);
    return all;
}

/* Joins "NAME=value" of items with sep into buf; false when it does not fit. */
static bool join_pairs(json_t *items, const char *prefix, const char *sep, const char *kv,
                       char *buf, size_t len)
{
    size_t i, at = 0;
    json_t *it;
    buf[0] = '\0';
    json_array_foreach (items, i, it) {
        int n = snprintf(buf + at, len - at, "%s%s%s%s%s", i ? sep : "", prefix,
                         json_string_value(json_object_get(it, "name")), kv,
                         json_string_value(json_object_get(it, "value")));
        if (n < 0 || (size_t)n >= len - at)
            return false;
        at += (size_t)n;
    }
    return true;
}

static bool join_items(json_t *items, const char *prefix, const char *sep, char *buf, size_t len)
{
    return join_pairs(items, prefix, sep, "=", buf, len);
}

/* The launcher template of an MPI workload (MPIJob Launcher; the launcher job of a Kubeflow Trainer
 * MPI runtime or JobSet; the Volcano task that runs mpirun). */
static const struct tg_template *launcher_template(struct tg_eval *ev, int *rc)
{
    const struct tg_workload *wl = ev->wl;
    *rc = 0;
    if (wl->kind == TG_KIND_MPIJOB)
        return wl->mpi.launcher;
    /* Kubeflow Trainer MPI: the launcher replicated job, also when it runs ranks itself
     * (runLauncherAsNode), like an MPIJob Launcher with runLauncherAsWorker */
    if (wl->trainer_mpi) {
        for (size_t i = 0; i < wl->ntpl; i++) {
            if (wl->tpl[i].role_name && !strcmp(wl->tpl[i].role_name, "launcher"))
                return &wl->tpl[i];
        }
        return NULL;
    }
    for (size_t i = 0; i < wl->ntpl; i++) {
        int r = tg_template_launcher_only(ev, &wl->tpl[i]);
        if (r < 0) {
            *rc = r;
            return NULL;
        }
        if (r)
            return &wl->tpl[i];
    }
    return NULL;
}

/* The container of t that runs the launcher: the first with a launcher run, else containers[0]
 * (the one the MPI operator sets up). */
static int launcher_container(struct tg_eval *ev, const struct tg_template *t,
                              const struct tg_container **out)
{
    json_t *first = json_array_get(json_object_get(t->spec, "containers"), 0);
    *out = NULL;
    for (size_t i = 0; i < t->ncontainers; i++) {
        const struct tg_launch *l;
        int rc = tg_eval_launch(ev, &t->containers[i], tg_workload_mpi_impl(ev->wl), &l);
        if (rc < 0)
            return rc;
        if (l->nruns > 0 && !t->containers[i].init) {
            *out = &t->containers[i];
            return 0;
        }
        if (t->containers[i].c == first)
            *out = &t->containers[i];
    }
    return 0;
}

/* The ranks' defaults: those that apply to every rank template that requests EFA, with the value
 * a rank template's main container sets itself when it sets one (the user's value wins, also for
 * the ranks). Rank templates without EFA are not looked at. Appends to items. */
static int rank_defaults(struct tg_eval *ev, const struct tg_template *lt, json_t *items)
{
    const struct tg_workload *wl = ev->wl;
    json_t *common = NULL;
    int rc = 0;
    for (size_t i = 0; i < wl->ntpl && rc == 0; i++) {
        const struct tg_template *t = &wl->tpl[i];
        if (t == lt || !tg_template_requests_efa(t))
            continue;
        json_t *mine = json_array();
        if (!mine || (rc = defaults_for(ev, t, mine)) < 0) {
            json_decref(mine);
            rc = -ENOMEM;
            break;
        }
        if (!common) {
            common = mine;
            continue;
        }
        for (size_t k = json_array_size(common); k-- > 0;) {
            json_t *it = json_array_get(common, k);
            if (!items_have(mine, json_string_value(json_object_get(it, "name"))))
                json_array_remove(common, k);
        }
        json_decref(mine);
    }
    /* the user's own worker value replaces the default (first regular container: sshd's) */
    const struct tg_template *w = NULL;
    for (size_t i = 0; i < wl->ntpl && !w; i++)
        if (&wl->tpl[i] != lt && tg_template_requests_efa(&wl->tpl[i]))
            w = &wl->tpl[i];
    json_t *wc = w ? json_array_get(json_object_get(w->spec, "containers"), 0) : NULL;
    size_t i;
    json_t *it;
    json_array_foreach (common, i, it) {
        const char *name = json_string_value(json_object_get(it, "name"));
        bool defined;
        const char *own = wc ? tg_env_value(wc, name, &defined) : NULL;
        if (wc && defined && !own)
            continue; /* valueFrom on the worker: its value is unknown here */
        if (rc == 0 &&
            items_add(items, name, own ? own : json_string_value(json_object_get(it, "value"))) < 0)
            rc = -ENOMEM;
    }
    json_decref(common);
    return rc;
}

/* Open MPI over ssh: the defaults become NAME=value entries of the launcher's
 * OMPI_MCA_mca_base_env_list (Open MPI applies them to every rank like -x NAME=value; it refuses
 * the list together with -x: open-mpi/ompi orte/orted/orted_submit.c "conflict-env-set",
 * docs/references.md#ref-openmpi-env-list). */
static int ssh_forwarding(struct tg_eval *ev, const struct tg_container *k,
                          const struct tg_launch *l, json_t *items)
{
    char buf[512], field[TG_PATH_MAX + 16];
    bool defined;
    const char *list = tg_env_value(k->c, ENV_LIST_VAR, &defined);
    if (defined) {
        /* never override the user's list: say what it leaves out */
        if (!list) {
            note(ev, k->path.field,
                 "%s comes from valueFrom; make sure it forwards the EFA variables (%s)",
                 ENV_LIST_VAR, join_items(items, "", ";", buf, sizeof(buf)) ? buf : "...");
            return 0;
        }
        if (env_list_missing(list, items, buf, sizeof(buf)))
            note(ev, k->path.field,
                 "%s does not forward %s: ranks on workers will not see them; "
                 "add them to it",
                 ENV_LIST_VAR, buf);
        return 0;
    }
    launch_field(k, l, field, sizeof(field));
    if (tg_command_find(k->c, sets_env_list, NULL)) {
        if (join_items(items, "", ";", buf, sizeof(buf)))
            note(ev, field,
                 "mpirun sets mca_base_env_list on its command line, so %s cannot be added and -x "
                 "would conflict with it; add %s to that list's value (entries separated by ;)",
                 ENV_LIST_VAR, buf);
        return 0;
    }
    if (runs_entrypoint(k->c) || l->nruns == 0 || launch_uncertain(l) || cmdline_forwarding(l)) {
        const char *why = runs_entrypoint(k->c)   ? "the image entrypoint runs mpirun"
                          : l->nruns == 0         ? "no mpirun seen"
                          : cmdline_forwarding(l) ? "mpirun uses -x"
                                                  : "mpirun not fully readable";
        if (join_items(items, "-x ", " ", buf, sizeof(buf)))
            note(ev, runs_entrypoint(k->c) ? k->path.field : field,
                 "%s, so %s cannot be added (Open MPI refuses it together with -x); add %s", why,
                 ENV_LIST_VAR, buf);
        return 0;
    }
    if (!join_items(items, "", ";", buf, sizeof(buf)))
        return 0;
    json_t *one = json_array();
    if (!one || items_add(one, ENV_LIST_VAR, buf) < 0) {
        json_decref(one);
        return -ENOMEM;
    }
    if (!env_writable(ev, k, one)) {
        json_decref(one);
        return 0;
    }
    return emit(ev, k, one);
}

/* Hydra: the launcher's whole environment reaches the ranks, unless -genvnone. */
static int hydra_forwarding(struct tg_eval *ev, const struct tg_container *k,
                            const struct tg_launch *l, json_t *items)
{
    char field[TG_PATH_MAX + 16], buf[512];
    for (size_t i = 0; i < l->nruns; i++) {
        if (l->runs[i].forward_none) {
            /* hydra's -genv takes the name and the value as two words (Intel MPI Developer
             * Reference "Global Hydra Options"; MPICH mpiexec -genv NAME VALUE) */
            if (join_pairs(items, "-genv ", " ", " ", buf, sizeof(buf)))
                note(ev, launch_field(k, l, field, sizeof(field)),
                     "-genvnone stops the launcher's env from reaching the ranks; add %s", buf);
            return 0;
        }
    }
    json_t *add = missing_in(items, k);
    if (!add)
        return -ENOMEM;
    if (json_array_size(add) == 0 || !env_writable(ev, k, add)) {
        json_decref(add);
        return 0;
    }
    return emit(ev, k, add);
}

/* An MPI workload whose ranks a launcher starts over ssh or hydra: the env goes to the launcher
 * only. */
static int inject_launcher(struct tg_eval *ev, const struct tg_template *lt)
{
    const struct tg_container *k;
    const struct tg_launch *l;
    json_t *items = json_array();
    int rc = items ? 0 : -ENOMEM;
    if (rc == 0)
        rc = launcher_container(ev, lt, &k);
    if (rc < 0 || !k)
        goto out;
    if ((rc = tg_eval_launch(ev, k, tg_workload_mpi_impl(ev->wl), &l)) < 0 ||
        (rc = rank_defaults(ev, lt, items)) < 0)
        goto out;
    /* what the launcher already forwards is the user's choice */
    for (size_t i = json_array_size(items); i-- > 0;) {
        const char *name = json_string_value(json_object_get(json_array_get(items, i), "name"));
        if (some_run_forwards(l, name) && !hydra_like(l))
            json_array_remove(items, i);
    }
    if (json_array_size(items) == 0)
        goto out;
    bool hydra = ev->wl->kind == TG_KIND_MPIJOB
                     ? tg_workload_rank_env(ev, ev->wl) == TG_RANK_ENV_HYDRA
                     : false;
    rc = hydra || hydra_like(l) ? hydra_forwarding(ev, k, l, items)
                                : ssh_forwarding(ev, k, l, items);
out:
    json_decref(items);
    return rc;
}

/* ---- per workload ---------------------------------------------------------------------------- */

/* Own env: every container of t that requests EFA gets the defaults that apply to t. */
static int inject_own(struct tg_eval *ev, const struct tg_template *t)
{
    json_t *items = NULL;
    int rc = 0;
    for (size_t i = 0; i < t->ncontainers && rc == 0; i++) {
        const struct tg_container *k = &t->containers[i];
        if (!tg_ctr_requests_efa(k))
            continue;
        if (!items) {
            if (!(items = json_array()) || defaults_for(ev, t, items) < 0) {
                rc = -ENOMEM;
                break;
            }
        }
        json_t *add = missing_in(items, k);
        if (!add) {
            rc = -ENOMEM;
            break;
        }
        if (json_array_size(add) == 0 || !env_writable(ev, k, add))
            json_decref(add);
        else
            rc = emit(ev, k, add);
    }
    json_decref(items);
    return rc;
}

int tg_mutate_efa_env(struct tg_eval *ev)
{
    const struct tg_workload *wl = ev->wl;
    int rc = 0;
    if (!ev->patch || !ev->policy || !wl)
        return 0;
    /* slurmstepd starts tasks with the job's env, never slurmd's (SPEC 10) */
    if (wl->kind == TG_KIND_NODESET || wl->kind == TG_KIND_NODESET_BAD ||
        tg_pod_is_ssh_rank_host(wl))
        return 0;
    enum tg_rank_env how = tg_workload_rank_env(ev, wl);
    const struct tg_template *lt = NULL;
    if (how == TG_RANK_ENV_SSH || how == TG_RANK_ENV_HYDRA) {
        if (!(lt = launcher_template(ev, &rc)) && rc < 0)
            return rc;
        if (wl->kind == TG_KIND_MPIJOB && !wl->mpi.worker)
            lt = NULL; /* a launcher-only MPIJob runs its ranks locally */
    }
    if (lt)
        rc = inject_launcher(ev, lt);
    else
        for (size_t t = 0; t < wl->ntpl && rc == 0; t++)
            rc = inject_own(ev, &wl->tpl[t]);
    if (rc == 0 && ev->error)
        rc = ev->error;
    return rc;
}
