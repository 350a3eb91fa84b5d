/* instance_labels.c -- Karpenter's labels of the built-in instance types.
 * Values: aws/karpenter-provider-aws website/content/en/docs/reference/instance-types.md @1d927085
 * (the "Labels" table of each type); how Karpenter computes them: pkg/providers/instancetype/
 * types.go computeRequirements (gpu-name and gpu-manufacturer only for a type with one GPU kind,
 * accelerator-name/-manufacturer/-count for Neuron devices, so Trainium has no gpu-* label). */
#include <string.h>

#include "tg/instance_labels.h"

static const struct tg_instance_labels rows[] = {
    /* name               vcpus memory MiB  gpu name  accelerator  arch */
    {"p3dn.24xlarge", 96, 786432, "v100", NULL, "amd64"},
    {"p4d.24xlarge", 96, 1179648, "a100", NULL, "amd64"},
    {"p4de.24xlarge", 96, 1179648, "a100", NULL, "amd64"},
    {"p5.4xlarge", 16, 262144, "h100", NULL, "amd64"},
    {"p5.48xlarge", 192, 2097152, "h100", NULL, "amd64"},
    {"p5e.48xlarge", 192, 2097152, "h200", NULL, "amd64"},
    {"p5en.48xlarge", 192, 2097152, "h200", NULL, "amd64"},
    {"p6-b200.48xlarge", 192, 2097152, "b200", NULL, "amd64"},
    {"p6-b300.48xlarge", 192, 4194304, "b300", NULL, "amd64"},
    {"trn1.2xlarge", 8, 32768, NULL, "trainium", "amd64"},
    {"trn1.32xlarge", 128, 524288, NULL, "trainium", "amd64"},
    {"trn1n.32xlarge", 128, 524288, NULL, "trainium", "amd64"},
    {"trn2.48xlarge", 192, 2097152, NULL, "trainium2", "amd64"},
    {"g4dn.8xlarge", 32, 131072, "t4", NULL, "amd64"},
    {"g4dn.12xlarge", 48, 196608, "t4", NULL, "amd64"},
    {"g4dn.16xlarge", 64, 262144, "t4", NULL, "amd64"},
    {"g4dn.metal", 96, 393216, "t4", NULL, "amd64"},
    {"g5.8xlarge", 32, 131072, "a10g", NULL, "amd64"},
    {"g5.12xlarge", 48, 196608, "a10g", NULL, "amd64"},
    {"g5.16xlarge", 64, 262144, "a10g", NULL, "amd64"},
    {"g5.24xlarge", 96, 393216, "a10g", NULL, "amd64"},
    {"g5.48xlarge", 192, 786432, "a10g", NULL, "amd64"},
    {"g6.8xlarge", 32, 131072, "l4", NULL, "amd64"},
    {"g6.12xlarge", 48, 196608, "l4", NULL, "amd64"},
    {"g6.16xlarge", 64, 262144, "l4", NULL, "amd64"},
    {"g6.24xlarge", 96, 393216, "l4", NULL, "amd64"},
    {"g6.48xlarge", 192, 786432, "l4", NULL, "amd64"},
    {"g6e.8xlarge", 32, 262144, "l40s", NULL, "amd64"},
    {"g6e.12xlarge", 48, 393216, "l40s", NULL, "amd64"},
    {"g6e.16xlarge", 64, 524288, "l40s", NULL, "amd64"},
    {"g6e.24xlarge", 96, 786432, "l40s", NULL, "amd64"},
    {"g6e.48xlarge", 192, 1572864, "l40s", NULL, "amd64"},
    {"g5.xlarge", 4, 16384, "a10g", NULL, "amd64"},
    {"g5.2xlarge", 8, 32768, "a10g", NULL, "amd64"},
    {"g5.4xlarge", 16, 65536, "a10g", NULL, "amd64"},
    {"g6.xlarge", 4, 16384, "l4", NULL, "amd64"},
    {"g6.2xlarge", 8, 32768, "l4", NULL, "amd64"},
    {"g6.4xlarge", 16, 65536, "l4", NULL, "amd64"},
    {"g6e.xlarge", 4, 32768, "l40s", NULL, "amd64"},
    {"g6e.2xlarge", 8, 65536, "l40s", NULL, "amd64"},
    {"g6e.4xlarge", 16, 131072, "l40s", NULL, "amd64"},
};

const struct tg_instance_labels *tg_instance_labels_find(const char *type)
{
    for (size_t i = 0; type && i < sizeof(rows) / sizeof(rows[0]); i++) {
        if (!strcmp(rows[i].name, type))
            return &rows[i];
    }
    return NULL;
}
