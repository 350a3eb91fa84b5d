/* plan_fix.h -- the fixes plan.world-size suggests (src/rules/plan.c): plans that really run.
 *
 * Contract:
 * - Pure arithmetic on sizes above 0; nothing is allocated. A suggestion of 0 means none.
 * - Every world, TP and PP suggested makes TP x PP x CP divide the world (the other sizes as
 *   given); every EP suggested divides the expert count and keeps the expert grid of the rule
 *   the version runs; every expert count suggested is a multiple of EP.
 * - Products that would overflow a long long give no suggestion. */
#ifndef TG_PLAN_FIX_H
#define TG_PLAN_FIX_H

#include <stdbool.h>

/* The sizes of a plan whose TP x PP x CP does not divide the world. */
struct tg_plan_fix_in {
    long long world;
    long long node; /* processes per node (the step the world grows by), 0: not known */
    long long gpus; /* GPUs of one node (the largest TP kept inside NVLink), 0: not known */
    long long tp, pp, cp;
};

struct tg_plan_fix {
    long long world; /* the next larger world, in whole nodes, that TP x PP x CP divides */
    long long pp;    /* the largest divisor of PP (layers still split evenly) that fits */
    long long tp[2]; /* the TP nearest the given one that fits (two on a tie, the smaller
                        first), at most gpus; TP 1 only when no larger TP fits */
};

void tg_plan_fix_world(const struct tg_plan_fix_in *in, struct tg_plan_fix *out);

/* Which expert rule the version runs (docs/references.md#ref-plan-megatron-experts). */
enum tg_expert_rule {
    TG_EXPERT_RULE_FOLDED, /* core 0.10+: world % (ETP x EP x PP) == 0 */
    TG_EXPERT_RULE_BEFORE, /* before folding: DP % EP == 0 */
    TG_EXPERT_RULE_BOTH,   /* version not known: a suggestion must hold under both */
};

/* An expert count that EP does not divide. world 0: not known (the grid is then not checked). */
struct tg_plan_expert_in {
    long long experts, ep;
    long long world, tp, pp, cp, etp;
    enum tg_expert_rule rule;
};

struct tg_plan_expert_fix {
    long long ep[2];      /* divisors of the expert count nearest EP that keep the grid (two on
                             a tie, the smaller first); EP 1 only when no larger one does */
    long long experts[2]; /* the multiples of EP nearest the count: below it (0 when the count
                             is below EP) and above it */
};

void tg_plan_fix_experts(const struct tg_plan_expert_in *in, struct tg_plan_expert_fix *out);

/* Does the expert grid hold for ep under in's sizes and rule? True when the world is not known. */
bool tg_plan_expert_grid_ok(const struct tg_plan_expert_in *in, long long ep);

/* a x b x c into *out; false when a product does not fit a long long (counts read from a launch
 * line or a config can be that large, and a wrapped product is no plan, nor a divisor). */
bool tg_plan_mul3(long long a, long long b, long long c, long long *out);

#endif
