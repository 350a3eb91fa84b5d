#!/usr/bin/env python3
"""Writes the benchmark AdmissionReview bodies (committed under bodies/; rerun to regenerate).
They look like what kube-apiserver sends for `kubectl apply`: metadata.managedFields, the
kubectl.kubernetes.io/last-applied-configuration annotation, defaulted Pod fields, userInfo."""
import copy, json, os

HERE = os.path.dirname(os.path.abspath(__file__))
EFA = {"vpc.amazonaws.com/efa": "32", "nvidia.com/gpu": "8", "hugepages-2Mi": "5120Mi",
       "memory": "32000Mi", "cpu": "90"}

def container(i, efa=True):
    c = {"name": f"trainer-{i}", "image": "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.2.2-efa1.30.0",
         "command": ["/bin/bash", "-c"],
         "args": ["torchrun --nproc_per_node=8 --nnodes=2 train.py --model llama3-8b --batch 32"],
         "env": [{"name": "NCCL_DEBUG", "value": "INFO"},
                 {"name": "LD_LIBRARY_PATH", "value": "/opt/amazon/openmpi/lib:/opt/nccl/build/lib:/opt/amazon/efa/lib:/usr/local/nvidia/lib:$LD_LIBRARY_PATH"},
                 {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
         "resources": {"limits": dict(EFA), "requests": dict(EFA)} if efa else {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}},
         "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}, {"name": "data", "mountPath": "/fsx"},
                          {"name": "kube-api-access-abcde", "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
         "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
         "imagePullPolicy": "IfNotPresent", "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}}}
    return c

def managed(n):
    f = {}
    for i in range(n):
        f[f'k:{{"name":"trainer-{i}"}}'] = {".": {}, "f:args": {}, "f:command": {}, "f:env": {".": {}, 'k:{"name":"NCCL_DEBUG"}': {".": {}, "f:name": {}, "f:value": {}}},
                                            "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:resources": {".": {}, "f:limits": {".": {}, "f:cpu": {}, "f:memory": {}, "f:nvidia.com/gpu": {}, "f:vpc.amazonaws.com/efa": {}, "f:hugepages-2Mi": {}}, "f:requests": {".": {}}},
                                            "f:volumeMounts": {".": {}, 'k:{"mountPath":"/dev/shm"}': {".": {}, "f:mountPath": {}, "f:name": {}}}}
    return [{"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1",
             "time": "2026-11-30T03:00:00Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}, "f:labels": {".": {}, "f:app": {}}},
                          "f:spec": {"f:containers": f, "f:nodeSelector": {}, "f:restartPolicy": {}, "f:volumes": {}}}}]

def pod(name, n_containers=1):
    spec = {"containers": [container(i) for i in range(n_containers)],
            "nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge", "topology.kubernetes.io/zone": "us-east-1a"},
            "restartPolicy": "Never", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default", "serviceAccount": "default", "securityContext": {},
            "schedulerName": "default-scheduler", "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                            {"key": "vpc.amazonaws.com/efa", "operator": "Exists", "effect": "NoSchedule"}],
            "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}},
                        {"name": "data", "persistentVolumeClaim": {"claimName": "fsx-claim"}},
                        {"name": "kube-api-access-abcde", "projected": {"defaultMode": 420, "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}, {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}]}
    obj = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "ml", "uid": "5b1f0c2e-8d5a-4e4e-9b8f-2f6f8c1d0e11",
                        "creationTimestamp": None, "labels": {"app": "nccl-tests", "team": "llm"},
                        "annotations": {}},
           "spec": spec, "status": {"phase": "Pending", "qosClass": "Guaranteed"}}
    applied = copy.deepcopy(obj); del applied["status"]
    obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = json.dumps(applied, separators=(",", ":")) + "\n"
    obj["metadata"]["managedFields"] = managed(n_containers)
    return obj

def review(obj, group, version, kind, resource, op="CREATE", old=None):
    return {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
            "request": {"uid": "0d6f8f3e-1c2b-4a5d-9e7f-8a9b0c1d2e3f",
                        "kind": {"group": group, "version": version, "kind": kind},
                        "resource": {"group": group, "version": version, "resource": resource},
                        "requestKind": {"group": group, "version": version, "kind": kind},
                        "requestResource": {"group": group, "version": version, "resource": resource},
                        "name": obj["metadata"]["name"], "namespace": "ml", "operation": op,
                        "userInfo": {"username": "system:serviceaccount:ml:trainer", "uid": "9f0e",
                                     "groups": ["system:serviceaccounts", "system:serviceaccounts:ml", "system:authenticated"],
                                     "extra": {"authentication.kubernetes.io/pod-name": ["ci-runner-7f9c"]}},
                        "object": obj, "oldObject": old, "dryRun": False,
                        "options": {"kind": "CreateOptions" if op == "CREATE" else "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "kubectl-client-side-apply", "fieldValidation": "Strict"}}}

def mpijob_review(name, app, slots, launcher, worker):
    """A kubeflow.org/v2beta1 MPIJob review of one Launcher and two Workers, applied with kubectl
    (the last-applied annotation and managedFields as a real object carries them)."""
    obj = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
           "metadata": {"name": name, "namespace": "ml", "annotations": {}, "labels": {"app": app}},
           "spec": {"slotsPerWorker": slots, "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 20},
                    "mpiImplementation": "OpenMPI", "sshAuthMountPath": "/root/.ssh", "launcherCreationPolicy": "AtStartup",
                    "mpiReplicaSpecs": {"Launcher": {"replicas": 1, "restartPolicy": "OnFailure", "template": {"spec": launcher}},
                                        "Worker": {"replicas": 2, "restartPolicy": "Never", "template": {"spec": worker}}}}}
    applied = copy.deepcopy(obj)
    obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = json.dumps(applied, separators=(",", ":")) + "\n"
    obj["metadata"]["managedFields"] = managed(1)
    return review(obj, "kubeflow.org", "v2beta1", "MPIJob", "mpijobs")

def mpijob():
    worker = {"nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge", "topology.kubernetes.io/zone": "us-east-1a"},
              "containers": [container(0)], "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}]}
    launcher = {"containers": [{"name": "launcher", "image": "public.ecr.aws/hpc-cloud/nccl-tests:latest",
                                "command": ["/opt/amazon/openmpi/bin/mpirun", "--allow-run-as-root", "--tag-output", "-np", "16", "-N", "8",
                                            "--bind-to", "none", "-x", "PATH", "-x", "LD_LIBRARY_PATH", "-x", "FI_PROVIDER=efa",
                                            "-x", "FI_EFA_USE_DEVICE_RDMA=1", "-x", "NCCL_DEBUG=INFO", "--mca", "pml", "^cm,ucx",
                                            "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_exclude", "lo,docker0,veth_def_agent",
                                            "/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "16G", "-f", "2", "-g", "1", "-c", "1", "-n", "100"],
                                "resources": {"limits": {"cpu": "2", "memory": "8Gi"}}}]}
    return mpijob_review("nccl-tests", "nccl", 8, launcher, worker)

MEGATRON = ("pretrain_gpt.py --tensor-model-parallel-size 8 --pipeline-model-parallel-size 2 "
            "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
            "--micro-batch-size 1 --global-batch-size 64 --bf16 --use-distributed-optimizer "
            "--data-path /fsx/data/llama_text_document --tokenizer-type HuggingFaceTokenizer")

def mpijob_torch():
    """An MPIJob whose launcher starts one torchrun per worker through mpirun (the plan, torch and
    mpi rules all read the line)."""
    worker = {"nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge", "topology.kubernetes.io/zone": "us-east-1a"},
              "containers": [container(0)], "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}]}
    worker["containers"][0]["args"] = ["sleep infinity"]
    line = ("mpirun --allow-run-as-root -np 2 -N 1 --bind-to none -x PATH -x LD_LIBRARY_PATH -x FI_PROVIDER=efa "
            "-x FI_EFA_USE_DEVICE_RDMA=1 -x NCCL_DEBUG=INFO --mca pml ^cm,ucx --mca btl tcp,self "
            "torchrun --nnodes 2 --nproc_per_node 8 --rdzv_backend c10d --rdzv_endpoint $MASTER_ADDR:29500 "
            + MEGATRON)
    launcher = {"containers": [{"name": "launcher", "image": "123456789012.dkr.ecr.us-west-2.amazonaws.com/megatron-lm:core-r0.12",
                                "command": ["/bin/bash", "-c"], "args": [line],
                                "resources": {"limits": {"cpu": "2", "memory": "8Gi"}}}]}
    return mpijob_review("llama-pretrain", "llama", 1, launcher, worker)

def pod_torch():
    """A one-node Pod running torchrun with Megatron's parallel sizes (torch and plan rules)."""
    obj = pod("llama-pretrain-0")
    c = obj["spec"]["containers"][0]
    c["args"] = ["torchrun --nnodes=1 --nproc_per_node=8 " + MEGATRON.replace("--pipeline-model-parallel-size 2", "--pipeline-model-parallel-size 1")]
    applied = copy.deepcopy(obj); del applied["status"]; del applied["metadata"]["managedFields"]
    applied["metadata"]["annotations"] = {}
    obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = json.dumps(applied, separators=(",", ":")) + "\n"
    return review(obj, "", "v1", "Pod", "pods")

def podgroup():
    obj = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
           "metadata": {"name": "llm-pg", "namespace": "ml", "managedFields": managed(0)},
           "spec": {"minMember": 17, "minTaskMember": {"master": 1, "worker": 16}, "queue": "training",
                    "minResources": {"cpu": "1440", "memory": "16000Gi", "nvidia.com/gpu": "128", "vpc.amazonaws.com/efa": "512"}},
           "status": {"phase": "Pending"}}
    return review(obj, "scheduling.volcano.sh", "v1beta1", "PodGroup", "podgroups")

def write(name, body):
    text = json.dumps(body, separators=(",", ":"))
    with open(os.path.join(HERE, "bodies", name + ".json"), "w") as f:
        f.write(text)
    print(f"{name}: {len(text)} bytes")

write("pod-efa", review(pod("nccl-worker-0"), "", "v1", "Pod", "pods"))
big = pod("big-pod", 20)
write("pod-large", review(big, "", "v1", "Pod", "pods"))
write("mpijob", mpijob())
write("podgroup", podgroup())
write("mpijob-torch", mpijob_torch())
write("pod-torch", pod_torch())
old = pod("nccl-worker-0"); new = copy.deepcopy(old); new["metadata"]["labels"]["rev"] = "2"
write("pod-update", review(new, "", "v1", "Pod", "pods", op="UPDATE", old=old))
