/* plan_fix.c -- the fixes plan.world-size suggests (include/tg/plan_fix.h). */
#include "tg/plan_fix.h"

#include <stddef.h>

/* Search bound: no world, TP or expert count of a real plan comes near it. */
#define FIX_SEARCH_MAX 65536

bool tg_plan_mul3(long long a, long long b, long long c, long long *out)
{
    long long ab;
    return !__builtin_mul_overflow(a, b, &ab) && !__builtin_mul_overflow(ab, c, out);
}

/* A size product that fits and is a size (at least 1). */
static bool mul3(long long a, long long b, long long c, long long *out)
{
    return tg_plan_mul3(a, b, c, out) && *out > 0;
}

static long long gcd(long long a, long long b)
{
    while (b) {
        long long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Keeps the (at most two) candidates nearest want: best[] holds them, the smaller first. */
static void nearest(long long want, long long v, long long best[2])
{
    long long d = v > want ? v - want : want - v;
    long long bd = best[0] > want ? best[0] - want : want - best[0];
    if (best[0] == 0 || d < bd) {
        best[0] = v;
        best[1] = 0;
    } else if (d == bd && v != best[0] && best[1] == 0) {
        best[1] = v > best[0] ? v : best[0];
        best[0] = v > best[0] ? best[0] : v;
    }
}

static bool fits(long long world, long long tp, long long pp, long long cp)
{
    long long m;
    return mul3(tp, pp, cp, &m) && world % m == 0;
}

void tg_plan_fix_world(const struct tg_plan_fix_in *in, struct tg_plan_fix *out)
{
    long long m, step, up;
    *out = (struct tg_plan_fix){0};
    if (in->world <= 0 || in->tp <= 0 || in->pp <= 0 || in->cp <= 0 ||
        !mul3(in->tp, in->pp, in->cp, &m))
        return;
    /* the next world in whole nodes: a multiple of both the model size and the node */
    step = m;
    if (in->node > 0 && __builtin_mul_overflow(m / gcd(m, in->node), in->node, &step))
        step = 0;
    if (step > 0 && !__builtin_mul_overflow(in->world / step + 1, step, &up))
        out->world = up;
    for (long long v = in->pp - 1; v >= 1; v--) {
        if (in->pp % v == 0 && fits(in->world, in->tp, v, in->cp)) {
            out->pp = v;
            break;
        }
    }
    long long limit = in->gpus > 0 ? in->gpus : in->world;
    if (limit > FIX_SEARCH_MAX)
        limit = FIX_SEARCH_MAX;
    for (long long v = 2; v <= limit; v++) {
        if (v != in->tp && fits(in->world, v, in->pp, in->cp))
            nearest(in->tp, v, out->tp);
    }
    if (out->tp[0] == 0 && in->tp != 1 && fits(in->world, 1, in->pp, in->cp))
        out->tp[0] = 1;
}

bool tg_plan_expert_grid_ok(const struct tg_plan_expert_in *in, long long ep)
{
    long long grid, m;
    if (in->world <= 0)
        return true;
    bool folded = mul3(in->etp, ep, in->pp, &grid) && in->world % grid == 0;
    bool before =
        mul3(in->tp, in->pp, in->cp, &m) && in->world % m == 0 && (in->world / m) % ep == 0;
    switch (in->rule) {
    case TG_EXPERT_RULE_FOLDED:
        return folded;
    case TG_EXPERT_RULE_BEFORE:
        return before;
    default:
        return folded && before;
    }
}

void tg_plan_fix_experts(const struct tg_plan_expert_in *in, struct tg_plan_expert_fix *out)
{
    *out = (struct tg_plan_expert_fix){0};
    if (in->experts <= 0 || in->ep <= 0)
        return;
    long long limit = in->experts > FIX_SEARCH_MAX ? FIX_SEARCH_MAX : in->experts;
    for (long long v = 2; v <= limit; v++) {
        if (v != in->ep && in->experts % v == 0 && tg_plan_expert_grid_ok(in, v))
            nearest(in->ep, v, out->ep);
    }
    if (out->ep[0] == 0 && in->ep != 1 && tg_plan_expert_grid_ok(in, 1))
        out->ep[0] = 1;
    long long lo = in->experts / in->ep * in->ep;
    out->experts[0] = lo;
    if (__builtin_add_overflow(lo, in->ep, &out->experts[1]))
        out->experts[1] = 0;
}
