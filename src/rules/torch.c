/* torch.c -- the torch.* rules: torchrun's effective --nnodes against the pods of its world, and
 * --nproc-per-node against the GPUs or NeuronCores of the pod (SPEC 11).
 *
 * The effective values are what the torchrun process sees: its command line, else PET_<OPTION>
 * from its environment, else torchrun's defaults (--nnodes 1:1, --nproc-per-node 1). The
 * environment includes what the controller adds to every container (training-operator's
 * PET_NNODES and PET_NPROC_PER_NODE after the user's entries, Kubeflow Trainer's upserted
 * PET_*, LWS_GROUP_SIZE): the view's operator_env, which wins over the user's entries
 * (tg_eval_launch_run). A value
 * that cannot be read (a variable set nowhere, a value known only at run time) is never judged,
 * and neither is the world of a Pod (SPEC 11). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tg/instances.h"
#include "tg/launch.h"
#include "tg/launch_memo.h"
#include "tg/obj.h"
#include "tg/pod.h"
#include "tg/policy.h"
#include "tg/registry.h"
#include "tg/roles.h"

#define RES_NEURONCORE "aws.amazon.com/neuroncore"

/* ---- where a value comes from, for the finding's field and message ------------------------- */

/* The command/args item that holds the launch (argv_index counts command, then args). */
static void launch_field(const struct tg_container *c, size_t argv_index, struct tg_path *out)
{
    size_t ncmd = json_array_size(json_object_get(c->c, "command"));
    if (argv_index < ncmd) {
        tg_path_key(out, &c->path, "command");
        tg_path_index(out, out, argv_index);
    } else {
        tg_path_key(out, &c->path, "args");
        tg_path_index(out, out, argv_index - ncmd);
    }
}

/* The field an option's value comes from: the controller's field for its own PET_* value, the
 * container's env entry, or the launch itself (flag, script export, default). */
static void value_field(const struct tg_template *t, const struct tg_container *c,
                        const struct tg_torchrun *r, const struct tg_torch_opt *o, char *field,
                        size_t len)
{
    struct tg_path p;
    size_t i;
    json_t *e;
    if (o->set && o->from_env) {
        json_array_foreach (t->operator_env, i, e) {
            const char *v = json_string_value(json_object_get(e, "value"));
            if (!strcmp(json_string_value(json_object_get(e, "name")), o->env_name) && v &&
                !strcmp(v, o->text)) {
                snprintf(field, len, "%s", json_string_value(json_object_get(e, "field")));
                return;
            }
        }
        bool found = false;
        json_array_foreach (json_object_get(c->c, "env"), i, e) {
            const char *n = json_string_value(json_object_get(e, "name"));
            if (n && !strcmp(n, o->env_name)) {
                tg_path_key(&p, &c->path, "env");
                tg_path_index(&p, &p, i);
                found = true;
            }
        }
        if (found) {
            snprintf(field, len, "%s", p.field);
            return;
        }
    }
    launch_field(c, r->argv_index, &p);
    snprintf(field, len, "%s", p.field);
}

/* "--nnodes=2", "PET_NNODES=2", "no --nnodes: torchrun's default 1:1" */
static void describe(const struct tg_torch_opt *o, const char *flag, const char *dflt, char *buf,
                     size_t len)
{
    if (!o->set)
        snprintf(buf, len, "no %s: torchrun's default %s", flag, dflt);
    else if (o->from_env)
        snprintf(buf, len, "%s=%s", o->env_name, o->text);
    else
        snprintf(buf, len, "%s=%s", flag, o->text);
}

/* ---- one finding per world ------------------------------------------------------------------
 * The templates of one world usually run the same line (a PyTorchJob's Master and Worker): one
 * finding per world, rule and value says it once. */
#define MAX_SEEN 16

struct seen {
    struct {
        int world;
        enum tg_rule_id rule;
        long long a, b;
    } v[MAX_SEEN];
    size_t n;
};

/* True the first time (world of t, rule, a, b) is met. */
static bool first_time(struct seen *s, const struct tg_template *t, enum tg_rule_id rule,
                       long long a, long long b)
{
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i].world == t->world && s->v[i].rule == rule && s->v[i].a == a && s->v[i].b == b)
            return false;
    }
    if (s->n < MAX_SEEN) {
        s->v[s->n].world = t->world;
        s->v[s->n].rule = rule;
        s->v[s->n].a = a;
        s->v[s->n].b = b;
        s->n++;
    }
    return true;
}

/* ---- torch.nnodes-mismatch ------------------------------------------------------------------ */

/* The pods of t's world (*all), and those of them that are not launcher-like (*ranks): a
 * coordinating pod (an LWS leader without devices) may or may not join torchrun's rendezvous, so
 * either count is a world torchrun can be meant for. False when a count is unknown. */
static bool world_pods(struct tg_eval *ev, const struct tg_template *t, long long *all,
                       long long *ranks)
{
    const struct tg_workload *wl = ev->wl;
    *all = *ranks = 0;
    for (size_t i = 0; i < wl->ntpl; i++) {
        const struct tg_template *o = &wl->tpl[i];
        if (!tg_templates_share_world(o, t))
            continue;
        int rc = o == t ? 0 : tg_template_launcher_only(ev, o);
        if (rc < 0 || o->world_pods < 0)
            return false;
        if (__builtin_add_overflow(*all, o->world_pods, all) ||
            __builtin_add_overflow(*ranks, rc > 0 ? 0 : o->world_pods, ranks))
            return false; /* more pods than a long long: nothing to compare */
    }
    return *ranks > 0;
}

static void check_nnodes(struct tg_eval *ev, struct seen *seen, const struct tg_template *t,
                         const struct tg_container *c, const struct tg_torchrun *r)
{
    long long min, max, pods, ranks;
    char what[96], field[TG_PATH_MAX];
    if (!world_pods(ev, t, &pods, &ranks) || tg_torchrun_nnodes(r, &min, &max) != 1 ||
        (pods >= min && pods <= max) || (ranks >= min && ranks <= max) ||
        !first_time(seen, t, TG_RULE_TORCH_NNODES_MISMATCH, min, max))
        return;
    if (r->standalone)
        snprintf(what, sizeof(what), "--standalone");
    else
        describe(&r->nnodes, "--nnodes", "1:1", what, sizeof(what));
    value_field(t, c, r, &r->nnodes, field, sizeof(field));
    if (r->standalone || min == max)
        tg_report(ev, TG_RULE_TORCH_NNODES_MISMATCH, field,
                  "%s runs %lld node%s (%s), but %lld pods train together in this world: the "
                  "rendezvous never completes or leaves pods out; set --nnodes=%lld",
                  r->launcher, min, min == 1 ? "" : "s", what, pods, pods);
    else
        tg_report(ev, TG_RULE_TORCH_NNODES_MISMATCH, field,
                  "%s accepts %lld to %lld nodes (%s), but %lld pods train together in this world: "
                  "the rendezvous %s; set --nnodes to a range that holds %lld",
                  r->launcher, min, max, what, pods,
                  pods < min ? "never reaches its minimum" : "leaves pods out", pods);
}

/* ---- torch.nproc-gpu-mismatch --------------------------------------------------------------- */

/* NEURON_LOGICAL_NC_CONFIG of container c: 1 or 2, else 0 (docs/references.md,
 * ref-neuron-trn2-lnc). */
static int lnc_env(const struct tg_container *c)
{
    char buf[32];
    const char *v = tg_ctr_env_get(c, "NEURON_LOGICAL_NC_CONFIG", buf, sizeof(buf), NULL);
    return v && (!strcmp(v, "1") || !strcmp(v, "2")) ? v[0] - '0' : 0;
}

/* Logical NeuronCores per Neuron device on every instance type t is pinned to (0: not known). */
static int pinned_cores(struct tg_eval *ev, const struct tg_template *t, int lnc)
{
    struct tg_label_pin pin;
    int cores = 0;
    tg_label_pin_init(&pin);
    if (tg_template_instance_types(NULL, t, ev->policy->instances, ev->policy->ninstances, NULL,
                                   &pin) < 0) {
        ev->error = ev->error ? ev->error : -ENOMEM;
        goto out;
    }
    for (size_t i = 0; pin.finite && i < pin.n; i++) {
        const struct tg_instance *in = tg_policy_instance(ev->policy, pin.values[i]);
        int logical = in ? tg_instance_logical_cores(in, lnc) : 0;
        if (logical <= 0 || (cores && logical != cores)) {
            cores = 0;
            break;
        }
        cores = logical;
    }
out:
    tg_label_pin_release(&pin);
    return cores;
}

/* The devices one torchrun process each should get: GPUs, or logical NeuronCores. 1 and *n, *what
 * when known; 0 for a pod with neither (CPU training), a DRA claim (an unknown count), or
 * Neuron devices on instance types whose cores are not known. */
static int pod_devices(struct tg_eval *ev, const struct tg_template *t,
                       const struct tg_container *c, long long *n, const char **what)
{
    long long dev = 0;
    if (json_array_size(tg_template_resource_claims(t)) > 0)
        return 0;
    if (tg_template_count(t, TG_RES_GPU, n) == 1 && *n > 0) {
        *what = "nvidia.com/gpu";
        return 1;
    }
    if (tg_template_count(t, RES_NEURONCORE, n) == 1 && *n > 0) {
        *what = "NeuronCores (aws.amazon.com/neuroncore)";
        return 1;
    }
    if (tg_template_count(t, TG_RES_NEURON, &dev) != 1 || dev <= 0 || !ev->policy)
        return 0;
    int cores = pinned_cores(ev, t, lnc_env(c));
    *n = dev * cores;
    *what = "logical NeuronCores";
    return cores > 0;
}

static void check_nproc(struct tg_eval *ev, struct seen *seen, const struct tg_template *t,
                        const struct tg_container *c, const struct tg_torchrun *r)
{
    long long nproc, dev;
    const char *what;
    char src[96], field[TG_PATH_MAX];
    if (tg_torchrun_nproc(r, &nproc) != 1 || pod_devices(ev, t, c, &dev, &what) != 1 ||
        nproc == dev || !first_time(seen, t, TG_RULE_TORCH_NPROC_GPU_MISMATCH, nproc, dev))
        return;
    describe(&r->nproc, "--nproc_per_node", "1", src, sizeof(src));
    value_field(t, c, r, &r->nproc, field, sizeof(field));
    tg_report(ev, TG_RULE_TORCH_NPROC_GPU_MISMATCH, field,
              "%s starts %lld process%s per pod (%s) but the pod has %lld %s: %s; set %lld (or "
              "gpu/auto)",
              r->launcher, nproc, nproc == 1 ? "" : "es", src, dev, what,
              nproc < dev ? "devices stay idle" : "processes share devices", dev);
}

/* ---- entry ---------------------------------------------------------------------------------- */

static int check_container(struct tg_eval *ev, struct seen *seen, const struct tg_template *t,
                           const struct tg_container *c)
{
    const struct tg_launch *l;
    int rc = tg_eval_launch_run(ev, t, c, TG_MPI_OPENMPI, &l);
    for (size_t i = 0; rc == 0 && i < l->ntorch; i++) {
        if (ev->wl->kind != TG_KIND_POD)
            check_nnodes(ev, seen, t, c, &l->torch[i]);
        check_nproc(ev, seen, t, c, &l->torch[i]);
    }
    return rc;
}

int tg_rules_torch(struct tg_eval *ev)
{
    struct tg_workload *wl = ev->wl;
    struct seen seen = {.n = 0};
    int rc = 0;
    /* An object that a judged workload owns (a JobSet's child Job, a PyTorchJob's Pod) was judged
     * with it: its own view misses the world (a child Job of a JobSet world spanning several) and
     * may miss the env the controller adds (SPEC 11, 13: judged through the owner; a Pod-level
     * verdict never contradicts its workload's). */
    if (tg_workload_spec_unchanged(wl) || wl->judged_owner)
        return 0;
    for (size_t i = 0; i < wl->ntpl && rc == 0; i++) {
        const struct tg_template *t = &wl->tpl[i];
        if (t->world_pods == 0 || (rc = tg_template_launcher_only(ev, t)) != 0) {
            rc = rc > 0 ? 0 : rc;
            continue;
        }
        for (size_t k = 0; k < t->ncontainers && rc == 0; k++) {
            if (!t->containers[k].init)
                rc = check_container(ev, &seen, t, &t->containers[k]);
        }
    }
    return rc < 0 ? rc : ev->error;
}
