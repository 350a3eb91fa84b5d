/* test_launch.c -- a container's command line into launches: launcher command lines (through
 * Kubernetes expansion, the shell walk and the MPI reader) and their expected parse. */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/arena.h"
#include "tg/launch.h"

/* One case: a container (command items, then args items from index `split`, env entries
 * "NAME=value" or "NAME@" for a valueFrom) and what run `run` of the parse must look like.
 * Counts are strings: NULL = option not given, "16" = resolved, "?text" = unresolved with a
 * reason that contains text. fwd lists the forwarded names in order, NAME=VALUE also checks
 * the value. */
struct pcase {
    const char *name;
    const char *impl;
    const char *cmd[64];
    int split; /* items from here on are args (0: all are command) */
    const char *env[8];
    int nruns;
    int run;
    const char *launcher;
    const char *np;
    const char *per_node;
    bool oversub;
    const char *hosts; /* NULL: no -H; "4": 4 slots known; "?": slots unknown */
    bool hostfile;
    const char *fwd;
    bool fwd_all;
    bool fwd_none;
    bool fwd_list;
    int line; /* 0: not checked */
    int depth;
    bool script_error;
    bool mpmd;
    int argv;            /* the command/args item of the launcher (checked when line is) */
    const char *env_has; /* names that must be in the launcher's environment */
    const char *env_not; /* names that must not be */
};

#define OMPI "OpenMPI"

static const struct pcase cases[] = {
    /* ---- the corpus (tests/corpus), as written there ---- */
    {.name = "corpus mpi-operator v2beta1 pi: command mpirun, args -n 2",
     .cmd = {"mpirun", "-n", "2", "/home/mpiuser/pi"},
     .split = 1,
     .nruns = 1,
     .launcher = "mpirun",
     .np = "2"},
    {.name = "corpus mpi-operator v2beta1 pi-intel: args only, Intel grammar",
     .impl = "Intel",
     .cmd = {"mpirun", "-n", "2", "/home/mpiuser/pi"},
     .split = -1,
     .nruns = 1,
     .np = "2"},
    {.name = "corpus mpi-operator horovod tensorflow-mnist",
     .cmd = {"mpirun",   "-np",
             "2",        "--allow-run-as-root",
             "-bind-to", "none",
             "-map-by",  "slot",
             "-x",       "LD_LIBRARY_PATH",
             "-x",       "PATH",
             "-mca",     "pml",
             "ob1",      "-mca",
             "btl",      "^openib",
             "python",   "/examples/tensorflow_mnist.py"},
     .split = 1,
     .nruns = 1,
     .np = "2",
     .fwd = "LD_LIBRARY_PATH PATH"},
    {.name = "corpus mpi-operator tensorflow-benchmarks v2beta1",
     .cmd = {"mpirun",
             "--allow-run-as-root",
             "-np",
             "2",
             "-bind-to",
             "none",
             "-map-by",
             "slot",
             "-x",
             "NCCL_DEBUG=INFO",
             "-x",
             "LD_LIBRARY_PATH",
             "-x",
             "PATH",
             "-mca",
             "pml",
             "ob1",
             "-mca",
             "btl",
             "^openib",
             "python",
             "scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py",
             "--model=resnet101",
             "--batch_size=64",
             "--variable_update=horovod"},
     .nruns = 1,
     .np = "2",
     .fwd = "NCCL_DEBUG=INFO LD_LIBRARY_PATH PATH"},
    {.name = "corpus mpi-operator v1 tensorflow-benchmarks-imagenet -np 16",
     .cmd = {"mpirun",
             "--allow-run-as-root",
             "-np",
             "16",
             "-bind-to",
             "none",
             "-map-by",
             "slot",
             "-x",
             "NCCL_DEBUG=INFO",
             "-x",
             "LD_LIBRARY_PATH",
             "-x",
             "PATH",
             "-mca",
             "pml",
             "ob1",
             "-mca",
             "btl",
             "^openib",
             "python",
             "scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py",
             "--data_format=NCHW",
             "--batch_size=256"},
     .nruns = 1,
     .np = "16",
     .fwd = "NCCL_DEBUG LD_LIBRARY_PATH PATH"},
    {.name = "corpus mpi-operator v1 mxnet: no -np at all",
     .cmd = {"mpirun",
             "-mca",
             "btl_tcp_if_exclude",
             "lo",
             "-mca",
             "pml",
             "ob1",
             "-mca",
             "btl",
             "^openib",
             "--bind-to",
             "none",
             "-map-by",
             "slot",
             "-x",
             "LD_LIBRARY_PATH",
             "-x",
             "PATH",
             "-x",
             "NCCL_SOCKET_IFNAME=eth0",
             "-x",
             "NCCL_DEBUG=INFO",
             "-x",
             "MXNET_CUDNN_AUTOTUNE_DEFAULT=0",
             "python",
             "mxnet_mnist.py",
             "-n",
             "7"},
     .nruns = 1,
     .np = NULL,
     .fwd = "LD_LIBRARY_PATH PATH NCCL_SOCKET_IFNAME=eth0 NCCL_DEBUG MXNET_CUDNN_AUTOTUNE_DEFAULT"},
    {.name = "corpus mpi-operator v1 horovod elastic: horovodrun forwards its env",
     .cmd = {"horovodrun", "-np", "2", "--min-np", "1", "--max-np", "3", "--host-discovery-script",
             "/etc/mpi/discover_hosts.sh", "python",
             "/examples/elastic/tensorflow2_mnist_elastic.py"},
     .split = 1,
     .nruns = 1,
     .launcher = "horovodrun",
     .np = "2",
     .fwd_all = true},
    {.name = "corpus training-operator v1 tensorflow-mnist",
     .cmd = {"mpirun",   "-np",
             "2",        "--allow-run-as-root",
             "-bind-to", "none",
             "-map-by",  "slot",
             "-x",       "LD_LIBRARY_PATH",
             "-x",       "PATH",
             "-mca",     "pml",
             "ob1",      "-mca",
             "btl",      "^openib",
             "python",   "/horovod/examples/tensorflow2/tensorflow2_mnist.py"},
     .split = 1,
     .nruns = 1,
     .np = "2",
     .fwd = "LD_LIBRARY_PATH PATH"},
    {.name = "corpus aws-do-eks fi-info: /bin/bash -lc block scalar with a wait loop",
     .cmd = {"/bin/bash", "-lc",
             "SSH_OPTS=\"-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o "
             "LogLevel=ERROR\"\n"
             "echo \"[launcher] waiting for workers to become reachable ...\"\n"
             "for host in $(awk '{print $1}' /etc/mpi/hostfile); do\n"
             "  for i in $(seq 1 40); do\n"
             "    if ssh $SSH_OPTS -o ConnectTimeout=2 \"$host\" true 2>/dev/null; then\n"
             "      echo \"  $host reachable\"; break; fi\n"
             "    sleep 3\n"
             "  done\n"
             "done\n"
             "echo \"[launcher] starting NCCL all_reduce_perf (16 ranks, 2 nodes)\"\n"
             "/opt/hpcx/ompi/bin/mpirun \\\n"
             "  --allow-run-as-root --tag-output \\\n"
             "  -np 2 -N 1 --hostfile /etc/mpi/hostfile --bind-to none \\\n"
             "  --mca plm_rsh_args \"-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null\" "
             "\\\n"
             "  --mca pml ^cm,ucx --mca btl tcp,self --mca btl_tcp_if_exclude lo,docker0,veth \\\n"
             "  --mca coll ^ucc,hcoll \\\n"
             "  -x PATH -x LD_LIBRARY_PATH \\\n"
             "  -x FI_PROVIDER=efa -x FI_EFA_FORK_SAFE=1 -x FI_HMEM_CUDA_USE_DMABUF= -x "
             "FI_EFA_USE_DEVICE_RDMA=1 \\\n"
             "  -x NCCL_DEBUG=WARN -x NCCL_SOCKET_IFNAME='^lo,docker,veth' \\\n"
             "  -x NCCL_NET_PLUGIN=ofi -x NCCL_TUNER_PLUGIN=ofi \\\n"
             "  /opt/amazon/efa/bin/fi_info -p \"efa\" -t \"FI_EP_RDM\"\n"},
     .split = 2,
     .env = {"PATH=/opt/hpcx/ompi/bin:/usr/bin:/bin", "LD_LIBRARY_PATH=/opt/lib"},
     .nruns = 1,
     .launcher = "mpirun",
     .np = "2",
     .per_node = "1",
     .hostfile = true,
     .fwd = "PATH LD_LIBRARY_PATH FI_PROVIDER=efa FI_EFA_FORK_SAFE=1 FI_HMEM_CUDA_USE_DMABUF= "
            "FI_EFA_USE_DEVICE_RDMA=1 NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=^lo,docker,veth "
            "NCCL_NET_PLUGIN=ofi NCCL_TUNER_PLUGIN=ofi",
     .line = 11,
     .depth = 1,
     .argv = 2},
    {.name = "corpus aws-do-eks all-reduce-pair template: ${TOTAL_GPUS} never substituted",
     .cmd = {"/bin/bash", "-lc",
             "echo \"[launcher] starting NCCL all_reduce_perf (${TOTAL_GPUS} ranks)\"\n"
             "/opt/hpcx/ompi/bin/mpirun \\\n"
             "  --allow-run-as-root --tag-output \\\n"
             "  -np ${TOTAL_GPUS} -N ${GPU_PER_WORKER} --hostfile /etc/mpi/hostfile --bind-to "
             "none \\\n"
             "  -x PATH -x LD_LIBRARY_PATH \\\n"
             "  -x FI_PROVIDER=${FI_PROVIDER} -x NCCL_SOCKET_IFNAME='^lo,docker,veth' \\\n"
             "  /opt/nccl-tests/build/all_reduce_perf -b 8 -e 8G -f 2 -g 1 -c 1 -n 50\n"},
     .split = 2,
     .nruns = 1,
     .np = "?$TOTAL_GPUS is not set",
     .per_node = "?$GPU_PER_WORKER",
     .hostfile = true,
     .fwd = "PATH LD_LIBRARY_PATH FI_PROVIDER NCCL_SOCKET_IFNAME",
     .line = 2,
     .depth = 1,
     .argv = 2},
    {.name = "corpus aws-do-eks p5 single node: --mca pml_rsh_agent=ssh swallows --oversubscribe",
     .cmd = {"/opt/amazon/openmpi/bin/mpirun",
             "--allow-run-as-root",
             "--tag-output",
             "-np",
             "8",
             "-bind-to",
             "none",
             "-map-by",
             "slot",
             "-x",
             "PATH",
             "-x",
             "LD_LIBRARY_PATH",
             "-x",
             "XLA_FLAGS",
             "-x",
             "TF_XLA_FLAGS",
             "-x",
             "NCCL_DEBUG=INFO",
             "-x",
             "NCCL_NVLS_ENABLE=1",
             "--mca",
             "pml",
             "^cm",
             "--mca",
             "pml_rsh_agent=ssh",
             "--oversubscribe",
             "/opt/nccl-tests/build/all_reduce_perf",
             "-b",
             "1",
             "-e",
             "2G",
             "-f",
             "2",
             "-t",
             "1",
             "-g",
             "1",
             "-c",
             "1",
             "-n",
             "100"},
     .nruns = 1,
     .np = "8",
     .oversub = false,
     .fwd = "PATH LD_LIBRARY_PATH XLA_FLAGS TF_XLA_FLAGS NCCL_DEBUG NCCL_NVLS_ENABLE"},
    {.name = "corpus aws-do-eks nccl-efa-mount: --oversubscribe, FI_PROVIDER=efa forwarded",
     .cmd = {"/opt/amazon/openmpi/bin/mpirun",
             "--allow-run-as-root",
             "--tag-output",
             "-np",
             "2",
             "-bind-to",
             "none",
             "-map-by",
             "slot",
             "-x",
             "PATH",
             "-x",
             "LD_LIBRARY_PATH",
             "-x",
             "NCCL_DEBUG=INFO",
             "-x",
             "NCCL_ALGO=Ring",
             "-x",
             "FI_PROVIDER=efa",
             "-x",
             "FI_EFA_USE_DEVICE_RDMA=1",
             "-x",
             "RDMAV_FORK_SAFE=1",
             "-x",
             "NCCL_SHM_DISABLE=0",
             "--mca",
             "pml",
             "^cm",
             "--oversubscribe",
             "/opt/nccl-tests/build/all_reduce_perf",
             "-b",
             "8",
             "-e",
             "2G",
             "-f",
             "2",
             "-g",
             "1",
             "-c",
             "1",
             "-n",
             "100"},
     .nruns = 1,
     .launcher = "mpirun",
     .np = "2",
     .oversub = true,
     .fwd = "PATH LD_LIBRARY_PATH NCCL_DEBUG=INFO NCCL_ALGO=Ring FI_PROVIDER=efa "
            "FI_EFA_USE_DEVICE_RDMA=1 RDMAV_FORK_SAFE=1 NCCL_SHM_DISABLE=0"},
    {.name = "corpus aws-do-eks nccl-tests-efa (mpi-operator test)",
     .cmd = {"/opt/amazon/openmpi/bin/mpirun",
             "--allow-run-as-root",
             "--tag-output",
             "-np",
             "2",
             "-bind-to",
             "none",
             "-map-by",
             "slot",
             "-x",
             "PATH",
             "-x",
             "LD_LIBRARY_PATH",
             "-x",
             "XLA_FLAGS",
             "-x",
             "TF_XLA_FLAGS",
             "-x",
             "NCCL_DEBUG=INFO",
             "-x",
             "NCCL_ALGO=RING",
             "-x",
             "FI_EFA_USE_DEVICE_RDMA=1",
             "-x",
             "RDMAV_FORK_SAFE=1",
             "--oversubscribe",
             "/tmp/nccl-tests/build/all_reduce_perf",
             "-b",
             "8",
             "-e",
             "2G"},
     .nruns = 1,
     .np = "2",
     .oversub = true,
     .fwd = "PATH LD_LIBRARY_PATH XLA_FLAGS TF_XLA_FLAGS NCCL_DEBUG NCCL_ALGO "
            "FI_EFA_USE_DEVICE_RDMA RDMAV_FORK_SAFE"},
    {.name = "corpus aws-k8s-tester: unexpanded Go template {{.WorkerNodeGpuCount}}",
     .cmd = {"mpirun",
             "--allow-run-as-root",
             "--tag-output",
             "-np",
             "{{.WorkerNodeGpuCount}}",
             "-bind-to",
             "none",
             "-map-by",
             "slot",
             "-x",
             "PATH",
             "-x",
             "LD_LIBRARY_PATH",
             "-x",
             "NCCL_DEBUG=INFO",
             "-x",
             "NCCL_BUFFSIZE={{.NcclBuffSize}}",
             "-x",
             "NCCL_TUNER_PLUGIN=/opt/aws-ofi-nccl/install/lib/libnccl-ofi-tuner.so",
             "--mca",
             "pml",
             "^cm,ucx",
             "--mca",
             "btl",
             "tcp,self",
             "--mca",
             "btl_tcp_if_exclude",
             "lo,docker0,veth_def_agent",
             "/opt/nccl-tests/build/{{.TestName}}",
             "-b",
             "8"},
     .nruns = 1,
     .np = "?is not a process count",
     .fwd = "PATH LD_LIBRARY_PATH NCCL_DEBUG NCCL_BUFFSIZE NCCL_TUNER_PLUGIN"},
    {.name = "corpus ai-on-eks llama_train: -wdir takes a value, ./llama_7b.sh is the program",
     .cmd = {"mpirun", "--allow-run-as-root", "-np", "4", "-bind-to", "none", "-map-by", "slot",
             "-x", "LD_LIBRARY_PATH", "-x", "PATH", "-x", "POD_UID", "-wdir",
             "/shared/neuronx-nemo-megatron/nemo/examples/nlp/language_modeling/", "./llama_7b.sh"},
     .env = {"POD_UID@"},
     .nruns = 1,
     .np = "4",
     .fwd = "LD_LIBRARY_PATH PATH POD_UID"},
    {.name = "corpus awsome rlvr nccl-tests: --prefix, --mca with value, -np 32 -N 8",
     .cmd = {"/opt/amazon/openmpi/bin/mpirun",
             "--allow-run-as-root",
             "--tag-output",
             "--prefix",
             "/opt/amazon/openmpi",
             "--mca",
             "orte_base_help_aggregate",
             "0",
             "-np",
             "32",
             "-N",
             "8",
             "--bind-to",
             "none",
             "-x",
             "PATH",
             "-x",
             "LD_LIBRARY_PATH",
             "-x",
             "FI_PROVIDER=efa",
             "-x",
             "FI_EFA_FORK_SAFE=1",
             "-x",
             "NCCL_DEBUG=INFO",
             "--mca",
             "pml",
             "^ucx",
             "/opt/nccl-tests/build/all_reduce_perf",
             "-b",
             "8",
             "-e",
             "16G",
             "-f",
             "2",
             "-g",
             "1",
             "-c",
             "1",
             "-n",
             "20",
             "-w"},
     .nruns = 1,
     .np = "32",
     .per_node = "8",
     .fwd = "PATH LD_LIBRARY_PATH FI_PROVIDER=efa FI_EFA_FORK_SAFE=1 NCCL_DEBUG=INFO"},
    {.name = "corpus awsome nccl-tests gb200: -npernode 4 and --map-by ppr:4:node",
     .cmd = {"/opt/amazon/openmpi/bin/mpirun",
             "--allow-run-as-root",
             "--tag-output",
             "-np",
             "72",
             "-npernode",
             "4",
             "--map-by",
             "ppr:4:node",
             "--bind-to",
             "none",
             "-x",
             "PATH",
             "-x",
             "FI_PROVIDER=efa",
             "/opt/nccl-tests/build/all_reduce_perf",
             "-b",
             "8",
             "-c",
             "1",
             "-n",
             "100"},
     .nruns = 1,
     .np = "72",
     .per_node = "4",
     .fwd = "PATH FI_PROVIDER=efa"},
    {.name = "corpus awsome nccl-tests: -np 16 -N 8",
     .cmd = {"/opt/amazon/openmpi/bin/mpirun",
             "--allow-run-as-root",
             "--tag-output",
             "-np",
             "16",
             "-N",
             "8",
             "--bind-to",
             "none",
             "-x",
             "PATH",
             "-x",
             "LD_LIBRARY_PATH",
             "-x",
             "FI_PROVIDER=efa",
             "-x",
             "FI_EFA_FORK_SAFE=1",
             "-x",
             "NCCL_DEBUG=INFO",
             "-x",
             "NCCL_BUFFSIZE=8388608",
             "-x",
             "NCCL_P2P_NET_CHUNKSIZE=524288",
             "--mca",
             "pml",
             "^ucx",
             "--mca",
             "btl",
             "tcp,self",
             "/opt/nccl-tests/build/all_reduce_perf",
             "-b",
             "8",
             "-e",
             "16G",
             "-f",
             "2",
             "-g",
             "1",
             "-c",
             "1",
             "-n",
             "100"},
     .nruns = 1,
     .np = "16",
     .per_node = "8",
     .fwd = "PATH LD_LIBRARY_PATH FI_PROVIDER FI_EFA_FORK_SAFE NCCL_DEBUG NCCL_BUFFSIZE "
            "NCCL_P2P_NET_CHUNKSIZE"},
    {.name = "corpus awsome test-nccl-efa-p5: -np 16 with -c 1 of the program not read",
     .cmd = {"/opt/amazon/openmpi/bin/mpirun",
             "--allow-run-as-root",
             "--tag-output",
             "-np",
             "16",
             "-bind-to",
             "none",
             "-map-by",
             "slot",
             "-x",
             "PATH",
             "-x",
             "NCCL_DEBUG=INFO",
             "--mca",
             "pml",
             "^cm",
             "/opt/nccl-tests/build/all_reduce_perf",
             "-b",
             "1",
             "-c",
             "1"},
     .nruns = 1,
     .np = "16",
     .fwd = "PATH NCCL_DEBUG=INFO"},
    /* the YAML there writes "- -x " with a trailing space: plain scalars drop it */
    {.name = "corpus aws-efa-eks fairseq/megatron/ddp: MASTER_ADDR forwarded, /fairdata/train.sh",
     .cmd = {"/opt/amazon/openmpi/bin/mpirun", "--allow-run-as-root", "--tag-output", "-np", "16",
             "-bind-to", "none", "-map-by", "slot", "-x", "PATH", "-x", "LD_LIBRARY_PATH", "-x",
             "MASTER_ADDR", "-x", "MASTER_PORT", "/fairdata/train.sh"},
     .nruns = 1,
     .np = "16",
     .fwd = "PATH LD_LIBRARY_PATH MASTER_ADDR MASTER_PORT"},
    {.name = "corpus aws-efa-eks nccl-efa-tests: -x NCCL_PROTO twice is one entry",
     .cmd = {"/opt/amazon/openmpi/bin/mpirun", "--allow-run-as-root", "-np", "16", "-x", "PATH",
             "-x", "NCCL_PROTO=simple", "-x", "FI_EFA_USE_DEVICE_RDMA=1", "-x", "NCCL_PROTO=simple",
             "--mca", "pml", "^cm", "--oversubscribe", "/opt/nccl-tests/build/all_reduce_perf",
             "-b", "8"},
     .nruns = 1,
     .np = "16",
     .oversub = true,
     .fwd = "PATH NCCL_PROTO FI_EFA_USE_DEVICE_RDMA=1"},
    {.name = "corpus aws-efa-eks bert: -x with long values, options after -x",
     .cmd = {"mpirun",
             "-x",
             "LD_LIBRARY_PATH=/opt/nccl/build/lib:/opt/amazon/efa/lib",
             "-x",
             "PATH=/shared/bin:/usr/bin",
             "-x",
             "NCCL_SHM_DISABLE=0",
             "-map-by",
             "slot",
             "-x",
             "NCCL_SOCKET_IFNAME=eth0",
             "-x",
             "FI_EFA_FORK_SAFE=1",
             "-x",
             "TF_XLA_FLAGS",
             "--allow-run-as-root",
             "-np",
             "16",
             "--oversubscribe",
             "/usr/bin/python3",
             "/workspace/BERT/run_pretraining.py",
             "--do_train=True"},
     .nruns = 1,
     .np = "16",
     .oversub = true,
     .fwd = "LD_LIBRARY_PATH PATH NCCL_SHM_DISABLE NCCL_SOCKET_IFNAME FI_EFA_FORK_SAFE "
            "TF_XLA_FLAGS"},
    {.name = "corpus volcano argo mpi-simple: flow-style command with --hostfile",
     .cmd = {"mpirun", "--allow-run-as-root", "--hostfile", "/etc/volcano/mpi.hostfile", "-np", "2",
             "./mpi-pi"},
     .nruns = 1,
     .np = "2",
     .hostfile = true},
    {.name = "corpus volcano mpi-example: /bin/sh -c with backquotes and --host ${MPI_HOST}",
     .cmd = {"/bin/sh", "-c",
             "MPI_HOST=`cat /etc/volcano/mpiworker.host | tr \"\\n\" \",\"`;\n"
             "mkdir -p /var/run/sshd; /usr/sbin/sshd;\n"
             "mpiexec --allow-run-as-root --host ${MPI_HOST} -np 2 mpi_hello_world;\n"},
     .nruns = 1,
     .launcher = "mpiexec",
     .np = "2",
     .hosts = "?",
     .line = 3,
     .depth = 1,
     .argv = 2},
    {.name = "corpus volcano task-start-dependency: -np 10",
     .cmd = {"/bin/sh", "-c",
             "MPI_HOST=`cat /etc/volcano/mpiworker.host | tr \"\\n\" \",\"`;\n"
             "mkdir -p /var/run/sshd; /usr/sbin/sshd;\n"
             "mpiexec --allow-run-as-root --host ${MPI_HOST} -np 10 mpi_hello_world;\n"},
     .nruns = 1,
     .np = "10",
     .hosts = "?"},
    {.name = "corpus volcano horovod: mpiexec -np 3 python",
     .cmd = {"/bin/sh", "-c",
             "WORKER_HOST=`cat /etc/volcano/worker.host | tr \"\\n\" \",\"`;\n"
             "mkdir -p /var/run/sshd; /usr/sbin/sshd;\n"
             "mpiexec --allow-run-as-root --host ${WORKER_HOST} -np 3 python "
             "tensorflow_mnist_lm.py;\n"},
     .nruns = 1,
     .np = "3",
     .hosts = "?"},
    {.name = "corpus volcano mindspore: --prefix then the program, then sleep",
     .cmd = {"/bin/bash", "-c",
             "mkdir -p /var/run/sshd; /usr/sbin/sshd;\n"
             "MPI_HOST=`cat /etc/volcano/mpiworker.host | tr \"\\n\" \",\"`;\n"
             "sleep 10;\n"
             "mpiexec --allow-run-as-root --host ${MPI_HOST} -np 2 --prefix "
             "/usr/local/openmpi-3.1.5 python /tmp/gpu-test.py;\n"
             "sleep 3600;\n"},
     .nruns = 1,
     .np = "2",
     .hosts = "?",
     .line = 4,
     .depth = 1,
     .argv = 2},

    /* ---- quoting, continuations, comments ---- */
    {.name = "single quotes keep $NP literal",
     .cmd = {"bash", "-c", "NP=4; mpirun -np '$NP' ./a"},
     .nruns = 1,
     .np = "?is not a process count"},
    {.name = "double quotes expand $NP",
     .cmd = {"bash", "-c", "NP=4; mpirun -np \"$NP\" ./a"},
     .nruns = 1,
     .np = "4"},
    {.name = "backslash-escaped dollar is literal",
     .cmd = {"sh", "-c", "NP=4 ; mpirun -np \\$NP ./a"},
     .nruns = 1,
     .np = "?is not a process count"},
    {.name = "backslash-newline joins the option and its value",
     .cmd = {"sh", "-c", "mpirun -np \\\n 8 \\\n  --oversubscribe ./a"},
     .nruns = 1,
     .np = "8",
     .oversub = true},
    {.name = "a comment line mentioning mpirun -np 99 is not a command",
     .cmd = {"sh", "-c", "# mpirun -np 99 ./old\nmpirun -np 4 ./a # -np 100\n"},
     .nruns = 1,
     .np = "4",
     .line = 2,
     .depth = 1,
     .argv = 2},
    {.name = "# inside a word is not a comment",
     .cmd = {"sh", "-c", "mpirun -np 4 -x TAG=a#b ./a"},
     .nruns = 1,
     .np = "4",
     .fwd = "TAG=a#b"},
    {.name = "unterminated single quote stops reading and says so",
     .cmd = {"sh", "-c", "mpirun -np 4 ./a 'oops"},
     .nruns = 0,
     .script_error = true},
    {.name = "empty double-quoted value for -x",
     .cmd = {"sh", "-c", "mpirun -np 2 -x FI_HMEM_CUDA_USE_DMABUF=\"\" ./a"},
     .nruns = 1,
     .np = "2",
     .fwd = "FI_HMEM_CUDA_USE_DMABUF="},

    /* ---- shells and lists ---- */
    {.name = "bash -c with && chain",
     .cmd = {"bash", "-c", "cd /workspace && pip install -q x && mpirun -np 16 python train.py"},
     .nruns = 1,
     .np = "16"},
    {.name = "bash -lc with || fallback and a pipe to tee",
     .cmd = {"bash", "-lc", "mpirun -np 8 ./a 2>&1 | tee /tmp/log || echo failed"},
     .nruns = 1,
     .np = "8"},
    {.name = "/bin/bash -c in command, script in args",
     .cmd = {"/bin/bash", "-c", "mpirun -n 4 ./a"},
     .split = 2,
     .nruns = 1,
     .np = "4"},
    {.name = "sh -xec: options clustered with c",
     .cmd = {"sh", "-xec", "mpirun -np 2 ./a"},
     .nruns = 1,
     .np = "2"},
    {.name = "bash -o pipefail -c",
     .cmd = {"bash", "-o", "pipefail", "-c", "mpirun -np 2 ./a | tee x"},
     .nruns = 1,
     .np = "2"},
    {.name = "nested bash -c inside sh -c",
     .cmd = {"sh", "-c", "bash -c \"mpirun -np 6 ./a\""},
     .nruns = 1,
     .np = "6",
     .depth = 2,
     .line = 1,
     .argv = 2},
    {.name = "two launches in one script are both reported",
     .cmd = {"bash", "-c", "mpirun -np 2 ./warmup\nmpirun -np 16 ./train\n"},
     .nruns = 2,
     .run = 1,
     .np = "16",
     .line = 2,
     .depth = 1,
     .argv = 2},
    {.name = "if/then/fi around mpirun",
     .cmd = {"bash", "-c", "if [ -f /etc/mpi/hostfile ]; then\n  mpirun -np 4 ./a\nfi"},
     .nruns = 1,
     .np = "4",
     .line = 2,
     .depth = 1,
     .argv = 2},
    {.name = "for loop header is not a command, its body is",
     .cmd = {"bash", "-c", "for i in 1 2; do mpirun -np 2 ./a; done"},
     .nruns = 1,
     .np = "2"},
    {.name = "here-document body is skipped",
     .cmd = {"bash", "-c", "cat > /tmp/h <<EOF\nmpirun -np 99 nothing\nEOF\nmpirun -np 3 ./a\n"},
     .nruns = 1,
     .np = "3",
     .line = 4,
     .depth = 1,
     .argv = 2},
    {.name = "subshell in parentheses",
     .cmd = {"sh", "-c", "(cd /w; mpirun -np 2 ./a)"},
     .nruns = 1,
     .np = "2"},
    {.name = "background & then wait",
     .cmd = {"sh", "-c", "/usr/sbin/sshd & mpirun -np 2 ./a; wait"},
     .nruns = 1,
     .np = "2"},

    /* ---- wrappers ---- */
    {.name = "exec mpirun", .cmd = {"sh", "-c", "exec mpirun -np 4 ./a"}, .nruns = 1, .np = "4"},
    {.name = "time mpirun", .cmd = {"bash", "-c", "time mpirun -np 4 ./a"}, .nruns = 1, .np = "4"},
    {.name = "timeout 3600 mpirun (exec form)",
     .cmd = {"timeout", "3600", "mpirun", "-np", "4", "./a"},
     .nruns = 1,
     .np = "4",
     .line = 1,
     .argv = 2},
    {.name = "timeout -s KILL 1h mpirun",
     .cmd = {"timeout", "-s", "KILL", "1h", "mpirun", "-np", "4", "./a"},
     .nruns = 1,
     .np = "4"},
    {.name = "env A=B mpirun",
     .cmd = {"env", "FI_PROVIDER=efa", "mpirun", "-np", "4", "./a"},
     .nruns = 1,
     .np = "4"},
    {.name = "sudo -n is a flag, sudo -u takes a user",
     .cmd = {"sh", "-c", "sudo -n -u mpiuser -E mpirun -np 4 ./a"},
     .nruns = 1,
     .np = "4"},
    {.name = "numactl --interleave=all and nice -n 5",
     .cmd = {"sh", "-c", "nice -n 5 numactl --interleave=all -N 0 mpirun -np 4 ./a"},
     .nruns = 1,
     .np = "4"},
    {.name = "taskset -c 0-7 mpirun",
     .cmd = {"taskset", "-c", "0-7", "mpirun", "-np", "4", "./a"},
     .nruns = 1,
     .np = "4"},
    {.name = "nohup mpirun in a script",
     .cmd = {"sh", "-c", "nohup mpirun -np 4 ./a > /tmp/out 2>&1"},
     .nruns = 1,
     .np = "4"},
    {.name = "exec timeout env chain",
     .cmd = {"sh", "-c", "exec timeout 10m env X=1 /usr/bin/mpirun -np 4 ./a"},
     .nruns = 1,
     .np = "4"},

    /* ---- variables ---- */
    {.name = "NP=24 then mpirun -np $NP",
     .cmd = {"bash", "-c", "NP=24\nmpirun -np $NP ./a"},
     .nruns = 1,
     .np = "24"},
    {.name = "${NP} braces",
     .cmd = {"bash", "-c", "NP=24; mpirun -np ${NP} ./a"},
     .nruns = 1,
     .np = "24"},
    {.name = "export NP=8",
     .cmd = {"bash", "-c", "export NP=8; mpirun -np $NP ./a"},
     .nruns = 1,
     .np = "8"},
    {.name = "NP=24 mpirun -np $NP: a prefix assignment does not reach the expansion",
     .cmd = {"bash", "-c", "NP=24 mpirun -np $NP ./a"},
     .nruns = 1,
     .np = "?$NP is not set"},
    {.name = "$NP from the container env",
     .cmd = {"sh", "-c", "mpirun -np $NP ./a"},
     .env = {"NP=12"},
     .nruns = 1,
     .np = "12"},
    {.name = "$NP from valueFrom is unresolved",
     .cmd = {"sh", "-c", "mpirun -np $NP ./a"},
     .env = {"NP@"},
     .nruns = 1,
     .np = "?valueFrom"},
    {.name = "Kubernetes $(NP) in exec form",
     .cmd = {"mpirun", "-np", "$(NP)", "./a"},
     .env = {"NP=32"},
     .nruns = 1,
     .np = "32"},
    {.name = "Kubernetes $(NP) undefined stays literal",
     .cmd = {"mpirun", "-np", "$(NP)", "./a"},
     .nruns = 1,
     .np = "?$(NP) is not defined"},
    {.name = "Kubernetes $(NP) from valueFrom inside a script",
     .cmd = {"sh", "-c", "mpirun -np $(NP) ./a"},
     .env = {"NP@"},
     .nruns = 1,
     .np = "?valueFrom"},
    {.name = "Kubernetes $$ escape gives a shell $NP",
     .cmd = {"sh", "-c", "NP=6; mpirun -np $$NP ./a"},
     .nruns = 1,
     .np = "6"},
    {.name = "env value built from an earlier env entry with $(VAR)",
     .cmd = {"sh", "-c", "mpirun -np $TOTAL ./a"},
     .env = {"N=4", "TOTAL=$(N)"},
     .nruns = 1,
     .np = "4"},
    {.name = "arithmetic $((NODES * GPUS))",
     .cmd = {"bash", "-c", "NODES=2; GPUS=8; mpirun -np $((NODES * GPUS)) ./a"},
     .nruns = 1,
     .np = "16"},
    {.name = "arithmetic with $ names and parentheses from env",
     .cmd = {"bash", "-c", "mpirun -np $(( ($NODES + 1) * ${GPUS} - 2 )) ./a"},
     .env = {"NODES=1", "GPUS=8"},
     .nruns = 1,
     .np = "14"},
    {.name = "arithmetic over an unset name is unresolved",
     .cmd = {"bash", "-c", "mpirun -np $((NODES * 8)) ./a"},
     .nruns = 1,
     .np = "?$NODES is not set"},
    {.name = "arithmetic division by zero is unresolved",
     .cmd = {"bash", "-c", "Z=0; mpirun -np $((8 / Z)) ./a"},
     .nruns = 1,
     .np = "?division by zero"},
    {.name = "arithmetic with an operator we do not read",
     .cmd = {"bash", "-c", "mpirun -np $((2 << 3)) ./a"},
     .nruns = 1,
     .np = "?does not read"},
    {.name = "$(hostname) is a command substitution: unresolved",
     .cmd = {"bash", "-c", "mpirun -np $(nproc) ./a"},
     .nruns = 1,
     .np = "?command substitution"},
    {.name = "${NP:-8} default when unset",
     .cmd = {"bash", "-c", "mpirun -np ${NP:-8} ./a"},
     .nruns = 1,
     .np = "8"},
    {.name = "${NP:-8} takes the set value",
     .cmd = {"bash", "-c", "mpirun -np ${NP:-8} ./a"},
     .env = {"NP=2"},
     .nruns = 1,
     .np = "2"},
    {.name = "${#NP} is not read",
     .cmd = {"bash", "-c", "NP=22; mpirun -np ${#NP} ./a"},
     .nruns = 1,
     .np = "?does not read"},
    {.name = "positional parameter $1",
     .cmd = {"bash", "-c", "mpirun -np $1 ./a", "bash", "8"},
     .nruns = 1,
     .np = "?positional"},
    {.name = "an assignment from a command substitution makes the variable unknown",
     .cmd = {"bash", "-c", "NP=$(wc -l < /etc/mpi/hostfile)\nmpirun -np $NP ./a"},
     .nruns = 1,
     .np = "?command substitution"},
    {.name = "$MPIRUN as the command is not guessed",
     .cmd = {"bash", "-c", "$MPIRUN -np 4 ./a"},
     .nruns = 0},

    /* ---- Open MPI options ---- */
    {.name = "--np=4 long option with =",
     .cmd = {"mpirun", "--np=4", "./a"},
     .nruns = 1,
     .np = "4"},
    {.name = "-c is a process count for Open MPI",
     .cmd = {"mpirun", "-c", "6", "./a"},
     .nruns = 1,
     .np = "6"},
    {.name = "--npernode",
     .cmd = {"mpirun", "--npernode", "8", "./a"},
     .nruns = 1,
     .per_node = "8"},
    {.name = "--map-by ppr:8:node:OVERSUBSCRIBE",
     .cmd = {"mpirun", "-np", "16", "--map-by", "ppr:8:node:OVERSUBSCRIBE", "./a"},
     .nruns = 1,
     .np = "16",
     .per_node = "8",
     .oversub = true},
    {.name = "--map-by=ppr:4:node:PE=2 (5.x style with =)",
     .cmd = {"mpirun", "--map-by=ppr:4:node:PE=2", "./a"},
     .nruns = 1,
     .per_node = "4"},
    {.name = "--map-by ppr:2:socket is not per node",
     .cmd = {"mpirun", "--map-by", "ppr:2:socket", "./a"},
     .nruns = 1,
     .per_node = NULL},
    {.name = "--map-by slot:oversubscribe (lower case)",
     .cmd = {"mpirun", "-np", "4", "--map-by", "slot:oversubscribe", "./a"},
     .nruns = 1,
     .np = "4",
     .oversub = true},
    {.name = "-H host:slots list",
     .cmd = {"mpirun", "-np", "4", "-H", "w0:2,w1:2", "./a"},
     .nruns = 1,
     .np = "4",
     .hosts = "4"},
    {.name = "--host without slots counts one each",
     .cmd = {"mpirun", "--host", "a,b,c", "./a"},
     .nruns = 1,
     .hosts = "3"},
    {.name = "-H with a bad slot count",
     .cmd = {"mpirun", "-H", "a:x", "./a"},
     .nruns = 1,
     .hosts = "?"},
    {.name = "--mca mca_base_env_list forwards names",
     .cmd = {"mpirun", "-np", "2", "--mca", "mca_base_env_list", "FI_PROVIDER=efa;NCCL_DEBUG",
             "./a"},
     .nruns = 1,
     .np = "2",
     .fwd = "FI_PROVIDER=efa NCCL_DEBUG"},
    {.name = "OMPI_MCA_mca_base_env_list in the container env forwards names",
     .cmd = {"mpirun", "-np", "2", "./a"},
     .env = {"OMPI_MCA_mca_base_env_list=FI_PROVIDER"},
     .nruns = 1,
     .np = "2",
     .fwd = "FI_PROVIDER"},
    {.name = "-x $VAR: the name is unknown, nothing forwarded",
     .cmd = {"bash", "-c", "mpirun -np 2 -x $NAMES ./a"},
     .nruns = 1,
     .np = "2",
     .fwd = ""},
    {.name = "an unknown Open MPI option is read as a flag",
     .cmd = {"mpirun", "--some-new-flag", "-np", "4", "./a"},
     .nruns = 1,
     .np = "4"},
    {.name = "orterun and prterun are mpirun",
     .cmd = {"sh", "-c", "orterun -np 2 ./a; /usr/bin/prterun -n 3 ./b"},
     .nruns = 2,
     .run = 1,
     .launcher = "prterun",
     .np = "3"},
    {.name = "MPMD: ':' contexts add up",
     .cmd = {"mpirun", "-np", "1", "./server", ":", "-np", "7", "./client"},
     .nruns = 1,
     .np = "8",
     .mpmd = true},
    {.name = "MPMD context without -np is unresolved",
     .cmd = {"mpirun", "-np", "1", "./server", ":", "./client"},
     .nruns = 1,
     .np = "?no process count",
     .mpmd = true},
    {.name = "negative -np is not a count",
     .cmd = {"mpirun", "-np", "-2", "./a"},
     .nruns = 1,
     .np = "?is not a process count"},
    {.name = "-np with no value", .cmd = {"mpirun", "-np"}, .nruns = 1, .np = NULL},

    /* ---- Intel MPI and MPICH hydra ---- */
    {.name = "Intel mpiexec.hydra -n -ppn",
     .impl = "Intel",
     .cmd = {"mpiexec.hydra", "-n", "16", "-ppn", "8", "./a"},
     .nruns = 1,
     .launcher = "mpiexec.hydra",
     .np = "16",
     .per_node = "8"},
    {.name = "Intel -perhost and -genv",
     .impl = "Intel",
     .cmd = {"mpirun", "-np", "4", "-perhost", "2", "-genv", "FI_PROVIDER", "efa", "./a"},
     .nruns = 1,
     .np = "4",
     .per_node = "2",
     .fwd = "FI_PROVIDER=efa"},
    {.name = "Intel -genvall",
     .impl = "Intel",
     .cmd = {"mpirun", "-genvall", "-n", "2", "./a"},
     .nruns = 1,
     .np = "2",
     .fwd_all = true},
    {.name = "Intel -genvnone",
     .impl = "Intel",
     .cmd = {"mpirun", "-genvnone", "-n", "2", "./a"},
     .nruns = 1,
     .np = "2",
     .fwd_none = true},
    {.name = "MPICH -genvlist a,b and -f hostfile",
     .impl = "MPICH",
     .cmd = {"mpiexec", "-f", "/etc/mpi/hostfile", "-genvlist", "NCCL_DEBUG,FI_PROVIDER", "-n", "4",
             "./a"},
     .nruns = 1,
     .np = "4",
     .hostfile = true,
     .fwd = "NCCL_DEBUG FI_PROVIDER",
     .fwd_list = true},
    {.name = "MPICH -genvlist then -genvall: the last one wins",
     .impl = "MPICH",
     .cmd = {"mpiexec", "-genvlist", "A", "-genvall", "-n", "2", "./a"},
     .nruns = 1,
     .np = "2",
     .fwd = "A",
     .fwd_all = true},
    {.name = "MPICH -hosts a:2,b:2",
     .impl = "MPICH",
     .cmd = {"mpiexec", "-hosts", "a:2,b:2", "-n", "4", "./a"},
     .nruns = 1,
     .np = "4",
     .hosts = "4"},
    {.name = "hydra reads -x as an unknown flag, not as Open MPI's",
     .impl = "MPICH",
     .cmd = {"mpiexec", "-n", "4", "./a", "-x", "FOO"},
     .nruns = 1,
     .np = "4",
     .fwd = ""},
    {.name = "Intel -rr is one per host",
     .impl = "Intel",
     .cmd = {"mpirun", "-rr", "-n", "4", "./a"},
     .nruns = 1,
     .np = "4",
     .per_node = "1"},

    /* ---- horovodrun ---- */
    {.name = "horovodrun -np -H host:slots",
     .cmd = {"horovodrun", "-np", "8", "-H", "w0:4,w1:4", "python", "train.py"},
     .nruns = 1,
     .np = "8",
     .hosts = "8",
     .fwd_all = true},
    {.name = "horovodrun --num-proc in a script",
     .cmd = {"bash", "-c", "horovodrun --num-proc 4 --hostfile /etc/mpi/hostfile python t.py"},
     .nruns = 1,
     .np = "4",
     .hostfile = true,
     .fwd_all = true},

    /* ---- the launcher's own environment ---- */
    {.name = "exported and prefix variables reach mpirun's env, a plain assignment does not",
     .cmd = {"bash", "-c", "export A=1; B=2; C=3 mpirun -np 2 ./a"},
     .env = {"X=1"},
     .nruns = 1,
     .np = "2",
     .env_has = "A C X",
     .env_not = "B"},
    {.name = "env -i clears the container env; its NAME=VALUE words remain",
     .cmd = {"sh", "-c", "env -i D=1 mpirun -np 2 ./a"},
     .env = {"X=1"},
     .nruns = 1,
     .np = "2",
     .env_has = "D",
     .env_not = "X"},
    {.name = "export NAME after an assignment exports it",
     .cmd = {"sh", "-c", "E=1\nexport E\nmpirun -np 2 ./a"},
     .nruns = 1,
     .np = "2",
     .env_has = "E"},
    {.name = "a valueFrom variable is in the env even though its value is unknown",
     .cmd = {"mpirun", "-np", "2", "./a"},
     .env = {"POD_IP@"},
     .nruns = 1,
     .np = "2",
     .env_has = "POD_IP"},
    {.name = "OMPI_MCA_mca_base_env_list as a prefix assignment forwards its names",
     .cmd = {"sh", "-c", "OMPI_MCA_mca_base_env_list='NCCL_DEBUG;FI_PROVIDER=efa' mpirun ./a"},
     .nruns = 1,
     .fwd = "NCCL_DEBUG FI_PROVIDER=efa",
     .env_has = "OMPI_MCA_mca_base_env_list"},
    {.name = "an unexported OMPI_MCA_mca_base_env_list does not reach mpirun",
     .cmd = {"sh", "-c", "OMPI_MCA_mca_base_env_list=NCCL_DEBUG; mpirun ./a"},
     .nruns = 1,
     .fwd = ""},

    /* a second env once made the reader take the first one's count of NAME=VALUE words with no
     * list: a NULL read, the webhook's crash */
    {.name = "env A=1 env mpirun: a second env wrapper",
     .cmd = {"env", "A=1", "env", "mpirun", "-np", "2", "./a"},
     .nruns = 1,
     .launcher = "mpirun",
     .np = "2"},
    {.name = "env wrappers twice inside a script",
     .cmd = {"sh", "-c", "env A=1 env -u B mpirun -np 3 ./a"},
     .nruns = 1,
     .np = "3"},

    /* ---- not launchers ---- */
    {.name = "sshd worker command", .cmd = {"/usr/sbin/sshd", "-De"}, .nruns = 0},
    {.name = "torchrun is not an MPI launcher",
     .cmd = {"torchrun", "--nproc_per_node", "8", "train.py"},
     .nruns = 0},
    {.name = "echo mpirun is not a launch", .cmd = {"sh", "-c", "echo mpirun -np 4"}, .nruns = 0},
    {.name = "mpirun-wrapper.sh is not mpirun",
     .cmd = {"/opt/mpirun-wrapper.sh", "-np", "4"},
     .nruns = 0},
    {.name = "no command at all", .cmd = {NULL}, .nruns = 0},
};

static json_t *make_container(const struct pcase *c)
{
    json_t *ct = json_object();
    json_t *cmd = json_array(), *args = json_array(), *env = json_array();
    for (int i = 0; c->cmd[i]; i++) {
        bool is_arg = c->split < 0 || (c->split > 0 && i >= c->split);
        json_array_append_new(is_arg ? args : cmd, json_string(c->cmd[i]));
    }
    for (int i = 0; c->env[i]; i++) {
        const char *e = c->env[i];
        size_t nl = strcspn(e, "=@");
        json_t *o = json_object();
        json_object_set_new(o, "name", json_stringn(e, nl));
        if (e[nl] == '=')
            json_object_set_new(o, "value", json_string(e + nl + 1));
        else
            json_object_set_new(o, "valueFrom",
                                json_pack("{s:{s:s}}", "fieldRef", "fieldPath", "metadata.uid"));
        json_array_append_new(env, o);
    }
    if (json_array_size(cmd))
        json_object_set(ct, "command", cmd);
    if (json_array_size(args))
        json_object_set(ct, "args", args);
    if (json_array_size(env))
        json_object_set(ct, "env", env);
    json_decref(cmd);
    json_decref(args);
    json_decref(env);
    return ct;
}

static void check_count(const char *what, const char *want, const struct tg_launch_value *v,
                        const char *name)
{
    if (!want) {
        ck_assert_msg(!v->set, "%s: %s should not be set (got %s)", name, what, v->text);
        return;
    }
    ck_assert_msg(v->set, "%s: %s not set", name, what);
    if (want[0] == '?') {
        ck_assert_msg(!v->resolved, "%s: %s should be unresolved, got %lld", name, what, v->value);
        ck_assert_msg(strstr(v->reason, want + 1), "%s: %s reason '%s' lacks '%s'", name, what,
                      v->reason, want + 1);
    } else {
        ck_assert_msg(v->resolved, "%s: %s unresolved: %s", name, what, v->reason);
        ck_assert_msg(v->value == strtoll(want, NULL, 10), "%s: %s = %lld, want %s", name, what,
                      v->value, want);
    }
}

static void check_fwd(const struct pcase *c, const struct tg_mpirun *r)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", c->fwd);
    size_t k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save), k++) {
        char *eq = strchr(tok, '=');
        if (eq)
            *eq = '\0';
        ck_assert_msg(k < r->nfwd, "%s: only %zu forwarded, want %s", c->name, r->nfwd, tok);
        ck_assert_msg(strcmp(r->fwd[k].name, tok) == 0, "%s: fwd[%zu] = %s, want %s", c->name, k,
                      r->fwd[k].name, tok);
        if (eq) {
            ck_assert_msg(r->fwd[k].value && strcmp(r->fwd[k].value, eq + 1) == 0,
                          "%s: %s value '%s', want '%s'", c->name, tok,
                          r->fwd[k].value ? r->fwd[k].value : "(null)", eq + 1);
        }
    }
    ck_assert_msg(k == r->nfwd, "%s: %zu forwarded, want %zu", c->name, r->nfwd, k);
}

static void check_env_names(const char *name, const char *list, const struct tg_mpirun *r,
                            bool want)
{
    char buf[256];
    char *save = NULL;
    if (!list)
        return;
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
        ck_assert_msg(tg_mpirun_env_has(r, tok) == want, "%s: %s %s in the launcher env", name, tok,
                      want ? "not" : "unexpectedly");
}

START_TEST(launcher_case)
{
    const struct pcase *c = &cases[_i];
    json_t *ct = make_container(c);
    enum tg_mpi_impl impl;
    ck_assert_int_eq(tg_mpi_impl_parse(c->impl, &impl), 0);
    struct tg_launch l;
    tg_launch_init(&l);
    ck_assert_int_eq(tg_launch_parse_container(ct, impl, &l), 0);
    ck_assert_msg(l.nruns == (size_t)c->nruns, "%s: %zu runs, want %d", c->name, l.nruns, c->nruns);
    ck_assert_msg(l.script_error == c->script_error, "%s: script_error %d (%s)", c->name,
                  l.script_error, l.error);
    if (c->nruns > 0) {
        const struct tg_mpirun *r = &l.runs[c->run];
        if (c->launcher)
            ck_assert_str_eq(r->launcher, c->launcher);
        check_count("np", c->np, &r->np, c->name);
        check_count("per-node", c->per_node, &r->per_node, c->name);
        ck_assert_msg(r->oversubscribe == c->oversub, "%s: oversubscribe %d", c->name,
                      r->oversubscribe);
        ck_assert_msg(r->hosts == (c->hosts != NULL), "%s: hosts %d", c->name, r->hosts);
        if (c->hosts && c->hosts[0] == '?')
            ck_assert_msg(!r->host_slots_known, "%s: host slots should be unknown", c->name);
        else if (c->hosts)
            ck_assert_msg(r->host_slots_known && r->host_slots == strtoll(c->hosts, NULL, 10),
                          "%s: host slots %lld", c->name, r->host_slots);
        ck_assert_msg(r->hostfile == c->hostfile, "%s: hostfile %d", c->name, r->hostfile);
        ck_assert_msg(r->forward_all == c->fwd_all, "%s: forward_all %d", c->name, r->forward_all);
        ck_assert_msg(r->forward_none == c->fwd_none, "%s: forward_none", c->name);
        ck_assert_msg(r->forward_list == c->fwd_list, "%s: forward_list", c->name);
        ck_assert_msg(r->mpmd == c->mpmd, "%s: mpmd %d", c->name, r->mpmd);
        if (c->fwd)
            check_fwd(c, r);
        check_env_names(c->name, c->env_has, r, true);
        check_env_names(c->name, c->env_not, r, false);
        if (c->line) {
            ck_assert_msg(r->line == c->line, "%s: line %d want %d", c->name, r->line, c->line);
            ck_assert_msg(r->depth == c->depth, "%s: depth %d want %d", c->name, r->depth,
                          c->depth);
            ck_assert_msg(r->argv_index == (size_t)c->argv, "%s: argv item %zu want %d", c->name,
                          r->argv_index, c->argv);
        }
    }
    tg_launch_release(&l);
    json_decref(ct);
}
END_TEST

/* ---- API edges ---- */
START_TEST(launcher_bad_json_types_give_no_runs)
{
    const char *bad[] = {
        "{\"command\": \"mpirun -np 4\"}",
        "{\"command\": [\"mpirun\", 4]}",
        "{\"args\": {\"a\": 1}}",
        "{\"command\": null, \"args\": null}",
        "{\"command\": [\"mpirun\", \"-np\", \"4\"], \"env\": \"NP=4\"}",
        "{\"command\": [\"sh\", \"-c\", \"mpirun -np $NP\"], \"env\": [{\"name\": 1}, 3, "
        "{\"name\": \"NP\"}]}",
    };
    const size_t want[] = {0, 0, 0, 0, 1, 1};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *ct = json_loads(bad[i], 0, NULL);
        ck_assert_ptr_nonnull(ct);
        struct tg_launch l;
        tg_launch_init(&l);
        ck_assert_int_eq(tg_launch_parse_container(ct, TG_MPI_OPENMPI, &l), 0);
        ck_assert_msg(l.nruns == want[i], "case %zu: %zu runs", i, l.nruns);
        tg_launch_release(&l);
        json_decref(ct);
    }
}
END_TEST

START_TEST(launcher_forwards_api)
{
    json_t *ct = json_pack("{s:[s,s,s,s,s,s]}", "command", "mpirun", "-np", "2", "-x",
                           "FI_PROVIDER=efa", "./a");
    struct tg_launch l;
    tg_launch_init(&l);
    ck_assert_int_eq(tg_launch_parse_container(ct, TG_MPI_OPENMPI, &l), 0);
    ck_assert(tg_launch_runs_openmpi(&l));
    ck_assert(tg_launch_forwards(&l, "FI_PROVIDER"));
    ck_assert(!tg_launch_forwards(&l, "NCCL_DEBUG"));
    const struct tg_launch_fwd *f = tg_mpirun_find_fwd(&l.runs[0], "FI_PROVIDER");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->value, "efa");
    ck_assert(f->value_resolved);
    tg_launch_release(&l);
    json_decref(ct);

    /* Intel forwards the launcher environment unless -genvnone */
    ct = json_pack("{s:[s,s,s,s]}", "command", "mpirun", "-n", "2", "./a");
    tg_launch_init(&l);
    ck_assert_int_eq(tg_launch_parse_container(ct, TG_MPI_INTEL, &l), 0);
    ck_assert(!tg_launch_runs_openmpi(&l));
    ck_assert(tg_launch_forwards(&l, "NCCL_DEBUG"));
    tg_launch_release(&l);
    json_decref(ct);

    /* hydra -genvlist: only the listed names */
    ct = json_pack("{s:[s,s,s,s,s,s]}", "command", "mpiexec", "-genvlist", "FI_PROVIDER", "-n", "2",
                   "./a");
    tg_launch_init(&l);
    ck_assert_int_eq(tg_launch_parse_container(ct, TG_MPI_MPICH, &l), 0);
    ck_assert(!tg_mpirun_forwards_all(&l.runs[0]));
    ck_assert(tg_launch_forwards(&l, "FI_PROVIDER"));
    ck_assert(!tg_launch_forwards(&l, "NCCL_DEBUG"));
    tg_launch_release(&l);
    json_decref(ct);

    /* no launcher: nothing is forwarded */
    tg_launch_init(&l);
    ck_assert(!tg_launch_forwards(&l, "X"));
    ck_assert(!tg_launch_runs_openmpi(&l));
}
END_TEST

START_TEST(launcher_deep_nesting_is_cut)
{
    json_t *ct = json_pack("{s:[s,s,s]}", "command", "sh", "-c",
                           "sh -c \"sh -c 'sh -c \\\"sh -c mpirun\\\"'\"");
    struct tg_launch l;
    tg_launch_init(&l);
    ck_assert_int_eq(tg_launch_parse_container(ct, TG_MPI_OPENMPI, &l), 0);
    ck_assert_uint_eq(l.nruns, 0);
    ck_assert(l.script_error);
    tg_launch_release(&l);
    json_decref(ct);
}
END_TEST

START_TEST(launcher_garbage_never_crashes)
{
    const char *scripts[] = {"",
                             "\\",
                             "'",
                             "\"",
                             "$",
                             "${",
                             "$(",
                             "$((",
                             "`",
                             "<<",
                             ">",
                             "&&",
                             "mpirun -np",
                             "mpirun -np $((",
                             "mpirun -np $((1+",
                             "a=$(b",
                             "mpirun -H",
                             "mpirun --map-by ppr:",
                             "mpirun --map-by ppr:x:node",
                             "mpirun -np $((9223372036854775807 + 1))",
                             "mpirun -np $((-9223372036854775807 - 1 / -1))",
                             "mpirun -np 99999999999999999999",
                             "cat <<- E\n\tE\nmpirun -n 2"};
    for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
        struct tg_sh_vars vs;
        struct tg_launch l;
        tg_sh_vars_init(&vs);
        tg_launch_init(&l);
        ck_assert_int_eq(tg_launch_parse_script(scripts[i], &vs, TG_MPI_OPENMPI, 1, &l), 0);
        for (size_t k = 0; k < l.nruns; k++)
            ck_assert(!l.runs[k].np.set || !l.runs[k].np.resolved || l.runs[k].np.value >= 0);
        tg_launch_release(&l);
        tg_sh_vars_release(&vs);
    }
}
END_TEST

/* A valueFrom variable's reason names it, cut at 60 bytes, whether Kubernetes ($(NAME)) or the
 * shell ($NAME) reads it; a line that names a launcher only in its command is read too. */
START_TEST(launcher_valuefrom_reason_names_the_variable)
{
    static const size_t lens[] = {1, 59, 60, 61, 100};
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        char name[128], want[TG_LAUNCH_REASON_MAX];
        memset(name, 'N', lens[k]);
        name[lens[k]] = '\0';
        snprintf(want, sizeof(want), "$%.60s is set from valueFrom, unknown at admission", name);
        /* (Kubernetes reads names up to 76 bytes: longer is another reason, not this one) */
        for (int shell = lens[k] > 76; shell < 2; shell++) {
            json_t *c =
                json_pack("{s:[s,s,s,s], s:[{s:s, s:{}}]}", "command", shell ? "sh" : "mpirun",
                          shell ? "-c" : "-np", shell ? "mpirun -np $X ./a" : "$(X)",
                          shell ? "" : "./a", "env", "name", name, "valueFrom");
            ck_assert_ptr_nonnull(c);
            /* the variable is X in the line: rename it in the line */
            char line[160];
            snprintf(line, sizeof(line), shell ? "mpirun -np $%s ./a" : "$(%s)", name);
            json_array_set_new(json_object_get(c, "command"), 2, json_string(line));
            struct tg_launch l;
            tg_launch_init(&l);
            ck_assert_int_eq(tg_launch_parse_container(c, TG_MPI_OPENMPI, &l), 0);
            ck_assert_uint_eq(l.nruns, 1);
            ck_assert(l.runs[0].np.set && !l.runs[0].np.resolved);
            ck_assert_str_eq(l.runs[0].np.reason, want);
            tg_launch_release(&l);
            json_decref(c);
        }
    }
}
END_TEST

/* Whether the walk runs at all: a launcher named in args, in command, or only in a literal env
 * value the line expands, is read; a line that names none (even split by quotes) is not. */
START_TEST(launcher_read_only_when_a_launcher_is_named)
{
    static const struct {
        const char *json;
        size_t nruns, ntorch, nplans;
    } lines[] = {
        {"{\"command\": [\"sh\", \"-c\"], \"args\": [\"mpirun -np 4 ./a\"]}", 1, 0, 1},
        {"{\"command\": [\"mpirun\", \"-np\", \"2\", \"./a\"], \"args\": [\"x\"]}", 1, 0, 1},
        {"{\"command\": [\"sh\", \"-c\", \"$L -np 4 ./a\"], \"env\": [{\"name\": \"L\", "
         "\"value\": \"mpirun\"}]}",
         1, 0, 1},
        {"{\"command\": [\"$(L)\", \"--nnodes=2\", \"t.py\"], \"env\": [{\"name\": \"L\", "
         "\"value\": \"torchrun\"}]}",
         0, 1, 1},
        {"{\"command\": [\"python\", \"t.py\", \"--micro-batch-size\", \"2\"]}", 0, 0, 1},
        {"{\"command\": [\"sh\", \"-c\", \"mpi\\\"run\\\" -np 4 ./a\"]}", 0, 0, 0},
        {"{\"command\": [\"sleep\", \"infinity\"], \"env\": [{\"name\": \"A\", \"value\": "
         "\"b\"}]}",
         0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        json_error_t err;
        json_t *c = json_loads(lines[i].json, 0, &err);
        ck_assert_msg(c != NULL, "case %zu: %s", i, err.text);
        struct tg_launch l;
        tg_launch_init(&l);
        ck_assert_int_eq(tg_launch_parse_container(c, TG_MPI_OPENMPI, &l), 0);
        ck_assert_msg(l.nruns == lines[i].nruns && l.ntorch == lines[i].ntorch &&
                          l.nplans == lines[i].nplans,
                      "case %zu: %zu runs, %zu torch, %zu plans", i, l.nruns, l.ntorch, l.nplans);
        tg_launch_release(&l);
        json_decref(c);
    }
}
END_TEST

/* tg_launch_put cuts and terminates as snprintf(dst, size, "%.*s%.*s", ...) does, for every size
 * (1 included: snprintf then writes the terminator alone), offset and length. */
START_TEST(launcher_put_terminates_as_snprintf)
{
    static const char src[] = "abcdefgh";
    for (size_t size = 1; size <= 10; size++) {
        for (size_t n1 = 0; n1 <= 8; n1++) {
            for (size_t n2 = 0; n2 <= 8; n2++) {
                char dst[16], ref[16];
                memset(dst, 'X', sizeof(dst));
                memset(ref, 'X', sizeof(ref));
                size_t at = tg_launch_put(dst, size, 0, src, n1);
                at = tg_launch_put(dst, size, at, src, n2);
                int rl = snprintf(ref, size, "%.*s%.*s", (int)n1, src, (int)n2, src);
                ck_assert_int_ge(rl, 0);
                ck_assert_msg(memchr(dst, '\0', size) != NULL,
                              "size %zu n1 %zu n2 %zu: unterminated", size, n1, n2);
                ck_assert_str_eq(dst, ref);
                ck_assert_uint_eq(at, strlen(ref));
                ck_assert_mem_eq(dst + size, ref + size,
                                 sizeof(dst) - size); /* nothing past size */
            }
        }
    }
}
END_TEST

/* tg_launch_count reads what strtoll(s, &end, 10) with errno and *end checked reads, and sets
 * *out as strtoll does whenever s starts with a digit (around LLONG_MAX too). */
START_TEST(launcher_count_reads_as_strtoll)
{
    static const char *const in[] = {"0",
                                     "7",
                                     "0012",
                                     "4096",
                                     "9223372036854775806",
                                     "9223372036854775807",
                                     "9223372036854775808",
                                     "9223372036854775817",
                                     "92233720368547758070",
                                     "99999999999999999999999",
                                     "12a",
                                     "8 ",
                                     "0x10",
                                     "",
                                     "-1",
                                     "+1",
                                     " 1",
                                     "a1"};
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        const char *s = in[i];
        long long got = -42, want = -42;
        bool ok = tg_launch_count(s, &got);
        bool want_ok = false;
        if (s[0] >= '0' && s[0] <= '9') {
            char *end;
            errno = 0;
            want = strtoll(s, &end, 10);
            want_ok = errno == 0 && *end == '\0';
        }
        ck_assert_msg(ok == want_ok, "%s: %d, strtoll %d", s, ok, want_ok);
        ck_assert_msg(got == want, "%s: %lld, strtoll %lld", s, got, want);
    }
}
END_TEST

/* tg_launch_mentions (one pass, by first byte) against a strstr per string of the readers' rows as
 * they were written (torch.distributed.run and .launch included): each string alone, inside
 * other text, cut short by one byte, with its last byte changed, and random text over the
 * strings' own bytes (near misses). */
static bool mentions_by_strstr(const char *s)
{
    static const char *const rows[] = {"mpirun",
                                       "mpiexec",
                                       "orterun",
                                       "prterun",
                                       "horovodrun",
                                       "torchrun",
                                       "torch.distributed.run",
                                       "torch.distributed.launch",
                                       "parallel",
                                       "batch",
                                       "accumulat",
                                       "deepspeed",
                                       "accelerate",
                                       "torchrun",
                                       "torch.distributed",
                                       "trainer.",
                                       "nemo"};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (strstr(s, rows[i]))
            return true;
    return false;
}

START_TEST(launcher_mentions_agree_with_strstr)
{
    static const char *const words[] = {"mpirun",
                                        "mpiexec",
                                        "orterun",
                                        "prterun",
                                        "horovodrun",
                                        "torchrun",
                                        "parallel",
                                        "batch",
                                        "accumulat",
                                        "deepspeed",
                                        "accelerate",
                                        "trainer.",
                                        "nemo",
                                        "torch.distributed",
                                        "torch.distributed.launch",
                                        "t",
                                        "",
                                        "sleep infinity",
                                        "/opt/amazon/openmpi/lib:$LD_LIBRARY_PATH"};
    char buf[128];
    size_t checked = 0, found = 0;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        size_t n = strlen(words[i]);
        /* the word alone, and with text before and after it */
        static const char *const before[] = {"", "x ", "", "pp", "to"};
        static const char *const after[] = {"", "", " y", "tt", "ba"};
        for (size_t f = 0; f < sizeof(before) / sizeof(before[0]); f++) {
            for (int cut = 0; cut < 3; cut++) {
                char w[64];
                snprintf(w, sizeof(w), "%s", words[i]);
                if (cut == 1 && n > 0)
                    w[n - 1] = '\0'; /* one byte short */
                if (cut == 2 && n > 0)
                    w[n - 1] = w[n - 1] == 'z' ? 'y' : 'z'; /* last byte changed */
                snprintf(buf, sizeof(buf), "%s%s%s", before[f], w, after[f]);
                bool want = mentions_by_strstr(buf);
                ck_assert_msg(tg_launch_mentions(buf) == want, "\"%s\": want %d", buf, want);
                checked++;
                found += want;
            }
        }
    }
    /* random text over the bytes the strings are made of */
    static const char alphabet[] = "mpirunexcothvdbalsgfkmz. _";
    unsigned x = 12345;
    for (int t = 0; t < 20000; t++) {
        size_t len = (size_t)(t % 40);
        for (size_t k = 0; k < len; k++) {
            x = x * 1103515245u + 12345u;
            buf[k] = alphabet[(x >> 16) % (sizeof(alphabet) - 1)];
        }
        buf[len] = '\0';
        bool want = mentions_by_strstr(buf);
        ck_assert_msg(tg_launch_mentions(buf) == want, "\"%s\": want %d", buf, want);
        checked++;
        found += want;
    }
    ck_assert(found > 50 && found < checked); /* both answers were checked */
}
END_TEST

/* A script of n lines `mpirun -np K -x VK torchrun --nproc_per_node K t.py
 * --tensor-model-parallel-size K` (K = i + 1) and n lines `torchrun --nproc_per_node K t.py`, read
 * into l. */
static void read_many_runs(size_t n, struct tg_launch *l)
{
    char *script = malloc(n * 160 + 1);
    ck_assert_ptr_nonnull(script);
    size_t at = 0;
    for (size_t i = 0; i < n; i++)
        at += (size_t)sprintf(script + at,
                              "mpirun -np %zu -x V%zu torchrun --nproc_per_node %zu t.py "
                              "--tensor-model-parallel-size %zu\n",
                              i + 1, i + 1, i + 1, i + 1);
    for (size_t i = 0; i < n; i++)
        at += (size_t)sprintf(script + at, "torchrun --nproc_per_node %zu t.py\n", i + 1);
    struct tg_sh_vars vs;
    tg_sh_vars_init(&vs);
    tg_launch_init(l);
    ck_assert_int_eq(tg_launch_parse_script(script, &vs, TG_MPI_OPENMPI, 1, l), 0);
    tg_sh_vars_release(&vs);
    free(script);
}

/* The arrays of runs, torchruns and plans grow by doubling up to TG_LAUNCH_MAX_RUNS, from the
 * request's arena while it is active and from malloc otherwise: the same launches either way,
 * for every count around the powers of two and past the bound. */
START_TEST(launcher_arrays_grow_alike_with_and_without_the_arena)
{
    for (size_t n = 1; n <= TG_LAUNCH_MAX_RUNS + 3; n++) {
        for (int arena = 0; arena < 2; arena++) {
            struct tg_launch l;
            if (arena)
                tg_arena_begin();
            read_many_runs(n, &l);
            size_t kept = n < TG_LAUNCH_MAX_RUNS ? n : TG_LAUNCH_MAX_RUNS;
            ck_assert_uint_eq(l.nruns, kept);
            ck_assert_uint_eq(l.ntorch, kept);
            /* a plan for each line: the mpirun lines' first */
            ck_assert_uint_eq(l.nplans, 2 * n < TG_LAUNCH_MAX_RUNS ? 2 * n : TG_LAUNCH_MAX_RUNS);
            ck_assert(!arena || tg_arena_holds(l.runs));
            ck_assert(arena || !tg_arena_holds(l.runs));
            for (size_t i = 0; i < kept; i++) {
                char name[16];
                snprintf(name, sizeof(name), "V%zu", i + 1);
                ck_assert(l.runs[i].np.resolved);
                ck_assert_int_eq(l.runs[i].np.value, (long long)i + 1);
                ck_assert_int_eq(l.runs[i].rank_procs, (long long)i + 1);
                ck_assert_uint_eq(l.runs[i].nfwd, 1);
                ck_assert_str_eq(l.runs[i].fwd[0].name, name);
                ck_assert_int_eq(l.runs[i].line, (int)i + 1);
                ck_assert_int_eq(l.plans[i].tp.state, TG_PV_SET);
                ck_assert_int_eq(l.plans[i].tp.value, (long long)i + 1);
                ck_assert_uint_eq(l.plans[i].mpi_run, i);
                ck_assert(l.plans[i].mpi);
                ck_assert_str_eq(l.torch[i].nproc.text, name + 1);
            }
            tg_launch_release(&l);
            if (arena)
                tg_arena_end();
        }
    }
}
END_TEST

Suite *tg_test_launch_suite(void);
Suite *tg_test_launch_suite(void)
{
    Suite *s = suite_create("launch");
    TCase *tc = tcase_create("lines");
    tcase_add_loop_test(tc, launcher_case, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    suite_add_tcase(s, tc);
    TCase *api = tcase_create("api");
    tcase_add_test(api, launcher_bad_json_types_give_no_runs);
    tcase_add_test(api, launcher_forwards_api);
    tcase_add_test(api, launcher_deep_nesting_is_cut);
    tcase_add_test(api, launcher_garbage_never_crashes);
    tcase_add_test(api, launcher_valuefrom_reason_names_the_variable);
    tcase_add_test(api, launcher_read_only_when_a_launcher_is_named);
    tcase_add_test(api, launcher_put_terminates_as_snprintf);
    tcase_add_test(api, launcher_count_reads_as_strtoll);
    tcase_add_test(api, launcher_mentions_agree_with_strstr);
    tcase_add_test(api, launcher_arrays_grow_alike_with_and_without_the_arena);
    suite_add_tcase(s, api);
    return s;
}
