/* test_plan_fix.c -- the fixes plan.world-size suggests (include/tg/plan_fix.h): every suggestion,
 * over a grid of worlds and sizes, is a plan that divides; and the nearest useful TP and EP. */
#include <check.h>

#include "tg/plan_fix.h"

/* Worlds as they come: whole nodes of 8 or 4 GPUs, and mpirun -np counts with no node known. */
static const struct {
    long long world, node, gpus;
} worlds[] = {
    {8, 8, 8},   {16, 8, 8}, {24, 8, 8}, {32, 8, 8}, {48, 8, 8}, {64, 8, 8},  {72, 8, 8},
    {128, 8, 8}, {4, 4, 4},  {12, 4, 4}, {20, 4, 4}, {6, 0, 0},  {12, 0, 0},  {48, 0, 0},
    {7, 0, 0},   {36, 0, 8}, {96, 8, 8}, {1, 1, 1},  {2, 0, 0},  {640, 8, 8},
};

START_TEST(every_world_suggestion_divides)
{
    size_t checked = 0;
    for (size_t w = 0; w < sizeof(worlds) / sizeof(worlds[0]); w++) {
        for (long long tp = 1; tp <= 16; tp++) {
            for (long long pp = 1; pp <= 16; pp++) {
                for (long long cp = 1; cp <= 4; cp++) {
                    struct tg_plan_fix_in in = {
                        worlds[w].world, worlds[w].node, worlds[w].gpus, tp, pp, cp};
                    struct tg_plan_fix f;
                    long long m = tp * pp * cp;
                    if (in.world % m == 0)
                        continue;
                    tg_plan_fix_world(&in, &f);
                    checked++;
                    ck_assert_msg(f.world > in.world && f.world % m == 0,
                                  "world %lld TP %lld PP %lld CP %lld: world %lld", in.world, tp,
                                  pp, cp, f.world);
                    if (in.node > 0)
                        ck_assert_msg(f.world % in.node == 0,
                                      "world %lld is not whole nodes of %lld", f.world, in.node);
                    if (f.pp) {
                        ck_assert(f.pp < pp && pp % f.pp == 0);
                        ck_assert(in.world % (tp * f.pp * cp) == 0);
                    }
                    for (int i = 0; i < 2; i++) {
                        if (!f.tp[i])
                            continue;
                        ck_assert_msg(in.world % (f.tp[i] * pp * cp) == 0,
                                      "world %lld: TP %lld x PP %lld x CP %lld does not divide",
                                      in.world, f.tp[i], pp, cp);
                        ck_assert(f.tp[i] != tp);
                        if (in.gpus > 0)
                            ck_assert(f.tp[i] <= in.gpus);
                    }
                    if (f.tp[1])
                        ck_assert(f.tp[0] < f.tp[1] && tp - f.tp[0] == f.tp[1] - tp);
                    /* TP 1 only when no TP of 2 or more fits */
                    if (f.tp[0] == 1) {
                        long long lim = in.gpus > 0 ? in.gpus : in.world;
                        for (long long v = 2; v <= lim; v++)
                            ck_assert_msg(
                                v == tp || in.world % (v * pp * cp) != 0,
                                "world %lld PP %lld CP %lld: TP 1 suggested, TP %lld fits",
                                in.world, pp, cp, v);
                    }
                }
            }
        }
    }
    ck_assert_uint_gt(checked, 1000);
}
END_TEST

START_TEST(tp_3_on_16_ranks_suggests_tp_2_or_4)
{
    struct tg_plan_fix_in in = {.world = 16, .node = 8, .gpus = 8, .tp = 3, .pp = 1, .cp = 1};
    struct tg_plan_fix f;
    tg_plan_fix_world(&in, &f);
    ck_assert_int_eq(f.tp[0], 2);
    ck_assert_int_eq(f.tp[1], 4);
    ck_assert_int_eq(f.world, 24); /* 3 nodes: 3 and 8 both divide it */
    ck_assert_int_eq(f.pp, 0);
    /* the worked example keeps its PP 2 and 64 ranks */
    in = (struct tg_plan_fix_in){.world = 48, .node = 8, .gpus = 8, .tp = 8, .pp = 4, .cp = 1};
    tg_plan_fix_world(&in, &f);
    ck_assert_int_eq(f.world, 64);
    ck_assert_int_eq(f.pp, 2);
    /* TP 16 on 8-GPU nodes: the TP suggested stays inside one node */
    in = (struct tg_plan_fix_in){.world = 24, .node = 8, .gpus = 8, .tp = 16, .pp = 1, .cp = 1};
    tg_plan_fix_world(&in, &f);
    ck_assert_int_eq(f.tp[0], 8);
    ck_assert_int_eq(f.tp[1], 0);
}
END_TEST

START_TEST(every_expert_suggestion_divides)
{
    static const enum tg_expert_rule rules[] = {TG_EXPERT_RULE_FOLDED, TG_EXPERT_RULE_BEFORE,
                                                TG_EXPERT_RULE_BOTH};
    size_t checked = 0;
    for (size_t r = 0; r < 3; r++) {
        for (long long world = 0; world <= 64; world += 8) {
            for (long long experts = 1; experts <= 72; experts++) {
                for (long long ep = 2; ep <= 16; ep++) {
                    struct tg_plan_expert_in in = {.experts = experts,
                                                   .ep = ep,
                                                   .world = world,
                                                   .tp = 2,
                                                   .pp = 1,
                                                   .cp = 1,
                                                   .etp = 1,
                                                   .rule = rules[r]};
                    struct tg_plan_expert_fix f;
                    if (experts % ep == 0)
                        continue;
                    tg_plan_fix_experts(&in, &f);
                    checked++;
                    for (int i = 0; i < 2; i++) {
                        if (!f.ep[i])
                            continue;
                        ck_assert_msg(
                            experts % f.ep[i] == 0 && tg_plan_expert_grid_ok(&in, f.ep[i]),
                            "%lld experts, world %lld: EP %lld suggested", experts, world, f.ep[i]);
                    }
                    ck_assert(f.experts[1] > experts && f.experts[1] % ep == 0);
                    ck_assert(f.experts[0] == 0 ||
                              (f.experts[0] < experts && f.experts[0] % ep == 0));
                    ck_assert(f.experts[0] != 0 || experts < ep);
                }
            }
        }
    }
    ck_assert_uint_gt(checked, 1000);
}
END_TEST

START_TEST(six_experts_on_ep_4)
{
    /* 8 ranks of TP 1: EP 3 and EP 6 divide 6 but not the 8 ranks; EP 2 does */
    struct tg_plan_expert_in in = {.experts = 6,
                                   .ep = 4,
                                   .world = 8,
                                   .tp = 1,
                                   .pp = 1,
                                   .cp = 1,
                                   .etp = 1,
                                   .rule = TG_EXPERT_RULE_BOTH};
    struct tg_plan_expert_fix f;
    tg_plan_fix_experts(&in, &f);
    ck_assert_int_eq(f.ep[0], 2);
    ck_assert_int_eq(f.ep[1], 0);
    ck_assert_int_eq(f.experts[0], 4);
    ck_assert_int_eq(f.experts[1], 8);
    /* world not known: the divisors nearest EP 4 */
    in.world = 0;
    tg_plan_fix_experts(&in, &f);
    ck_assert_int_eq(f.ep[0], 3);
    ck_assert_int_eq(f.ep[1], 0);
    /* the grid rules themselves: before folding DP % EP, after it ETP x EP x PP | world */
    struct tg_plan_expert_in g = {
        .world = 8, .tp = 1, .pp = 1, .cp = 8, .etp = 1, .rule = TG_EXPERT_RULE_FOLDED};
    ck_assert(tg_plan_expert_grid_ok(&g, 8));
    g.rule = TG_EXPERT_RULE_BEFORE;
    ck_assert(!tg_plan_expert_grid_ok(&g, 8));
    g.rule = TG_EXPERT_RULE_BOTH;
    ck_assert(!tg_plan_expert_grid_ok(&g, 8));
}
END_TEST

START_TEST(overflowing_sizes_give_no_suggestion)
{
    struct tg_plan_fix_in in = {.world = 48, .tp = 1LL << 40, .pp = 1LL << 40, .cp = 1};
    struct tg_plan_fix f;
    tg_plan_fix_world(&in, &f);
    ck_assert_int_eq(f.world, 0);
    ck_assert_int_eq(f.pp, 0);
    in = (struct tg_plan_fix_in){.world = 0, .tp = 3, .pp = 1, .cp = 1};
    tg_plan_fix_world(&in, &f);
    ck_assert_int_eq(f.world, 0);
    ck_assert_int_eq(f.tp[0], 0);
}
END_TEST

Suite *tg_test_plan_fix_suite(void);
Suite *tg_test_plan_fix_suite(void)
{
    Suite *s = suite_create("plan_fix");
    TCase *tc = tcase_create("fix");
    tcase_add_test(tc, every_world_suggestion_divides);
    tcase_add_test(tc, tp_3_on_16_ranks_suggests_tp_2_or_4);
    tcase_add_test(tc, every_expert_suggestion_divides);
    tcase_add_test(tc, six_experts_on_ep_4);
    tcase_add_test(tc, overflowing_sizes_give_no_suggestion);
    suite_add_tcase(s, tc);
    return s;
}
