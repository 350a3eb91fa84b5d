/* registry.h -- the validator and mutator tables: which rule family and which mutator runs on
 * which kinds and operations. The rules themselves are declared in the catalogue
 * (src/catalogue/rules.def); each family's code is one file under src/rules/. */
#ifndef TG_REGISTRY_H
#define TG_REGISTRY_H

#include <stddef.h>

#include "tg/eval.h"

/* A validator or mutator family: runs every rule of the family on ev. kinds is a mask of
 * TG_KIND_BIT(); ops a mask of enum tg_op. Returns 0, or a negative errno when it could not
 * decide (the request then gets an error, never a silent allow). */
struct tg_validator {
    const char *name;
    unsigned kinds;
    unsigned ops;
    int (*run)(struct tg_eval *ev);
};

extern const struct tg_validator tg_validators[];
extern const size_t tg_validator_count;
extern const struct tg_validator tg_mutators[];
extern const size_t tg_mutator_count;

/* Family entry points, one per file: src/rules/<family>.c, src/mutators/<name>.c. */
int tg_rules_efa(struct tg_eval *ev);
int tg_rules_zone(struct tg_eval *ev);
int tg_rules_mpi(struct tg_eval *ev);
int tg_rules_gang(struct tg_eval *ev);
int tg_rules_nodeset(struct tg_eval *ev);
int tg_rules_torch(struct tg_eval *ev);
int tg_rules_karpenter(struct tg_eval *ev);
int tg_rules_slurm(struct tg_eval *ev);
int tg_mutate_efa_env(struct tg_eval *ev);

#endif
