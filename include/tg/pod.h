/* pod.h -- facts about one pod template that several rules and the env mutator read: EFA and
 * other device counts, the node labels (instance type, zone) its scheduling constraints pin.
 *
 * Contract:
 * - Nothing here reads the policy or decides a rule. Functions that take `struct tg_eval *ev`
 *   report wrong JSON types they meet as object.invalid-field (via tg_get_*), at paths built from
 *   the path arguments; ev may be NULL (then nothing is reported). Everything returned that is a
 *   json_t or a string is borrowed from the object being evaluated.
 * - Resource names are read from `resources.limits` and `resources.requests` of a container. A
 *   limit, when present, is the count (core validation makes the request equal to it:
 *   docs/references.md#ref-k8s-noncommit-resources); otherwise the request.
 * - Counts are "non-negative integer quantities": "4", 4, 4.0, "1k" are counts; "$EFA_PER_NODE",
 *   1.5, "500m", -1, null, true are not. */
#ifndef TG_POD_H
#define TG_POD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "tg/instances.h"
#include "tg/path.h"
#include "tg/workload.h"

struct tg_eval;

#define TG_RES_EFA "vpc.amazonaws.com/efa"
#define TG_RES_GPU "nvidia.com/gpu"
#define TG_RES_NEURON "aws.amazon.com/neuron"
#define TG_RES_HUGEPAGES_2MI "hugepages-2Mi"

/* Node label keys of the instance type: the stable key and its deprecated alias
 * (docs/references.md#ref-k8s-instance-type-labels). */
extern const char *const tg_instance_type_labels[];
extern const size_t tg_instance_type_label_count;

/* ---- resources ----------------------------------------------------------------------------- */

/* Where a resource is written in one container: the raw members (JSON null included), NULL when
 * absent or when limits/requests is not an object. Nothing is reported. */
struct tg_res {
    json_t *limit;
    json_t *request;
};
void tg_container_res(json_t *container, const char *name, struct tg_res *out);

/* The count of resource `name` in a container: 1 and *count when it is written and a
 * non-negative integer (the limit when present, else the request); 0 when neither limits nor
 * requests name it; -1 when it is written but the value used is not a non-negative integer. */
int tg_container_count(json_t *container, const char *name, long long *count);

/* Does the container request EFA: vpc.amazonaws.com/efa is written in its limits or requests
 * with a value other than a count of 0. An unusable value ("$EFA_PER_NODE", null, 1.5) counts as
 * a request: the author meant EFA, and efa.invalid-quantity reports the value. */
bool tg_container_requests_efa(json_t *container);

/* The same three for a decoded container, read from the limits and requests objects the view
 * keeps (struct tg_container): the same results without looking up resources again. */
void tg_ctr_res(const struct tg_container *c, const char *name, struct tg_res *out);
int tg_ctr_count(const struct tg_container *c, const char *name, long long *count);
bool tg_ctr_requests_efa(const struct tg_container *c);
/* Fills c->dev_rc, c->dev_n, c->dev_limit, c->dev_request and c->hugepage_keys from c->limits and
 * c->requests (the decoder, once per container): tg_ctr_count and tg_ctr_res answer for those
 * devices and hugepages-2Mi from them. */
void tg_ctr_count_devices(struct tg_container *c);

/* A count written as a JSON string of 1 to 18 ASCII digits (nearly every count): true and *out,
 * the integer the quantity grammar gives for it; false for anything else. */
bool tg_plain_count(const json_t *v, long long *out);

/* Does the pod of t use Dynamic Resource Allocation (spec.resourceClaims, or resources.claims of a
 * container)? A claim may carry any device, GPU or EFA: its count is unknown
 * (docs/references.md#ref-efa-dra). */
bool tg_template_uses_claims(const struct tg_template *t);

/* True when any container of t (init containers included; NodeSet: spec.slurmd too) requests
 * EFA, as tg_container_requests_efa. */
bool tg_template_requests_efa(const struct tg_template *t);

/* The pod-level count of resource `name` for template t, as the scheduler sums it: the sum over
 * regular containers, or the largest init container when that is larger. Returns 1 and *count
 * when at least one container writes it and every written value is a count, 0 when no container
 * writes it, -1 when a written value is not a count. */
int tg_template_count(const struct tg_template *t, const char *name, long long *count);
/* The same count over the containers whose value is a count only, skipping the others (their
 * rule reports them). Returns 1 and *count when every written value is a count (as
 * tg_template_count), 2 and *count when some are not (*count is then a lower bound, assuming the
 * unusable values meant a count >= 0; it may be 0), 0 when no container writes it. */
int tg_template_count_valid(const struct tg_template *t, const char *name, long long *count);

/* ---- the pod spec's scheduling members ------------------------------------------------------
 * spec.nodeSelector, spec.affinity, spec.resourceClaims, spec.volumes and spec.schedulingGates of
 * t as json_object_get answers them (any JSON type, NULL when absent), read once per template
 * with containers and initContainers (tg_template_add_containers calls tg_template_read_spec,
 * and tg_workload_decode when its decoder is done, for a template it has not read), looked up
 * when t was not read so. */
void tg_template_read_spec(struct tg_template *t);
/* A pod spec of at most this many members is walked for the seven members kept (a step of the
 * walk costs a fraction of a lookup, which hashes its key); a larger one has them looked up. A
 * Pod's spec, with the API server's defaults, has 15 to 20. */
#define TG_SPEC_WALK_MAX 24
json_t *tg_template_node_selector(const struct tg_template *t);
json_t *tg_template_affinity(const struct tg_template *t);
json_t *tg_template_resource_claims(const struct tg_template *t);
json_t *tg_template_volumes(const struct tg_template *t);
json_t *tg_template_scheduling_gates(const struct tg_template *t);

/* ---- node labels pinned by nodeSelector and required node affinity ------------------------
 * The values of one node label (given as a set of alias keys, e.g. the zone labels of the policy)
 * that a pod spec's constraints allow. nodeSelector and required node affinity are ANDed; the
 * nodeSelectorTerms of required affinity are ORed (a term without an `In` expression on a key
 * allows any value, so then the affinity does not restrict the label); the expressions of one
 * term are ANDed (two `In` lists intersect; `NotIn` removes values from a finite set and leaves
 * an open one open). Exists, DoesNotExist, Gt, Lt and matchFields do not restrict the label. */
#define TG_PIN_INLINE 4
struct tg_label_pin {
    bool finite;    /* the label is restricted to values[0..n) (n may be 0: no node) */
    bool mentioned; /* some expression or nodeSelector entry names one of the keys */
    /* borrowed strings, distinct, in spec order: in inline_values while TG_PIN_INLINE hold them
     * (nearly every pin: one zone, one instance type), else a malloc'd array. values points into
     * the struct itself then: a pin is not copied by assignment. */
    const char **values;
    size_t n;
    const char *inline_values[TG_PIN_INLINE];
};

void tg_label_pin_init(struct tg_label_pin *p);
void tg_label_pin_release(struct tg_label_pin *p);
bool tg_label_pin_has(const struct tg_label_pin *p, const char *value);

/* From spec.nodeSelector only. Returns 0 or -ENOMEM. */
int tg_pin_node_selector(struct tg_eval *ev, json_t *spec, const struct tg_path *spec_path,
                         const char *const *keys, size_t nkeys, struct tg_label_pin *out);
/* From spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution only. An
 * absent, empty or unusable term list does not restrict. Returns 0 or -ENOMEM. */
int tg_pin_node_affinity(struct tg_eval *ev, json_t *spec, const struct tg_path *spec_path,
                         const char *const *keys, size_t nkeys, struct tg_label_pin *out);
/* The same two for template t's pod spec, reading its nodeSelector and affinity as
 * tg_template_node_selector and tg_template_affinity give them. */
int tg_template_pin_node_selector(struct tg_eval *ev, const struct tg_template *t,
                                  const char *const *keys, size_t nkeys, struct tg_label_pin *out);
int tg_template_pin_node_affinity(struct tg_eval *ev, const struct tg_template *t,
                                  const char *const *keys, size_t nkeys, struct tg_label_pin *out);
/* Both together (the intersection). Returns 0 or -ENOMEM. */
int tg_pin_label(struct tg_eval *ev, json_t *spec, const struct tg_path *spec_path,
                 const char *const *keys, size_t nkeys, struct tg_label_pin *out);

/* Karpenter's labels for the parts of an instance type name (aws/karpenter-provider-aws
 * pkg/apis/v1/labels.go; docs/references.md#ref-karpenter-labels). */
#define TG_LABEL_INSTANCE_FAMILY "karpenter.k8s.aws/instance-family"
#define TG_LABEL_INSTANCE_SIZE "karpenter.k8s.aws/instance-size"

/* What a pod asks of its node, to narrow a family pin to the types that can hold it (0: any). */
struct tg_fit {
    long long gpus, neuron, efa;
};

/* The instance types template t may run on: nodeSelector and required node affinity on
 * node.kubernetes.io/instance-type (and the beta alias), karpenter.k8s.aws/instance-family and
 * instance-size, evaluated against table. A family (+ size) pin stands for every type of the
 * family in the table that can hold fit (all of them when none can, so that an over-large request
 * is still compared); a family the table does not know leaves the types open. out->finite false
 * means any type. Wrong JSON types met are reported on ev (may be NULL). Returns 0 or -ENOMEM. */
int tg_template_instance_types(struct tg_eval *ev, const struct tg_template *t,
                               const struct tg_instance *table, size_t ntable,
                               const struct tg_fit *fit, struct tg_label_pin *out);

/* ---- env --------------------------------------------------------------------------------- */

/* tg_env_get on a decoded container, from the env member the decoder read (include/tg/obj.h).
 * The names of its entries are read on the first call and kept (struct tg_container env_memo):
 * the later calls compare names only. */
const char *tg_ctr_env_get(const struct tg_container *c, const char *name, char *buf, size_t len,
                           bool *defined);
/* tg_env_value_in on a decoded container's env, from the names kept as tg_ctr_env_get keeps
 * them. */
const char *tg_ctr_env_value(const struct tg_container *c, const char *name, bool *defined);
/* tg_env_entry_name of entry i of a decoded container's env (NULL past its end or when env is no
 * array), from the names kept as tg_ctr_env_get keeps them. */
const char *tg_ctr_env_name(const struct tg_container *c, size_t i);

/* FI_PROVIDER value (a comma-separated libfabric provider list, "^" excludes) selects efa. */
bool tg_fi_provider_selects_efa(const char *value);
/* NCCL_NET value points NCCL at the OFI plugin: "AWS Libfabric", "Libfabric" or "ofi", any case
 * (SPEC section 9). */
bool tg_nccl_net_is_ofi(const char *value);

/* ---- updates ----------------------------------------------------------------------------- */

/* True on an UPDATE whose object has the same `spec` as the old object (JSON equality): a change
 * of metadata only (labels, finalizers, annotations). The pod-template rules report nothing then,
 * so that an object admitted before the webhook (or its policy) changed can still be labelled,
 * annotated, or have its finalizers removed (a deletion that a deny would block forever). */
bool tg_workload_spec_unchanged(const struct tg_workload *wl);

#endif
