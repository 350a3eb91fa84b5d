/* instances.c -- EC2 instance types with EFA: interfaces, accelerators, GPUDirect RDMA.
 * EFA counts: aws/karpenter-provider-aws website/content/en/docs/reference/instance-types.md
 * (EC2 DescribeInstanceTypes EfaInfo.MaximumEfaInterfaces), via api-facts section 5.3.
 * GPUDirect RDMA types: SPEC section 9 (api-facts 5.5, aws/aws-ofi-nccl src/platform-aws.cpp).
 * NeuronCores per device: Trainium (trn1) has 2, Trainium2 (trn2) 8 physical cores per chip. */
#include <stdio.h>
#include <string.h>

#include "tg/instances.h"

const struct tg_instance_row tg_instance_table[] = {
    /* name               efa gpus neuron cores gdr */
    {"p3dn.24xlarge", 1, 8, 0, 0, false},
    {"p4d.24xlarge", 4, 8, 0, 0, true},
    {"p4de.24xlarge", 4, 8, 0, 0, true},
    {"p5.4xlarge", 1, 1, 0, 0, false},
    {"p5.48xlarge", 32, 8, 0, 0, true},
    {"p5e.48xlarge", 32, 8, 0, 0, true},
    {"p5en.48xlarge", 16, 8, 0, 0, true},
    {"p6-b200.48xlarge", 8, 8, 0, 0, true},
    {"p6-b300.48xlarge", 16, 8, 0, 0, true},
    {"trn1.2xlarge", 0, 0, 1, 2, false},
    {"trn1.32xlarge", 8, 0, 16, 2, true},
    {"trn1n.32xlarge", 16, 0, 16, 2, true},
    {"trn2.48xlarge", 16, 0, 16, 8, true},
    {"g4dn.8xlarge", 1, 1, 0, 0, false},
    {"g4dn.12xlarge", 1, 4, 0, 0, false},
    {"g4dn.16xlarge", 1, 1, 0, 0, false},
    {"g4dn.metal", 1, 8, 0, 0, false},
    {"g5.8xlarge", 1, 1, 0, 0, false},
    {"g5.12xlarge", 1, 4, 0, 0, false},
    {"g5.16xlarge", 1, 1, 0, 0, false},
    {"g5.24xlarge", 1, 4, 0, 0, false},
    {"g5.48xlarge", 1, 8, 0, 0, false},
    {"g6.8xlarge", 1, 1, 0, 0, false},
    {"g6.12xlarge", 1, 4, 0, 0, false},
    {"g6.16xlarge", 1, 1, 0, 0, false},
    {"g6.24xlarge", 1, 4, 0, 0, false},
    {"g6.48xlarge", 1, 8, 0, 0, false},
    {"g6e.8xlarge", 1, 1, 0, 0, false},
    {"g6e.12xlarge", 1, 4, 0, 0, false},
    {"g6e.16xlarge", 1, 1, 0, 0, false},
    {"g6e.24xlarge", 2, 4, 0, 0, false},
    {"g6e.48xlarge", 4, 8, 0, 0, false},
    /* No EFA at these sizes (no EfaInfo): listed so that pinning them is known, not unknown. */
    {"g5.xlarge", 0, 1, 0, 0, false},
    {"g5.2xlarge", 0, 1, 0, 0, false},
    {"g5.4xlarge", 0, 1, 0, 0, false},
    {"g6.xlarge", 0, 1, 0, 0, false},
    {"g6.2xlarge", 0, 1, 0, 0, false},
    {"g6.4xlarge", 0, 1, 0, 0, false},
    {"g6e.xlarge", 0, 1, 0, 0, false},
    {"g6e.2xlarge", 0, 1, 0, 0, false},
    {"g6e.4xlarge", 0, 1, 0, 0, false},
};
const size_t tg_instance_table_len = sizeof(tg_instance_table) / sizeof(tg_instance_table[0]);

const char *tg_instance_family(const char *type, char *buf, size_t len)
{
    const char *dot = strchr(type, '.');
    size_t n = dot ? (size_t)(dot - type) : strlen(type);
    snprintf(buf, len, "%.*s", (int)n, type);
    return buf;
}
