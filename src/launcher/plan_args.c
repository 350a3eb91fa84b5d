/* plan_args.c -- a training program's arguments into a plan (include/tg/plan_args.h).
 *
 * Sources (docs/references.md#ref-plan): Megatron-LM megatron/training/arguments.py (argparse with
 * allow_abbrev=False: flags are spelled out, `--flag value` or `--flag=value`); Megatron-DeepSpeed
 * megatron/arguments.py; NeMo examples/nlp/language_modeling/conf/megatron_gpt_config.yaml and the
 * Hydra override grammar (`key=value`, `+key=value`, `++key=value`, `~key`); NeMo 2
 * docs/source/features/parallelisms.rst; transformers training_args.py and
 * integrations/deepspeed.py; DeepSpeed runtime/config.py. */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/plan_args.h"

/* What a flag or an override sets. */
enum eff {
    E_TP,
    E_PP,
    E_CP,
    E_EP,
    E_ETP,
    E_DS_SP,
    E_EXPERTS,
    E_MICRO,
    E_GBS,
    E_RAMPUP,
    E_DECREASE,
    E_V1_TP,    /* Megatron v1 --model-parallel-size: tensor parallel */
    E_V1_BATCH, /* Megatron v1 --batch-size: per GPU, no global batch */
    E_CONFIG,   /* values come from a file */
    E_DS_MARK,  /* a DeepSpeed flag on a Megatron line: Megatron-DeepSpeed */
    E_DS_CONFIG,
    E_HF_MICRO,
    E_HF_ACCUM,
    E_HF_AUTO,
    E_HF_DEEPSPEED, /* --deepspeed: HF's config (a path or JSON), or Megatron-DS's switch */
    E_NODES,
    E_DEVICES,
    E_ACCUM,      /* NeMo trainer.accumulate_grad_batches */
    E_MODEL_SIZE, /* a flag that changes the model-parallel size in a way not read here */
};

/* Which framework a flag belongs to (the one that decides when several are present). */
enum owner { O_MEGATRON, O_MEGATRON_DS, O_HF, O_ANY };

struct flag {
    const char *name;
    size_t len; /* strlen(name) */
    enum eff eff;
    int nvals; /* words of value after it (`--flag=value` gives the first inline) */
    enum owner owner;
};

/* Megatron-LM (core_v0.14.0 megatron/training/arguments.py; v1.0 megatron/arguments.py),
 * Megatron-DeepSpeed (f4157bea69f3 megatron/arguments.py, deepspeed.add_config_arguments) and
 * transformers TrainingArguments (HfArgumentParser accepts the hyphen spelling too). */
#define FLAG(name, ...)                                                                            \
    {                                                                                              \
        name, sizeof(name) - 1, __VA_ARGS__                                                        \
    }
static const struct flag flags[] = {
    FLAG("--tensor-model-parallel-size", E_TP, 1, O_MEGATRON),
    FLAG("--pipeline-model-parallel-size", E_PP, 1, O_MEGATRON),
    FLAG("--context-parallel-size", E_CP, 1, O_MEGATRON),
    FLAG("--expert-model-parallel-size", E_EP, 1, O_MEGATRON),
    FLAG("--expert-tensor-parallel-size", E_ETP, 1, O_MEGATRON),
    FLAG("--num-experts", E_EXPERTS, 1, O_ANY), /* also DeepSpeed-MoE examples: no framework mark */
    FLAG("--micro-batch-size", E_MICRO, 1, O_MEGATRON),
    FLAG("--global-batch-size", E_GBS, 1, O_MEGATRON),
    FLAG("--rampup-batch-size", E_RAMPUP, 3, O_MEGATRON),
    FLAG("--decrease-batch-size-if-needed", E_DECREASE, 0, O_MEGATRON),
    FLAG("--model-parallel-size", E_V1_TP, 1, O_MEGATRON),
    FLAG("--batch-size", E_V1_BATCH, 1, O_MEGATRON),
    FLAG("--yaml-cfg", E_CONFIG, 1, O_MEGATRON),
    /* encoder-decoder sizes (core 0.9-0.13) add encoder TP x PP x CP ranks; weight shards (core
     * 0.19) multiply the model size: the world check is not made with them */
    FLAG("--encoder-tensor-model-parallel-size", E_MODEL_SIZE, 1, O_MEGATRON),
    FLAG("--encoder-pipeline-model-parallel-size", E_MODEL_SIZE, 1, O_MEGATRON),
    FLAG("--tensor-parallel-num-weight-shards", E_MODEL_SIZE, 1, O_MEGATRON),
    FLAG("--ds-sequence-parallel-size", E_DS_SP, 1, O_MEGATRON_DS),
    FLAG("--moe-expert-parallel-size", E_EP, 1, O_MEGATRON_DS),
    FLAG("--zero-stage", E_DS_MARK, 1, O_MEGATRON_DS),
    FLAG("--no-pipeline-parallel", E_DS_MARK, 0, O_MEGATRON_DS),
    FLAG("--deepspeed-activation-checkpointing", E_DS_MARK, 0, O_MEGATRON_DS),
    FLAG("--deepspeed_config", E_DS_CONFIG, 1, O_ANY),
    FLAG("--deepspeed-config", E_DS_CONFIG, 1, O_ANY),
    FLAG("--deepscale_config", E_DS_CONFIG, 1, O_ANY),
    FLAG("--deepspeed", E_HF_DEEPSPEED, 0, O_ANY),
    FLAG("--per_device_train_batch_size", E_HF_MICRO, 1, O_HF),
    FLAG("--per-device-train-batch-size", E_HF_MICRO, 1, O_HF),
    FLAG("--gradient_accumulation_steps", E_HF_ACCUM, 1, O_HF),
    FLAG("--gradient-accumulation-steps", E_HF_ACCUM, 1, O_HF),
    FLAG("--auto_find_batch_size", E_HF_AUTO, 0, O_HF),
    FLAG("--auto-find-batch-size", E_HF_AUTO, 0, O_HF),
};

/* Hydra keys: NeMo 1 (megatron_gpt_config.yaml) and NeMo 2 (nemo llm, parallelisms.rst). */
struct key {
    const char *name;
    size_t len; /* strlen(name) */
    enum eff eff;
    bool nemo2;
};

static const struct key keys[] = {
    FLAG("trainer.devices", E_DEVICES, false),
    FLAG("trainer.num_nodes", E_NODES, false),
    FLAG("trainer.accumulate_grad_batches", E_ACCUM, false),
    FLAG("model.tensor_model_parallel_size", E_TP, false),
    FLAG("model.pipeline_model_parallel_size", E_PP, false),
    FLAG("model.context_parallel_size", E_CP, false),
    FLAG("model.expert_model_parallel_size", E_EP, false),
    FLAG("model.num_moe_experts", E_EXPERTS, false),
    FLAG("model.micro_batch_size", E_MICRO, false),
    FLAG("model.global_batch_size", E_GBS, false),
    FLAG("model.rampup_batch_size", E_RAMPUP, false),
    FLAG("trainer.strategy.tensor_model_parallel_size", E_TP, true),
    FLAG("trainer.strategy.pipeline_model_parallel_size", E_PP, true),
    FLAG("trainer.strategy.context_parallel_size", E_CP, true),
    FLAG("trainer.strategy.expert_model_parallel_size", E_EP, true),
    FLAG("trainer.strategy.expert_tensor_parallel_size", E_ETP, true),
    FLAG("data.micro_batch_size", E_MICRO, true),
    FLAG("data.global_batch_size", E_GBS, true),
};

/* What reading the arguments saw, beyond the values. */
struct seen {
    bool megatron, megatron_ds, hf, hydra, nemo2_keys;
    bool ds_switch;                    /* --deepspeed as a switch (Megatron-DeepSpeed) */
    char opaque[TG_LAUNCH_REASON_MAX]; /* a word that may hold any flag ($ARGS unknown) */
    char hydra_cfg[128];               /* --config-path / --config-name */
    size_t word;                       /* the word being read (argv index) */
};

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* ---- values ---------------------------------------------------------------------------------*/

static bool parse_count(const char *s, long long *out)
{
    long long v;
    if (!tg_launch_count(s, &v))
        return false;
    *out = v;
    return true;
}

void tg_plan_value_read(struct tg_plan_value *v, const struct tg_sh_word *w, const char *value,
                        const char *src)
{
    char text[48];
    size_t len = strlen(value);
    /* Hydra and YAML quote strings: '4' and "4" are the number written in quotes */
    if (len >= 2 && (value[0] == '\'' || value[0] == '"') && value[len - 1] == value[0])
        tg_launch_put(text, sizeof(text), 0, value + 1, len - 2);
    else
        tg_launch_put(text, sizeof(text), 0, value, len);
    /* "src value", cut as snprintf would */
    size_t at = tg_launch_puts(v->src, sizeof(v->src), 0, src);
    at = tg_launch_put(v->src, sizeof(v->src), at, " ", 1);
    tg_launch_put(v->src, sizeof(v->src), at, value, len);
    v->why[0] = '\0';
    if (!w->resolved) {
        v->state = TG_PV_UNKNOWN;
        snprintf(v->why, sizeof(v->why), "%s: %s", src, w->reason ? w->reason : "not known");
        return;
    }
    if (!parse_count(text, &v->value)) {
        v->state = TG_PV_UNKNOWN;
        snprintf(v->why, sizeof(v->why), "%s '%.40s' is not a number", src, value);
        return;
    }
    v->state = TG_PV_SET;
}

static void value_default(struct tg_plan_value *v, long long value, const char *src)
{
    if (v->state != TG_PV_ABSENT)
        return;
    v->state = TG_PV_SET;
    v->value = value;
    snprintf(v->src, sizeof(v->src), "%s", src);
}

static void value_unknown(struct tg_plan_value *v, const char *why)
{
    if (v->state != TG_PV_ABSENT)
        return;
    v->state = TG_PV_UNKNOWN;
    snprintf(v->why, sizeof(v->why), "%s", why);
}

/* ---- paths and files ------------------------------------------------------------------------*/

void tg_plan_path(const char *cwd, const char *p, char *out, size_t len)
{
    char buf[512];
    if (p[0] == '/' || !cwd)
        snprintf(buf, sizeof(buf), "%s", p);
    else
        snprintf(buf, sizeof(buf), "%s/%s", cwd, p);
    bool abs = buf[0] == '/';
    /* components, with . dropped and .. taking the previous one away */
    const char *parts[64];
    size_t lens[64], n = 0;
    for (const char *s = buf; *s;) {
        size_t l = strcspn(s, "/");
        if (l == 2 && s[0] == '.' && s[1] == '.' && n > 0 &&
            !(lens[n - 1] == 2 && parts[n - 1][0] == '.'))
            n--;
        else if (l > 0 && !(l == 1 && s[0] == '.') && n < 64) {
            parts[n] = s;
            lens[n++] = l;
        }
        s += l;
        s += *s == '/';
    }
    size_t at = 0;
    out[0] = '\0';
    if (abs && len > 1)
        out[at++] = '/', out[at] = '\0';
    for (size_t i = 0; i < n && at + lens[i] + 2 < len; i++) {
        if (i)
            out[at++] = '/';
        memcpy(out + at, parts[i], lens[i]);
        at += lens[i];
        out[at] = '\0';
    }
}

/* The content of a file the script wrote, or NULL (*why says why). */
static const struct tg_plan_file *find_file(const struct tg_plan_files *files, const char *cwd,
                                            const char *path)
{
    char want[256];
    tg_plan_path(cwd, path, want, sizeof(want));
    for (size_t i = files ? files->n : 0; i-- > 0;) {
        if (!strcmp(files->v[i].path, want))
            return &files->v[i];
    }
    return NULL;
}

/* ---- DeepSpeed JSON ---------------------------------------------------------------------------*/

static void ds_key(struct tg_plan_value *v, json_t *cfg, const char *key, const char *src)
{
    json_t *x = json_object_get(cfg, key);
    snprintf(v->src, sizeof(v->src), "%s in %s", key, src);
    if (!x || json_is_null(x)) {
        v->state = TG_PV_ABSENT;
    } else if (json_is_string(x) && !strcmp(json_string_value(x), "auto")) {
        v->state = TG_PV_AUTO;
    } else if (json_is_integer(x) && json_integer_value(x) >= 0) {
        v->state = TG_PV_SET;
        v->value = json_integer_value(x);
        snprintf(v->src, sizeof(v->src), "%s %lld in %s", key, v->value, src);
    } else {
        v->state = TG_PV_UNKNOWN;
        snprintf(v->why, sizeof(v->why), "%s in %s is not a whole number", key, src);
    }
}

static void ds_unknown(struct tg_plan_ds_config *c, const char *why)
{
    struct tg_plan_value *vs[] = {&c->train, &c->micro, &c->gas};
    static const char *const names[] = {"train_batch_size", "train_micro_batch_size_per_gpu",
                                        "gradient_accumulation_steps"};
    for (size_t i = 0; i < 3; i++) {
        vs[i]->state = TG_PV_UNKNOWN;
        snprintf(vs[i]->src, sizeof(vs[i]->src), "%s in %.60s", names[i], c->src);
        snprintf(vs[i]->why, sizeof(vs[i]->why), "%s", why);
    }
}

void tg_plan_read_ds_config(struct tg_plan *p, const struct tg_sh_word *w, const char *value,
                            const struct tg_plan_files *files, const char *cwd)
{
    struct tg_plan_ds_config *c = &p->dscfg;
    char why[TG_LAUNCH_REASON_MAX];
    const char *text = NULL;
    memset(c, 0, sizeof(*c));
    c->given = true;
    if (!w->resolved) {
        snprintf(c->src, sizeof(c->src), "%.100s", value);
        ds_unknown(c, w->reason ? w->reason : "not known");
        return;
    }
    if (value[0] == '{') {
        snprintf(c->src, sizeof(c->src), "the inline --deepspeed JSON");
        text = value;
    } else {
        const struct tg_plan_file *f = find_file(files, cwd, value);
        snprintf(c->src, sizeof(c->src), "%.100s", value);
        if (!f) {
            snprintf(why, sizeof(why),
                     "the DeepSpeed config %.80s is a file read when the job runs", value);
            ds_unknown(c, why);
            return;
        }
        if (!f->content) {
            ds_unknown(c, f->why ? f->why : "the here-document is not known");
            return;
        }
        snprintf(c->src, sizeof(c->src), "%.80s (written by the script)", value);
        text = f->content;
    }
    json_error_t err;
    json_t *cfg = json_loads(text, JSON_DECODE_ANY, &err);
    if (!json_is_object(cfg)) {
        snprintf(why, sizeof(why), "%.60s is not a JSON object (line %d: %.40s)", c->src, err.line,
                 err.text);
        ds_unknown(c, why);
    } else {
        ds_key(&c->train, cfg, "train_batch_size", c->src);
        ds_key(&c->micro, cfg, "train_micro_batch_size_per_gpu", c->src);
        ds_key(&c->gas, cfg, "gradient_accumulation_steps", c->src);
    }
    json_decref(cfg);
}

/* ---- flags ----------------------------------------------------------------------------------*/

static struct tg_plan_value *target(struct tg_plan *p, enum eff e)
{
    switch (e) {
    case E_TP:
    case E_V1_TP:
        return &p->tp;
    case E_PP:
        return &p->pp;
    case E_CP:
        return &p->cp;
    case E_EP:
        return &p->ep;
    case E_ETP:
        return &p->etp;
    case E_DS_SP:
        return &p->ds_sp;
    case E_EXPERTS:
        return &p->experts;
    case E_MICRO:
    case E_V1_BATCH:
    case E_HF_MICRO:
        return &p->micro;
    case E_GBS:
        return &p->gbs;
    case E_HF_ACCUM:
    case E_ACCUM:
        return &p->accum;
    case E_NODES:
        return &p->nodes;
    case E_DEVICES:
        return &p->devices;
    default:
        return NULL;
    }
}

/* ---- flag lookup ---------------------------------------------------------------------------
 * The flags are looked up through an index built on first use: a hash of a name's length and
 * three of its bytes picks a slot, and the slots after it are tried in turn (open addressing)
 * until the name or an empty slot. No flag is named twice, so the index finds what a scan of
 * the table would; a scan cost some 200 instructions per word that starts with '-'. */
#define FLAG_SLOTS 128 /* a power of two, over twice the table */
_Static_assert(2 * sizeof(flags) / sizeof(flags[0]) <= FLAG_SLOTS && FLAG_SLOTS <= 256,
               "flag_slot holds 1 + an index of flags in a byte, in a table at most half full");

static unsigned char flag_slot[FLAG_SLOTS]; /* 1 + the flag's index in flags; 0: empty */
static size_t flag_min;                     /* the shortest name's length (at least 3: "--x") */
static pthread_once_t flag_once = PTHREAD_ONCE_INIT;

/* The slot of the n (>= 3) bytes at s. */
static size_t flag_hash(const char *s, size_t n)
{
    return (n * 7 + (unsigned char)s[2] * 31 + (unsigned char)s[n - 1] * 17 +
            (unsigned char)s[n / 2]) &
           (FLAG_SLOTS - 1);
}

static void flag_index_build(void)
{
    flag_min = SIZE_MAX;
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        if (flags[i].len < 3 || flags[i].name[0] != '-' || flags[i].name[1] != '-')
            abort(); /* flag_hash reads three bytes; every name is "--" and a word */
        if (flags[i].len < flag_min)
            flag_min = flags[i].len;
        size_t k = flag_hash(flags[i].name, flags[i].len);
        while (flag_slot[k])
            k = (k + 1) & (FLAG_SLOTS - 1);
        flag_slot[k] = (unsigned char)(i + 1);
    }
}

/* The flag word names (`--flag` or `--flag=value`, *inl then the value), or NULL. No flag name
 * has a '=': the name is the word up to its first '='. The caller has built the index
 * (read_words, once for the line). */
static const struct flag *find_flag(const char *word, const char **inl)
{
    const char *end = strchrnul(word, '='); /* the '=' or the end: one pass for both */
    const char *eq = *end ? end : NULL;
    size_t n = (size_t)(end - word);
    *inl = NULL;
    if (n < flag_min)
        return NULL;
    for (size_t k = flag_hash(word, n); flag_slot[k]; k = (k + 1) & (FLAG_SLOTS - 1)) {
        const struct flag *f = &flags[flag_slot[k] - 1];
        if (f->len != n || memcmp(word, f->name, n))
            continue;
        if (eq)
            *inl = eq + 1;
        return f;
    }
    return NULL;
}

static void mark_owner(struct seen *s, enum owner o)
{
    s->megatron |= o == O_MEGATRON || o == O_MEGATRON_DS;
    s->megatron_ds |= o == O_MEGATRON_DS;
    s->hf |= o == O_HF;
}

/* Applies flag f with its value words vals (nvals of them; vals[0] may be the inline value). */
static void apply_flag(struct tg_plan *p, struct seen *s, const struct flag *f,
                       const struct tg_sh_word *vals, const char *const *texts,
                       const struct tg_plan_files *files, const char *cwd)
{
    struct tg_plan_value *v = target(p, f->eff);
    mark_owner(s, f->owner);
    switch (f->eff) {
    case E_DECREASE:
        p->decrease_if_needed = true;
        return;
    case E_V1_BATCH:
        p->v1_batch = true;
        break;
    case E_HF_AUTO:
        p->auto_batch = true;
        return;
    case E_CONFIG:
        snprintf(p->config, sizeof(p->config), "%s %.100s", f->name, texts[0]);
        return;
    case E_DS_MARK:
        return;
    case E_MODEL_SIZE:
        snprintf(p->model_size_why, sizeof(p->model_size_why),
                 "%s %.40s changes the model-parallel size in a way trainguard does not read",
                 f->name, texts[0]);
        return;
    case E_DS_CONFIG:
        tg_plan_read_ds_config(p, &vals[0], texts[0], files, cwd);
        return;
    case E_RAMPUP:
        tg_plan_value_read(&p->rampup, &vals[0], texts[0], f->name);
        snprintf(p->rampup.src, sizeof(p->rampup.src), "%s %s %s %s", f->name, texts[0], texts[1],
                 texts[2]);
        return;
    default:
        break;
    }
    if (v)
        tg_plan_value_read(v, &vals[0], texts[0], f->name);
    if (f->eff == E_EXPERTS)
        p->experts_word = s->word;
}

/* --deepspeed: HF's config when a value follows (a path or JSON), else Megatron-DeepSpeed's
 * switch. Returns the words it took after the flag. */
static size_t apply_deepspeed(struct tg_plan *p, struct seen *s, const struct tg_sh_word *argv,
                              size_t argc, size_t i, const char *inl,
                              const struct tg_plan_files *files, const char *cwd)
{
    if (inl) {
        tg_plan_read_ds_config(p, &argv[i], inl, files, cwd);
        s->hf = true;
        return 0;
    }
    if (i + 1 < argc && argv[i + 1].text[0] != '-') {
        tg_plan_read_ds_config(p, &argv[i + 1], argv[i + 1].text, files, cwd);
        s->hf = true;
        return 1;
    }
    s->ds_switch = true;
    return 0;
}

/* ---- Hydra overrides ------------------------------------------------------------------------*/

/* key=value, +key=value, ++key=value (hydra.cc "Basic Override syntax"); ~key deletes. */
static bool read_override(struct tg_plan *p, struct seen *s, const struct tg_sh_word *w)
{
    const char *t = w->text;
    bool del = t[0] == '~';
    while (*t == '+' || *t == '~')
        t++;
    const char *end = strchrnul(t, '=');
    const char *eq = *end ? end : NULL;
    size_t klen = (size_t)(end - t);
    if ((!eq && !del) || klen == 0 || !(isalpha((unsigned char)t[0]) || t[0] == '_'))
        return false;
    for (size_t i = 0; i < klen; i++) {
        if (!isalnum((unsigned char)t[i]) && t[i] != '_' && t[i] != '.')
            return false;
    }
    s->hydra |= !strncmp(t, "trainer.", 8) || !strncmp(t, "model.", 6) || !strncmp(t, "data.", 5);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (keys[i].len != klen || memcmp(t, keys[i].name, klen))
            continue;
        s->nemo2_keys |= keys[i].nemo2;
        struct tg_plan_value *v = keys[i].eff == E_RAMPUP ? &p->rampup : target(p, keys[i].eff);
        if (del) {
            memset(v, 0, sizeof(*v)); /* back to the config's value */
        } else if (keys[i].eff == E_RAMPUP) {
            char first[32];
            const char *val = eq + 1;
            if (!strcmp(val, "null") || !strcmp(val, "[]"))
                return true;
            snprintf(first, sizeof(first), "%.*s", (int)strcspn(val + (val[0] == '['), ",]"),
                     val + (val[0] == '['));
            tg_plan_value_read(v, w, first, keys[i].name);
            snprintf(v->src, sizeof(v->src), "%.95s", w->text);
        } else {
            char name[64];
            snprintf(name, sizeof(name), "%.*s", (int)(eq - w->text), w->text);
            tg_plan_value_read(v, w, eq + 1, name);
            snprintf(v->src, sizeof(v->src), "%.95s", w->text);
        }
        if (keys[i].eff == E_EXPERTS)
            p->experts_word = s->word;
        return true;
    }
    return true;
}

/* Hydra's own flags: --config-path/-cp, --config-name/-cn (the config is another file). */
static size_t read_hydra_flag(struct seen *s, const struct tg_sh_word *argv, size_t argc, size_t i)
{
    static const char *const names[] = {"--config-path", "--config-name", "-cp",
                                        "-cn",           "--config-dir",  "-cd"};
    static const size_t lens[] = {13, 13, 3, 3, 12, 3};
    const char *t = argv[i].text;
    if (t[0] != '-' || (t[1] != 'c' && (t[1] != '-' || t[2] != 'c' || strncmp(t, "--config-", 9))))
        return 0; /* every name starts with -c or --config- */
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        size_t n = lens[k];
        if (strncmp(t, names[k], n) || (t[n] != '\0' && t[n] != '='))
            continue;
        const char *v = t[n] == '=' ? t + n + 1 : (i + 1 < argc ? argv[i + 1].text : "");
        size_t l = strlen(s->hydra_cfg);
        snprintf(s->hydra_cfg + l, sizeof(s->hydra_cfg) - l, "%s%s=%.60s", l ? " " : "", names[k],
                 v);
        return t[n] == '=' ? 1 : 2;
    }
    return 0;
}

/* ---- the argument walk ----------------------------------------------------------------------*/

/* A word where a flag could be that is not known: it may hold any flag ($ARGS, ${A[@]}). */
static void note_opaque(struct seen *s, const struct tg_sh_word *w)
{
    if (s->opaque[0])
        return;
    snprintf(s->opaque, sizeof(s->opaque), "the line has %.30s, whose words are not known (%.70s)",
             w->text, w->reason ? w->reason : "unresolved");
}

/* Reads the words after the program. */
static void read_words(const struct tg_sh_word *argv, size_t argc,
                       const struct tg_plan_files *files, const char *cwd, struct tg_plan *p,
                       struct seen *s)
{
    pthread_once(&flag_once, flag_index_build); /* for find_flag */
    for (size_t i = 1; i < argc;) {
        const struct tg_sh_word *w = &argv[i];
        const char *inl;
        const struct flag *f = w->text[0] == '-' ? find_flag(w->text, &inl) : NULL;
        size_t hy;
        s->word = i;
        if (f && f->eff == E_HF_DEEPSPEED) {
            i += 1 + apply_deepspeed(p, s, argv, argc, i, inl, files, cwd);
        } else if (f && (inl || (size_t)f->nvals + i < argc)) {
            const struct tg_sh_word *vals = inl ? w : &argv[i + 1];
            const char *texts[3] = {inl, "", ""};
            for (int k = 0; !inl && k < f->nvals; k++)
                texts[k] = argv[i + 1 + k].text;
            apply_flag(p, s, f, vals, texts, files, cwd);
            i += 1 + (inl ? 0 : (size_t)f->nvals);
        } else if ((hy = read_hydra_flag(s, argv, argc, i)) > 0) {
            i += hy;
        } else if (w->text[0] != '-' && read_override(p, s, w)) {
            i++;
        } else {
            if (!w->resolved && (w->text[0] == '$' || w->text[0] == '`'))
                note_opaque(s, w);
            i++;
        }
    }
}

/* ---- the framework and its defaults ---------------------------------------------------------*/

static void decide(struct tg_plan *p, const struct seen *s)
{
    if (p->nemo_cli)
        p->fw = TG_PLAN_FW_NEMO2;
    else if (s->megatron && (s->megatron_ds || s->ds_switch || p->dscfg.given || p->deepspeed))
        p->fw = TG_PLAN_FW_MEGATRON_DS;
    else if (s->megatron)
        p->fw = TG_PLAN_FW_MEGATRON;
    else if (s->hydra || s->hydra_cfg[0])
        p->fw = TG_PLAN_FW_NEMO1;
    else if (s->hf)
        p->fw = TG_PLAN_FW_HF;
    else if (p->dscfg.given)
        p->fw = TG_PLAN_FW_DEEPSPEED;
    if (p->fw == TG_PLAN_FW_NEMO1 && s->hydra_cfg[0])
        snprintf(p->config, sizeof(p->config), "%s", s->hydra_cfg);
}

static struct tg_plan_value *all_values(struct tg_plan *p, size_t i)
{
    struct tg_plan_value *vs[] = {&p->tp,    &p->pp,  &p->cp,    &p->ep,    &p->experts,
                                  &p->micro, &p->gbs, &p->accum, &p->nodes, &p->devices};
    return i < sizeof(vs) / sizeof(vs[0]) ? vs[i] : NULL;
}

/* Every value the line does not give becomes unknown with why. */
static void absent_unknown(struct tg_plan *p, const char *why)
{
    struct tg_plan_value *v;
    for (size_t i = 0; (v = all_values(p, i)); i++)
        value_unknown(v, why);
}

static void megatron_defaults(struct tg_plan *p)
{
    static const char d[] = "Megatron's default";
    if (p->fw == TG_PLAN_FW_MEGATRON_DS)
        value_default(&p->ds_sp, 1, d);
    value_default(&p->tp, 1, d);
    value_default(&p->pp, 1, d);
    value_default(&p->cp, 1, d);
    value_default(&p->ep, 1, d);
}

/* NeMo 1: the defaults of megatron_gpt_pretraining.py's own config (megatron_gpt_config.yaml);
 * context_parallel_size is not a key there and the model reads cfg.get(..., 1). Other scripts
 * have other configs: their values are unknown. */
static void nemo1_defaults(struct tg_plan *p)
{
    static const char d[] = "the default in megatron_gpt_config.yaml";
    if (strcmp(p->program, "megatron_gpt_pretraining.py") || p->config[0]) {
        char why[TG_LAUNCH_REASON_MAX];
        if (p->config[0])
            snprintf(why, sizeof(why), "not on the line: set in the Hydra config (%.100s)",
                     p->config);
        else
            snprintf(why, sizeof(why), "not on the line: set in %.60s's Hydra config", p->program);
        absent_unknown(p, why);
        return;
    }
    value_default(&p->tp, 1, d);
    value_default(&p->pp, 1, d);
    value_default(&p->cp, 1, "NeMo's default (not a key of megatron_gpt_config.yaml)");
    value_default(&p->ep, 1, d);
    value_default(&p->micro, 4, d);
    value_default(&p->gbs, 8, d);
    value_default(&p->accum, 1, d);
    value_default(&p->devices, 1, d);
    value_default(&p->nodes, 1, d);
}

static void fill_defaults(struct tg_plan *p, const struct seen *s)
{
    char why[TG_LAUNCH_REASON_MAX];
    if (s->opaque[0])
        absent_unknown(p, s->opaque);
    switch (p->fw) {
    case TG_PLAN_FW_MEGATRON:
    case TG_PLAN_FW_MEGATRON_DS:
        if (p->config[0]) {
            snprintf(why, sizeof(why), "not on the line: may be set in %.100s", p->config);
            absent_unknown(p, why);
        }
        megatron_defaults(p);
        break;
    case TG_PLAN_FW_NEMO1:
        p->megatron_model = !strncmp(p->program, "megatron_", 9);
        nemo1_defaults(p);
        break;
    case TG_PLAN_FW_NEMO2:
        snprintf(why, sizeof(why), "not on the line: set by the NeMo 2 recipe %.40s",
                 p->recipe[0] ? p->recipe : "(none named)");
        absent_unknown(p, why);
        break;
    case TG_PLAN_FW_HF:
        if (p->auto_batch && p->micro.state == TG_PV_SET) {
            p->micro.state = TG_PV_UNKNOWN;
            snprintf(p->micro.why, sizeof(p->micro.why),
                     "--auto_find_batch_size lowers the batch when it runs out of memory");
        }
        value_unknown(&p->micro, "no --per_device_train_batch_size: the script's default is "
                                 "not known");
        value_unknown(&p->accum, "no --gradient_accumulation_steps: the script's default is "
                                 "not known");
        break;
    default:
        break;
    }
}

int tg_plan_read_args(const struct tg_sh_word *argv, size_t argc, const struct tg_plan_files *files,
                      const char *cwd, struct tg_plan *p)
{
    struct seen s;
    memset(&s, 0, sizeof(s));
    if (argc == 0)
        return 0;
    if (!p->nemo_cli)
        tg_launch_puts(p->program, sizeof(p->program), 0, base(argv[0].text));
    read_words(argv, argc, files, cwd, p, &s);
    decide(p, &s);
    fill_defaults(p, &s);
    return 0;
}
