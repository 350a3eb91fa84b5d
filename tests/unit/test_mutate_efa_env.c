/* test_mutate_efa_env.c -- the EFA env mutator: table cases (fixtures/mutate/cases.yaml) plus the
 * notes it leaves as warnings, custom policy lists, audit mode and the pieces the runner cannot
 * express. Every patch here is applied with tg_patch_apply and run a second time. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/cases.h"
#include "tg/base64.h"
#include "tg/instances.h"
#include "tg/pipeline.h"
#include "tg/response.h"
#include "tg/yaml_json.h"

Suite *tg_test_mutate_efa_env_suite(void);

/* A /mutate run as the server does it (validators skipped), on obj under pol. */
struct run {
    struct tg_review rv;
    struct tg_result res;
};

static json_t *review_for(json_t *obj, const char *op)
{
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *slash = strchr(av, '/');
    json_t *meta = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    json_t *req = json_pack("{s:s, s:{s:s%, s:s, s:s}, s:s, s:s, s:{s:s}, s:O}", "uid", "u-1",
                            "kind", "group", av, slash ? (size_t)(slash - av) : (size_t)0,
                            "version", slash ? slash + 1 : av, "kind", kind, "operation",
                            op ? op : "CREATE", "namespace", ns ? ns : "default", "userInfo",
                            "username", "tester", "object", obj);
    return json_pack("{s:s, s:s, s:o}", "apiVersion", "admission.k8s.io/v1", "kind",
                     "AdmissionReview", "request", req);
}

static void run_mutate(const struct tg_policy *pol, json_t *obj, struct run *r)
{
    char err[256];
    struct tg_pipeline_opts opts = {.mutate = true, .skip_validation = true};
    json_t *root = review_for(obj, NULL);
    ck_assert_ptr_nonnull(root);
    ck_assert_int_eq(tg_review_from_json(root, &r->rv, err, sizeof(err)), 0);
    ck_assert_int_eq(tg_pipeline_run(pol, &r->rv, &opts, &r->res), 0);
}

static void run_release(struct run *r)
{
    tg_result_release(&r->res);
    tg_review_release(&r->rv);
}

/* Applies r's patch to a copy of obj, checks a second run patches nothing, returns the result. */
static json_t *apply_checked(const struct tg_policy *pol, json_t *obj, struct run *r)
{
    char err[256];
    json_t *doc = json_deep_copy(obj);
    ck_assert_msg(tg_patch_apply(&doc, r->res.patch.ops, err, sizeof(err)) == 0, "apply: %s", err);
    struct run again;
    run_mutate(pol, doc, &again);
    ck_assert_uint_eq(tg_patch_count(&again.res.patch), 0);
    run_release(&again);
    return doc;
}

static json_t *yaml_obj(const char *text)
{
    char err[256];
    json_t *v = tg_yaml_parse_one(text, strlen(text), err, sizeof(err));
    ck_assert_msg(v != NULL, "yaml: %s", err);
    return v;
}

static bool warning_has(const struct tg_result *res, const char *needle)
{
    size_t i;
    json_t *w;
    json_array_foreach (res->warnings, i, w) {
        if (strstr(json_string_value(w), needle))
            return true;
    }
    return false;
}

/* The value at a plain JSON pointer (no escapes) of doc, or NULL. */
static json_t *at_ptr(json_t *doc, const char *ptr)
{
    json_t *c = doc;
    const char *p = ptr;
    while (*p == '/' && c) {
        char tok[64];
        size_t n = strcspn(p + 1, "/");
        snprintf(tok, sizeof(tok), "%.*s", (int)n, p + 1);
        char *end;
        long i = strtol(tok, &end, 10);
        c = json_is_array(c) && !*end ? json_array_get(c, (size_t)i) : json_object_get(c, tok);
        p += n + 1;
    }
    return c;
}

/* The env names of the container at pointer ptr of doc, comma-joined into buf. */
static const char *env_names(json_t *doc, const char *ptr, char *buf, size_t len)
{
    size_t at = 0, i;
    json_t *e;
    buf[0] = '\0';
    json_array_foreach (json_object_get(at_ptr(doc, ptr), "env"), i, e) {
        int n = snprintf(buf + at, len - at, "%s%s", i ? "," : "",
                         json_string_value(json_object_get(e, "name")));
        if (n > 0 && (size_t)n < len - at)
            at += (size_t)n;
    }
    return buf;
}

/* The env of the container at pointer ptr of doc as "NAME=value" items joined by '|' into buf
 * (valueFrom shows as <valueFrom>). */
static const char *env_pairs(json_t *doc, const char *ptr, char *buf, size_t len)
{
    size_t at = 0, i;
    json_t *e;
    buf[0] = '\0';
    json_array_foreach (json_object_get(at_ptr(doc, ptr), "env"), i, e) {
        const char *v = json_string_value(json_object_get(e, "value"));
        int n = snprintf(buf + at, len - at, "%s%s=%s", i ? "|" : "",
                         json_string_value(json_object_get(e, "name")),
                         v                                 ? v
                         : json_object_get(e, "valueFrom") ? "<valueFrom>"
                                                           : "");
        if (n > 0 && (size_t)n < len - at)
            at += (size_t)n;
    }
    return buf;
}

static const char *const POD_P5 =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\n"
    "spec:\n  nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}\n"
    "  containers:\n  - name: train\n    image: x\n"
    "    resources: {limits: {vpc.amazonaws.com/efa: 32}}\n";

/* The defaults a container already defines are left out, whatever their number: up to 32 are
 * matched against its env in one pass, more one by one (both sides of the threshold). */
START_TEST(defaults_the_container_defines_are_left_out_for_any_number)
{
    for (size_t n = 31; n <= 34; n++) {
        struct tg_policy *pol = tg_policy_new_default();
        for (size_t i = 0; i < pol->ninject; i++) {
            free(pol->inject_env[i].name);
            free(pol->inject_env[i].value);
            for (size_t f = 0; f < pol->inject_env[i].nfamilies; f++)
                free(pol->inject_env[i].families[f]);
            free(pol->inject_env[i].families);
        }
        pol->inject_env = realloc(pol->inject_env, n * sizeof(*pol->inject_env));
        ck_assert_ptr_nonnull(pol->inject_env);
        memset(pol->inject_env, 0, n * sizeof(*pol->inject_env));
        pol->ninject = n;
        for (size_t i = 0; i < n; i++) {
            char name[16];
            snprintf(name, sizeof(name), "E%zu", i);
            pol->inject_env[i].name = strdup(name);
            pol->inject_env[i].value = strdup("v");
        }
        /* the container defines the first, the 32nd and the last default, and one other name */
        char text[512];
        snprintf(text, sizeof(text),
                 "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\n"
                 "spec:\n  containers:\n  - name: train\n"
                 "    env: [{name: E0, value: a}, {name: OTHER, value: b}, {name: E31, value: c},"
                 " {name: E%zu, value: d}]\n"
                 "    resources: {limits: {vpc.amazonaws.com/efa: 1}}\n",
                 n - 1);
        json_t *obj = yaml_obj(text);
        struct run r;
        run_mutate(pol, obj, &r);
        json_t *doc = apply_checked(pol, obj, &r);
        json_t *env = json_object_get(
            json_array_get(json_object_get(json_object_get(doc, "spec"), "containers"), 0), "env");
        /* 4 written + every default but the defined ones (E31 is none when n is 31, the last
         * one when n is 32) */
        size_t defined = n <= 32 ? 2 : 3;
        ck_assert_uint_eq(json_array_size(env), 4 + n - defined);
        for (size_t i = 0; i < 4; i++) /* the user's entries keep their values */
            ck_assert_str_ne(json_string_value(json_object_get(json_array_get(env, i), "value")),
                             "v");
        run_release(&r);
        json_decref(doc);
        json_decref(obj);
        tg_policy_unref(pol);
    }
}
END_TEST

START_TEST(envfrom_skipped_with_a_warning)
{
    struct tg_policy *pol = tg_policy_new_default();
    json_t *obj = yaml_obj("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\n"
                           "spec:\n  containers:\n  - name: train\n"
                           "    resources: {limits: {vpc.amazonaws.com/efa: 1}}\n"
                           "    envFrom: [{configMapRef: {name: efa}}]\n");
    struct run r;
    run_mutate(pol, obj, &r);
    ck_assert_uint_eq(tg_patch_count(&r.res.patch), 0);
    ck_assert_uint_eq(json_array_size(r.res.warnings), 1);
    const char *w = json_string_value(json_array_get(r.res.warnings, 0));
    /* docs/mutation.md, "Notes": no pin and no hostNetwork, so FI_PROVIDER is the only default */
    ck_assert_str_eq(w, "[mutate.efa-env] spec.containers[0].envFrom: set, so FI_PROVIDER not "
                        "added (env would override the ConfigMap/Secret); policy "
                        "injectWithEnvFrom: true adds them");
    ck_assert_uint_le(strlen(w), 256);
    run_release(&r);
    json_decref(obj);
    tg_policy_unref(pol);
}
END_TEST

START_TEST(envfrom_opted_in_by_policy)
{
    struct tg_policy *pol = tg_policy_new_default();
    pol->inject_with_env_from = true;
    json_t *obj = yaml_obj("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\n"
                           "spec:\n  containers:\n  - name: train\n"
                           "    resources: {limits: {vpc.amazonaws.com/efa: 1}}\n"
                           "    envFrom: [{configMapRef: {name: efa}}]\n");
    struct run r;
    char names[256];
    run_mutate(pol, obj, &r);
    ck_assert_uint_eq(json_array_size(r.res.warnings), 0);
    json_t *doc = apply_checked(pol, obj, &r);
    ck_assert_str_eq(env_names(doc, "/spec/containers/0", names, sizeof(names)), "FI_PROVIDER");
    ck_assert_ptr_nonnull(at_ptr(doc, "/spec/containers/0/envFrom"));
    json_decref(doc);
    run_release(&r);
    json_decref(obj);
    tg_policy_unref(pol);
}
END_TEST

/* The patch ops themselves: one add of the whole array when env is absent, -/append otherwise. */
START_TEST(patch_shape_is_add_array_then_append)
{
    struct tg_policy *pol = tg_policy_new_default();
    json_t *obj = yaml_obj(POD_P5);
    struct run r;
    run_mutate(pol, obj, &r);
    ck_assert_uint_eq(tg_patch_count(&r.res.patch), 1);
    json_t *op = json_array_get(r.res.patch.ops, 0);
    ck_assert_str_eq(json_string_value(json_object_get(op, "op")), "add");
    ck_assert_str_eq(json_string_value(json_object_get(op, "path")), "/spec/containers/0/env");
    ck_assert_uint_eq(json_array_size(json_object_get(op, "value")), 2);
    run_release(&r);
    json_decref(obj);

    obj = yaml_obj("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\n"
                   "spec:\n  nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}\n"
                   "  containers:\n  - name: a\n  - name: train\n"
                   "    resources: {limits: {vpc.amazonaws.com/efa: 1}}\n"
                   "    env: [{name: X, value: y}]\n");
    run_mutate(pol, obj, &r);
    ck_assert_uint_eq(tg_patch_count(&r.res.patch), 2);
    for (size_t i = 0; i < 2; i++) {
        op = json_array_get(r.res.patch.ops, i);
        ck_assert_str_eq(json_string_value(json_object_get(op, "path")),
                         "/spec/containers/1/env/-");
    }
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_array_get(r.res.patch.ops, 0), "value"), "name")),
                     "FI_PROVIDER");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_array_get(r.res.patch.ops, 1), "value"), "name")),
                     "FI_EFA_USE_DEVICE_RDMA");
    json_t *doc = apply_checked(pol, obj, &r);
    json_decref(doc);
    run_release(&r);
    json_decref(obj);
    tg_policy_unref(pol);
}
END_TEST

static void set_inject(struct tg_policy *pol, size_t n)
{
    for (size_t i = 0; i < pol->ninject; i++) {
        free(pol->inject_env[i].name);
        free(pol->inject_env[i].value);
        for (size_t f = 0; f < pol->inject_env[i].nfamilies; f++)
            free(pol->inject_env[i].families[f]);
        free(pol->inject_env[i].families);
    }
    free(pol->inject_env);
    pol->inject_env = calloc(n, sizeof(*pol->inject_env));
    ck_assert_ptr_nonnull(pol->inject_env);
    pol->ninject = n;
}

static void set_entry(struct tg_policy *pol, size_t i, const char *name, const char *value,
                      bool gdr, const char *family)
{
    struct tg_env_entry *e = &pol->inject_env[i];
    e->name = strdup(name);
    e->value = strdup(value);
    e->gdr_only = gdr;
    if (family) {
        e->families = calloc(1, sizeof(char *));
        e->families[0] = strdup(family);
        e->nfamilies = 1;
    }
}

/* A policy list replaces the default one; instanceFamilies entries need every pinned type in the
 * family; a duplicated name is added once. */
START_TEST(policy_list_replaces_default_with_family_conditions)
{
    struct tg_policy *pol = tg_policy_new_default();
    char names[256];
    set_inject(pol, 4);
    set_entry(pol, 0, "FI_EFA_USE_HUGE_PAGE", "0", false, NULL);
    set_entry(pol, 1, "NCCL_PROTO", "simple", false, "p4d");
    set_entry(pol, 2, "NCCL_SHM_USE_CUDA_MEMCPY", "1", false, "p5");
    set_entry(pol, 3, "FI_EFA_USE_HUGE_PAGE", "1", false, NULL);
    json_t *obj = yaml_obj(POD_P5);
    struct run r;
    run_mutate(pol, obj, &r);
    json_t *doc = apply_checked(pol, obj, &r);
    ck_assert_str_eq(env_names(doc, "/spec/containers/0", names, sizeof(names)),
                     "FI_EFA_USE_HUGE_PAGE,NCCL_SHM_USE_CUDA_MEMCPY");
    json_t *env = at_ptr(doc, "/spec/containers/0/env");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(env, 0), "value")), "0");
    json_decref(doc);
    run_release(&r);
    json_decref(obj);

    /* No pin: family entries do not apply. */
    obj = yaml_obj("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\n"
                   "spec:\n  containers:\n  - name: t\n"
                   "    resources: {limits: {vpc.amazonaws.com/efa: 1}}\n");
    run_mutate(pol, obj, &r);
    doc = apply_checked(pol, obj, &r);
    ck_assert_str_eq(env_names(doc, "/spec/containers/0", names, sizeof(names)),
                     "FI_EFA_USE_HUGE_PAGE");
    json_decref(doc);
    run_release(&r);
    json_decref(obj);

    /* An empty list injects nothing. */
    set_inject(pol, 0);
    obj = yaml_obj(POD_P5);
    run_mutate(pol, obj, &r);
    ck_assert_uint_eq(tg_patch_count(&r.res.patch), 0);
    run_release(&r);
    json_decref(obj);
    tg_policy_unref(pol);
}
END_TEST

/* The policy's instance table decides FI_EFA_USE_DEVICE_RDMA by its rdmaRead column, not by
 * GPUDirect RDMA (SPEC 10); an unknown rdmaRead counts as no ("when in doubt, inject nothing"). */
static const char *p5_env_with(signed char rdma_read, bool gdr, char *names, size_t len)
{
    struct tg_policy *pol = tg_policy_new_default();
    for (size_t i = 0; i < pol->ninstances; i++) {
        if (!strcmp(pol->instances[i].name, "p5.48xlarge")) {
            pol->instances[i].rdma_read = rdma_read;
            pol->instances[i].gdr = gdr;
        }
    }
    json_t *obj = yaml_obj(POD_P5);
    struct run r;
    run_mutate(pol, obj, &r);
    json_t *doc = apply_checked(pol, obj, &r);
    env_names(doc, "/spec/containers/0", names, len);
    json_decref(doc);
    run_release(&r);
    json_decref(obj);
    tg_policy_unref(pol);
    return names;
}

START_TEST(policy_instance_table_decides_rdma)
{
    char names[256];
    ck_assert_str_eq(p5_env_with(TG_NO, true, names, sizeof(names)), "FI_PROVIDER");
    ck_assert_str_eq(p5_env_with(TG_UNKNOWN, true, names, sizeof(names)), "FI_PROVIDER");
    ck_assert_str_eq(p5_env_with(TG_YES, false, names, sizeof(names)),
                     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA");
}
END_TEST

/* Audit: no patch, a would-patch annotation with the pointers, no warnings. */
START_TEST(audit_records_would_patch)
{
    struct tg_policy *pol = tg_policy_new_default();
    pol->mode = TG_MODE_AUDIT;
    json_t *obj = yaml_obj(POD_P5);
    struct run r;
    run_mutate(pol, obj, &r);
    ck_assert(r.res.allowed);
    ck_assert_uint_eq(tg_patch_count(&r.res.patch), 0);
    ck_assert_uint_eq(json_array_size(r.res.warnings), 0);
    ck_assert_str_eq(json_string_value(json_object_get(r.res.audit, "would-patch")),
                     "/spec/containers/0/env");
    size_t len;
    char *body = tg_response_encode(&r.rv, &r.res, true, &len);
    ck_assert_ptr_nonnull(body);
    ck_assert_ptr_null(strstr(body, "\"patch\""));
    ck_assert_ptr_nonnull(strstr(body, "would-patch"));
    free(body);
    run_release(&r);
    json_decref(obj);
    tg_policy_unref(pol);
}
END_TEST

/* Audit lists every container pointer once, "/-" appends folded into env: on an MPIJob only the
 * launcher's (its env list; nothing goes into the ssh workers, SPEC 10), on a hostNetwork Pod each
 * EFA container's three appends as one pointer. */
START_TEST(audit_lists_each_env_once)
{
    struct tg_policy *pol = tg_policy_new_default();
    pol->mode = TG_MODE_AUDIT;
    json_t *obj = yaml_obj(
        "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: j, namespace: ml}\n"
        "spec:\n  mpiReplicaSpecs:\n"
        "    Launcher:\n      template:\n        spec:\n          containers:\n"
        "          - {name: l, command: [mpirun, /app], env: [{name: A, value: b}]}\n"
        "    Worker:\n      replicas: 2\n      template:\n        spec:\n          containers:\n"
        "          - {name: w, resources: {limits: {vpc.amazonaws.com/efa: 4}}}\n");
    struct run r;
    run_mutate(pol, obj, &r);
    ck_assert_uint_eq(tg_patch_count(&r.res.patch), 0);
    ck_assert_str_eq(json_string_value(json_object_get(r.res.audit, "would-patch")),
                     "/spec/mpiReplicaSpecs/Launcher/template/spec/containers/0/env");
    run_release(&r);
    json_decref(obj);

    obj = yaml_obj("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\n"
                   "spec:\n  hostNetwork: true\n"
                   "  nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}\n"
                   "  containers:\n"
                   "  - {name: a, env: [{name: X, value: y}],"
                   " resources: {limits: {vpc.amazonaws.com/efa: 16}}}\n"
                   "  - {name: b, env: [], resources: {limits: {vpc.amazonaws.com/efa: 16}}}\n");
    run_mutate(pol, obj, &r);
    ck_assert_uint_eq(tg_patch_count(&r.res.patch), 0);
    ck_assert_str_eq(json_string_value(json_object_get(r.res.audit, "would-patch")),
                     "/spec/containers/0/env; /spec/containers/1/env");
    run_release(&r);
    json_decref(obj);
    tg_policy_unref(pol);
}
END_TEST

static const char *mpijob(const char *impl, const char *launcher_extra)
{
    static char buf[2048];
    snprintf(buf, sizeof(buf),
             "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: j, namespace: ml}\n"
             "spec:\n  mpiImplementation: %s\n  mpiReplicaSpecs:\n"
             "    Launcher:\n      template:\n        spec:\n          containers:\n"
             "          - name: l\n%s"
             "    Worker:\n      replicas: 2\n      template:\n        spec:\n"
             "          nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}\n"
             "          containers:\n"
             "          - {name: w, resources: {limits: {vpc.amazonaws.com/efa: 32}}}\n",
             impl, launcher_extra);
    return buf;
}

#define LAUNCHER "/spec/mpiReplicaSpecs/Launcher/template/spec/containers/0"
#define WORKER "/spec/mpiReplicaSpecs/Worker/template/spec/containers/0"
/* What the p5.48xlarge workers' ranks get by default (RDMA read; no hostNetwork). */
#define DEFAULTS "FI_PROVIDER=efa|FI_EFA_USE_DEVICE_RDMA=1"
#define LIST "OMPI_MCA_mca_base_env_list=FI_PROVIDER=efa;FI_EFA_USE_DEVICE_RDMA=1"
#define ADD_X "add -x FI_PROVIDER=efa -x FI_EFA_USE_DEVICE_RDMA=1"

/* Every case: the workers (sshd, or hydra's proxies) get nothing (SPEC 10, docs/mutation.md). */
struct fwd_case {
    const char *impl;
    const char *launcher;  /* YAML lines of the launcher container after its name */
    const char *env;       /* expected launcher env after the patch (env_pairs) */
    const char *warning;   /* substring of the one expected warning, or NULL for none */
    const char *also;      /* a second substring of that warning, or NULL */
    const char *not_in;    /* a substring the warning must not hold, or NULL */
    const char *known_bug; /* the case asserts the right behaviour the code lacks: skipped */
};

static const struct fwd_case fwd_cases[] = {
    /* 0. No -x: the env list with NAME=value entries is safe on Open MPI 4 and 5. */
    {"OpenMPI", "            command: [mpirun, -np, '16', /app]\n", LIST, NULL, NULL, NULL, NULL},
    /* 1. sh -c script, mpirun by full path. */
    {"OpenMPI",
     "            command: [/bin/sh, -c, 'cd /w && /opt/amazon/openmpi/bin/mpirun -np 16 /app']\n",
     LIST, NULL, NULL, NULL, NULL},
    /* 2. -x forwards FI_PROVIDER (the user's choice): the rest is named, one -x per variable. */
    {"OpenMPI", "            command: [mpirun, -x, FI_PROVIDER, -x, 'NCCL_DEBUG=INFO', /app]\n", "",
     "mpirun uses -x", "; add -x FI_EFA_USE_DEVICE_RDMA=1", "FI_PROVIDER=efa", NULL},
    /* 3. -x forwards every default: nothing to add, nothing to say. */
    {"OpenMPI",
     "            args: [mpirun, -x, FI_PROVIDER, -x, FI_EFA_USE_DEVICE_RDMA,"
     " -x, NCCL_SOCKET_IFNAME, /app]\n",
     "", NULL, NULL, NULL, NULL},
    /* 4. --mca mca_base_env_list on the command line: no env list either. mpirun turns --mca
     * into OMPI_MCA_mca_base_env_list in its own environment before it reads -x, so adding -x
     * next to it stops Open MPI 4 with orterun:conflict-env-set (open-mpi/ompi
     * orte/mca/schizo/ompi/schizo_ompi.c parse_env); the entries belong in the list's value. */
    {"OpenMPI", "            command: [mpirun, --mca, mca_base_env_list, 'FI_PROVIDER;X', /app]\n",
     "", "FI_EFA_USE_DEVICE_RDMA=1", NULL, "add -x", NULL},
    /* 5. horovodrun hands its whole env to the ranks (-x per variable): the launcher's env. */
    {"OpenMPI", "            command: [horovodrun, -np, '16', python, train.py]\n", DEFAULTS, NULL,
     NULL, NULL, NULL},
    /* 6. The image entrypoint: unknown command line, not safe (a hidden -x would abort). */
    {"OpenMPI", "            image: nccl\n", "", "image entrypoint", ADD_X, NULL, NULL},
    /* 7. A script file: mpirun not visible. */
    {"OpenMPI", "            command: [bash, /scripts/run.sh]\n", "", "no mpirun seen", ADD_X, NULL,
     NULL},
    /* 8. An option the reader does not know could hide a -x: not safe. */
    {"OpenMPI", "            command: [mpirun, --frobnicate, /app]\n", "",
     "mpirun not fully readable", ADD_X, NULL, NULL},
    /* 9. -x inside an sh -c script, with quoting: exactly the docs/mutation.md example. */
    {"OpenMPI", "            command: [sh, -c, \"mpirun -x 'NCCL_DEBUG=INFO' -np 2 /app\"]\n", "",
     "[mutate.efa-env] spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].command[2]: "
     "mpirun "
     "uses -x, so OMPI_MCA_mca_base_env_list cannot be added (Open MPI refuses it together with "
     "-x); add -x FI_PROVIDER=efa -x FI_EFA_USE_DEVICE_RDMA=1",
     NULL, NULL, NULL},
    /* 10. The user's list forwards FI_PROVIDER: kept as written; the note names what it leaves
     * out. */
    {"OpenMPI",
     "            command: [mpirun, /app]\n"
     "            env: [{name: OMPI_MCA_mca_base_env_list, value: 'FI_PROVIDER=efa;A'}]\n",
     "OMPI_MCA_mca_base_env_list=FI_PROVIDER=efa;A",
     "does not forward FI_EFA_USE_DEVICE_RDMA:", NULL, NULL, NULL},
    /* 11. The list forwards none of them: kept; the note names both. */
    {"OpenMPI",
     "            command: [mpirun, /app]\n"
     "            env: [{name: OMPI_MCA_mca_base_env_list, value: NCCL_DEBUG}]\n",
     "OMPI_MCA_mca_base_env_list=NCCL_DEBUG",
     "does not forward FI_PROVIDER, FI_EFA_USE_DEVICE_RDMA:", NULL, NULL, NULL},
    /* 12. The list names every one (by name): the user's choice, nothing added, nothing said. */
    {"OpenMPI",
     "            command: [mpirun, /app]\n"
     "            env: [{name: OMPI_MCA_mca_base_env_list,"
     " value: 'NCCL_SOCKET_IFNAME;FI_EFA_USE_DEVICE_RDMA;FI_PROVIDER'}]\n",
     "OMPI_MCA_mca_base_env_list=NCCL_SOCKET_IFNAME;FI_EFA_USE_DEVICE_RDMA;FI_PROVIDER", NULL, NULL,
     NULL, NULL},
    /* 13. A launcher that holds an EFA device but runs no ranks (v2beta1, a Worker spec): still
     * only the forwarding, nothing in its own env. */
    {"OpenMPI",
     "            command: [mpirun, /app]\n"
     "            resources: {limits: {vpc.amazonaws.com/efa: 1}}\n",
     LIST, NULL, NULL, NULL, NULL},
    /* 14. The user's list from valueFrom: cannot be checked; the note says what it should hold. */
    {"OpenMPI",
     "            command: [mpirun, /app]\n"
     "            env: [{name: OMPI_MCA_mca_base_env_list, valueFrom: {configMapKeyRef: "
     "{name: a, key: b}}}]\n",
     "OMPI_MCA_mca_base_env_list=<valueFrom>", "comes from valueFrom",
     "FI_PROVIDER=efa;FI_EFA_USE_DEVICE_RDMA=1", NULL, NULL},
    /* 15. The user set the variables on the launcher: its own env never reaches ranks over ssh,
     * so the forwarding list is still added. */
    {"OpenMPI",
     "            command: [mpirun, /app]\n"
     "            env: [{name: FI_PROVIDER, value: efa},"
     " {name: FI_EFA_USE_DEVICE_RDMA, value: '1'}, {name: NCCL_SOCKET_IFNAME, value: eth0}]\n",
     "FI_PROVIDER=efa|FI_EFA_USE_DEVICE_RDMA=1|NCCL_SOCKET_IFNAME=eth0|" LIST, NULL, NULL, NULL,
     NULL},
    /* 16. envFrom on the launcher: nothing is added there, the forwarding list included. */
    {"OpenMPI",
     "            command: [mpirun, /app]\n"
     "            envFrom: [{secretRef: {name: s}}]\n",
     "", "set, so OMPI_MCA_mca_base_env_list not added", NULL, NULL, NULL},
    /* 17. Intel: hydra passes the launcher's whole env to the ranks. */
    {"Intel", "            command: [mpirun, -n, '2', /app]\n", DEFAULTS, NULL, NULL, NULL, NULL},
    /* 18. MPICH -genvnone stops that; -genv NAME=value still reaches the ranks. */
    {"MPICH", "            command: [mpiexec, -genvnone, -n, '2', /app]\n", "", "-genvnone",
     "add -genv FI_PROVIDER efa -genv FI_EFA_USE_DEVICE_RDMA 1", NULL, NULL},
    /* 19. -genvlist names every default: the user's forwarding, left alone. */
    {"MPICH",
     "            command: [mpiexec, -genvnone, -genvlist,"
     " 'FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME', /app]\n",
     "", NULL, NULL, NULL, NULL},
    /* 20. An implementation the CRD does not accept (its enum refuses it at validation): read as
     * the default, Open MPI. */
    {"openmpi", "            command: [mpirun, /app]\n", LIST, NULL, NULL, NULL, NULL},
};

START_TEST(launcher_forwarding)
{
    const struct fwd_case *fc = &fwd_cases[_i];
    if (fc->known_bug) {
        fprintf(stderr, "KNOWN BUG (not run): launcher_forwarding case %d: %s\n", _i,
                fc->known_bug);
        if (!getenv("TG_RUN_KNOWN_BUGS"))
            return;
    }
    struct tg_policy *pol = tg_policy_new_default();
    char env[1024];
    json_t *obj = yaml_obj(mpijob(fc->impl, fc->launcher));
    struct run r;
    run_mutate(pol, obj, &r);
    json_t *doc = apply_checked(pol, obj, &r);
    ck_assert_msg(!strcmp(env_pairs(doc, LAUNCHER, env, sizeof(env)), fc->env),
                  "case %d: launcher env %s", _i, env);
    ck_assert_msg(!strcmp(env_pairs(doc, WORKER, env, sizeof(env)), ""), "case %d: worker env %s",
                  _i, env);
    if (fc->warning) {
        ck_assert_msg(json_array_size(r.res.warnings) == 1 && warning_has(&r.res, fc->warning),
                      "case %d: warnings %s", _i, json_dumps(r.res.warnings, JSON_COMPACT));
        const char *w = json_string_value(json_array_get(r.res.warnings, 0));
        ck_assert_msg(!fc->also || strstr(w, fc->also), "case %d: %s", _i, w);
        ck_assert_msg(!fc->not_in || !strstr(w, fc->not_in), "case %d: %s", _i, w);
        ck_assert_uint_le(strlen(w), 256);
        ck_assert_msg(!strncmp(w, "[mutate.efa-env] ", 17), "%s", w);
    } else {
        ck_assert_msg(json_array_size(r.res.warnings) == 0, "case %d: warnings %s", _i,
                      json_dumps(r.res.warnings, JSON_COMPACT));
    }
    json_decref(doc);
    run_release(&r);
    json_decref(obj);
    tg_policy_unref(pol);
}
END_TEST

/* The env list names only what applies to the workers' pins (never the launcher's own): g5 has no
 * RDMA read, so FI_EFA_USE_DEVICE_RDMA stays out although the launcher sits on p5. */
START_TEST(env_list_follows_worker_pins)
{
    struct tg_policy *pol = tg_policy_new_default();
    json_t *obj = yaml_obj(
        "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: j, namespace: ml}\n"
        "spec:\n  mpiReplicaSpecs:\n"
        "    Launcher:\n      template:\n        spec:\n"
        "          nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}\n"
        "          containers:\n          - {name: l, command: [mpirun, /app]}\n"
        "    Worker:\n      replicas: 2\n      template:\n        spec:\n"
        "          nodeSelector: {node.kubernetes.io/instance-type: g5.48xlarge}\n"
        "          containers:\n"
        "          - {name: w, resources: {limits: {vpc.amazonaws.com/efa: 1}}}\n");
    struct run r;
    char env[512];
    run_mutate(pol, obj, &r);
    json_t *doc = apply_checked(pol, obj, &r);
    ck_assert_str_eq(env_pairs(doc, LAUNCHER, env, sizeof(env)),
                     "OMPI_MCA_mca_base_env_list=FI_PROVIDER=efa");
    ck_assert_str_eq(env_pairs(doc, WORKER, env, sizeof(env)), "");
    json_decref(doc);
    run_release(&r);
    json_decref(obj);
    tg_policy_unref(pol);
}
END_TEST

/* What /mutate produces must pass /validate's env rules (SPEC 10: what /mutate adds never causes a
 * /validate finding): the launcher's env list raises neither mpi.env-not-forwarded nor
 * efa.env-without-device. */
START_TEST(mutated_mpijob_passes_env_rules)
{
    char err[256];
    struct tg_policy *pol = tg_policy_new_default();
    json_t *obj = yaml_obj(mpijob("OpenMPI", "            command: [mpirun, -np, '16', /app]\n"));
    struct run r;
    run_mutate(pol, obj, &r);
    json_t *doc = apply_checked(pol, obj, &r);
    run_release(&r);
    struct tg_pipeline_opts opts = {0};
    json_t *root = review_for(doc, NULL);
    ck_assert_int_eq(tg_review_from_json(root, &r.rv, err, sizeof(err)), 0);
    ck_assert_int_eq(tg_pipeline_run(pol, &r.rv, &opts, &r.res), 0);
    for (size_t i = 0; i < r.res.findings.n; i++) {
        const char *rule = r.res.findings.v[i].rule;
        ck_assert_msg(strcmp(rule, "mpi.env-not-forwarded") &&
                          strcmp(rule, "efa.env-without-device"),
                      "%s at %s", rule, r.res.findings.v[i].field);
    }
    run_release(&r);
    json_decref(doc);
    json_decref(obj);
    tg_policy_unref(pol);
}
END_TEST

/* Through the whole request path, as `serve` answers /mutate: patchType JSONPatch and base64. */
START_TEST(response_carries_json_patch)
{
    struct tg_policy *pol = tg_policy_new_default();
    json_t *obj = yaml_obj(POD_P5);
    struct run r;
    size_t len, outlen;
    run_mutate(pol, obj, &r);
    char *body = tg_response_encode(&r.rv, &r.res, true, &len);
    json_t *resp = json_loadb(body, len, 0, NULL);
    ck_assert_ptr_nonnull(resp);
    json_t *response = json_object_get(resp, "response");
    ck_assert_str_eq(json_string_value(json_object_get(response, "patchType")), "JSONPatch");
    unsigned char *raw =
        tg_base64_decode(json_string_value(json_object_get(response, "patch")), &outlen);
    ck_assert_ptr_nonnull(raw);
    json_t *ops = json_loadb((const char *)raw, outlen, 0, NULL);
    ck_assert(json_equal(ops, r.res.patch.ops));
    json_decref(ops);
    free(raw);
    json_decref(resp);
    free(body);
    run_release(&r);
    json_decref(obj);
    tg_policy_unref(pol);
}
END_TEST

Suite *tg_test_mutate_efa_env_suite(void)
{
    Suite *s = suite_create("mutate_efa_env");
    TCase *tc = tcase_create("cases");
    tg_cases_add(tc, "fixtures/mutate/cases.yaml");
    suite_add_tcase(s, tc);
    TCase *unit = tcase_create("unit");
    tcase_add_test(unit, envfrom_skipped_with_a_warning);
    tcase_add_test(unit, envfrom_opted_in_by_policy);
    tcase_add_test(unit, patch_shape_is_add_array_then_append);
    tcase_add_test(unit, policy_list_replaces_default_with_family_conditions);
    tcase_add_test(unit, policy_instance_table_decides_rdma);
    tcase_add_test(unit, audit_records_would_patch);
    tcase_add_test(unit, audit_lists_each_env_once);
    tcase_add_loop_test(unit, launcher_forwarding, 0,
                        (int)(sizeof(fwd_cases) / sizeof(fwd_cases[0])));
    tcase_add_test(unit, env_list_follows_worker_pins);
    tcase_add_test(unit, response_carries_json_patch);
    tcase_add_test(unit, defaults_the_container_defines_are_left_out_for_any_number);
    tcase_add_test(unit, mutated_mpijob_passes_env_rules);
    suite_add_tcase(s, unit);
    return s;
}
