/* instances.h -- EC2 instance types with EFA: the built-in table (docs/references.md#ref-efa),
 * and the lookups over a table (built-in, or as the policy extends it) that the rules share.
 *
 * Contract: a table is an array of struct tg_instance; nothing here allocates but
 * tg_instance_copy_builtin(). Family and size come from the type name ("p5.48xlarge": family p5,
 * size 48xlarge), as Karpenter derives its karpenter.k8s.aws/instance-family and -size labels. */
#ifndef TG_INSTANCES_H
#define TG_INSTANCES_H

#include <stdbool.h>
#include <stddef.h>

/* A fact the table may not know. */
enum tg_tristate {
    TG_UNKNOWN = -1,
    TG_NO = 0,
    TG_YES = 1,
};

struct tg_instance {
    char *name;            /* "p5.48xlarge" */
    int efa;               /* maximum EFA interfaces; 0 = no EFA */
    int gpus;              /* nvidia.com/gpu */
    int neuron;            /* aws.amazon.com/neuron devices */
    int neuron_cores;      /* physical NeuronCores per device (trn1: 2, trn2: 8) */
    int lnc;               /* default logical NeuronCore size (trn2: 2, else 1); 0 counts as 1 */
    bool gdr;              /* GPUDirect RDMA over EFA (aws-ofi-nccl gdr_required) */
    signed char rdma_read; /* enum tg_tristate: the EFA device supports RDMA read */
};

/* The built-in table, static storage (names are string literals; never freed). */
extern const struct tg_instance tg_instance_table[];
extern const size_t tg_instance_table_len;

/* The family of an instance type name: "p5.48xlarge" -> "p5" (written into buf). */
const char *tg_instance_family(const char *type, char *buf, size_t len);
/* The size: "p5.48xlarge" -> "48xlarge" ("" when the name has no dot). Points into type. */
const char *tg_instance_size(const char *type);
/* Row of table by exact name, or NULL. */
const struct tg_instance *tg_instance_find(const struct tg_instance *table, size_t n,
                                           const char *name);
/* Does the table hold any type of this family? */
bool tg_instance_family_known(const struct tg_instance *table, size_t n, const char *family);
/* Logical NeuronCores per device of row in, with NEURON_LOGICAL_NC_CONFIG = lnc_env (0: not set,
 * the instance's default applies). 0 when the row has no Neuron devices. */
int tg_instance_logical_cores(const struct tg_instance *in, int lnc_env);

#endif
