/* nodeset.c -- the nodeset.* rules for Slinky NodeSets (slinky.slurm.net/v1beta1), plus
 * gang.negative for a negative spec.replicas (SPEC section 9). */
#include <stdio.h>
#include <string.h>

#include "tg/obj.h"
#include "tg/pod.h"
#include "tg/policy.h"
#include "tg/registry.h"

/* The kind and version the object was dispatched as: the review's, else the object's own. */
static void dispatched_as(const struct tg_eval *ev, const char **kind, const char **version)
{
    const struct tg_workload *wl = ev->wl;
    const char *av = wl->api_version;
    const char *slash = strchr(av, '/');
    *kind = wl->kind_name;
    *version = slash ? slash + 1 : av;
    if (wl->req_kind && *wl->req_kind) {
        *kind = wl->req_kind;
        *version = wl->req_version ? wl->req_version : "";
    }
}

/* nodeset.kind and nodeset.api-version. No CRD serves either, so the API server never sends them
 * to a webhook; `trainguard check` sees them in manifests (SlinkyProject/slurm-operator:
 * api/v1beta1/nodeset_types.go NodeSetKind; CHANGELOG-1.0.md: v1alpha1 CRDs removed). Returns
 * true when the object is written against the v1beta1 schema, so the other rules apply. */
static bool check_kind_version(struct tg_eval *ev)
{
    const char *kind, *version;
    if (ev->wl->kind != TG_KIND_NODESET_BAD)
        return true;
    dispatched_as(ev, &kind, &version);
    if (!strcmp(kind, "SlurmNodeSet"))
        tg_report(ev, TG_RULE_NODESET_KIND, "kind",
                  "SlurmNodeSet is not a Slinky kind and no CRD serves it: write kind: NodeSet "
                  "(apiVersion slinky.slurm.net/v1beta1)");
    if (!strcmp(version, "v1alpha1"))
        tg_report(ev, TG_RULE_NODESET_API_VERSION, "apiVersion",
                  "slinky.slurm.net/v1alpha1 was removed in slurm-operator 1.0 and no CRD serves "
                  "it: write slinky.slurm.net/v1beta1 with its fields (controllerRef, slurmd)");
    /* v1alpha1 has another schema (clusterName, a plain PodTemplateSpec): the v1beta1 rules
     * below would only add noise to a manifest that has to be rewritten anyway. */
    return !strcmp(version, "v1beta1");
}

/* nodeset.controller-ref: the operator's webhook rejects an empty controllerRef.name
 * (internal/webhook/nodeset_webhook.go, docs/references.md#ref-slinky-webhook); missing or
 * non-object fails the same way.
 */
static void check_controller_ref(struct tg_eval *ev, json_t *spec, const struct tg_path *sp)
{
    struct tg_path cp, np;
    json_t *raw = json_object_get(spec, "controllerRef");
    tg_path_key(&cp, sp, "controllerRef");
    tg_path_key(&np, &cp, "name");
    if (!raw || json_is_null(raw)) {
        tg_report(ev, TG_RULE_NODESET_CONTROLLER_REF, cp.field,
                  "is missing: set controllerRef.name to the Slurm Controller CR of this "
                  "namespace, or the operator rejects the NodeSet");
        return;
    }
    if (!json_is_object(raw)) {
        tg_report(ev, TG_RULE_NODESET_CONTROLLER_REF, cp.field,
                  "is not an object: write controllerRef: {name: <Controller CR in this "
                  "namespace>}");
        return;
    }
    json_t *name = json_object_get(raw, "name");
    const char *s = tg_get_string(ev, raw, &cp, "name");
    if (s && *s)
        return;
    tg_report(ev, TG_RULE_NODESET_CONTROLLER_REF, np.field,
              "is %s: set it to the Slurm Controller CR of this namespace, or the operator "
              "rejects the NodeSet",
              !name || json_is_null(name) ? "missing"
              : s                         ? "empty"
                                          : "not a string");
}

static bool mode_known(const char *mode)
{
    return !strcmp(mode, "StatefulSet") || !strcmp(mode, "DaemonSet");
}

/* replicas: gang.negative below 0; nodeset.daemonset-replicas in DaemonSet mode, where the
 * operator ignores it (docs/references.md#ref-slinky-scaling-mode). The CRD defaults replicas to 1
 * before a webhook sees the object, so there only a value other than 1 shows intent; `check` sees
 * the manifest as written, where any replicas in DaemonSet mode was written by someone. */
static void check_replicas(struct tg_eval *ev, const struct tg_path *sp)
{
    const struct tg_nodeset *ns = &ev->wl->ns;
    struct tg_path rp;
    tg_path_key(&rp, sp, "replicas");
    if (!ns->has_replicas)
        return;
    if (ns->replicas < 0) {
        tg_report(ev, TG_RULE_GANG_NEGATIVE, rp.field,
                  "replicas %lld is negative: it counts slurmd pods and must be 0 or more",
                  ns->replicas);
        return;
    }
    if (strcmp(ns->scaling_mode, "DaemonSet") || (!ev->offline && ns->replicas == 1))
        return;
    tg_report(ev, TG_RULE_NODESET_DAEMONSET_REPLICAS, rp.field,
              "replicas %lld is ignored in DaemonSet mode (one pod per matching node; HPA has no "
              "effect): remove it and select nodes with nodeSelector or tolerations",
              ns->replicas);
}

/* nodeset.mode-field: fields of the other scalingMode, on non-default values only (SPEC 9;
 * api/v1beta1/nodeset_types.go: ordinalPadding and pinToNode are StatefulSet-only,
 * pruneSlurmNodeRecords NodeNotFound "Only works for ScalingMode=DaemonSet"). */
static void check_mode_fields(struct tg_eval *ev, json_t *spec, const struct tg_path *sp)
{
    const char *mode = ev->wl->ns.scaling_mode;
    struct tg_path p;
    long long pad = 0;
    bool pin = false;
    int got_pad = tg_get_int(ev, spec, sp, "ordinalPadding", &pad);
    int got_pin = tg_get_bool(ev, spec, sp, "pinToNode", &pin);
    const char *prune = tg_get_string(ev, spec, sp, "pruneSlurmNodeRecords");
    if (!strcmp(mode, "DaemonSet")) {
        if (got_pad == 1 && pad > 0) {
            tg_path_key(&p, sp, "ordinalPadding");
            tg_report(ev, TG_RULE_NODESET_MODE_FIELD, p.field,
                      "ordinalPadding %lld only applies in StatefulSet mode; in DaemonSet mode "
                      "pods take their node's hostname: remove it",
                      pad);
        }
        if (got_pin == 1 && pin) {
            tg_path_key(&p, sp, "pinToNode");
            tg_report(ev, TG_RULE_NODESET_MODE_FIELD, p.field,
                      "pinToNode only applies in StatefulSet mode; in DaemonSet mode every pod "
                      "is already tied to its node: remove it");
        }
    } else if (!strcmp(mode, "StatefulSet") && prune && !strcmp(prune, "NodeNotFound")) {
        tg_path_key(&p, sp, "pruneSlurmNodeRecords");
        tg_report(ev, TG_RULE_NODESET_MODE_FIELD, p.field,
                  "NodeNotFound only works in DaemonSet mode and scalingMode is StatefulSet%s: "
                  "remove it or set scalingMode: DaemonSet",
                  ev->wl->ns.scaling_mode_set ? "" : " (the default)");
    }
}

/* nodeset.scaling-mode-change: the controller deletes every pod created under the other mode
 * (internal/controller/nodeset/nodeset_sync.go syncNodeSetPods,
 * docs/references.md#ref-slinky-scaling-mode-change). A stored NodeSet without scalingMode is
 * StatefulSet (SPEC 9). oldObject is the stored object: its wrong types are not the user's request,
 * so they are not reported. */
static void check_mode_change(struct tg_eval *ev, const struct tg_path *sp)
{
    const struct tg_workload *wl = ev->wl;
    struct tg_path p;
    if (wl->op != TG_OP_UPDATE || !json_is_object(wl->old_obj))
        return;
    json_t *old_spec = json_object_get(wl->old_obj, "spec");
    json_t *raw = json_object_get(old_spec, "scalingMode");
    const char *old = !raw || json_is_null(raw) ? "StatefulSet" : json_string_value(raw);
    const char *cur = wl->ns.scaling_mode;
    if (!old || !mode_known(old) || !mode_known(cur) || !strcmp(old, cur))
        return;
    tg_path_key(&p, sp, "scalingMode");
    tg_report(ev, TG_RULE_NODESET_SCALING_MODE_CHANGE, p.field,
              "changes from %s to %s: the operator deletes every pod made in %s mode, killing "
              "their Slurm jobs; drain the nodes first or create a new NodeSet",
              old, cur, old);
}

/* nodeset.slurmd-container: the operator's pod builder puts its own slurmd container (from
 * spec.slurmd) first and appends the template's containers after it; container names are unique
 * across init and regular containers of a pod, so a template container named slurmd makes a pod the
 * API server refuses (SlinkyProject/slurm-operator internal/builder; kubernetes
 * validateContainers; docs/references.md#ref-k8s-container-names-unique). */
static void check_slurmd_container(struct tg_eval *ev)
{
    const struct tg_workload *wl = ev->wl;
    for (size_t i = 0; i < wl->ntpl; i++) {
        const struct tg_template *t = &wl->tpl[i];
        for (size_t k = 0; k < t->ncontainers; k++) {
            const struct tg_container *c = &t->containers[k];
            struct tg_path np;
            if (c->c == wl->ns.slurmd || strcmp(c->name, "slurmd"))
                continue;
            tg_path_key(&np, &c->path, "name");
            tg_report(ev, TG_RULE_NODESET_SLURMD_CONTAINER, np.field,
                      "slurmd is the name of the container the operator builds from spec.slurmd; "
                      "the pod would have two containers named slurmd, which the API server "
                      "refuses: put slurmd settings in spec.slurmd and rename this %scontainer",
                      c->init ? "init " : "");
        }
    }
}

int tg_rules_nodeset(struct tg_eval *ev)
{
    struct tg_path root, sp, p;
    /* An UPDATE of metadata only is not judged again, as for efa/zone/mpi (a finalizer removal
     * must not be denied forever); scaling-mode-change needs a spec change anyway. */
    if (tg_workload_spec_unchanged(ev->wl) || !check_kind_version(ev))
        return 0;
    tg_path_root(&root);
    tg_path_key(&sp, &root, "spec");
    json_t *spec = json_object_get(ev->wl->obj, "spec");
    if (!json_is_object(spec))
        spec = NULL; /* a wrong type is reported by the workload view */
    const char *mode = ev->wl->ns.scaling_mode;
    if (!mode_known(mode)) {
        tg_path_key(&p, &sp, "scalingMode");
        tg_report(ev, TG_RULE_OBJECT_INVALID_FIELD, p.field,
                  "must be StatefulSet or DaemonSet (exact case), got \"%s\"", mode);
    }
    check_controller_ref(ev, spec, &sp);
    check_replicas(ev, &sp);
    check_mode_fields(ev, spec, &sp);
    check_mode_change(ev, &sp);
    check_slurmd_container(ev);
    return 0;
}
