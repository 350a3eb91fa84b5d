/* instances.c -- EC2 instance types with EFA: interfaces, accelerators, GPUDirect RDMA and RDMA
 * read (docs/references.md#ref-efa).
 * EFA counts: aws/karpenter-provider-aws website/content/en/docs/reference/instance-types.md
 * (EC2 DescribeInstanceTypes EfaInfo.MaximumEfaInterfaces).
 * GPUDirect RDMA: aws/aws-ofi-nccl src/platform-aws.cpp (gdr_required).
 * RDMA read: the EC2 user guide, EFA "Supported instance types" (RDMA read column): yes for p4d,
 * p4de, p5 (p5.4xlarge included), p5e, p5en, p6, trn1, trn1n, trn2, g6, g6e; no for p3dn, g4dn, g5.
 * NeuronCores: trn1 has 2 per device; trn2 has 8 physical cores per device grouped by default two
 * to a logical core (LNC=2: 64 logical cores on trn2.48xlarge; NEURON_LOGICAL_NC_CONFIG=1: 128). */
#include <stdio.h>
#include <string.h>

#include "tg/instances.h"

#define Y TG_YES
#define N TG_NO

const struct tg_instance tg_instance_table[] = {
    /* name                  efa gpus neuron cores lnc gdr  rdma-read */
    {"p3dn.24xlarge", 1, 8, 0, 0, 0, false, N},
    {"p4d.24xlarge", 4, 8, 0, 0, 0, true, Y},
    {"p4de.24xlarge", 4, 8, 0, 0, 0, true, Y},
    {"p5.4xlarge", 1, 1, 0, 0, 0, false, Y},
    {"p5.48xlarge", 32, 8, 0, 0, 0, true, Y},
    {"p5e.48xlarge", 32, 8, 0, 0, 0, true, Y},
    {"p5en.48xlarge", 16, 8, 0, 0, 0, true, Y},
    {"p6-b200.48xlarge", 8, 8, 0, 0, 0, true, Y},
    {"p6-b300.48xlarge", 16, 8, 0, 0, 0, true, Y},
    {"trn1.2xlarge", 0, 0, 1, 2, 1, false, Y},
    {"trn1.32xlarge", 8, 0, 16, 2, 1, true, Y},
    {"trn1n.32xlarge", 16, 0, 16, 2, 1, true, Y},
    {"trn2.48xlarge", 16, 0, 16, 8, 2, true, Y},
    {"g4dn.8xlarge", 1, 1, 0, 0, 0, false, N},
    {"g4dn.12xlarge", 1, 4, 0, 0, 0, false, N},
    {"g4dn.16xlarge", 1, 1, 0, 0, 0, false, N},
    {"g4dn.metal", 1, 8, 0, 0, 0, false, N},
    {"g5.8xlarge", 1, 1, 0, 0, 0, false, N},
    {"g5.12xlarge", 1, 4, 0, 0, 0, false, N},
    {"g5.16xlarge", 1, 1, 0, 0, 0, false, N},
    {"g5.24xlarge", 1, 4, 0, 0, 0, false, N},
    {"g5.48xlarge", 1, 8, 0, 0, 0, false, N},
    {"g6.8xlarge", 1, 1, 0, 0, 0, false, Y},
    {"g6.12xlarge", 1, 4, 0, 0, 0, false, Y},
    {"g6.16xlarge", 1, 1, 0, 0, 0, false, Y},
    {"g6.24xlarge", 1, 4, 0, 0, 0, false, Y},
    {"g6.48xlarge", 1, 8, 0, 0, 0, false, Y},
    {"g6e.8xlarge", 1, 1, 0, 0, 0, false, Y},
    {"g6e.12xlarge", 1, 4, 0, 0, 0, false, Y},
    {"g6e.16xlarge", 1, 1, 0, 0, 0, false, Y},
    {"g6e.24xlarge", 2, 4, 0, 0, 0, false, Y},
    {"g6e.48xlarge", 4, 8, 0, 0, 0, false, Y},
    /* No EFA at these sizes (no EfaInfo): listed so that pinning them is known, not unknown. */
    {"g4dn.xlarge", 0, 1, 0, 0, 0, false, N},
    {"g4dn.2xlarge", 0, 1, 0, 0, 0, false, N},
    {"g4dn.4xlarge", 0, 1, 0, 0, 0, false, N},
    {"g5.xlarge", 0, 1, 0, 0, 0, false, N},
    {"g5.2xlarge", 0, 1, 0, 0, 0, false, N},
    {"g5.4xlarge", 0, 1, 0, 0, 0, false, N},
    {"g6.xlarge", 0, 1, 0, 0, 0, false, N},
    {"g6.2xlarge", 0, 1, 0, 0, 0, false, N},
    {"g6.4xlarge", 0, 1, 0, 0, 0, false, N},
    {"g6e.xlarge", 0, 1, 0, 0, 0, false, N},
    {"g6e.2xlarge", 0, 1, 0, 0, 0, false, N},
    {"g6e.4xlarge", 0, 1, 0, 0, 0, false, N},
};
const size_t tg_instance_table_len = sizeof(tg_instance_table) / sizeof(tg_instance_table[0]);

#undef Y
#undef N

const char *tg_instance_family(const char *type, char *buf, size_t len)
{
    const char *dot = strchr(type, '.');
    size_t n = dot ? (size_t)(dot - type) : strlen(type);
    if (len) { /* cut to fit, as snprintf "%.*s" */
        n = n < len - 1 ? n : len - 1;
        memcpy(buf, type, n);
        buf[n] = '\0';
    }
    return buf;
}

const char *tg_instance_size(const char *type)
{
    const char *dot = strchr(type, '.');
    return dot ? dot + 1 : "";
}

const struct tg_instance *tg_instance_find(const struct tg_instance *table, size_t n,
                                           const char *name)
{
    for (size_t i = 0; name && i < n; i++) {
        if (!strcmp(table[i].name, name))
            return &table[i];
    }
    return NULL;
}

bool tg_instance_family_known(const struct tg_instance *table, size_t n, const char *family)
{
    size_t fl = strlen(family);
    for (size_t i = 0; i < n; i++) {
        if (!strncmp(table[i].name, family, fl) && table[i].name[fl] == '.')
            return true;
    }
    return false;
}

int tg_instance_logical_cores(const struct tg_instance *in, int lnc_env)
{
    int lnc = lnc_env > 0 ? lnc_env : (in->lnc > 0 ? in->lnc : 1);
    if (in->neuron <= 0 || in->neuron_cores <= 0)
        return 0;
    return in->neuron_cores / lnc > 0 ? in->neuron_cores / lnc : 1;
}
