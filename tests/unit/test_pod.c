/* test_pod.c -- pod-template helpers: resource counts, EFA requests, label pins, env values. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/obj.h"
#include "tg/pod.h"
#include "tg/quantity.h"
#include "tg/yaml_json.h"

static json_t *yaml(const char *text)
{
    char err[256];
    json_t *v = tg_yaml_parse_one(text, strlen(text), err, sizeof(err));
    ck_assert_msg(v != NULL, "yaml: %s", err);
    return v;
}

/* Adds members "pad-0", "pad-1", ... (each "x") until object o has size members: past a walk's
 * threshold, or some members more. */
static void pad_members(json_t *o, size_t size)
{
    for (int i = 0; json_is_object(o) && json_object_size(o) < size; i++) {
        char key[32];
        snprintf(key, sizeof(key), "pad-%d", i);
        json_object_set_new(o, key, json_string("x"));
    }
}

/* Decodes container c alone into template t (zeroed first), as the view does. */
static void decode_container(struct tg_template *t, json_t *c)
{
    struct tg_path root;
    memset(t, 0, sizeof(*t));
    tg_path_root(&root);
    ck_assert_int_eq(tg_template_add_container(t, c, &root, false, ""), 0);
}

/* ---- container counts ------------------------------------------------------------------------ */

struct count_case {
    const char *resources; /* YAML of the container's resources */
    int rc;                /* tg_container_count for EFA */
    long long count;
    bool requests_efa;
};

static const struct count_case counts[] = {
    {"{limits: {vpc.amazonaws.com/efa: 4}}", 1, 4, true},
    {"{limits: {vpc.amazonaws.com/efa: \"4\"}}", 1, 4, true},
    {"{requests: {vpc.amazonaws.com/efa: 2}}", 1, 2, true},
    {"{limits: {vpc.amazonaws.com/efa: 8}, requests: {vpc.amazonaws.com/efa: 4}}", 1, 8, true},
    {"{limits: {vpc.amazonaws.com/efa: 0}}", 1, 0, false},
    {"{limits: {vpc.amazonaws.com/efa: 4.0}}", 1, 4, true},
    {"{limits: {vpc.amazonaws.com/efa: 1k}}", 1, 1000, true},
    {"{limits: {vpc.amazonaws.com/efa: $EFA_PER_NODE}}", -1, 0, true},
    {"{limits: {vpc.amazonaws.com/efa: 1.5}}", -1, 0, true},
    {"{limits: {vpc.amazonaws.com/efa: -1}}", -1, 0, true},
    {"{limits: {vpc.amazonaws.com/efa: null}}", -1, 0, true},
    {"{limits: {vpc.amazonaws.com/efa: true}}", -1, 0, true},
    {"{limits: {vpc.amazonaws.com/efa: 500m}}", -1, 0, true},
    {"{limits: {nvidia.com/gpu: 8}}", 0, 0, false},
    {"{limits: [vpc.amazonaws.com/efa]}", 0, 0, false},
    {"\"vpc.amazonaws.com/efa\"", 0, 0, false},
    {"{}", 0, 0, false},
};

START_TEST(container_count)
{
    const struct count_case *cc = &counts[_i];
    char text[256];
    long long n = -7;
    snprintf(text, sizeof(text), "{name: c, resources: %s}", cc->resources);
    json_t *c = yaml(text);
    int rc = tg_container_count(c, TG_RES_EFA, &n);
    ck_assert_msg(rc == cc->rc, "%s: rc %d, expected %d", cc->resources, rc, cc->rc);
    if (rc == 1)
        ck_assert_int_eq(n, cc->count);
    ck_assert_msg(tg_container_requests_efa(c) == cc->requests_efa, "%s: requests_efa",
                  cc->resources);
    /* the decoded container (limits and requests kept by the view) gives the same answers */
    struct tg_template t;
    struct tg_res a, b;
    long long m = -7;
    decode_container(&t, c);
    ck_assert_int_eq(tg_ctr_count(&t.containers[0], TG_RES_EFA, &m), rc);
    if (rc == 1)
        ck_assert_int_eq(m, cc->count);
    ck_assert(tg_ctr_requests_efa(&t.containers[0]) == cc->requests_efa);
    tg_container_res(c, TG_RES_EFA, &a);
    tg_ctr_res(&t.containers[0], TG_RES_EFA, &b);
    ck_assert_ptr_eq(a.limit, b.limit);
    ck_assert_ptr_eq(a.request, b.request);
    free(t.containers);
    json_decref(c);
}
END_TEST

/* A decoded container answers from the counts it took at decode time for EFA, GPU and Neuron
 * and reads any other name: the same answers as tg_container_count for each of them. */
START_TEST(decoded_counts_agree_for_every_device)
{
    static const char *const names[] = {TG_RES_EFA,
                                        TG_RES_GPU,
                                        TG_RES_NEURON,
                                        "hugepages-2Mi",
                                        "example.com/fpga",
                                        "hugepages-1Gi",
                                        "hugepages-",
                                        "nvidia.com/gpu2",
                                        "aws.amazon.com/neuroncore",
                                        "vpc.amazonaws.com/efa2"};
    const struct count_case *cc = &counts[_i];
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        char res[256], text[512];
        const char *at = strstr(cc->resources, TG_RES_EFA);
        if (at)
            snprintf(res, sizeof(res), "%.*s%s%s", (int)(at - cc->resources), cc->resources,
                     names[k], at + strlen(TG_RES_EFA));
        else
            snprintf(res, sizeof(res), "%s", cc->resources);
        snprintf(text, sizeof(text), "{name: c, resources: %s}", res);
        json_t *c = yaml(text);
        struct tg_template t;
        decode_container(&t, c);
        for (size_t q = 0; q < sizeof(names) / sizeof(names[0]); q++) {
            long long a = -7, b = -7;
            int want = tg_container_count(c, names[q], &a);
            ck_assert_msg(tg_ctr_count(&t.containers[0], names[q], &b) == want, "%s: %s", res,
                          names[q]);
            ck_assert_msg(a == b, "%s: %s: %lld, expected %lld", res, names[q], b, a);
            /* the members kept at decode for the devices, looked up for the others */
            struct tg_res ra, rb;
            tg_container_res(c, names[q], &ra);
            tg_ctr_res(&t.containers[0], names[q], &rb);
            ck_assert_msg(ra.limit == rb.limit && ra.request == rb.request, "%s: %s", res,
                          names[q]);
        }
        /* hugepage_keys: some key of limits or requests (objects) begins with "hugepages-" */
        bool huge = false;
        json_t *r = json_object_get(c, "resources");
        static const char *const maps[] = {"limits", "requests"};
        for (size_t m = 0; m < 2; m++) {
            json_t *map = json_object_get(r, maps[m]), *v;
            const char *key;
            json_object_foreach (map, key, v)
                huge = huge || !strncmp(key, "hugepages-", 10);
        }
        ck_assert_msg(t.containers[0].hugepage_keys == huge, "%s: hugepage_keys", res);
        free(t.containers);
        json_decref(c);
    }
}
END_TEST

/* Digit strings take a shortcut in tg_container_count: it must agree with the quantity grammar
 * on every one, leading zeros and the longest included, and leave the rest to the grammar. */
static const char *const digit_strings[] = {
    "0",
    "7",
    "32",
    "00",
    "08",
    "007",
    "000000000000000032",
    "123456789012345678",
    "999999999999999999",
    "1234567890123456789",
    "",
    " 4",
    "4 ",
    "+4",
    "4x",
    "0x10",
    "1e3",
};

START_TEST(digit_counts_agree_with_the_quantity_grammar)
{
    const char *s = digit_strings[_i];
    char text[256];
    struct tg_quantity q;
    long long n = -7, want = -8;
    json_t *str = json_string(s);
    int want_rc = tg_quantity_from_json(str, &q) == 0 && tg_quantity_is_integer(&q) &&
                          !tg_quantity_is_negative(&q) && tg_quantity_to_int(&q, &want) == 0
                      ? 1
                      : -1;

    snprintf(text, sizeof(text), "{\"name\":\"c\",\"resources\":{\"limits\":{\"%s\":\"%s\"}}}",
             TG_RES_EFA, s);
    json_t *c = json_loads(text, 0, NULL);
    ck_assert_ptr_nonnull(c);
    int rc = tg_container_count(c, TG_RES_EFA, &n);
    ck_assert_msg(rc == want_rc, "'%s': rc %d, the grammar says %d", s, rc, want_rc);
    if (rc == 1)
        ck_assert_msg(n == want, "'%s': %lld, the grammar says %lld", s, n, want);
    json_decref(c);
    json_decref(str);
}
END_TEST

START_TEST(container_without_resources)
{
    long long n;
    json_t *c = yaml("{name: c}");
    ck_assert_int_eq(tg_container_count(c, TG_RES_EFA, &n), 0);
    ck_assert(!tg_container_requests_efa(c));
    ck_assert_int_eq(tg_container_count(NULL, TG_RES_EFA, &n), 0);
    json_decref(c);
}
END_TEST

/* A decoded container keeps the hugepages-* keys of its limits, then those of its requests not
 * in limits, up to TG_HUGEPAGE_NAMES_MAX of them: what a walk over the two maps gives. */
START_TEST(decoded_hugepage_names_are_the_maps_keys)
{
    static const char *const resources[] = {
        "{limits: {hugepages-2Mi: 1Gi, cpu: 1}, requests: {hugepages-2Mi: 1Gi, hugepages-1Gi: "
        "2Gi}}",
        "{requests: {hugepages-1Gi: 2Gi, hugepages-: 1}}",
        "{limits: {hugepages-a: 1, hugepages-b: 1, hugepages-c: 1, hugepages-d: 1}, requests: "
        "{hugepages-e: 1, hugepages-a: 1, hugepages-f: 1, hugepages-g: 1, hugepages-h: 1}}",
        "{limits: {hugepage-2Mi: 1, Hugepages-2Mi: 1}}",
        "{limits: [hugepages-2Mi], requests: {hugepages-2Mi: 1}}",
        "{}",
    };
    for (size_t k = 0; k < sizeof(resources) / sizeof(resources[0]); k++) {
        char text[512];
        snprintf(text, sizeof(text), "{name: c, resources: %s}", resources[k]);
        json_t *c = yaml(text);
        struct tg_template t;
        decode_container(&t, c);
        const char *want[TG_HUGEPAGE_NAMES_MAX];
        size_t n = 0;
        static const char *const maps[] = {"limits", "requests"};
        for (size_t m = 0; m < 2; m++) {
            json_t *map = json_object_get(json_object_get(c, "resources"), maps[m]), *v;
            const char *key;
            json_object_foreach (map, key, v) {
                bool dup = false;
                for (size_t i = 0; i < n; i++)
                    dup |= !strcmp(want[i], key);
                if (!strncmp(key, "hugepages-", 10) && !dup && n < TG_HUGEPAGE_NAMES_MAX)
                    want[n++] = key;
            }
        }
        const struct tg_container *ctr = &t.containers[0];
        ck_assert_msg(ctr->nhugepage_names == n, "%s: %u names, expected %zu", resources[k],
                      ctr->nhugepage_names, n);
        for (size_t i = 0; i < n; i++)
            ck_assert_str_eq(ctr->hugepage_names[i], want[i]);
        ck_assert(ctr->hugepage_keys == (n > 0));
        free(t.containers);
        json_decref(c);
    }
}
END_TEST

/* ---- template counts: sum of containers, or the largest init container -------------------- */

static void decode_pod(const char *spec, struct tg_workload *wl, json_t **obj)
{
    char text[1024];
    snprintf(text, sizeof(text), "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: %s}",
             spec);
    *obj = yaml(text);
    ck_assert_int_eq(tg_workload_decode(wl, TG_KIND_POD, TG_OP_CREATE, *obj, NULL, NULL), 0);
    ck_assert_uint_eq(wl->ntpl, 1);
}

/* The family of an instance type name, cut to the buffer as snprintf would cut it. */
START_TEST(instance_family_cuts_to_the_buffer)
{
    char buf[16];
    ck_assert_str_eq(tg_instance_family("p5.48xlarge", buf, sizeof(buf)), "p5");
    ck_assert_str_eq(tg_instance_family("p4de", buf, sizeof(buf)), "p4de");
    ck_assert_str_eq(tg_instance_family(".x", buf, sizeof(buf)), "");
    ck_assert_str_eq(tg_instance_family("trn1.32xlarge", buf, 3), "tr");
    ck_assert_str_eq(tg_instance_family("trn1.32xlarge", buf, 5), "trn1");
    ck_assert_str_eq(tg_instance_family("trn1.32xlarge", buf, 1), "");
    memcpy(buf, "keep", 5);
    tg_instance_family("trn1.32xlarge", buf, 0);
    ck_assert_str_eq(buf, "keep");
}
END_TEST

/* The spec members a template keeps (walked in a spec of up to 24 members, looked up in a
 * larger one) are what json_object_get answers, whatever their types; a key with a NUL inside is
 * another key. The containers are read from the kept lists. */
START_TEST(template_spec_members_walked_and_looked_up_agree)
{
    static const char *const specs[] = {
        "{containers: [{name: a}], initContainers: [{name: i}], nodeSelector: {k: v}, affinity: "
        "{}, resourceClaims: [{name: r}], volumes: [{name: v}], schedulingGates: [{name: g}]}",
        "{containers: 3, initContainers: x, nodeSelector: [], affinity: 1, resourceClaims: {}, "
        "volumes: null, schedulingGates: true, other: 1, hostNetwork: true}",
        "{initContainers: [{name: i}, 7], volumez: [], affinitx: {}, nodeSelectors: {}}",
        "{}",
    };
    static const char *const keys[] = {"nodeSelector", "affinity", "resourceClaims", "volumes",
                                       "schedulingGates"};
    for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
        for (int padded = 0; padded < 2; padded++) {
            char text[1024];
            snprintf(text, sizeof(text),
                     "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: %s}", specs[k]);
            json_t *obj = yaml(text);
            json_t *spec = json_object_get(obj, "spec");
            /* keys with a NUL inside, which are not the members kept */
            json_object_setn_new(spec, "volumes\0x", 9, json_array());
            json_object_setn_new(spec, "containers\0", 11, json_array());
            if (padded)
                pad_members(spec, TG_SPEC_WALK_MAX + 1);
            struct tg_workload wl;
            ck_assert_int_eq(tg_workload_decode(&wl, TG_KIND_POD, TG_OP_CREATE, obj, NULL, NULL),
                             0);
            const struct tg_template *t = &wl.tpl[0];
            json_t *got[] = {tg_template_node_selector(t), tg_template_affinity(t),
                             tg_template_resource_claims(t), tg_template_volumes(t),
                             tg_template_scheduling_gates(t)};
            for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                ck_assert_msg(got[i] == json_object_get(spec, keys[i]), "%s%s: %s", specs[k],
                              padded ? " padded" : "", keys[i]);
            ck_assert_ptr_eq(t->containers_raw, json_object_get(spec, "containers"));
            ck_assert_ptr_eq(t->init_containers_raw, json_object_get(spec, "initContainers"));
            size_t want = 0;
            for (size_t l = 0; l < 2; l++) {
                json_t *arr = json_object_get(spec, l ? "initContainers" : "containers");
                for (size_t i = 0; i < json_array_size(arr); i++)
                    want += json_is_object(json_array_get(arr, i));
            }
            ck_assert_uint_eq(t->ncontainers, want);
            tg_workload_release(&wl);
            json_decref(obj);
        }
    }
}
END_TEST

/* A Pod is queued when its labels hold the Kueue queue label as a string: walked in a map of up
 * to 4 labels, looked up in a larger one, the same answer; a key with a NUL inside is another
 * key. */
START_TEST(queue_label_walked_and_looked_up_agree)
{
    static const struct {
        const char *labels;
        bool queued;
    } cases[] = {
        {"{kueue.x-k8s.io/queue-name: q}", true},   {"{a: b, kueue.x-k8s.io/queue-name: q}", true},
        {"{kueue.x-k8s.io/queue-name: 3}", false},  {"{kueue.x-k8s.io/queue-name: null}", false},
        {"{kueue.x-k8s.io/queue-names: q}", false}, {"{}", false},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        for (int pad = 0; pad <= 4; pad++) {
            char text[512];
            snprintf(text, sizeof(text),
                     "{apiVersion: v1, kind: Pod, metadata: {name: p, labels: %s}, spec: "
                     "{containers: [{name: c}]}}",
                     cases[k].labels);
            json_t *obj = yaml(text);
            json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
            json_object_setn_new(labels, "kueue.x-k8s.io/queue-name\0x", 27, json_string("q"));
            pad_members(labels, json_object_size(labels) + (size_t)pad);
            struct tg_workload wl;
            ck_assert_int_eq(tg_workload_decode(&wl, TG_KIND_POD, TG_OP_CREATE, obj, NULL, NULL),
                             0);
            ck_assert_msg(wl.queued == cases[k].queued, "%s + %d: queued %d", cases[k].labels, pad,
                          wl.queued);
            tg_workload_release(&wl);
            json_decref(obj);
        }
    }
}
END_TEST

START_TEST(template_uses_claims)
{
    static const struct {
        const char *spec;
        bool claims;
    } cases[] = {
        {"{containers: [{name: a, resources: {claims: [{name: gpu}]}}]}", true},
        {"{containers: [{name: a}, {name: b, resources: {claims: [{name: gpu}]}}]}", true},
        {"{containers: [{name: a, resources: {claims: []}}]}", false},
        {"{containers: [{name: a, resources: {claims: {name: gpu}}}]}", false},
        {"{containers: [{name: a, resources: {limits: {nvidia.com/gpu: 1}}}]}", false},
        {"{resourceClaims: [{name: gpu}], containers: [{name: a}]}", true},
        {"{initContainers: [{name: i, resources: {claims: [{name: gpu}]}}], containers: []}", true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tg_workload wl;
        json_t *obj;
        decode_pod(cases[i].spec, &wl, &obj);
        ck_assert_msg(tg_template_uses_claims(&wl.tpl[0]) == cases[i].claims, "%s", cases[i].spec);
        tg_workload_release(&wl);
        /* the spec's members walked above; looked up in a spec of more than 24 members */
        json_t *spec = json_object_get(obj, "spec");
        for (int k = 0; json_object_size(spec) <= TG_SPEC_WALK_MAX; k++) {
            char key[32];
            snprintf(key, sizeof(key), "pad-%d", k);
            json_object_set_new(spec, key, json_string("x"));
        }
        ck_assert_int_eq(tg_workload_decode(&wl, TG_KIND_POD, TG_OP_CREATE, obj, NULL, NULL), 0);
        ck_assert_msg(tg_template_uses_claims(&wl.tpl[0]) == cases[i].claims, "%s padded",
                      cases[i].spec);
        tg_workload_release(&wl);
        json_decref(obj);
    }
}
END_TEST

START_TEST(template_count_sums_and_takes_init_max)
{
    struct tg_workload wl;
    json_t *obj;
    long long n = 0;
    decode_pod("{containers: [{name: a, resources: {limits: {nvidia.com/gpu: 4}}}, {name: b, "
               "resources: {limits: {nvidia.com/gpu: 2}}}], initContainers: [{name: i, resources: "
               "{limits: {nvidia.com/gpu: 8}}}]}",
               &wl, &obj);
    ck_assert_int_eq(tg_template_count(&wl.tpl[0], TG_RES_GPU, &n), 1);
    ck_assert_int_eq(n, 8);
    ck_assert_int_eq(tg_template_count(&wl.tpl[0], TG_RES_EFA, &n), 0);
    ck_assert(!tg_template_requests_efa(&wl.tpl[0]));
    tg_workload_release(&wl);
    json_decref(obj);

    decode_pod(
        "{containers: [{name: a, resources: {limits: {vpc.amazonaws.com/efa: 16}}}, {name: b, "
        "resources: {limits: {vpc.amazonaws.com/efa: 16}}}]}",
        &wl, &obj);
    ck_assert_int_eq(tg_template_count(&wl.tpl[0], TG_RES_EFA, &n), 1);
    ck_assert_int_eq(n, 32);
    ck_assert(tg_template_requests_efa(&wl.tpl[0]));
    tg_workload_release(&wl);
    json_decref(obj);

    decode_pod(
        "{containers: [{name: a, resources: {limits: {vpc.amazonaws.com/efa: 1e18}}}, {name: "
        "b, resources: {limits: {vpc.amazonaws.com/efa: 1e18}}}]}",
        &wl, &obj);
    ck_assert_int_eq(tg_template_count(&wl.tpl[0], TG_RES_EFA, &n), 1);
    ck_assert_int_eq(n, (long long)1 << 40);
    tg_workload_release(&wl);
    json_decref(obj);
    decode_pod(
        "{containers: [{name: a, resources: {limits: {vpc.amazonaws.com/efa: 1}}}, {name: b, "
        "resources: {limits: {vpc.amazonaws.com/efa: x}}}]}",
        &wl, &obj);
    ck_assert_int_eq(tg_template_count(&wl.tpl[0], TG_RES_EFA, &n), -1);
    tg_workload_release(&wl);
    json_decref(obj);
}
END_TEST

/* The sums kept for EFA, GPU and Neuron give the same answers on later asks, whichever of
 * tg_template_count and tg_template_count_valid asks first, and change when a container is added;
 * other names are summed on each ask. */
START_TEST(template_count_kept_agrees_and_follows_added_containers)
{
    static const char *const names[] = {TG_RES_EFA, TG_RES_GPU, TG_RES_NEURON, "example.com/fpga"};
    for (int order = 0; order < 2; order++) {
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
            char spec[512];
            struct tg_workload wl;
            struct tg_path root;
            json_t *obj;
            long long a = -7, b = -7;
            snprintf(spec, sizeof(spec),
                     "{containers: [{name: a, resources: {limits: {%s: 4}}}, {name: b, "
                     "resources: {limits: {%s: x}}}, {name: c, resources: {limits: {%s: 2}}}]}",
                     names[k], names[k], names[k]);
            decode_pod(spec, &wl, &obj);
            struct tg_template *t = &wl.tpl[0];
            for (int round = 0; round < 2; round++) {
                if (order == 0) {
                    ck_assert_int_eq(tg_template_count(t, names[k], &a), -1);
                    ck_assert_int_eq(tg_template_count_valid(t, names[k], &b), 2);
                } else {
                    ck_assert_int_eq(tg_template_count_valid(t, names[k], &b), 2);
                    ck_assert_int_eq(tg_template_count(t, names[k], &a), -1);
                }
                ck_assert_int_eq(a, -7);
                ck_assert_int_eq(b, 6);
            }
            json_t *c = yaml("{name: d, resources: {limits: {nvidia.com/gpu: 1, "
                             "vpc.amazonaws.com/efa: 1, aws.amazon.com/neuron: 1, "
                             "example.com/fpga: 1}}}");
            tg_path_root(&root);
            ck_assert_int_eq(tg_template_add_container(t, c, &root, false, ""), 0);
            ck_assert_int_eq(tg_template_count_valid(t, names[k], &b), 2);
            ck_assert_int_eq(b, 7);
            /* the bad one dropped: every value is a count again */
            t->containers[1] = t->containers[--t->ncontainers];
            memset(t->count_memo, 0, sizeof(t->count_memo));
            ck_assert_int_eq(tg_template_count(t, names[k], &a), 1);
            ck_assert_int_eq(a, 7);
            ck_assert_int_eq(tg_template_count(t, names[k], &a), 1);
            ck_assert_int_eq(a, 7);
            tg_workload_release(&wl);
            json_decref(c);
            json_decref(obj);
        }
    }
}
END_TEST

/* ---- label pins ------------------------------------------------------------------------------ */

struct pin_case {
    const char *spec; /* YAML of a pod spec */
    bool finite;
    bool mentioned;
    const char *values; /* comma-joined expected values when finite */
};

#define IT "node.kubernetes.io/instance-type"
#define TERMS(...)                                                                                 \
    "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "                  \
    "{nodeSelectorTerms: [" __VA_ARGS__ "]}}}}"

static const struct pin_case pins[] = {
    {"{}", false, false, ""},
    {"{nodeSelector: {" IT ": p5.48xlarge}}", true, true, "p5.48xlarge"},
    {"{nodeSelector: {beta.kubernetes.io/instance-type: p4d.24xlarge}}", true, true,
     "p4d.24xlarge"},
    {"{nodeSelector: {" IT ": p5.48xlarge, beta.kubernetes.io/instance-type: p4d.24xlarge}}", true,
     true, ""},
    {"{nodeSelector: {" IT ": p5.48xlarge, beta.kubernetes.io/instance-type: p5.48xlarge}}", true,
     true, "p5.48xlarge"},
    {TERMS("{matchExpressions: [{key: " IT
           ", operator: In, values: [p5.48xlarge, p4d.24xlarge]}]}"),
     true, true, "p5.48xlarge,p4d.24xlarge"},
    {TERMS("{matchExpressions: [{key: " IT
           ", operator: In, values: [a]}]}, {matchExpressions: [{key: " IT
           ", operator: In, values: [b, a]}]}"),
     true, true, "a,b"},
    {TERMS("{matchExpressions: [{key: " IT
           ", operator: In, values: [a]}]}, {matchExpressions: [{key: "
           "other, operator: In, values: [x]}]}"),
     false, true, ""},
    {TERMS("{matchExpressions: [{key: " IT ", operator: In, values: [a, b]}, {key: " IT
           ", operator: NotIn, values: [b]}]}"),
     true, true, "a"},
    {TERMS("{matchExpressions: [{key: " IT ", operator: NotIn, values: [b]}]}"), false, true, ""},
    {TERMS("{matchExpressions: [{key: " IT ", operator: Exists}]}"), false, true, ""},
    {TERMS("{matchExpressions: [{key: " IT ", operator: In, values: [a]}, {key: " IT
           ", operator: In, values: [b]}]}"),
     true, true, ""},
    {TERMS("{}, {matchExpressions: [{key: " IT ", operator: In, values: [a]}]}"), true, true, "a"},
    {TERMS("{matchFields: [{key: metadata.name, operator: In, values: [n]}]}"), false, false, ""},
    {TERMS(""), false, false, ""},
    {"{nodeSelector: {" IT
     ": a}, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
     "{nodeSelectorTerms: [{matchExpressions: [{key: " IT ", operator: In, values: [a, b]}]}]}}}}",
     true, true, "a"},
    {"{nodeSelector: {" IT
     ": c}, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
     "{nodeSelectorTerms: [{matchExpressions: [{key: " IT ", operator: In, values: [a, b]}]}]}}}}",
     true, true, ""},
    {"{nodeSelector: [a], affinity: 3}", false, false, ""},
    {TERMS("1, null"), false, false, ""},
    {TERMS("{matchExpressions: [{key: " IT ", operator: In, values: a}]}"), true, true, ""},
    /* more values than a pin holds inline, kept and served again, then narrowed */
    {TERMS("{matchExpressions: [{key: " IT ", operator: In, values: [a, b, c, d, e, f]}]}"), true,
     true, "a,b,c,d,e,f"},
    {TERMS("{matchExpressions: [{key: " IT ", operator: In, values: [a, b, c, d, e, f, g, h, i, "
           "j]}]}"),
     true, true, "a,b,c,d,e,f,g,h,i,j"},
    {TERMS("{matchExpressions: [{key: " IT ", operator: In, values: [a, b, c, d, e, f]}, {key: " IT
           ", operator: NotIn, values: [b, d]}]}, {matchExpressions: [{key: " IT
           ", operator: In, values: [x, a, p, q]}]}"),
     true, true, "a,c,e,f,x,p,q"},
    {"{nodeSelector: {" IT
     ": e}, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
     "{nodeSelectorTerms: [{matchExpressions: [{key: " IT
     ", operator: In, values: [a, b, c, d, e, f]}]}]}}}}",
     true, true, "e"},
};

/* tg_template_instance_types on t gives pc's pin (how: which way it was asked, for the message). */
static void expect_pin(const struct tg_template *t, const struct pin_case *pc, const char *how)
{
    struct tg_label_pin pin;
    char got[256] = "";
    ck_assert_int_eq(
        tg_template_instance_types(NULL, t, tg_instance_table, tg_instance_table_len, NULL, &pin),
        0);
    for (size_t i = 0; i < pin.n; i++) {
        strncat(got, i ? "," : "", sizeof(got) - strlen(got) - 1);
        strncat(got, pin.values[i], sizeof(got) - strlen(got) - 1);
    }
    ck_assert_msg(pin.finite == pc->finite, "%s: %s: finite %d", pc->spec, how, pin.finite);
    ck_assert_msg(pin.mentioned == pc->mentioned, "%s: %s: mentioned %d", pc->spec, how,
                  pin.mentioned);
    ck_assert_msg(!strcmp(got, pc->values), "%s: %s: values [%s], expected [%s]", pc->spec, how,
                  got, pc->values);
    tg_label_pin_release(&pin);
}

START_TEST(label_pin)
{
    const struct pin_case *pc = &pins[_i];
    struct tg_workload wl;
    json_t *obj;
    decode_pod(pc->spec, &wl, &obj);
    expect_pin(&wl.tpl[0], pc, "first");
    /* asked again (the template's kept answer, when it keeps one): the same pin */
    expect_pin(&wl.tpl[0], pc, "again");
    /* a template whose spec members were not read at decode looks them up: the same pin */
    ck_assert(wl.tpl[0].spec_read);
    wl.tpl[0].spec_read = false;
    wl.tpl[0].types_memo.set = false;
    wl.tpl[0].node_selector = wl.tpl[0].affinity = NULL;
    expect_pin(&wl.tpl[0], pc, "looked up");
    tg_workload_release(&wl);
    /* a spec of more members than the decoder walks has its members looked up: the same pin */
    json_t *spec = json_object_get(obj, "spec");
    pad_members(spec, TG_SPEC_WALK_MAX + 1);
    ck_assert_int_eq(tg_workload_decode(&wl, TG_KIND_POD, TG_OP_CREATE, obj, NULL, NULL), 0);
    expect_pin(&wl.tpl[0], pc, "padded");
    tg_workload_release(&wl);
    json_decref(obj);
}
END_TEST

/* A template's required node affinity pin, read from the affinity the decoder kept (none or null:
 * open at once) or looked up, is tg_pin_node_affinity's on the spec. */
START_TEST(template_affinity_pin_agrees_with_the_spec)
{
    static const char *const specs[] = {
        "{containers: [{name: c}]}",
        "{affinity: null, containers: [{name: c}]}",
        "{affinity: {}, containers: [{name: c}]}",
        "{affinity: {nodeAffinity: null}}",
        "{affinity: [x]}",
        "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        "{nodeSelectorTerms: [{matchExpressions: [{key: k1, operator: In, values: [a, b]}]}]}}}}",
        "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        "{nodeSelectorTerms: []}}}}",
    };
    static const char *const keys[] = {"k1", "k2"};
    for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
        struct tg_workload wl;
        json_t *obj;
        struct tg_label_pin want, got;
        struct tg_path root;
        tg_path_root(&root);
        decode_pod(specs[k], &wl, &obj);
        ck_assert_int_eq(
            tg_pin_node_affinity(NULL, json_object_get(obj, "spec"), &root, keys, 2, &want), 0);
        for (int lookup = 0; lookup < 2; lookup++) {
            wl.tpl[0].spec_read = !lookup;
            ck_assert_int_eq(tg_template_pin_node_affinity(NULL, &wl.tpl[0], keys, 2, &got), 0);
            ck_assert_msg(got.finite == want.finite && got.mentioned == want.mentioned &&
                              got.n == want.n,
                          "%s (%s)", specs[k], lookup ? "looked up" : "kept");
            for (size_t i = 0; i < got.n; i++)
                ck_assert_str_eq(got.values[i], want.values[i]);
            tg_label_pin_release(&got);
        }
        tg_label_pin_release(&want);
        tg_workload_release(&wl);
        json_decref(obj);
    }
}
END_TEST

/* A family pin's types depend on the fit: asked with one fit then another, each call answers for
 * its own fit (no kept answer from the first serves the second). */
START_TEST(family_pin_follows_the_fit)
{
    static const struct tg_fit fits[] = {{4, 0, 0}, {1, 0, 0}, {4, 0, 0}};
    size_t rows[3];
    struct tg_workload wl;
    struct tg_label_pin pin;
    json_t *obj;
    decode_pod("{nodeSelector: {karpenter.k8s.aws/instance-family: g5}}", &wl, &obj);
    for (size_t k = 0; k < 3; k++) {
        rows[k] = 0; /* the g5 rows of the table that hold the fit */
        for (size_t i = 0; i < tg_instance_table_len; i++) {
            if (!strncmp(tg_instance_table[i].name, "g5.", 3) &&
                tg_instance_table[i].gpus >= fits[k].gpus)
                rows[k]++;
        }
        ck_assert_int_eq(tg_template_instance_types(NULL, &wl.tpl[0], tg_instance_table,
                                                    tg_instance_table_len, &fits[k], &pin),
                         0);
        ck_assert(pin.finite);
        ck_assert_uint_eq(pin.n, rows[k]);
        for (size_t i = 0; i < pin.n; i++) {
            const struct tg_instance *in =
                tg_instance_find(tg_instance_table, tg_instance_table_len, pin.values[i]);
            ck_assert_ptr_nonnull(in);
            ck_assert_int_ge(in->gpus, fits[k].gpus);
        }
        tg_label_pin_release(&pin);
    }
    ck_assert_uint_lt(rows[0], rows[1]); /* the fits choose different rows */
    tg_workload_release(&wl);
    json_decref(obj);
}
END_TEST

/* tg_template_instance_types reads the type, family and size keys of a nodeSelector of at most 16
 * members (4 per key) in one walk, and looks them up in a longer one: both sides of that threshold
 * give the same pin, with and without a wrong type among them. */
START_TEST(instance_types_selector_walk_and_lookup_agree)
{
    static const char *const selectors[] = {
        "{node.kubernetes.io/instance-type: p5.48xlarge}",
        "{beta.kubernetes.io/instance-type: p4d.24xlarge, node.kubernetes.io/instance-type: "
        "p4d.24xlarge}",
        "{node.kubernetes.io/instance-type: p5.48xlarge, karpenter.k8s.aws/instance-family: p4d}",
        "{karpenter.k8s.aws/instance-family: p5, karpenter.k8s.aws/instance-size: 48xlarge}",
        "{karpenter.k8s.aws/instance-family: g5, other: x}",
        "{karpenter.k8s.aws/instance-size: 48xlarge}",
        "{node.kubernetes.io/instance-type: 3, karpenter.k8s.aws/instance-family: p5}",
        "{node.kubernetes.io/instance-type: null, karpenter.k8s.aws/instance-size: [x]}",
    };
    const struct tg_fit fit = {8, 0, 32};
    for (size_t k = 0; k < sizeof(selectors) / sizeof(selectors[0]); k++) {
        char got[2][1024];
        for (int padded = 0; padded < 2; padded++) {
            struct tg_workload wl;
            struct tg_label_pin pin;
            json_t *obj;
            char spec[512];
            snprintf(spec, sizeof(spec), "{nodeSelector: %s, containers: [{name: c}]}",
                     selectors[k]);
            decode_pod(spec, &wl, &obj);
            json_t *ns = json_object_get(json_object_get(obj, "spec"), "nodeSelector");
            ck_assert_uint_le(json_object_size(ns), 16);
            if (padded)
                pad_members(ns, 17);
            ck_assert_int_eq(tg_template_instance_types(NULL, &wl.tpl[0], tg_instance_table,
                                                        tg_instance_table_len, &fit, &pin),
                             0);
            snprintf(got[padded], sizeof(got[padded]), "%d %d", pin.finite, pin.mentioned);
            for (size_t i = 0; i < pin.n; i++) {
                strncat(got[padded], " ", sizeof(got[padded]) - strlen(got[padded]) - 1);
                strncat(got[padded], pin.values[i], sizeof(got[padded]) - strlen(got[padded]) - 1);
            }
            tg_label_pin_release(&pin);
            tg_workload_release(&wl);
            json_decref(obj);
        }
        ck_assert_msg(!strcmp(got[0], got[1]), "%s: walked [%s], looked up [%s]", selectors[k],
                      got[0], got[1]);
    }
}
END_TEST

/* tg_pin_node_selector walks a short nodeSelector and looks each key up in a longer one (more
 * than 4 members per key): both sides of that threshold give the same pin. Each case runs as
 * given (2 keys, 2 + 0..2 members: walked) and padded with 8 more members (looked up). */
struct selector_case {
    const char *ns; /* YAML of nodeSelector */
    bool finite, mentioned;
    const char *values;
};

static const struct selector_case selectors[] = {
    {"{k1: a}", true, true, "a"},
    {"{k2: b, other: x}", true, true, "b"},
    {"{k1: a, k2: a}", true, true, "a"},
    {"{k2: b, k1: a}", true, true, ""},
    {"{k1: 3, k2: b}", true, true, "b"},
    {"{k1: null, k2: [b]}", false, false, ""},
    {"{other: a, k: b, k10: c}", false, false, ""},
    {"{}", false, false, ""},
};

static void selector_pin(json_t *spec, const struct selector_case *sc, const char *how)
{
    static const char *const keys[] = {"k1", "k2"};
    struct tg_label_pin pin;
    struct tg_path root;
    char got[64] = "";
    tg_path_root(&root);
    ck_assert_int_eq(tg_pin_node_selector(NULL, spec, &root, keys, 2, &pin), 0);
    for (size_t i = 0; i < pin.n; i++) {
        strncat(got, i ? "," : "", sizeof(got) - strlen(got) - 1);
        strncat(got, pin.values[i], sizeof(got) - strlen(got) - 1);
    }
    ck_assert_msg(pin.finite == sc->finite, "%s (%s): finite %d", sc->ns, how, pin.finite);
    ck_assert_msg(pin.mentioned == sc->mentioned, "%s (%s): mentioned %d", sc->ns, how,
                  pin.mentioned);
    ck_assert_msg(!strcmp(got, sc->values), "%s (%s): values [%s], expected [%s]", sc->ns, how, got,
                  sc->values);
    tg_label_pin_release(&pin);
}

START_TEST(selector_walk_and_lookup_agree)
{
    const struct selector_case *sc = &selectors[_i];
    json_t *spec = json_object();
    json_t *ns = yaml(sc->ns);
    json_object_set_new(spec, "nodeSelector", ns);
    ck_assert_uint_le(json_object_size(ns), 8);
    selector_pin(spec, sc, "walked");
    pad_members(ns, 9);
    selector_pin(spec, sc, "looked up");
    json_decref(spec);
}
END_TEST

/* A member key with a NUL inside is not the key it starts with, walked or looked up. */
START_TEST(selector_key_with_nul)
{
    static const struct selector_case sc = {"k1\\0x: z", false, false, ""};
    json_t *spec = json_object();
    json_t *ns = json_object();
    json_object_set_new(spec, "nodeSelector", ns);
    json_object_setn_new(ns, "k1\0x", 4, json_string("z"));
    selector_pin(spec, &sc, "walked");
    pad_members(ns, json_object_size(ns) + 8);
    selector_pin(spec, &sc, "looked up");
    json_decref(spec);
}
END_TEST

/* tg_members_named finds what json_object_get finds, key by key: present, absent, a key that
 * only starts with a wanted one, a key with a NUL inside, and no object at all. */
START_TEST(members_named_agrees_with_lookups)
{
    static const char *const keys[] = {"name", "labels", "nam", "k1", "absent", ""};
    enum { N = sizeof(keys) / sizeof(keys[0]) };
    json_t *o = yaml("{name: a, names: b, labels: {x: y}, k: c, \"\": e}");
    json_object_setn_new(o, "k1\0x", 4, json_string("z"));
    json_t *got[N];
    tg_members_named(o, keys, N, got);
    for (size_t i = 0; i < N; i++)
        ck_assert_msg(got[i] == json_object_get(o, keys[i]), "key %s", keys[i]);
    ck_assert_ptr_nonnull(got[0]);
    ck_assert_ptr_nonnull(got[1]);
    ck_assert_ptr_null(got[3]); /* only "k1\0x" is written */
    ck_assert_ptr_nonnull(got[5]);
    json_t *arr = json_array();
    got[0] = arr;
    tg_members_named(arr, keys, N, got);
    tg_members_named(NULL, keys, 1, got + 1);
    ck_assert_ptr_null(got[0]);
    ck_assert_ptr_null(got[1]);
    json_decref(arr);
    json_decref(o);
}
END_TEST

/* The getters for a member read before (tg_read_*) give the getters' answers and file the same
 * reports, for every JSON type and for an absent member; tg_int_value is tg_get_int without
 * reporting. */
START_TEST(read_member_getters_agree_with_the_getters)
{
    static const char *const values[] = {"1",    "-3",    "2.0",  "2.5", "1e300", "\"x\"",
                                         "true", "false", "null", "{}",  "[]"};
    struct tg_path p;
    tg_path_root(&p);
    tg_path_key(&p, &p, "spec");
    for (size_t i = 0; i <= sizeof(values) / sizeof(values[0]); i++) {
        char text[64];
        if (i < sizeof(values) / sizeof(values[0]))
            snprintf(text, sizeof(text), "{\"k\": %s}", values[i]);
        else
            snprintf(text, sizeof(text), "{}");
        json_t *parent = json_loads(text, JSON_DECODE_ANY, NULL);
        ck_assert_ptr_nonnull(parent);
        json_t *raw = json_object_get(parent, "k");
        struct tg_findings fa, fb;
        struct tg_eval a = {.findings = &fa}, b = {.findings = &fb};
        tg_findings_init(&fa);
        tg_findings_init(&fb);
        long long na = -7, nb = -7, nc = -7;
        bool ba = false, bb = true;
        ck_assert_ptr_eq(tg_get_object(&a, parent, &p, "k"),
                         tg_read_object(&b, raw, parent, &p, "k"));
        ck_assert_ptr_eq(tg_get_string(&a, parent, &p, "k"),
                         tg_read_string(&b, raw, parent, &p, "k"));
        int ra = tg_get_int(&a, parent, &p, "k", &na);
        ck_assert_int_eq(ra, tg_read_int(&b, raw, parent, &p, "k", &nb));
        ck_assert_int_eq(ra, tg_int_value(raw, &nc));
        ck_assert_msg(ra != 1 || (na == nb && na == nc), "%s", text);
        int rb = tg_get_bool(&a, parent, &p, "k", &ba);
        ck_assert_int_eq(rb, tg_read_bool(&b, raw, parent, &p, "k", &bb));
        ck_assert_msg(rb != 1 || ba == bb, "%s", text);
        ck_assert_uint_eq(fa.n, fb.n);
        for (size_t k = 0; k < fa.n; k++) {
            ck_assert_str_eq(fa.v[k].field, fb.v[k].field);
            ck_assert_str_eq(fa.v[k].message, fb.v[k].message);
        }
        tg_findings_release(&fa);
        tg_findings_release(&fb);
        json_decref(parent);
    }
}
END_TEST

/* An env entry's members, walked (up to 8 members) or looked up (more), are what json_object_get
 * finds; a key with a NUL inside is not "name". */
START_TEST(env_entry_walk_and_lookup_agree)
{
    for (int pad = 0; pad <= 9; pad += 9) {
        json_t *e = json_object();
        json_object_setn_new(e, "name\0x", 6, json_string("WRONG"));
        json_object_set_new(e, "valueFrom", json_object());
        pad_members(e, json_object_size(e) + (size_t)pad);
        struct tg_env_members m;
        ck_assert_ptr_null(tg_env_entry_name(e));
        json_object_set_new(e, "name", json_string("FI_PROVIDER"));
        json_object_set_new(e, "value", json_string("efa"));
        ck_assert_str_eq(tg_env_entry_name(e), "FI_PROVIDER");
        tg_env_entry_read(e, &m);
        ck_assert_ptr_eq(m.name, json_object_get(e, "name"));
        ck_assert_ptr_eq(m.value, json_object_get(e, "value"));
        ck_assert_ptr_eq(m.value_from, json_object_get(e, "valueFrom"));
        ck_assert_ptr_nonnull(m.value_from);
        json_decref(e);
    }
    ck_assert_ptr_null(tg_env_entry_name(NULL));
}
END_TEST

/* A decoded container's env, as the decoder kept it, gives what the container's own env does. */
START_TEST(container_env_agrees_with_the_object)
{
    static const char *const specs[] = {
        "{containers: [{name: c, env: [{name: A, value: x}, {name: B, value: \"$(A)-y\"}, "
        "{name: C, valueFrom: {fieldRef: {fieldPath: metadata.name}}}, {name: A, value: z}]}]}",
        "{containers: [{name: c, env: FI_PROVIDER}]}",
        "{containers: [{name: c}]}",
    };
    static const char *const names[] = {"A", "B", "C", "FI_PROVIDER", "D"};
    for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
        struct tg_workload wl;
        json_t *obj;
        decode_pod(specs[k], &wl, &obj);
        const struct tg_container *c = &wl.tpl[0].containers[0];
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            char a[64], b[64];
            bool da = true, db = false;
            const char *va = tg_env_get(c->c, names[i], a, sizeof(a), &da);
            const char *vb = tg_ctr_env_get(c, names[i], b, sizeof(b), &db);
            ck_assert_msg(da == db, "%s: %s", specs[k], names[i]);
            ck_assert_msg((!va && !vb) || (va && vb && !strcmp(va, vb)), "%s: %s", specs[k],
                          names[i]);
        }
        if (k == 0) {
            char b[64];
            ck_assert_str_eq(tg_ctr_env_get(c, "B", b, sizeof(b), NULL), "x-y");
        }
        tg_workload_release(&wl);
        json_decref(obj);
    }
}
END_TEST

/* The names a decoded container keeps for its env (up to TG_ENV_MEMO_MAX entries; a longer env
 * is looked up each time) give what the object's env does, on the first ask and the later ones,
 * with entries without a string name, a repeated name, a reference and an empty buffer. */
START_TEST(container_env_memo_agrees_with_the_object)
{
    static const char *const names[] = {"A", "B", "C", "P0", "P9", "P10", "P11", "D", ""};
    for (int n = TG_ENV_MEMO_MAX - 6; n <= TG_ENV_MEMO_MAX - 5; n++) { /* 16 entries, then 17 */
        char spec[2048];
        int at = snprintf(spec, sizeof(spec),
                          "{containers: [{name: c, env: [{name: A, value: x}, {value: nameless}, "
                          "{name: 7, value: n}, {name: B, value: \"$(A)-y\"}, "
                          "{name: C, valueFrom: {fieldRef: {fieldPath: metadata.name}}}");
        for (int i = 0; i < n; i++)
            at += snprintf(spec + at, sizeof(spec) - (size_t)at, ", {name: P%d, value: p%d}", i, i);
        snprintf(spec + at, sizeof(spec) - (size_t)at, ", {name: A, value: z}]}]}");
        struct tg_workload wl;
        json_t *obj;
        decode_pod(spec, &wl, &obj);
        const struct tg_container *c = &wl.tpl[0].containers[0];
        ck_assert_int_eq(json_array_size(c->env_raw), (size_t)n + 6);
        for (int round = 0; round < 2; round++) {
            for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                char a[64], b[64];
                bool da = true, db = false;
                const char *va = tg_env_get(c->c, names[i], a, sizeof(a), &da);
                const char *vb = tg_ctr_env_get(c, names[i], b, sizeof(b), &db);
                ck_assert_msg(da == db, "%d entries: %s", n + 6, names[i]);
                ck_assert_msg((!va && !vb) || (va && vb && !strcmp(va, vb)), "%d entries: %s",
                              n + 6, names[i]);
                db = true;
                ck_assert_ptr_null(tg_ctr_env_get(c, names[i], b, 0, &db));
                ck_assert(!db);
                /* the literal value, as tg_env_value reads it */
                va = tg_env_value(c->c, names[i], &da);
                vb = tg_ctr_env_value(c, names[i], &db);
                ck_assert_msg(da == db, "%d entries: %s: defined", n + 6, names[i]);
                ck_assert_msg((!va && !vb) || (va && vb && !strcmp(va, vb)), "%d entries: %s",
                              n + 6, names[i]);
            }
        }
        ck_assert_int_eq(c->env_memo, n + 6 <= TG_ENV_MEMO_MAX ? 1 : -1);
        for (size_t i = 0; i <= (size_t)n + 6; i++) {
            const char *want = tg_env_entry_name(json_array_get(c->env_raw, i));
            const char *got = tg_ctr_env_name(c, i);
            ck_assert_msg((!want && !got) || (want && got && !strcmp(want, got)), "%zu", i);
        }
        char b[64];
        ck_assert_str_eq(tg_ctr_env_get(c, "A", b, sizeof(b), NULL), "z");
        ck_assert_str_eq(tg_ctr_env_get(c, "B", b, sizeof(b), NULL), "x-y");
        ck_assert_str_eq(tg_ctr_env_get(c, "P9", b, sizeof(b), NULL), "p9");
        tg_workload_release(&wl);
        json_decref(obj);
    }
}
END_TEST

START_TEST(label_pin_has)
{
    struct tg_label_pin pin;
    tg_label_pin_init(&pin);
    ck_assert(!tg_label_pin_has(&pin, "a"));
    tg_label_pin_release(&pin);
    ck_assert_ptr_null(pin.values);
}
END_TEST

/* ---- env values ------------------------------------------------------------------------------ */

START_TEST(fi_provider_and_nccl_net)
{
    ck_assert(tg_fi_provider_selects_efa("efa"));
    ck_assert(tg_fi_provider_selects_efa("EFA"));
    ck_assert(tg_fi_provider_selects_efa("efa,shm"));
    ck_assert(tg_fi_provider_selects_efa("shm, efa"));
    ck_assert(tg_fi_provider_selects_efa("efa;ofi_rxr"));
    ck_assert(!tg_fi_provider_selects_efa("^efa"));
    ck_assert(!tg_fi_provider_selects_efa("^tcp"));
    ck_assert(!tg_fi_provider_selects_efa("tcp"));
    ck_assert(!tg_fi_provider_selects_efa("efa2"));
    ck_assert(!tg_fi_provider_selects_efa("xefa"));
    ck_assert(!tg_fi_provider_selects_efa(""));
    ck_assert(!tg_fi_provider_selects_efa(NULL));
    ck_assert(tg_nccl_net_is_ofi("AWS Libfabric"));
    ck_assert(tg_nccl_net_is_ofi("aws libfabric"));
    ck_assert(tg_nccl_net_is_ofi("Libfabric"));
    ck_assert(tg_nccl_net_is_ofi("OFI"));
    ck_assert(!tg_nccl_net_is_ofi("Socket"));
    ck_assert(!tg_nccl_net_is_ofi("IB"));
    ck_assert(!tg_nccl_net_is_ofi(""));
    ck_assert(!tg_nccl_net_is_ofi(NULL));
}
END_TEST

/* ---- updates --------------------------------------------------------------------------------- */

START_TEST(spec_unchanged)
{
    struct tg_workload wl;
    json_t *a = yaml("{apiVersion: v1, kind: Pod, metadata: {name: p, labels: {x: y}}, spec: "
                     "{containers: [{name: c}]}}");
    json_t *b =
        yaml("{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c}]}}");
    json_t *c =
        yaml("{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: d}]}}");
    json_t *d = yaml("{apiVersion: v1, kind: Pod, metadata: {name: p}}");
    ck_assert_int_eq(tg_workload_decode(&wl, TG_KIND_POD, TG_OP_CREATE, a, NULL, NULL), 0);
    ck_assert(!tg_workload_spec_unchanged(&wl)); /* CREATE: no old object */
    tg_workload_release(&wl);
    ck_assert_int_eq(tg_workload_decode(&wl, TG_KIND_POD, TG_OP_UPDATE, a, b, NULL), 0);
    ck_assert(tg_workload_spec_unchanged(&wl));
    tg_workload_release(&wl);
    ck_assert_int_eq(tg_workload_decode(&wl, TG_KIND_POD, TG_OP_UPDATE, a, c, NULL), 0);
    ck_assert(!tg_workload_spec_unchanged(&wl));
    tg_workload_release(&wl);
    ck_assert_int_eq(tg_workload_decode(&wl, TG_KIND_POD, TG_OP_UPDATE, a, d, NULL), 0);
    ck_assert(!tg_workload_spec_unchanged(&wl));
    tg_workload_release(&wl);
    ck_assert_int_eq(tg_workload_decode(&wl, TG_KIND_POD, TG_OP_UPDATE, d, d, NULL), 0);
    ck_assert(tg_workload_spec_unchanged(&wl));
    tg_workload_release(&wl);
    json_decref(a);
    json_decref(b);
    json_decref(c);
    json_decref(d);
}
END_TEST

Suite *tg_test_pod_suite(void);
Suite *tg_test_pod_suite(void)
{
    Suite *s = suite_create("pod");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, container_count, 0, (int)(sizeof(counts) / sizeof(counts[0])));
    tcase_add_loop_test(tc, decoded_counts_agree_for_every_device, 0,
                        (int)(sizeof(counts) / sizeof(counts[0])));
    tcase_add_test(tc, container_without_resources);
    tcase_add_loop_test(tc, digit_counts_agree_with_the_quantity_grammar, 0,
                        (int)(sizeof(digit_strings) / sizeof(digit_strings[0])));
    tcase_add_test(tc, template_count_sums_and_takes_init_max);
    tcase_add_test(tc, decoded_hugepage_names_are_the_maps_keys);
    tcase_add_test(tc, template_count_kept_agrees_and_follows_added_containers);
    tcase_add_test(tc, template_spec_members_walked_and_looked_up_agree);
    tcase_add_test(tc, template_uses_claims);
    tcase_add_test(tc, queue_label_walked_and_looked_up_agree);
    tcase_add_test(tc, instance_family_cuts_to_the_buffer);
    tcase_add_loop_test(tc, label_pin, 0, (int)(sizeof(pins) / sizeof(pins[0])));
    tcase_add_test(tc, family_pin_follows_the_fit);
    tcase_add_test(tc, instance_types_selector_walk_and_lookup_agree);
    tcase_add_test(tc, template_affinity_pin_agrees_with_the_spec);
    tcase_add_loop_test(tc, selector_walk_and_lookup_agree, 0,
                        (int)(sizeof(selectors) / sizeof(selectors[0])));
    tcase_add_test(tc, selector_key_with_nul);
    tcase_add_test(tc, members_named_agrees_with_lookups);
    tcase_add_test(tc, env_entry_walk_and_lookup_agree);
    tcase_add_test(tc, read_member_getters_agree_with_the_getters);
    tcase_add_test(tc, container_env_agrees_with_the_object);
    tcase_add_test(tc, container_env_memo_agrees_with_the_object);
    tcase_add_test(tc, label_pin_has);
    tcase_add_test(tc, fi_provider_and_nccl_net);
    tcase_add_test(tc, spec_unchanged);
    suite_add_tcase(s, tc);
    return s;
}
