/* launch_plan.c -- the launchers in front of a training program, read for the parallel plan
 * (include/tg/launch_plan.h): mpirun (its program), the DeepSpeed launcher, accelerate launch, the
 * NeMo 2 CLI and Python; the program's own arguments are src/launcher/plan_args.c's.
 *
 * Sources (docs/references.md#ref-plan): microsoft/DeepSpeed deepspeed/launcher/runner.py
 * (parse_args: every option but the store_true ones takes a value; the user script ends the
 * launcher's options); huggingface/accelerate src/accelerate/commands/launch.py
 * (launch_command_parser: hyphen or underscore spellings, store_true options, training_script);
 * docs.python.org "Command line and environment" (interpreter options before the script). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tg/launch_plan.h"
#include "tg/mpirun.h"
#include "tg/plan_args.h"

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* python, python3, python3.11 (not pythonic-tool) */
static bool is_python(const char *word)
{
    const char *b = base(word);
    if (strncmp(b, "python", 6))
        return false;
    for (b += 6; *b; b++) {
        if ((*b < '0' || *b > '9') && *b != '.')
            return false;
    }
    return true;
}

static bool in_list(const char *w, const char *const *list)
{
    for (size_t i = 0; list[i]; i++) {
        if (!strcmp(w, list[i]))
            return true;
    }
    return false;
}

bool tg_plan_is_command(const char *word)
{
    const char *b = base(word);
    size_t n = strlen(b);
    /* torchrun, deepspeed, accelerate, nemo, told by length first */
    bool named = (n == 8 && !memcmp(b, "torchrun", 8)) || (n == 9 && !memcmp(b, "deepspeed", 9)) ||
                 (n == 10 && !memcmp(b, "accelerate", 10)) || (n == 4 && !memcmp(b, "nemo", 4));
    return named || tg_launcher_is_mpi(word) || is_python(word) ||
           (n >= 3 && !memcmp(b + n - 3, ".py", 3));
}

const char *tg_plan_fw_name(enum tg_plan_fw fw)
{
    switch (fw) {
    case TG_PLAN_FW_MEGATRON:
        return "Megatron-LM";
    case TG_PLAN_FW_MEGATRON_DS:
        return "Megatron-DeepSpeed";
    case TG_PLAN_FW_NEMO1:
        return "NeMo";
    case TG_PLAN_FW_NEMO2:
        return "NeMo 2";
    case TG_PLAN_FW_HF:
        return "the Hugging Face Trainer";
    case TG_PLAN_FW_DEEPSPEED:
        return "DeepSpeed";
    default:
        return "the training program";
    }
}

/* `--name=value` or `--name value` for one of names (NULL-terminated): the value word (for
 * --name=value, the word itself with *inl pointing after '='), or NULL. *used: words taken. */
static const struct tg_sh_word *opt_value(const struct tg_sh_word *w, size_t n, size_t i,
                                          const char *const *names, const char **inl, size_t *used)
{
    const char *t = w[i].text;
    for (size_t k = 0; names[k]; k++) {
        size_t l = strlen(names[k]);
        if (strncmp(t, names[k], l))
            continue;
        if (t[l] == '=') {
            *inl = t + l + 1;
            *used = 1;
            return &w[i];
        }
        if (t[l] == '\0' && i + 1 < n) {
            *inl = w[i + 1].text;
            *used = 2;
            return &w[i + 1];
        }
    }
    return NULL;
}

static void take_count(struct tg_plan_value *v, const struct tg_sh_word *w, const char *text,
                       const char *name)
{
    tg_plan_value_read(v, w, text, name);
}

/* ---- the DeepSpeed launcher -----------------------------------------------------------------*/

/* deepspeed/launcher/runner.py parse_args: the store_true options. */
static const char *const ds_flags[] = {
    "--module",
    "--no_python",
    "--no_local_rank",
    "--no_ssh_check",
    "--force_multi",
    "--save_pid",
    "--elastic_training",
    "--bind_cores_to_rank",
    "--no_ssh",
    "-h",
    "--help",
    NULL,
};

static void copy_word(char *dst, size_t len, const struct tg_sh_word *w, const char *text,
                      bool *known)
{
    snprintf(dst, len, "%s", text);
    if (known)
        *known = w->resolved;
}

/* Reads `deepspeed [options] script ...` from word i; returns the script's word (n: none). */
static size_t read_deepspeed(const struct tg_sh_word *w, size_t n, size_t i, struct tg_plan *p)
{
    static const char *const nodes[] = {"--num_nodes", NULL};
    static const char *const gpus[] = {"--num_gpus", "--num_accelerators", NULL};
    static const char *const hostfile[] = {"-H", "--hostfile", NULL};
    static const char *const include[] = {"-i", "--include", NULL};
    static const char *const exclude[] = {"-e", "--exclude", NULL};
    p->deepspeed = true;
    snprintf(p->launcher, sizeof(p->launcher), "deepspeed");
    for (i++; i < n;) {
        const char *t = w[i].text, *inl;
        const struct tg_sh_word *v;
        size_t used = 1;
        if (t[0] != '-' || !strcmp(t, "--"))
            return i + !strcmp(t, "--");
        if ((v = opt_value(w, n, i, nodes, &inl, &used))) {
            take_count(&p->ds.num_nodes, v, inl, "--num_nodes");
        } else if ((v = opt_value(w, n, i, gpus, &inl, &used))) {
            take_count(&p->ds.num_gpus, v, inl, "--num_gpus");
        } else if ((v = opt_value(w, n, i, hostfile, &inl, &used))) {
            p->ds.hostfile_set = true;
            copy_word(p->ds.hostfile, sizeof(p->ds.hostfile), v, inl, &p->ds.hostfile_known);
        } else if ((v = opt_value(w, n, i, include, &inl, &used))) {
            copy_word(p->ds.include, sizeof(p->ds.include), v, inl, &p->ds.include_known);
        } else if ((v = opt_value(w, n, i, exclude, &inl, &used))) {
            p->ds.exclude = true;
        } else if (!in_list(t, ds_flags) && !strchr(t, '=')) {
            used = 2; /* another option and its value */
        }
        i += used;
    }
    return n;
}

/* ---- accelerate launch ----------------------------------------------------------------------*/

/* src/accelerate/commands/launch.py launch_command_parser: the store_true options (written with
 * underscores; hyphens are accepted too). */
static const char *const accel_flags[] = {
    "-h",
    "--help",
    "-q",
    "--quiet",
    "--cpu",
    "--multi_gpu",
    "--tpu",
    "--ipex",
    "--enable_cpu_affinity",
    "--dynamo_use_fullgraph",
    "--dynamo_use_dynamic",
    "--use_deepspeed",
    "--use_fsdp",
    "--use_megatron_lm",
    "--use_xpu",
    "--same_network",
    "-m",
    "--module",
    "--no_python",
    "--tpu_cluster",
    "--no_tpu_cluster",
    "--tpu_use_sudo",
    "--downcast_bf16",
    "--fp8_use_autocast_during_eval",
    "--debug",
    NULL,
};

/* The option with '-' after the leading "--" turned into '_' (launch.py clean_option). */
static void underscored(const char *t, char *out, size_t len)
{
    snprintf(out, len, "%s", t);
    for (char *c = out + 2; out[0] == '-' && out[1] == '-' && *c && *c != '='; c++)
        if (*c == '-')
            *c = '_';
}

static size_t read_accelerate(const struct tg_sh_word *w, size_t n, size_t i, struct tg_plan *p,
                              const struct tg_plan_files *files, const char *cwd)
{
    static const char *const procs[] = {"--num_processes", NULL};
    static const char *const machines[] = {"--num_machines", NULL};
    static const char *const cfg[] = {"--config_file", NULL};
    static const char *const dscfg[] = {"--deepspeed_config_file", NULL};
    p->accelerate = true;
    snprintf(p->launcher, sizeof(p->launcher), "accelerate launch");
    for (i += 2; i < n;) {
        char t[96];
        const char *inl;
        size_t used = 1;
        const struct tg_sh_word *v;
        if (w[i].text[0] != '-')
            return i;
        underscored(w[i].text, t, sizeof(t));
        struct tg_sh_word one = w[i];
        one.text = t;
        const struct tg_sh_word view[2] = {one, i + 1 < n ? w[i + 1] : one};
        if ((v = opt_value(view, i + 1 < n ? 2 : 1, 0, procs, &inl, &used))) {
            take_count(&p->acc.num_processes, v, inl, "--num_processes");
        } else if ((v = opt_value(view, i + 1 < n ? 2 : 1, 0, machines, &inl, &used))) {
            take_count(&p->acc.num_machines, v, inl, "--num_machines");
        } else if ((v = opt_value(view, i + 1 < n ? 2 : 1, 0, cfg, &inl, &used))) {
            snprintf(p->acc.config_file, sizeof(p->acc.config_file), "%s", inl);
        } else if ((v = opt_value(view, i + 1 < n ? 2 : 1, 0, dscfg, &inl, &used))) {
            tg_plan_read_ds_config(p, v, inl, files, cwd);
        } else if (!in_list(t, accel_flags) && !strchr(t, '=')) {
            used = 2;
        }
        i += used;
    }
    return n;
}

/* ---- Python and the NeMo 2 CLI --------------------------------------------------------------*/

/* The script of `python [options] script` (or `-m module`), from word i. *module is set for
 * -m. Returns n when there is none (-c code, stdin). */
static size_t read_python(const struct tg_sh_word *w, size_t n, size_t i, bool *module)
{
    *module = false;
    for (i++; i < n; i++) {
        const char *t = w[i].text;
        if (!strcmp(t, "-m")) {
            *module = true;
            return i + 1 < n ? i + 1 : n;
        }
        if (!strcmp(t, "-c") || !strcmp(t, "-"))
            return n;
        if (!strcmp(t, "-W") || !strcmp(t, "-X") || !strcmp(t, "--check-hash-based-pycs"))
            i++;
        else if (t[0] != '-')
            return i;
    }
    return n;
}

/* nemo llm pretrain|finetune ... --factory RECIPE (or -f RECIPE); overrides follow. */
static size_t read_nemo_cli(const struct tg_sh_word *w, size_t n, size_t i, struct tg_plan *p)
{
    static const char *const factory[] = {"--factory", "-f", NULL};
    if (i + 2 >= n || strcmp(w[i + 1].text, "llm"))
        return n;
    p->nemo_cli = true;
    snprintf(p->launcher, sizeof(p->launcher), "nemo llm %.20s", w[i + 2].text);
    snprintf(p->program, sizeof(p->program), "nemo llm %.40s", w[i + 2].text);
    for (size_t k = i + 3; k < n; k++) {
        const char *inl;
        size_t used;
        if (opt_value(w, n, k, factory, &inl, &used))
            snprintf(p->recipe, sizeof(p->recipe), "%s", inl);
    }
    return i + 2;
}

/* ---- the command ----------------------------------------------------------------------------*/

/* torchrun (or python -m torch.distributed.run/.launch) from word i of cmd: its options, read by
 * the torchrun reader, then the script's word; n when it names none. -ENOMEM goes to *err. */
static size_t read_torch(const struct tg_sh_cmd *cmd, size_t i, struct tg_plan *p,
                         struct tg_torchrun_memo *memo, int *err)
{
    struct tg_sh_cmd sub = *cmd;
    char outer[sizeof(p->launcher)];
    sub.words = cmd->words + i;
    sub.nwords = cmd->nwords - i;
    int rc = tg_torchrun_parse_memo(memo, &sub, &p->tr);
    if (rc <= 0) {
        *err = rc;
        return cmd->nwords;
    }
    p->torch = true;
    tg_launch_puts(outer, sizeof(outer), 0, p->launcher);
    /* "%.12s + %.30s" of the outer launcher and torchrun's (under mpirun), else torchrun's */
    size_t at = 0, n = strnlen(outer, 12);
    if (p->mpi) {
        at = tg_launch_put(p->launcher, sizeof(p->launcher), 0, outer, n);
        at = tg_launch_put(p->launcher, sizeof(p->launcher), at, " + ", 3);
    }
    tg_launch_put(p->launcher, sizeof(p->launcher), at, p->tr.launcher,
                  strnlen(p->tr.launcher, 30));
    return p->tr.script ? i + p->tr.script : cmd->nwords;
}

/* The program's first word after the launchers from word i of cmd, or cmd->nwords. */
static size_t read_launchers(const struct tg_sh_cmd *cmd, size_t i, struct tg_plan *p,
                             const struct tg_plan_files *files, const char *cwd,
                             struct tg_torchrun_memo *memo, int *err)
{
    const struct tg_sh_word *w = cmd->words;
    size_t n = cmd->nwords;
    const char *b = base(w[i].text);
    bool module;
    if (!w[i].resolved)
        return n;
    if (!strcmp(b, "deepspeed"))
        return read_deepspeed(w, n, i, p);
    if (!strcmp(b, "accelerate"))
        return i + 1 < n && !strcmp(w[i + 1].text, "launch")
                   ? read_accelerate(w, n, i, p, files, cwd)
                   : n;
    if (!strcmp(b, "nemo"))
        return read_nemo_cli(w, n, i, p);
    if (!strcmp(b, "torchrun"))
        return read_torch(cmd, i, p, memo, err);
    if (is_python(w[i].text)) {
        size_t s = read_python(w, n, i, &module);
        if (s < n && module && !strncmp(w[s].text, "torch.distributed.", 18))
            return read_torch(cmd, i, p, memo, err);
        if (s < n && !p->mpi && !p->deepspeed && !p->accelerate)
            p->direct = true;
        return s;
    }
    if (!p->mpi)
        p->direct = true;
    return i;
}

int tg_plan_parse(const struct tg_sh_cmd *cmd, const struct tg_mpirun *run,
                  const struct tg_plan_files *files, const char *cwd,
                  struct tg_torchrun_memo *torch, struct tg_plan *out)
{
    size_t i = 0, n = cmd->nwords;
    memset(out, 0, sizeof(*out));
    out->depth = cmd->depth;
    out->line = cmd->line;
    out->index = cmd->index;
    out->argv_index = cmd->argv_index;
    if (run) {
        if (run->prog == 0 || run->prog >= n)
            return 0;
        out->mpi = true;
        tg_launch_puts(out->launcher, sizeof(out->launcher), 0, run->launcher);
        i = run->prog;
    }
    int err = 0;
    size_t prog = read_launchers(cmd, i, out, files, cwd, torch, &err);
    if (err < 0)
        return err;
    if (prog >= n)
        return 0;
    int rc = tg_plan_read_args(cmd->words + prog, n - prog, files, cwd, out);
    if (rc < 0)
        return rc;
    out->experts_word += prog; /* read as an index of the program's arguments */
    return out->fw != TG_PLAN_FW_NONE || out->mpi || out->torch || out->deepspeed || out->accelerate
               ? 1
               : 0;
}
