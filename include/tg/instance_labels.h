/* instance_labels.h -- the Karpenter node labels of the built-in instance types that their names
 * and the instance table do not give (CPUs, memory, accelerator names, architecture), so that a
 * NodePool's requirements on them can be evaluated against the table (karpenter.efa-zones). */
#ifndef TG_INSTANCE_LABELS_H
#define TG_INSTANCE_LABELS_H

struct tg_instance_labels {
    const char *name;     /* "p5.48xlarge" */
    int vcpus;            /* karpenter.k8s.aws/instance-cpu */
    long memory_mib;      /* karpenter.k8s.aws/instance-memory (MiB) */
    const char *gpu_name; /* karpenter.k8s.aws/instance-gpu-name, NULL: no GPU */
    const char
        *accelerator_name; /* karpenter.k8s.aws/instance-accelerator-name (Neuron), or NULL */
    const char *arch;      /* kubernetes.io/arch */
};

/* The labels of a built-in instance type, or NULL for a type the table does not know (one a
 * policy added): its labels beyond those derived from the name and the policy's counts are then
 * unknown. */
const struct tg_instance_labels *tg_instance_labels_find(const char *type);

#endif
