/* test_workload_kinds.c -- the SPEC 11 kinds decoded into the workload view: each template's role,
 * pods, world and pods per world copy, the env its controller adds, the Kueue and owner facts,
 * and the rendezvous host the JobSet worlds are built from. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "support/cases.h"
#include "tg/rendezvous.h"
#include "tg/workload.h"
#include "tg/yaml_json.h"

static json_t *yaml(const char *text)
{
    char err[256];
    json_t *v = tg_yaml_parse_one(text, strlen(text), err, sizeof(err));
    ck_assert_msg(v != NULL, "%s", err);
    return v;
}

/* Decodes text as kind; the caller releases wl and decrefs *obj. */
static void decode(struct tg_workload *wl, enum tg_kind kind, enum tg_op op, const char *text,
                   json_t **obj)
{
    *obj = yaml(text);
    ck_assert_int_eq(tg_workload_decode(wl, kind, op, *obj, NULL, NULL), 0);
}

/* One template: "role_name replicas world world_pods" (world -2 = not checked). */
static void tpl_is(const struct tg_workload *wl, size_t i, enum tg_role role, const char *name,
                   long long replicas, int world, long long world_pods)
{
    ck_assert_uint_lt(i, wl->ntpl);
    const struct tg_template *t = &wl->tpl[i];
    ck_assert_int_eq(t->role, role);
    ck_assert_str_eq(t->role_name, name);
    ck_assert_int_eq(t->replicas, replicas);
    if (world != -2)
        ck_assert_int_eq(t->world, world);
    ck_assert_int_eq(t->world_pods, world_pods);
}

static const char *op_env(const struct tg_template *t, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach (t->operator_env, i, e) {
        if (!strcmp(json_string_value(json_object_get(e, "name")), name)) {
            const char *v = json_string_value(json_object_get(e, "value"));
            return v ? v : "?";
        }
    }
    return NULL;
}

#define POD_SPEC "{containers: [{name: c, image: x}]}"

/* The first TG_TPL_INLINE templates live in the view, more on the heap: every template keeps its
 * role, replicas and containers across the move, for one to five tasks. */
START_TEST(templates_move_from_the_view_to_the_heap)
{
    for (int n = 1; n <= 5; n++) {
        char text[2048];
        int at = snprintf(text, sizeof(text),
                          "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: "
                          "v}\nspec:\n  tasks:\n");
        for (int i = 0; i < n; i++)
            at += snprintf(text + at, sizeof(text) - (size_t)at,
                           "    - {name: t%d, replicas: %d, template: {spec: {containers: [{name: "
                           "c%d, image: x}]}}}\n",
                           i, i + 1, i);
        struct tg_workload wl;
        json_t *obj;
        decode(&wl, TG_KIND_VCJOB, TG_OP_CREATE, text, &obj);
        ck_assert_uint_eq(wl.ntpl, (size_t)n);
        ck_assert(n <= TG_TPL_INLINE ? wl.tpl == wl.tpl_inline : wl.tpl != wl.tpl_inline);
        for (int i = 0; i < n; i++) {
            char name[16], cname[16];
            snprintf(name, sizeof(name), "t%d", i);
            snprintf(cname, sizeof(cname), "c%d", i);
            ck_assert_str_eq(wl.tpl[i].role_name, name);
            ck_assert_int_eq(wl.tpl[i].replicas, i + 1);
            ck_assert_uint_eq(wl.tpl[i].ncontainers, 1);
            ck_assert_str_eq(wl.tpl[i].containers[0].name, cname);
        }
        tg_workload_release(&wl);
        ck_assert_ptr_null(wl.tpl);
        json_decref(obj);
    }
}
END_TEST

START_TEST(batch_job_counts_min_of_parallelism_and_completions)
{
    static const struct {
        const char *spec;
        long long pods;
    } rows[] = {
        {"parallelism: 4, completions: 4, ", 4},
        {"parallelism: 4, completions: 1, ", 1},
        {"completions: 8, ", 1},
        {"parallelism: 2, ", 2},
        {"", 1},
        {"parallelism: 0, ", 0},
        {"parallelism: -1, ", -1},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char text[256];
        struct tg_workload wl;
        json_t *obj;
        snprintf(text, sizeof(text),
                 "{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {%stemplate: "
                 "{spec: " POD_SPEC "}}}",
                 rows[i].spec);
        decode(&wl, TG_KIND_BATCHJOB, TG_OP_CREATE, text, &obj);
        tpl_is(&wl, 0, TG_ROLE_WORKER, "Job", rows[i].pods, 0, rows[i].pods);
        ck_assert_uint_eq(wl.tpl[0].ncontainers, 1);
        tg_workload_release(&wl);
        json_decref(obj);
    }
}
END_TEST

/* A replicated job with a literal shared address is one world over its child Jobs; without one,
 * each child Job is its own world (and the exclusive-topology key pins it). */
START_TEST(jobset_worlds_follow_the_rendezvous_address)
{
    struct tg_workload wl;
    json_t *obj;
    decode(&wl, TG_KIND_JOBSET, TG_OP_CREATE,
           "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
           "metadata: {name: js, annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: "
           "topology.kubernetes.io/zone}}\n"
           "spec:\n  replicatedJobs:\n"
           "  - {name: a, replicas: 2, template: {spec: {parallelism: 3, template: {spec: "
           "{containers: [{name: c, image: x, command: [torchrun, --master_addr=js-a-0-0.js, "
           "t.py]}]}}}}}\n"
           "  - {name: b, template: {spec: {parallelism: 2, template: {spec: {containers: [{name: "
           "c, image: x, env: [{name: MASTER_ADDR, value: js-a-0-0.js.ns.svc}]}]}}}}}\n"
           "  - {name: c, replicas: 3, template: {spec: {parallelism: 2, template: {spec: "
           "{containers: [{name: c, image: x, command: [torchrun, --standalone, t.py]}]}}}}}\n",
           &obj);
    ck_assert_uint_eq(wl.ntpl, 3);
    tpl_is(&wl, 0, TG_ROLE_WORKER, "a", 6, 0, 6); /* shared: all child Jobs in one world */
    tpl_is(&wl, 1, TG_ROLE_WORKER, "b", 2, 0, 2); /* same host (first label) */
    tpl_is(&wl, 2, TG_ROLE_WORKER, "c", 6, 1, 2); /* own world per child Job */
    ck_assert_ptr_null(wl.tpl[0].copy_topology);
    ck_assert_str_eq(wl.tpl[2].copy_topology, "topology.kubernetes.io/zone");
    ck_assert_int_eq(tg_template_world_size(&wl, &wl.tpl[0]), 8);
    ck_assert_int_eq(tg_template_world_size(&wl, &wl.tpl[2]), 2);
    tg_workload_release(&wl);
    json_decref(obj);
}
END_TEST

START_TEST(lws_group_is_the_world)
{
    struct tg_workload wl;
    json_t *obj;
    decode(&wl, TG_KIND_LWS, TG_OP_CREATE,
           "{apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, metadata: {name: l}, "
           "spec: {replicas: 3, leaderWorkerTemplate: {size: 4, leaderTemplate: {spec: " POD_SPEC
           "}, workerTemplate: {spec: " POD_SPEC "}}}}",
           &obj);
    ck_assert_uint_eq(wl.ntpl, 2);
    tpl_is(&wl, 0, TG_ROLE_LEADER, "leader", 3, 0, 1);
    tpl_is(&wl, 1, TG_ROLE_WORKER, "worker", 9, 0, 3);
    ck_assert_str_eq(op_env(&wl.tpl[1], "LWS_GROUP_SIZE"), "4");
    ck_assert_str_eq(op_env(&wl.tpl[0], "LWS_LEADER_ADDRESS"), "?");
    ck_assert_int_eq(tg_template_world_size(&wl, &wl.tpl[1]), 4);
    tg_workload_release(&wl);
    json_decref(obj);
    /* without a leaderTemplate the workerTemplate makes all size pods of a group */
    decode(&wl, TG_KIND_LWS, TG_OP_CREATE,
           "{apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, metadata: {name: l}, "
           "spec: {leaderWorkerTemplate: {size: 2, workerTemplate: {spec: " POD_SPEC "}}}}",
           &obj);
    ck_assert_uint_eq(wl.ntpl, 1);
    tpl_is(&wl, 0, TG_ROLE_WORKER, "worker", 2, 0, 2);
    tg_workload_release(&wl);
    json_decref(obj);
}
END_TEST

START_TEST(pytorchjob_env_and_gang)
{
    struct tg_workload wl;
    json_t *obj;
    decode(&wl, TG_KIND_PYTORCHJOB, TG_OP_CREATE,
           "{apiVersion: kubeflow.org/v1, kind: PyTorchJob, metadata: {name: p}, spec: "
           "{nprocPerNode: '8', runPolicy: {schedulingPolicy: {minAvailable: 3}}, "
           "pytorchReplicaSpecs: {Master: {template: {spec: " POD_SPEC "}}, Worker: {replicas: 3, "
           "template: {spec: " POD_SPEC "}}}}}",
           &obj);
    tpl_is(&wl, 0, TG_ROLE_MASTER, "Master", 1, 0, 1); /* replicas default 1 */
    tpl_is(&wl, 1, TG_ROLE_WORKER, "Worker", 3, 0, 3);
    ck_assert_str_eq(op_env(&wl.tpl[0], "PET_NNODES"), "4");
    ck_assert_str_eq(op_env(&wl.tpl[1], "PET_NPROC_PER_NODE"), "8");
    ck_assert(wl.pt.has_min_available);
    ck_assert_int_eq(wl.pt.min_available, 3);
    tg_workload_release(&wl);
    json_decref(obj);
    /* elastic: min:max, the missing bound copies the other; nprocPerNode defaults to auto */
    decode(&wl, TG_KIND_PYTORCHJOB, TG_OP_CREATE,
           "{apiVersion: kubeflow.org/v1, kind: PyTorchJob, metadata: {name: p}, spec: "
           "{elasticPolicy: {maxReplicas: 5}, pytorchReplicaSpecs: {Worker: {replicas: 2, "
           "template: {spec: " POD_SPEC "}}}}}",
           &obj);
    ck_assert_str_eq(op_env(&wl.tpl[0], "PET_NNODES"), "5:5");
    ck_assert_str_eq(op_env(&wl.tpl[0], "PET_NPROC_PER_NODE"), "auto");
    tg_workload_release(&wl);
    json_decref(obj);
}
END_TEST

START_TEST(ray_groups_are_worlds_with_the_head)
{
    struct tg_workload wl;
    json_t *obj;
    decode(&wl, TG_KIND_RAYCLUSTER, TG_OP_CREATE,
           "{apiVersion: ray.io/v1, kind: RayCluster, metadata: {name: r}, spec: {headGroupSpec: "
           "{template: {spec: " POD_SPEC "}}, workerGroupSpecs: ["
           "{groupName: a, replicas: 1, minReplicas: 2, maxReplicas: 4, template: {spec: " POD_SPEC
           "}},"
           "{groupName: b, replicas: 9, maxReplicas: 3, numOfHosts: 2, template: {spec: " POD_SPEC
           "}},"
           "{groupName: c, replicas: 2, suspend: true, template: {spec: " POD_SPEC "}}]}}",
           &obj);
    ck_assert_uint_eq(wl.ntpl, 4);
    tpl_is(&wl, 0, TG_ROLE_HEAD, "head", 1, -2, 1);
    ck_assert(wl.tpl[0].every_world);
    tpl_is(&wl, 1, TG_ROLE_WORKER, "a", 2, 1, 2);
    tpl_is(&wl, 2, TG_ROLE_WORKER, "b", 6, 2, 6);
    tpl_is(&wl, 3, TG_ROLE_WORKER, "c", 0, 3, 0);
    ck_assert_int_eq(tg_template_world_size(&wl, &wl.tpl[1]), 3);
    ck_assert(!tg_templates_share_world(&wl.tpl[1], &wl.tpl[2]));
    ck_assert(tg_templates_share_world(&wl.tpl[0], &wl.tpl[2]));
    tg_workload_release(&wl);
    json_decref(obj);
}
END_TEST

START_TEST(trainjob_node_from_trainer_and_overrides)
{
    struct tg_workload wl;
    json_t *obj;
    decode(&wl, TG_KIND_TRAINJOB, TG_OP_CREATE,
           "{apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainJob, metadata: {name: t}, "
           "spec: {trainer: {numNodes: 4, numProcPerNode: auto, command: [torchrun, t.py], "
           "resourcesPerNode: {limits: {vpc.amazonaws.com/efa: 4}}}, podTemplateOverrides: "
           "[{targetJobs: [{name: init}], spec: {nodeSelector: {a: b}}}, {targetJobs: [{name: "
           "node}], spec: {nodeSelector: {topology.kubernetes.io/zone: z}}}]}}",
           &obj);
    tpl_is(&wl, 0, TG_ROLE_WORKER, "node", 4, 0, 4);
    ck_assert_str_eq(wl.tpl[0].spec_path.field, "spec.podTemplateOverrides[1].spec");
    ck_assert_uint_eq(wl.tpl[0].ncontainers, 1);
    ck_assert_str_eq(wl.tpl[0].containers[0].path.field, "spec.trainer");
    ck_assert_str_eq(wl.tpl[0].containers[0].resources_key, "resourcesPerNode");
    ck_assert(!wl.tpl[0].resources_unknown);
    ck_assert_str_eq(op_env(&wl.tpl[0], "PET_NNODES"), "4");
    ck_assert_str_eq(op_env(&wl.tpl[0], "PET_NPROC_PER_NODE"), "auto");
    tg_workload_release(&wl);
    json_decref(obj);
    /* v2.2 runtimePatches; no resourcesPerNode: the runtime's resources apply */
    decode(&wl, TG_KIND_TRAINJOB, TG_OP_CREATE,
           "{apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainJob, metadata: {name: t}, "
           "spec: {trainer: {command: [torchrun, t.py]}, runtimePatches: [{manager: m, "
           "trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: "
           "{spec: {template: {spec: {nodeSelector: {a: b}}}}}}]}}}}]}}",
           &obj);
    tpl_is(&wl, 0, TG_ROLE_WORKER, "node", -1, 0, -1);
    ck_assert_str_eq(wl.tpl[0].spec_path.field, "spec.runtimePatches[0].trainingRuntimeSpec."
                                                "template.spec.replicatedJobs[0].template.spec."
                                                "template.spec");
    ck_assert(wl.tpl[0].resources_unknown);
    ck_assert_str_eq(op_env(&wl.tpl[0], "PET_NNODES"), "?");
    tg_workload_release(&wl);
    json_decref(obj);
}
END_TEST

START_TEST(runtime_trainer_job_runs_num_nodes)
{
    struct tg_workload wl;
    json_t *obj;
    decode(
        &wl, TG_KIND_TRAININGRUNTIME, TG_OP_CREATE,
        "{apiVersion: trainer.kubeflow.org/v1alpha1, kind: ClusterTrainingRuntime, metadata: "
        "{name: r}, spec: {mlPolicy: {numNodes: 3, torch: {numProcPerNode: 4}}, template: {spec: "
        "{replicatedJobs: ["
        "{name: dataset-initializer, template: {metadata: {labels: "
        "{trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}}, spec: {template: "
        "{spec: " POD_SPEC "}}}},"
        "{name: node, template: {metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: "
        "trainer}}, spec: {parallelism: 8, template: {spec: " POD_SPEC "}}}}]}}}}",
        &obj);
    ck_assert_uint_eq(wl.ntpl, 2);
    tpl_is(&wl, 0, TG_ROLE_INITIALIZER, "dataset-initializer", 1, 1, 1);
    tpl_is(&wl, 1, TG_ROLE_WORKER, "node", 3, 0, 3);
    ck_assert_str_eq(op_env(&wl.tpl[1], "PET_NNODES"), "3");
    ck_assert_str_eq(op_env(&wl.tpl[1], "PET_NPROC_PER_NODE"), "4");
    ck_assert_ptr_null(wl.tpl[0].operator_env);
    tg_workload_release(&wl);
    json_decref(obj);
    /* an MPI runtime: a 1-pod launcher and numNodes - 1 nodes with runLauncherAsNode */
    decode(
        &wl, TG_KIND_TRAININGRUNTIME, TG_OP_CREATE,
        "{apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainingRuntime, metadata: {name: r}, "
        "spec: {mlPolicy: {numNodes: 4, mpi: {runLauncherAsNode: true}}, template: {spec: "
        "{replicatedJobs: [{name: launcher, template: {metadata: {labels: "
        "{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}, spec: {template: {spec: " POD_SPEC
        "}}}}, {name: node, template: {spec: {template: {spec: " POD_SPEC "}}}}]}}}}",
        &obj);
    tpl_is(&wl, 0, TG_ROLE_LAUNCHER, "launcher", 1, 0, 1);
    tpl_is(&wl, 1, TG_ROLE_WORKER, "node", 3, 0, 3);
    tg_workload_release(&wl);
    json_decref(obj);
}
END_TEST

START_TEST(kueue_hold_and_judged_owner)
{
    static const struct {
        enum tg_kind kind;
        enum tg_op op;
        const char *text;
        bool queued, held, owned;
    } rows[] = {
        {TG_KIND_BATCHJOB, TG_OP_CREATE,
         "{apiVersion: batch/v1, kind: Job, metadata: {name: j, labels: "
         "{kueue.x-k8s.io/queue-name: q}}, spec: {suspend: false}}",
         true, true, false},
        {TG_KIND_BATCHJOB, TG_OP_UPDATE,
         "{apiVersion: batch/v1, kind: Job, metadata: {name: j, labels: "
         "{kueue.x-k8s.io/queue-name: q}}, spec: {suspend: false}}",
         true, false, false},
        {TG_KIND_PYTORCHJOB, TG_OP_UPDATE,
         "{apiVersion: kubeflow.org/v1, kind: PyTorchJob, metadata: {name: p, labels: "
         "{kueue.x-k8s.io/queue-name: q}}, spec: {runPolicy: {suspend: true}}}",
         true, true, false},
        {TG_KIND_LWS, TG_OP_UPDATE,
         "{apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, metadata: {name: l, "
         "labels: {kueue.x-k8s.io/queue-name: q}}, spec: {}}",
         true, true, false},
        {TG_KIND_BATCHJOB, TG_OP_CREATE,
         "{apiVersion: batch/v1, kind: Job, metadata: {name: j, ownerReferences: [{apiVersion: "
         "jobset.x-k8s.io/v1alpha2, kind: JobSet, name: js}]}, spec: {suspend: true}}",
         false, false, true},
        {TG_KIND_POD, TG_OP_CREATE,
         "{apiVersion: v1, kind: Pod, metadata: {name: p, labels: {leaderworkerset.sigs.k8s.io/"
         "name: l}, ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: l-0}]}, "
         "spec: {schedulingGates: [{name: kueue.x-k8s.io/admission}]}}",
         false, true, true},
        {TG_KIND_POD, TG_OP_CREATE,
         "{apiVersion: v1, kind: Pod, metadata: {name: p, ownerReferences: [{apiVersion: apps/v1, "
         "kind: ReplicaSet, name: r}]}, spec: {}}",
         false, false, false},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct tg_workload wl;
        json_t *obj;
        decode(&wl, rows[i].kind, rows[i].op, rows[i].text, &obj);
        ck_assert_msg(wl.queued == rows[i].queued, "row %zu queued", i);
        ck_assert_msg(wl.queue_held == rows[i].held, "row %zu held", i);
        ck_assert_msg(wl.judged_owner == rows[i].owned, "row %zu owner", i);
        tg_workload_release(&wl);
        json_decref(obj);
    }
}
END_TEST

START_TEST(rendezvous_hosts)
{
    static const struct {
        const char *container;
        enum tg_rdzv want;
        const char *host;
    } rows[] = {
        {"{command: [torchrun, --master_addr=llm-0-0.llm, t.py]}", TG_RDZV_LITERAL, "llm-0-0"},
        {"{command: [sh, -c, 'torchrun --rdzv-endpoint $H:29400 t.py'], env: [{name: H, value: "
         "Head.svc}]}",
         TG_RDZV_LITERAL, "head"},
        {"{env: [{name: MASTER_ADDR, value: 10.0.0.5}]}", TG_RDZV_LITERAL, "10.0.0.5"},
        {"{env: [{name: MASTER_ADDR, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]}",
         TG_RDZV_VARIES, ""},
        {"{command: [sh, -c, 'torchrun --rdzv_endpoint=w-$IDX-0.s:29400 t.py']}", TG_RDZV_VARIES,
         ""},
        {"{command: [torchrun, --standalone, t.py], env: [{name: MASTER_ADDR, value: a.b}]}",
         TG_RDZV_NONE, ""},
        {"{command: [torchrun, --master_addr=127.0.0.1, t.py]}", TG_RDZV_NONE, ""},
        {"{command: [bash, -c, 'export MASTER_ADDR=m-0.s; torchrun t.py']}", TG_RDZV_LITERAL,
         "m-0"},
        {"{command: [python, train.py]}", TG_RDZV_NONE, ""},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char host[128];
        json_t *c = yaml(rows[i].container);
        enum tg_rdzv got = tg_rendezvous_host(c, host, sizeof(host));
        ck_assert_msg(got == rows[i].want, "row %zu: %d", i, (int)got);
        ck_assert_msg(!strcmp(host, rows[i].host), "row %zu: host %s", i, host);
        json_decref(c);
    }
}
END_TEST

Suite *tg_test_workload_kinds_suite(void);
Suite *tg_test_workload_kinds_suite(void)
{
    Suite *s = suite_create("workload_kinds");
    TCase *tc = tcase_create("decode");
    tcase_add_test(tc, batch_job_counts_min_of_parallelism_and_completions);
    tcase_add_test(tc, jobset_worlds_follow_the_rendezvous_address);
    tcase_add_test(tc, lws_group_is_the_world);
    tcase_add_test(tc, pytorchjob_env_and_gang);
    tcase_add_test(tc, ray_groups_are_worlds_with_the_head);
    tcase_add_test(tc, trainjob_node_from_trainer_and_overrides);
    tcase_add_test(tc, runtime_trainer_job_runs_num_nodes);
    tcase_add_test(tc, kueue_hold_and_judged_owner);
    tcase_add_test(tc, rendezvous_hosts);
    tcase_add_test(tc, templates_move_from_the_view_to_the_heap);
    suite_add_tcase(s, tc);
    TCase *cases = tcase_create("cases");
    tg_cases_add(cases, "fixtures/workloads/cases.yaml");
    suite_add_tcase(s, cases);
    return s;
}
