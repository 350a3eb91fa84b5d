/* plan.c -- the plan.* rules (SPEC 11 "The parallel plan"): plan.world-size, plan.global-batch
 * and plan.tp-across-nodes over the plans read from each container's launch line
 * (include/tg/launch_plan.h), with the world from include/tg/plan_world.h; and the plan per role
 * and what is unresolved, for `check --explain` and the report.
 *
 * Arithmetic (docs/references.md#ref-plan; the sources win over SPEC 11 where they differ):
 * - Megatron: world % (TP x PP x CP) == 0 (CP includes Megatron-DeepSpeed's sequence parallel
 *   size); DP = world / (TP x PP x CP). Megatron-DeepSpeed (and Megatron-LM before core 0.9)
 *   first clamp TP to the world and PP to world / TP.
 * - Experts: from core 0.10 (MoE parallel folding) ETP x EP x PP must divide the world (ETP
 *   defaults to TP); before it DP % EP == 0 (DeepSpeed-MoE keeps that rule). A line with
 *   --expert-tensor-parallel-size runs 0.10 or later; an image tag core_r0.N tells the version;
 *   otherwise only a plan that fails under both rules is denied.
 * - Global batch: GBS % (micro x DP) == 0; --decrease-batch-size-if-needed rounds down but still
 *   needs GBS >= micro x DP; with rampup the final GBS counts; NeMo's Megatron models need
 *   trainer.accumulate_grad_batches 1. DeepSpeed: train_batch_size == micro x gas x DP after
 *   deriving a missing value by floor division; the Hugging Face Trainer stops when an explicit
 *   JSON value contradicts its own (per-device batch, accumulation, world x both).
 * - No finding rests on an unknown value: a check with unknowns fails only when it fails for
 *   every value they could take. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/instances.h"
#include "tg/launch.h"
#include "tg/launch_memo.h"
#include "tg/obj.h"
#include "tg/plan_fix.h"
#include "tg/plan_world.h"
#include "tg/pod.h"
#include "tg/policy.h"
#include "tg/registry.h"
#include "tg/roles.h"

/* ---- the plan of one launch, worked out
 * --------------------------------------------------------*/

/* A size as the check uses it: known (and its value), or not. */
struct num {
    bool known;
    long long v;
};

struct worked {
    const struct tg_plan *p;
    struct tg_plan_world world;
    struct num tp, pp, cp, ep, etp; /* effective: defaults applied, CP x DS-SP, clamps */
    struct num dp;
    struct num experts;           /* --num-experts, model.num_moe_experts */
    struct num micro, accum, gbs; /* for --explain */
    long long node_gpus;          /* GPUs of one rank pod, 0: not known */
    bool sizes_known;             /* TP, PP and CP all known */
    bool clamps;                  /* TP = min(TP, world), PP = min(PP, world / TP) first */
    int mcore;                    /* Megatron-Core version from the image (major*100+minor), 0 */
};

static struct num num_of(const struct tg_plan_value *v)
{
    struct num n = {.known = v->state == TG_PV_SET, .v = v->value};
    if (n.known && n.v <= 0)
        n.known = false; /* 0 is refused by the framework itself, not a plan to compute with */
    return n;
}

/* a x b into *out, false when the product does not fit (as tg_plan_mul3): a wrapped product is
 * no plan to judge, nor a divisor (one that wrapped to 0 killed the process) */
static bool mul2(long long a, long long b, long long *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

static bool megatron_family(enum tg_plan_fw fw)
{
    return fw == TG_PLAN_FW_MEGATRON || fw == TG_PLAN_FW_MEGATRON_DS || fw == TG_PLAN_FW_NEMO1 ||
           fw == TG_PLAN_FW_NEMO2;
}

/* "core_r0.12", "core-v0.10.0", "core0.9" in the tag of an image whose name says megatron. */
static int mcore_version(const char *image)
{
    const char *slash = strrchr(image, '/');
    const char *name = slash ? slash + 1 : image;
    const char *tag = strchr(name, ':');
    if (!tag || !strstr(name, "megatron"))
        return 0;
    const char *c = strstr(tag, "core");
    if (!c)
        return 0;
    c += 4;
    c += *c == '-' || *c == '_';
    c += *c == 'r' || *c == 'v';
    char *end;
    long major = strtol(c, &end, 10);
    if (end == c || *end != '.')
        return 0;
    long minor = strtol(end + 1, &end, 10);
    return major >= 0 && major < 100 && minor >= 0 && minor < 100 ? (int)(major * 100 + minor) : 0;
}

/* TP, PP, CP as the framework uses them. */
static void effective_sizes(struct worked *k)
{
    const struct tg_plan *p = k->p;
    k->tp = num_of(&p->tp);
    k->pp = num_of(&p->pp);
    k->cp = num_of(&p->cp);
    k->ep = num_of(&p->ep);
    k->etp = p->etp.state == TG_PV_ABSENT ? k->tp : num_of(&p->etp);
    k->experts = num_of(&p->experts);
    if (p->fw == TG_PLAN_FW_MEGATRON_DS) {
        struct num sp = num_of(&p->ds_sp);
        long long cp;
        k->cp.known = k->cp.known && sp.known && mul2(k->cp.v, sp.v, &cp);
        k->cp.v = k->cp.known ? cp : 0;
    }
    /* Megatron-DeepSpeed, and Megatron-LM up to core 0.8, clamp the arguments themselves before
     * they check (NeMo's fake_initialize_model_parallel clamps too, but Megatron-Core's own
     * initialisation then runs with the sizes as given) */
    k->clamps = p->fw == TG_PLAN_FW_MEGATRON_DS ||
                (p->fw == TG_PLAN_FW_MEGATRON && k->mcore > 0 && k->mcore < 9);
    if (k->clamps && k->world.known && k->world.n > 0 && k->tp.known && k->pp.known) {
        if (k->tp.v > k->world.n)
            k->tp.v = k->world.n;
        if (k->pp.v > k->world.n / k->tp.v)
            k->pp.v = k->world.n / k->tp.v > 0 ? k->world.n / k->tp.v : 1;
    }
    k->sizes_known = k->tp.known && k->pp.known && k->cp.known && !p->model_size_why[0];
}

/* DP for the Megatron family (when the world and the sizes are known and divide). */
static void megatron_dp(struct worked *k)
{
    long long m = 0;
    /* a world of no process (mpirun -np 0, --nproc_per_node 0) has no DP to divide by */
    k->dp.known = k->world.known && k->world.n > 0 && k->sizes_known &&
                  tg_plan_mul3(k->tp.v, k->pp.v, k->cp.v, &m) && m > 0 && k->world.n % m == 0;
    k->dp.v = k->dp.known ? k->world.n / m : 0;
}

/* ---- findings, once per world ----------------------------------------------------------------*/

#define MAX_SEEN 32

struct seen {
    struct {
        enum tg_rule_id rule;
        char *msg;
    } v[MAX_SEEN];
    size_t n;
};

static void seen_release(struct seen *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].msg);
}

/* The command/args item that holds the launch. */
static void launch_field(const struct tg_container *c, size_t argv_index, struct tg_path *out)
{
    size_t ncmd = json_array_size(json_object_get(c->c, "command"));
    tg_path_key(out, &c->path, argv_index < ncmd ? "command" : "args");
    tg_path_index(out, out, argv_index < ncmd ? argv_index : argv_index - ncmd);
}

/* Reports msg under rule at the command/args item argv_index, unless the same finding was
 * reported already (a PyTorchJob's Master and Worker run the same line). */
static void report_at(struct tg_eval *ev, struct seen *s, enum tg_rule_id rule,
                      const struct tg_container *c, size_t argv_index, const char *msg)
{
    struct tg_path field;
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i].rule == rule && !strcmp(s->v[i].msg, msg))
            return;
    }
    if (s->n < MAX_SEEN) {
        s->v[s->n].msg = strdup(msg);
        if (!s->v[s->n].msg) {
            ev->error = ev->error ? ev->error : -ENOMEM;
            return;
        }
        s->v[s->n++].rule = rule;
    }
    launch_field(c, argv_index, &field);
    tg_report(ev, rule, field.field, "%s", msg);
}

/* Reports msg at the item that holds the launch. */
static void report(struct tg_eval *ev, struct seen *s, enum tg_rule_id rule,
                   const struct tg_container *c, const struct tg_plan *p, const char *msg)
{
    report_at(ev, s, rule, c, p->argv_index, msg);
}

/* ---- plan.world-size ------------------------------------------------------------------------*/

/* TP x PP x CP over the known factors; 0 when the product does not fit (no finding). */
static long long model_size(const struct worked *k)
{
    const struct num *f[] = {&k->tp, &k->pp, &k->cp};
    long long m = 1;
    for (size_t i = 0; i < 3; i++) {
        if (f[i]->known && !mul2(m, f[i]->v, &m))
            return 0;
    }
    return m;
}

/* "TP 8 x PP 4 x CP 1 = 32" with the unknown factors left out (for a finding only). */
static void model_size_text(const struct worked *k, char *buf, size_t len)
{
    const struct num *f[] = {&k->tp, &k->pp, &k->cp};
    static const char *const names[] = {"TP", "PP", "CP"};
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < 3; i++) {
        if (!f[i]->known)
            continue;
        int n = snprintf(buf + at, len - at, "%s%s %lld", at ? " x " : "", names[i], f[i]->v);
        at += n > 0 && (size_t)n < len - at ? (size_t)n : 0;
    }
    snprintf(buf + at, len - at, " = %lld", model_size(k));
}

/* The world in words: "48 ranks (6 nodes x 8 GPUs)". */
static void world_words(const struct tg_plan_world *w, char *buf, size_t len)
{
    char how[sizeof(w->how)];
    snprintf(buf, len, "%lld rank%s (%s)", w->n, w->n == 1 ? "" : "s",
             tg_plan_world_how(w, how, sizeof(how)));
}

/* Appends to buf[len] at *at (formatted); what does not fit is cut. */
static void append(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    va_list ap;
    if (*at >= len)
        return;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    *at = n < 0 ? len : *at + (size_t)n;
}

/* "TP 2" or "TP 2 or TP 4" from up to two candidates. */
static void append_two(char *buf, size_t len, size_t *at, const char *name, const long long v[2])
{
    append(buf, len, at, "%s %lld", name, v[0]);
    if (v[1])
        append(buf, len, at, " or %s %lld", name, v[1]);
}

/* A fix that runs (include/tg/plan_fix.h): the next world in whole nodes that the model size
 * divides, and a smaller PP among the divisors of the PP as written (its layers still split
 * evenly), else the TP nearest the one written that fits within one node's GPUs. */
static void world_fix(const struct worked *k, char *buf, size_t len)
{
    struct tg_plan_fix_in in = {
        .world = k->world.n,
        .node = k->world.per_node,
        .gpus = k->node_gpus > 0 ? k->node_gpus : k->world.per_node,
        .tp = k->tp.known ? k->tp.v : 1,
        .pp = k->pp.known ? k->pp.v : 1,
        .cp = k->cp.known ? k->cp.v : 1,
    };
    struct tg_plan_fix fix;
    size_t at = 0;
    tg_plan_fix_world(&in, &fix);
    bool pp = fix.pp && k->pp.known, tp = !pp && fix.tp[0] && k->tp.known;
    if (!fix.world && !pp && !tp) {
        snprintf(buf, len, "change TP, PP or CP");
        return;
    }
    append(buf, len, &at, "use ");
    if (fix.world)
        append(buf, len, &at, "%lld ranks%s", fix.world, pp || tp ? " or " : "");
    if (pp)
        append(buf, len, &at, "PP %lld", fix.pp);
    if (tp)
        append_two(buf, len, &at, "TP", fix.tp);
    if (!k->sizes_known)
        append(buf, len, &at, " (with the unknown sizes at 1)");
}

static void check_world(struct tg_eval *ev, struct seen *s, const struct tg_container *c,
                        const struct worked *k)
{
    char sizes[96], world[160], fix[128], msg[512];
    /* with clamps, an unknown TP can always be clamped into a plan that runs */
    if (!k->world.known || !megatron_family(k->p->fw) || (k->clamps && !k->tp.known) ||
        k->p->model_size_why[0])
        return;
    long long m = model_size(k);
    if (m > 0 && k->world.n % m != 0) {
        model_size_text(k, sizes, sizeof(sizes));
        world_words(&k->world, world, sizeof(world));
        world_fix(k, fix, sizeof(fix));
        snprintf(msg, sizeof(msg), "%s: %s%s does not divide %s: %s stops at start-up; %s",
                 k->p->program, sizes, k->sizes_known ? "" : " (times the unknown sizes)", world,
                 tg_plan_fw_name(k->p->fw), fix);
        report(ev, s, TG_RULE_PLAN_WORLD_SIZE, c, k->p, msg);
    }
}

/* The expert rule the version runs: folded from core 0.10 (a line with
 * --expert-tensor-parallel-size, or an image tag), DP % EP before it (and in DeepSpeed-MoE). */
static enum tg_expert_rule expert_rule(const struct worked *k)
{
    if (k->p->etp.state == TG_PV_SET || k->mcore >= 10)
        return TG_EXPERT_RULE_FOLDED;
    if (k->p->fw == TG_PLAN_FW_MEGATRON_DS || (k->mcore > 0 && k->mcore < 10))
        return TG_EXPERT_RULE_BEFORE;
    return TG_EXPERT_RULE_BOTH;
}

/* The sizes the expert checks and their fixes work with (world 0 when DP is not known). */
static struct tg_plan_expert_in expert_in(const struct worked *k, enum tg_expert_rule rule)
{
    bool grid = k->dp.known && k->etp.known;
    return (struct tg_plan_expert_in){
        .experts = k->experts.v,
        .ep = k->ep.v,
        .world = grid ? k->world.n : 0,
        .tp = k->tp.v,
        .pp = k->pp.v,
        .cp = k->cp.v,
        .etp = k->etp.v,
        .rule = rule,
    };
}

/* Megatron's two expert rules (SPEC 11): the one the version runs, or both when it is not told. */
static void check_expert_grid(struct tg_eval *ev, struct seen *s, const struct tg_container *c,
                              const struct worked *k)
{
    char msg[512];
    if (!k->dp.known || !k->ep.known || k->ep.v <= 1 || !k->etp.known || !megatron_family(k->p->fw))
        return;
    enum tg_expert_rule rule = expert_rule(k);
    struct tg_plan_expert_in fin = expert_in(k, TG_EXPERT_RULE_FOLDED);
    struct tg_plan_expert_in bin = expert_in(k, TG_EXPERT_RULE_BEFORE);
    bool new_ok = tg_plan_expert_grid_ok(&fin, k->ep.v),
         old_ok = tg_plan_expert_grid_ok(&bin, k->ep.v);
    bool fail = rule == TG_EXPERT_RULE_FOLDED   ? !new_ok
                : rule == TG_EXPERT_RULE_BEFORE ? !old_ok
                                                : !new_ok && !old_ok;
    if (!fail)
        return;
    bool folded = rule == TG_EXPERT_RULE_FOLDED, both = rule == TG_EXPERT_RULE_BOTH;
    long long grid;
    if (!tg_plan_mul3(k->etp.v, k->ep.v, k->pp.v, &grid))
        return; /* sizes past a long long: no message to write */
    char old_txt[160], new_txt[160];
    snprintf(old_txt, sizeof(old_txt), "DP %lld is not divisible by EP %lld", k->dp.v, k->ep.v);
    snprintf(new_txt, sizeof(new_txt),
             "expert TP %lld x EP %lld x PP %lld = %lld does not divide "
             "%lld ranks",
             k->etp.v, k->ep.v, k->pp.v, grid, k->world.n);
    snprintf(msg, sizeof(msg),
             "%s: %s%s%s: the expert groups cannot be formed and %s stops at "
             "start-up; choose EP to divide %s",
             k->p->program, folded ? new_txt : old_txt, both ? ", and " : "", both ? new_txt : "",
             tg_plan_fw_name(k->p->fw), folded ? "the ranks left by expert TP x PP" : "DP");
    report(ev, s, TG_RULE_PLAN_WORLD_SIZE, c, k->p, msg);
}

/* Megatron-LM's validate_args and Megatron-Core's MoE layer: the experts split evenly over the EP
 * ranks (docs/references.md#ref-plan-megatron-num-experts). Needs only the two numbers; the fix
 * keeps the expert grid when the world is known. */
static void check_expert_count(struct tg_eval *ev, struct seen *s, const struct tg_container *c,
                               const struct worked *k)
{
    const struct tg_plan *p = k->p;
    char fix[96], msg[640];
    size_t at = 0;
    if ((p->fw != TG_PLAN_FW_MEGATRON && p->fw != TG_PLAN_FW_NEMO1) || !k->ep.known ||
        k->ep.v <= 1 || !k->experts.known || k->experts.v % k->ep.v == 0)
        return;
    struct tg_plan_expert_in in = expert_in(k, expert_rule(k));
    struct tg_plan_expert_fix f;
    tg_plan_fix_experts(&in, &f);
    append(fix, sizeof(fix), &at, "use ");
    if (f.ep[0]) {
        append_two(fix, sizeof(fix), &at, "EP", f.ep);
        append(fix, sizeof(fix), &at, ", or ");
    }
    if (f.experts[0] && f.experts[1])
        append(fix, sizeof(fix), &at, "%lld or %lld experts", f.experts[0], f.experts[1]);
    else if (f.experts[0] || f.experts[1])
        append(fix, sizeof(fix), &at, "%lld experts", f.experts[0] ? f.experts[0] : f.experts[1]);
    else
        append(fix, sizeof(fix), &at, "a multiple of EP %lld experts", k->ep.v);
    snprintf(msg, sizeof(msg),
             "%s: %s is not divisible by EP %lld (%s): %lld = %lld x %lld + %lld, so the EP ranks "
             "cannot hold the same number of experts and %s stops at start-up; %s",
             p->program, p->experts.src, k->ep.v, p->ep.src, k->experts.v, k->experts.v / k->ep.v,
             k->ep.v, k->experts.v % k->ep.v, tg_plan_fw_name(p->fw), fix);
    report_at(ev, s, TG_RULE_PLAN_WORLD_SIZE, c,
              p->depth == 0 ? p->argv_index + p->experts_word : p->argv_index, msg);
}

/* ---- plan.global-batch ----------------------------------------------------------------------*/

/* Megatron's GBS against micro x DP: a message in msg and 1 when it fails. */
static int megatron_batch(const struct worked *k, char *msg, size_t len)
{
    const struct tg_plan *p = k->p;
    if (p->fw == TG_PLAN_FW_NEMO1 && p->megatron_model && tg_pv_known(&p->accum) &&
        p->accum.value != 1) {
        snprintf(msg, len,
                 "%s: %s: NeMo's Megatron models accumulate gradients themselves and "
                 "stop unless trainer.accumulate_grad_batches is 1; set 1 (accumulation is "
                 "global batch / (micro x DP))",
                 p->program, p->accum.src);
        return 1;
    }
    if (p->v1_batch || !k->gbs.known || !k->micro.known || p->gbs.state != TG_PV_SET)
        return 0;
    long long g = k->gbs.v, mi = k->micro.v;
    long long dp = k->dp.known ? k->dp.v : 1; /* unknown DP: 1 is possible, the mildest */
    long long md, next;
    char unit[96];
    if (!mul2(mi, dp, &md) || md <= 0 || !mul2(g / md + 1, md, &next))
        return 0;
    bool below = p->decrease_if_needed && g < md;
    if (!below && (p->decrease_if_needed || g % md == 0))
        return 0;
    if (k->dp.known) /* the unit is written for a finding only */
        snprintf(unit, sizeof(unit), "micro %lld x DP %lld = %lld", mi, dp, md);
    else
        snprintf(unit, sizeof(unit), "micro %lld (x any DP)", mi);
    if (below) {
        snprintf(msg, len,
                 "%s: global batch %lld is below %s: even with "
                 "--decrease-batch-size-if-needed Megatron needs one micro-batch per DP rank; "
                 "use at least %lld",
                 p->program, g, unit, md);
        return 1;
    }
    if (!p->decrease_if_needed && g % md != 0) {
        snprintf(msg, len,
                 "%s: global batch %lld%s is not divisible by %s: Megatron stops at "
                 "start-up; use %lld%s",
                 p->program, g, p->rampup.state == TG_PV_SET ? " (the end of the ramp-up)" : "",
                 unit, next, g / md > 0 ? " or a multiple of it" : "");
        return 1;
    }
    return 0;
}

/* A DeepSpeed value after the Hugging Face Trainer fills "auto" (hf: the Trainer path). */
static struct num ds_value(const struct tg_plan_value *v, bool hf, struct num filled)
{
    if (v->state == TG_PV_AUTO)
        return hf ? filled : (struct num){0};
    return num_of(v);
}

/* The Trainer's own values against an explicit JSON (transformers integrations/deepspeed.py
 * fill_match and trainer_config_finalize). */
static int hf_mismatch(const struct worked *k, char *msg, size_t len)
{
    const struct tg_plan *p = k->p;
    const struct tg_plan_ds_config *d = &p->dscfg;
    struct num m = num_of(&d->micro), g = num_of(&d->gas), t = num_of(&d->train);
    struct num hm = num_of(&p->micro), hg = num_of(&p->accum);
    const char *fix = "set it to the Trainer's value or \"auto\"";
    if (m.known && hm.known && m.v != hm.v) {
        snprintf(msg, len,
                 "%s contradicts --per_device_train_batch_size %lld: the Trainer stops "
                 "(\"Please correct the following DeepSpeed config values\"); %s",
                 d->micro.src, hm.v, fix);
        return 1;
    }
    if (g.known && hg.known && g.v != hg.v) {
        snprintf(msg, len,
                 "%s contradicts --gradient_accumulation_steps %lld: the Trainer stops "
                 "(\"Please correct the following DeepSpeed config values\"); %s",
                 d->gas.src, hg.v, fix);
        return 1;
    }
    long long want;
    if (t.known && hm.known && hg.known && k->world.known &&
        tg_plan_mul3(k->world.n, hm.v, hg.v, &want) && t.v != want) {
        snprintf(msg, len,
                 "%s is not world %lld x --per_device_train_batch_size %lld x "
                 "--gradient_accumulation_steps %lld = %lld: the Trainer stops; %s",
                 d->train.src, k->world.n, hm.v, hg.v, want, fix);
        return 1;
    }
    return 0;
}

/* DeepSpeed's own batch assertion over its JSON (runtime/config.py
 * _set_batch_related_parameters, _batch_assertion). */
static int ds_batch(const struct worked *k, char *msg, size_t len)
{
    const struct tg_plan *p = k->p;
    const struct tg_plan_ds_config *d = &p->dscfg;
    bool hf = p->fw == TG_PLAN_FW_HF;
    struct num hm = num_of(&p->micro), hg = num_of(&p->accum);
    struct num tf = {0};
    tf.known =
        hm.known && hg.known && k->world.known && tg_plan_mul3(hm.v, hg.v, k->world.n, &tf.v);
    struct num t = ds_value(&d->train, hf, tf), m = ds_value(&d->micro, hf, hm),
               g = ds_value(&d->gas, hf, hg);
    if (!t.known)
        return 0;
    if (!k->dp.known) {
        /* any DP: fails for all of them only when the known factors do not divide */
        long long f;
        if (!mul2(m.known ? m.v : 1, g.known ? g.v : 1, &f) || f <= 0 || t.v % f == 0)
            return 0;
        snprintf(msg, len,
                 "%s is not a multiple of %s%s%s: no data-parallel size makes "
                 "train_batch_size = micro x accumulation x DP, and DeepSpeed stops at start-up",
                 d->train.src, m.known ? d->micro.src : "", m.known && g.known ? " x " : "",
                 g.known ? d->gas.src : "");
        return 1;
    }
    long long dp = k->dp.v;
    if (!m.known && !g.known)
        g = (struct num){true, 1}; /* train_batch_size alone: one step, micro = train / DP */
    long long mm = m.known ? m.v : (t.v / dp / g.v);
    long long gg = g.known ? g.v : (t.v / mm / dp);
    long long got, use;
    if (!tg_plan_mul3(mm, gg, dp, &got) ||
        !tg_plan_mul3(mm > 0 ? mm : 1, gg > 0 ? gg : 1, dp, &use) ||
        (mm > 0 && gg > 0 && t.v == got))
        return 0;
    snprintf(msg, len,
             "%s is not micro %lld x accumulation %lld x DP %lld = %lld%s: DeepSpeed "
             "stops at start-up; use %lld",
             d->train.src, mm, gg, dp, got,
             m.known && g.known ? "" : " (DeepSpeed derives the missing value by rounding down)",
             use);
    return 1;
}

static void check_batch(struct tg_eval *ev, struct seen *s, const struct tg_container *c,
                        const struct worked *k)
{
    char msg[512];
    int fail = megatron_family(k->p->fw) ? megatron_batch(k, msg, sizeof(msg)) : 0;
    if (!fail && k->p->fw == TG_PLAN_FW_HF && k->p->dscfg.given)
        fail = hf_mismatch(k, msg, sizeof(msg));
    if (!fail && k->p->dscfg.given &&
        (k->p->fw == TG_PLAN_FW_HF || k->p->fw == TG_PLAN_FW_DEEPSPEED ||
         k->p->fw == TG_PLAN_FW_MEGATRON_DS))
        fail = ds_batch(k, msg, sizeof(msg));
    if (fail)
        report(ev, s, TG_RULE_PLAN_GLOBAL_BATCH, c, k->p, msg);
}

/* ---- plan.tp-across-nodes -------------------------------------------------------------------*/

/* Pods held in one nvidia.com/gpu.clique (required pod affinity on that key) with a DRA claim
 * (the IMEX channel of a ComputeDomain): one multi-node NVLink domain of up to 72 GPUs. */
static bool nvlink_clique(const struct tg_template *t)
{
    size_t i;
    json_t *term;
    if (!tg_template_uses_claims(t))
        return false;
    json_t *terms = json_object_get(json_object_get(tg_template_affinity(t), "podAffinity"),
                                    "requiredDuringSchedulingIgnoredDuringExecution");
    json_array_foreach (terms, i, term) {
        const char *key = json_string_value(json_object_get(term, "topologyKey"));
        if (key && !strcmp(key, "nvidia.com/gpu.clique"))
            return true;
    }
    return false;
}

#define NVL72_GPUS 72

/* Where the size of an NVLink domain comes from, for the message (built for a finding only). */
struct domain {
    enum { DOMAIN_CLIQUE, DOMAIN_TYPE, DOMAIN_POD } from;
    const char *type; /* DOMAIN_TYPE: the instance type (borrowed from the object) */
    long long gpus;
};

static void domain_words(const struct domain *d, char *what, size_t len)
{
    if (d->from == DOMAIN_CLIQUE)
        snprintf(what, len, "one nvidia.com/gpu.clique (multi-node NVLink, at most %d GPUs)",
                 NVL72_GPUS);
    else if (d->from == DOMAIN_TYPE)
        snprintf(what, len, "%s has %d GPUs in one NVLink domain", d->type, (int)d->gpus);
    else
        snprintf(what, len, "each pod has %lld GPU%s (nvidia.com/gpu)", d->gpus,
                 d->gpus == 1 ? "" : "s");
}

/* The GPUs of one NVLink domain for the pods of t: the pinned instance types' GPUs (the largest,
 * among the types that can hold the pod), else the pod's nvidia.com/gpu; 0 when not known. */
static int nvlink_domain(struct tg_eval *ev, const struct tg_template *t, long long *gpus,
                         struct domain *dom)
{
    struct tg_label_pin pin;
    long long pod = 0, inst = 0;
    if (nvlink_clique(t)) {
        *gpus = NVL72_GPUS;
        dom->from = DOMAIN_CLIQUE;
        return 1;
    }
    bool has_pod = tg_plan_pod_gpus(t, &pod);
    struct tg_fit fit = {.gpus = has_pod ? pod : 0};
    tg_label_pin_init(&pin);
    if (ev->policy && tg_template_instance_types(NULL, t, ev->policy->instances,
                                                 ev->policy->ninstances, &fit, &pin) < 0) {
        tg_label_pin_release(&pin);
        return -ENOMEM;
    }
    /* several types may be allowed: TP must exceed the largest domain of them to be sure */
    for (size_t i = 0; pin.finite && i < pin.n; i++) {
        const struct tg_instance *in = tg_policy_instance(ev->policy, pin.values[i]);
        if (!in || in->gpus <= 0) {
            inst = 0;
            break;
        }
        if (in->gpus > inst) {
            inst = in->gpus;
            *dom = (struct domain){DOMAIN_TYPE, pin.values[i], in->gpus};
        }
    }
    tg_label_pin_release(&pin);
    if (inst > 0) {
        *gpus = inst;
        return 1;
    }
    if (has_pod) {
        *gpus = pod;
        *dom = (struct domain){DOMAIN_POD, NULL, pod};
        return 1;
    }
    return 0;
}

static int check_tp(struct tg_eval *ev, struct seen *s, const struct tg_template *t,
                    const struct tg_container *c, const struct worked *k)
{
    char what[128], msg[512];
    struct domain dom;
    long long d;
    if (!k->tp.known || k->tp.v <= 1 || !megatron_family(k->p->fw))
        return 0;
    int rc = nvlink_domain(ev, tg_plan_rank_template(ev->wl, t), &d, &dom);
    if (rc <= 0 || k->tp.v <= d)
        return rc;
    domain_words(&dom, what, sizeof(what));
    snprintf(msg, sizeof(msg),
             "%s: TP %lld spans more GPUs than one NVLink domain (%s): every "
             "layer's tensor-parallel all-reduce then crosses the network, many times slower; "
             "keep TP at most %lld and raise PP or CP instead",
             k->p->program, k->tp.v, what, d);
    report(ev, s, TG_RULE_PLAN_TP_ACROSS_NODES, c, k->p, msg);
    return 0;
}

/* ---- explain and unresolved
 * --------------------------------------------------------------------*/

static json_t *jnum(struct num n)
{
    return n.known ? json_integer(n.v) : json_null();
}

/* micro, accumulation and global batch as the framework will run them. */
static void batch_view(struct worked *k)
{
    const struct tg_plan *p = k->p;
    if (megatron_family(p->fw)) {
        k->micro = num_of(&p->micro);
        k->gbs = num_of(&p->gbs);
        long long md = 0;
        bool md_fits = mul2(k->micro.v, k->dp.v, &md);
        if (p->gbs.state == TG_PV_ABSENT && k->micro.known && k->dp.known && !p->v1_batch)
            k->gbs = (struct num){md_fits, md}; /* Megatron: micro x DP */
        if (p->v1_batch && k->micro.known && k->dp.known)
            k->gbs = (struct num){md_fits, md};
        if (!md_fits)
            md = 0;
        k->accum = (struct num){k->gbs.known && k->micro.known && k->dp.known && md > 0 &&
                                    (k->gbs.v % md == 0 || p->decrease_if_needed),
                                md > 0 ? k->gbs.v / md : 0};
        return;
    }
    bool hf = p->fw == TG_PLAN_FW_HF;
    struct num hm = num_of(&p->micro), hg = num_of(&p->accum);
    const struct tg_plan_ds_config *d = &p->dscfg;
    k->micro = d->given ? ds_value(&d->micro, hf, hm) : hm;
    k->accum = d->given ? ds_value(&d->gas, hf, hg) : hg;
    if (d->given && d->gas.state == TG_PV_ABSENT && !hf)
        k->accum = (struct num){0};
    struct num derived = {0};
    derived.known = k->micro.known && k->accum.known && k->dp.known &&
                    tg_plan_mul3(k->micro.v, k->accum.v, k->dp.v, &derived.v);
    k->gbs = d->given ? ds_value(&d->train, hf, derived) : derived;
    if (d->given && d->train.state == TG_PV_ABSENT)
        k->gbs = derived;
    /* DeepSpeed derives the one missing value from the others */
    if (k->gbs.known && k->dp.known && k->dp.v > 0 && k->micro.known && !k->accum.known &&
        k->micro.v > 0)
        k->accum = (struct num){true, k->gbs.v / k->micro.v / k->dp.v};
    if (k->gbs.known && k->dp.known && k->dp.v > 0 && k->accum.known && !k->micro.known &&
        k->accum.v > 0)
        k->micro = (struct num){true, k->gbs.v / k->dp.v / k->accum.v};
}

static int set_new(json_t *o, const char *key, json_t *v)
{
    return v && json_object_set_new(o, key, v) == 0 ? 0 : -ENOMEM;
}

/* The plan of one role for --explain (the first plan a role's containers run). */
static int explain(struct tg_eval *ev, const struct tg_template *t, const struct tg_container *c,
                   const struct worked *k)
{
    const struct tg_plan *p = k->p;
    bool mg = megatron_family(p->fw);
    char how[sizeof(k->world.how)];
    if (!ev->explain)
        ev->explain = json_object();
    if (!ev->explain)
        return -ENOMEM;
    if (json_object_get(ev->explain, t->role_name))
        return 0;
    json_t *o = json_object();
    int rc = o ? 0 : -ENOMEM;
    rc = rc ? rc : set_new(o, "worldSize", k->world.known ? json_integer(k->world.n) : json_null());
    rc = rc ? rc : set_new(o, "tp", mg ? jnum(k->tp) : json_null());
    rc = rc ? rc : set_new(o, "pp", mg ? jnum(k->pp) : json_null());
    rc = rc ? rc : set_new(o, "cp", mg ? jnum(k->cp) : json_null());
    rc = rc ? rc : set_new(o, "ep", mg ? jnum(k->ep) : json_null());
    rc = rc ? rc : set_new(o, "experts", mg ? jnum(k->experts) : json_null());
    rc = rc ? rc : set_new(o, "dp", jnum(k->dp));
    rc = rc ? rc : set_new(o, "micro", jnum(k->micro));
    rc = rc ? rc : set_new(o, "accumulation", jnum(k->accum));
    rc = rc ? rc : set_new(o, "globalBatch", jnum(k->gbs));
    rc = rc ? rc : set_new(o, "framework", json_string(tg_plan_fw_name(p->fw)));
    rc = rc ? rc : set_new(o, "program", json_string(p->program));
    rc = rc ? rc : set_new(o, "container", json_string(c->name));
    rc = rc ? rc
            : set_new(o, "worldFrom",
                      json_string(k->world.known ? tg_plan_world_how(&k->world, how, sizeof(how))
                                                 : k->world.why));
    if (rc == 0 && json_object_set_new(ev->explain, t->role_name, o) == 0)
        return 0;
    json_decref(o);
    return -ENOMEM;
}

static int add_unresolved(struct tg_eval *ev, const char *what, const char *why)
{
    size_t i;
    json_t *u;
    if (!ev->unresolved)
        ev->unresolved = json_array();
    if (!ev->unresolved)
        return -ENOMEM;
    json_array_foreach (ev->unresolved, i, u) {
        if (!strcmp(json_string_value(json_object_get(u, "what")), what) &&
            !strcmp(json_string_value(json_object_get(u, "why")), why))
            return 0;
    }
    u = json_pack("{s:s, s:s}", "what", what, "why", why);
    return u && json_array_append_new(ev->unresolved, u) == 0 ? 0 : -ENOMEM;
}

/* What the plan rules could not read, for the report: only for launches with a plan. */
static int unresolved(struct tg_eval *ev, const struct worked *k)
{
    const struct tg_plan *p = k->p;
    struct {
        const char *what;
        const struct tg_plan_value *v;
    } vals[] = {
        {"tp", &p->tp},
        {"pp", &p->pp},
        {"cp", &p->cp},
        {"ep", &p->ep},
        {"micro", &p->micro},
        {"globalBatch", &p->gbs},
        {"accumulation", &p->accum},
        {"micro", &p->dscfg.micro},
        {"accumulation", &p->dscfg.gas},
        {"globalBatch", &p->dscfg.train},
    };
    int rc = 0;
    if (p->fw == TG_PLAN_FW_NONE)
        return 0;
    if (!k->world.known)
        rc = add_unresolved(ev, "world", k->world.why);
    /* the expert count matters only with expert parallelism */
    if (rc == 0 && megatron_family(p->fw) && p->experts.state == TG_PV_UNKNOWN && k->ep.known &&
        k->ep.v > 1)
        rc = add_unresolved(ev, "experts", p->experts.why);
    for (size_t i = 0; rc == 0 && i < sizeof(vals) / sizeof(vals[0]); i++) {
        bool ds = vals[i].v == &p->dscfg.micro || vals[i].v == &p->dscfg.gas ||
                  vals[i].v == &p->dscfg.train;
        bool mg_only = i < 4;
        if (vals[i].v->state != TG_PV_UNKNOWN || (mg_only && !megatron_family(p->fw)) ||
            (ds && !p->dscfg.given))
            continue;
        rc = add_unresolved(ev, vals[i].what, vals[i].v->why);
    }
    return rc;
}

/* ---- entry ----------------------------------------------------------------------------------*/

static int judge(struct tg_eval *ev, struct seen *s, const struct tg_template *t,
                 const struct tg_container *c, const struct tg_launch *l, const struct tg_plan *p)
{
    struct worked k;
    memset(&k, 0, sizeof(k));
    k.p = p;
    const char *image = json_string_value(json_object_get(c->c, "image"));
    k.mcore = mcore_version(image ? image : "");
    int rc = tg_plan_world(ev, t, c, l, p, &k.world);
    if (rc < 0)
        return rc;
    if (!tg_plan_pod_gpus(tg_plan_rank_template(ev->wl, t), &k.node_gpus))
        k.node_gpus = 0;
    effective_sizes(&k);
    if (megatron_family(p->fw))
        megatron_dp(&k);
    else
        k.dp = (struct num){k.world.known && k.world.n > 0, k.world.n};
    batch_view(&k);
    check_world(ev, s, c, &k);
    check_expert_grid(ev, s, c, &k);
    check_expert_count(ev, s, c, &k);
    check_batch(ev, s, c, &k);
    if ((rc = check_tp(ev, s, t, c, &k)) < 0)
        return rc;
    if (ev->no_plan_view)
        return 0; /* the webhook: nobody reads the plan view */
    if ((rc = explain(ev, t, c, &k)) < 0)
        return rc;
    return unresolved(ev, &k);
}

int tg_rules_plan(struct tg_eval *ev)
{
    struct tg_workload *wl = ev->wl;
    struct seen seen = {.n = 0};
    enum tg_mpi_impl impl = tg_workload_mpi_impl(wl);
    int rc = 0;
    /* An object a judged workload owns (a JobSet's child Job, a PyTorchJob's Pod) was judged with
     * it, with the world and the controller's env its own view may miss (SPEC 11, 13). */
    if (tg_workload_spec_unchanged(wl) || wl->judged_owner)
        return 0;
    for (size_t i = 0; i < wl->ntpl && rc == 0; i++) {
        const struct tg_template *t = &wl->tpl[i];
        for (size_t j = 0; t->world_pods != 0 && j < t->ncontainers && rc == 0; j++) {
            const struct tg_container *c = &t->containers[j];
            const struct tg_launch *l;
            if (c->init || (rc = tg_eval_launch_run(ev, t, c, impl, &l)) < 0)
                continue;
            for (size_t n = 0; n < l->nplans && rc == 0; n++)
                rc = judge(ev, &seen, t, c, l, &l->plans[n]);
        }
    }
    seen_release(&seen);
    return rc < 0 ? rc : ev->error;
}
