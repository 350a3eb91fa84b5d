/* instances.h -- the built-in EC2 instance table (api-facts section 5.3). */
#ifndef TG_INSTANCES_H
#define TG_INSTANCES_H

#include <stdbool.h>
#include <stddef.h>

struct tg_instance_row {
    const char *name;
    int efa;
    int gpus;
    int neuron;
    int neuron_cores;
    bool gdr;
};

extern const struct tg_instance_row tg_instance_table[];
extern const size_t tg_instance_table_len;

/* The family of an instance type name: "p5.48xlarge" -> "p5" (written into buf). */
const char *tg_instance_family(const char *type, char *buf, size_t len);

#endif
