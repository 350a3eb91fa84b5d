/* test_mutate_efa_env.c -- the EFA env mutator: table cases (fixtures/mutate/cases.yaml) plus the
 * notes it leaves as warnings, custom policy lists, audit mode and the pieces the runner cannot
 * express. Every patch here is applied with tg_patch_apply and run a second time. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "support/cases.h"
#include "tg/base64.h"
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

static const char *const POD_P5 =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\n"
    "spec:\n  nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}\n"
    "  containers:\n  - name: train\n    image: x\n"
    "    resources: {limits: {vpc.amazonaws.com/efa: 32}}\n";

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
    ck_assert_msg(!strncmp(w, "[mutate.efa-env] spec.containers[0].envFrom: ", 45), "%s", w);
    ck_assert_ptr_nonnull(strstr(w, "injectWithEnvFrom"));
    ck_assert_ptr_nonnull(strstr(w, "FI_PROVIDER,NCCL_SOCKET_IFNAME"));
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
    ck_assert_str_eq(env_names(doc, "/spec/containers/0", names, sizeof(names)),
                     "FI_PROVIDER,NCCL_SOCKET_IFNAME");
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
    ck_assert_uint_eq(json_array_size(json_object_get(op, "value")), 3);
    run_release(&r);
    json_decref(obj);

    obj = yaml_obj("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\n"
                   "spec:\n  containers:\n  - name: a\n  - name: train\n"
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

/* A policy instance table entry decides GPUDirect RDMA (an added type with gpuDirectRDMA). */
START_TEST(policy_instance_table_decides_rdma)
{
    struct tg_policy *pol = tg_policy_new_default();
    char names[256];
    for (size_t i = 0; i < pol->ninstances; i++) {
        if (!strcmp(pol->instances[i].name, "p5.48xlarge"))
            pol->instances[i].gdr = false;
    }
    json_t *obj = yaml_obj(POD_P5);
    struct run r;
    run_mutate(pol, obj, &r);
    json_t *doc = apply_checked(pol, obj, &r);
    ck_assert_str_eq(env_names(doc, "/spec/containers/0", names, sizeof(names)),
                     "FI_PROVIDER,NCCL_SOCKET_IFNAME");
    json_decref(doc);
    run_release(&r);
    json_decref(obj);
    tg_policy_unref(pol);
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

/* Audit on an MPIJob lists every container pointer once, "/-" appends folded into env. */
START_TEST(audit_mpijob_lists_each_env_once)
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
                     "/spec/mpiReplicaSpecs/Launcher/template/spec/containers/0/env; "
                     "/spec/mpiReplicaSpecs/Worker/template/spec/containers/0/env");
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

struct fwd_case {
    const char *impl;
    const char *launcher;  /* YAML lines of the launcher container after its name */
    const char *env_names; /* expected launcher env after the patch */
    const char *warning;   /* substring of the one expected warning, or NULL for none */
};

static const struct fwd_case fwd_cases[] = {
    /* No -x: the env list is safe on Open MPI 4 and 5. */
    {"OpenMPI", "            command: [mpirun, -np, '16', /app]\n",
     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME,OMPI_MCA_mca_base_env_list", NULL},
    /* sh -c script, mpirun by full path. */
    {"OpenMPI",
     "            command: [/bin/sh, -c, 'cd /w && /opt/amazon/openmpi/bin/mpirun -np 16 /app']\n",
     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME,OMPI_MCA_mca_base_env_list", NULL},
    /* -x forwards some: the rest are named in the warning. */
    {"OpenMPI", "            command: [mpirun, -x, FI_PROVIDER, -x, 'NCCL_DEBUG=INFO', /app]\n",
     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME",
     "add -x FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME"},
    /* -x forwards every one of them: nothing to say. */
    {"OpenMPI",
     "            args: [mpirun, -x, FI_PROVIDER, -x, FI_EFA_USE_DEVICE_RDMA,"
     " -x, NCCL_SOCKET_IFNAME, /app]\n",
     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME", NULL},
    /* --mca mca_base_env_list on the command line wins over the env var: treated like -x. */
    {"OpenMPI", "            command: [mpirun, --mca, mca_base_env_list, 'FI_PROVIDER;X', /app]\n",
     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME",
     "add -x FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME"},
    /* horovodrun passes its whole env with -x: no env list (it would abort Open MPI 4). */
    {"OpenMPI", "            command: [horovodrun, -np, '16', python, train.py]\n",
     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME", NULL},
    /* The image entrypoint: unknown command line, not safe. */
    {"OpenMPI", "            image: nccl\n",
     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME", "image entrypoint"},
    /* A script file: mpirun not visible. */
    {"OpenMPI", "            command: [bash, /scripts/run.sh]\n",
     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME", "no mpirun seen"},
    /* An option the reader does not know could hide a -x: not safe. */
    {"OpenMPI", "            command: [mpirun, --frobnicate, /app]\n",
     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME", "mpirun not fully readable"},
    /* -x inside an sh -c script, with quoting. */
    {"OpenMPI", "            command: [sh, -c, \"mpirun -x 'NCCL_DEBUG=INFO' -np 2 /app\"]\n",
     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME",
     "add -x FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME"},
    /* The user's list leaves some out: kept; what it leaves out is not added (it would reach
     * no rank), and the warning says to add them to the list. */
    {"OpenMPI",
     "            command: [mpirun, /app]\n"
     "            env: [{name: OMPI_MCA_mca_base_env_list, value: 'FI_PROVIDER=efa;A'}]\n",
     "OMPI_MCA_mca_base_env_list,FI_PROVIDER",
     "does not list FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME: not added to the launcher"},
    /* The list forwards none of them: nothing is added to the launcher. */
    {"OpenMPI",
     "            command: [mpirun, /app]\n"
     "            env: [{name: OMPI_MCA_mca_base_env_list, value: NCCL_DEBUG}]\n",
     "OMPI_MCA_mca_base_env_list",
     "does not list FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME: not added"},
    /* The list names every one: all added, nothing to say. */
    {"OpenMPI",
     "            command: [mpirun, /app]\n"
     "            env: [{name: OMPI_MCA_mca_base_env_list,"
     " value: 'NCCL_SOCKET_IFNAME;FI_EFA_USE_DEVICE_RDMA;FI_PROVIDER'}]\n",
     "OMPI_MCA_mca_base_env_list,FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME", NULL},
    /* A launcher that requests EFA runs its own ranks, which inherit its env: all added, and
     * the warning names what the list leaves out for the workers. */
    {"OpenMPI",
     "            command: [mpirun, /app]\n"
     "            resources: {limits: {vpc.amazonaws.com/efa: 1}}\n"
     "            env: [{name: OMPI_MCA_mca_base_env_list, value: 'FI_PROVIDER=efa;A'}]\n",
     "OMPI_MCA_mca_base_env_list,FI_PROVIDER,NCCL_SOCKET_IFNAME",
     "does not list NCCL_SOCKET_IFNAME: ranks on workers will not see them"},
    /* The user's list from valueFrom: cannot be checked. */
    {"OpenMPI",
     "            command: [mpirun, /app]\n"
     "            env: [{name: OMPI_MCA_mca_base_env_list, valueFrom: {configMapKeyRef: "
     "{name: a, key: b}}}]\n",
     "OMPI_MCA_mca_base_env_list,FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME",
     "comes from valueFrom"},
    /* The user set every variable on the launcher: only the forwarding list is added. */
    {"OpenMPI",
     "            command: [mpirun, /app]\n"
     "            env: [{name: FI_PROVIDER, value: efa},"
     " {name: FI_EFA_USE_DEVICE_RDMA, value: '1'}, {name: NCCL_SOCKET_IFNAME, value: eth0}]\n",
     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME,OMPI_MCA_mca_base_env_list", NULL},
    /* envFrom on the launcher: nothing is added there, the forwarding list included. */
    {"OpenMPI",
     "            command: [mpirun, /app]\n"
     "            envFrom: [{secretRef: {name: s}}]\n",
     "",
     "set, so FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME,OMPI_MCA_mca_base_env_list "
     "not added"},
    /* Intel and MPICH: Hydra forwards the launcher env; -genvnone stops it. */
    {"Intel", "            command: [mpirun, -n, '2', /app]\n",
     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME", NULL},
    {"MPICH", "            command: [mpiexec, -genvnone, -n, '2', /app]\n",
     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME", "-genvnone"},
    {"MPICH",
     "            command: [mpiexec, -genvnone, -genvlist,"
     " 'FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME', /app]\n",
     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME", NULL},
    /* An implementation the operator does not know: launcher env, no forwarding, a warning. */
    {"openmpi", "            command: [mpirun, /app]\n",
     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME", "spec.mpiImplementation"},
};

START_TEST(launcher_forwarding)
{
    const struct fwd_case *fc = &fwd_cases[_i];
    struct tg_policy *pol = tg_policy_new_default();
    char names[512];
    json_t *obj = yaml_obj(mpijob(fc->impl, fc->launcher));
    struct run r;
    run_mutate(pol, obj, &r);
    json_t *doc = apply_checked(pol, obj, &r);
    ck_assert_msg(!strcmp(env_names(doc, LAUNCHER, names, sizeof(names)), fc->env_names),
                  "case %d: launcher env %s", _i, names);
    ck_assert_str_eq(env_names(doc, "/spec/mpiReplicaSpecs/Worker/template/spec/containers/0",
                               names, sizeof(names)),
                     "FI_PROVIDER,FI_EFA_USE_DEVICE_RDMA,NCCL_SOCKET_IFNAME");
    if (fc->warning) {
        ck_assert_msg(json_array_size(r.res.warnings) == 1 && warning_has(&r.res, fc->warning),
                      "case %d: warnings %s", _i, json_dumps(r.res.warnings, JSON_COMPACT));
        const char *w = json_string_value(json_array_get(r.res.warnings, 0));
        ck_assert_uint_le(strlen(w), 256);
        ck_assert_msg(!strncmp(w, "[mutate.efa-env] ", 17), "%s", w);
    } else {
        ck_assert_msg(json_array_size(r.res.warnings) == 0, "case %d: warnings %s", _i,
                      json_dumps(r.res.warnings, JSON_COMPACT));
    }
    /* A second run on the patched object warns the same way at most, and never patches. */
    json_decref(doc);
    run_release(&r);
    json_decref(obj);
    tg_policy_unref(pol);
}
END_TEST

/* The env list value names only what applies: no RDMA entry without a GDR pin. */
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
    run_mutate(pol, obj, &r);
    json_t *doc = apply_checked(pol, obj, &r);
    json_t *env = at_ptr(doc, LAUNCHER "/env");
    ck_assert_uint_eq(json_array_size(env), 3);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(env, 2), "value")),
                     "FI_PROVIDER;NCCL_SOCKET_IFNAME");
    json_decref(doc);
    run_release(&r);
    json_decref(obj);
    tg_policy_unref(pol);
}
END_TEST

/* What /mutate produces must pass /validate's env rules: the forwarding list satisfies
 * mpi.env-not-forwarded, and the launcher's FI_PROVIDER does not trip efa.env-without-device on
 * the MPIJob (SPEC section 9: the launcher needs no EFA). */
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
    tcase_add_test(unit, audit_mpijob_lists_each_env_once);
    tcase_add_loop_test(unit, launcher_forwarding, 0,
                        (int)(sizeof(fwd_cases) / sizeof(fwd_cases[0])));
    tcase_add_test(unit, env_list_follows_worker_pins);
    tcase_add_test(unit, response_carries_json_patch);
    tcase_add_test(unit, mutated_mpijob_passes_env_rules);
    suite_add_tcase(s, unit);
    return s;
}
