/* torchrun.c -- torchrun, python -m torch.distributed.run and torch.distributed.launch read for
 * --nnodes, --nproc-per-node, --standalone and the rendezvous (include/tg/torchrun.h). Option
 * names and defaults: pytorch/pytorch torch/distributed/run.py get_args_parser
 * (docs/references.md#ref-torchrun). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/torchrun.h"

/* An option name and its length. */
struct name {
    const char *s;
    size_t len;
};

#define NAME(s)                                                                                    \
    {                                                                                              \
        s, sizeof(s) - 1                                                                           \
    }

/* Options that take no value (action check_env or store_true); every other option takes one. */
static const struct name flags[] = {
    NAME("--standalone"),
    NAME("-m"),
    NAME("--module"),
    NAME("--no-python"),
    NAME("--no_python"),
    NAME("--run-path"),
    NAME("--run_path"),
    NAME("--use-env"),
    NAME("--use_env"),
    NAME("--virtual-local-rank"),
    NAME("--virtual_local_rank"),
    NAME("-h"),
    NAME("--help"),
    {NULL, 0},
};

static const char *base(const char *word)
{
    const char *b = strrchr(word, '/');
    return b ? b + 1 : word;
}

/* python, python3, python3.11 (not pythonic-tool) */
static bool is_python(const char *word)
{
    const char *b = base(word);
    if (strncmp(b, "python", 6))
        return false;
    for (b += 6; *b; b++) {
        if (!isdigit((unsigned char)*b) && *b != '.')
            return false;
    }
    return true;
}

bool tg_launcher_is_torch(const char *word)
{
    return !strcmp(base(word), "torchrun") || is_python(word);
}

/* Is the key (len bytes) one of list's names? */
static bool in_list(const char *key, size_t len, const struct name *list)
{
    for (size_t i = 0; list[i].s; i++) {
        if (list[i].len == len && !memcmp(key, list[i].s, len))
            return true;
    }
    return false;
}

/* The word where torchrun's own options start: 1 after `torchrun`, after `-m MODULE` for Python
 * (with interpreter options before it); 0 when the command does not run torchrun. */
static size_t torch_start(const struct tg_sh_cmd *cmd, char *launcher, size_t len)
{
    const struct tg_sh_word *w = cmd->words;
    if (!strcmp(base(w[0].text), "torchrun")) {
        tg_launch_puts(launcher, len, 0, "torchrun");
        return 1;
    }
    for (size_t i = 1; i < cmd->nwords; i++) {
        const char *t = w[i].text;
        if (!strcmp(t, "-m") && i + 1 < cmd->nwords) {
            const char *mod = w[i + 1].text;
            if (strcmp(mod, "torch.distributed.run") && strcmp(mod, "torch.distributed.launch"))
                return 0;
            snprintf(launcher, len, "python -m %s", mod);
            return i + 2;
        }
        if (!strcmp(t, "-W") || !strcmp(t, "-X")) {
            i++; /* interpreter options with a value */
            continue;
        }
        if (t[0] != '-' || !strcmp(t, "-c") || !strcmp(t, "-"))
            return 0; /* a script, -c code, or stdin: not torchrun */
    }
    return 0;
}

static void opt_from_word(struct tg_torch_opt *o, const struct tg_sh_word *w, const char *value)
{
    o->set = true;
    o->from_env = false;
    o->resolved = w->resolved;
    tg_launch_puts(o->text, sizeof(o->text), 0, value);
    if (!w->resolved)
        snprintf(o->reason, sizeof(o->reason), "%s", w->reason ? w->reason : "not a literal");
}

/* `--name=value` or `--name value` for one of names (klen: the length of word i up to its first
 * '=', as no name has one): the value, or NULL. *skip is set when the value is the next word. */
static const char *opt_value(const struct tg_sh_cmd *cmd, size_t i, size_t klen,
                             const struct name *names, bool *skip, const struct tg_sh_word **vw)
{
    const char *t = cmd->words[i].text;
    *skip = false;
    for (size_t k = 0; names[k].s; k++) {
        size_t n = names[k].len;
        if (n != klen || memcmp(t, names[k].s, n))
            continue;
        if (t[n] == '=') {
            *vw = &cmd->words[i];
            return t + n + 1;
        }
        if (t[n] == '\0' && i + 1 < cmd->nwords) {
            *skip = true;
            *vw = &cmd->words[i + 1];
            return cmd->words[i + 1].text;
        }
    }
    return NULL;
}

static void read_options(const struct tg_sh_cmd *cmd, size_t start, struct tg_torchrun *r)
{
    static const struct name nnodes[] = {NAME("--nnodes"), {NULL, 0}};
    static const struct name nproc[] = {
        NAME("--nproc-per-node"), NAME("--nproc_per_node"), {NULL, 0}};
    static const struct name rdzv[] = {NAME("--rdzv-endpoint"),
                                       NAME("--rdzv_endpoint"),
                                       NAME("--rdzv-backend"),
                                       NAME("--rdzv_backend"),
                                       {NULL, 0}};
    for (size_t i = start; i < cmd->nwords; i++) {
        const char *t = cmd->words[i].text;
        const struct tg_sh_word *vw = NULL;
        const char *v;
        bool skip;
        if (t[0] != '-' || !strcmp(t, "--")) {
            r->script = i + (t[0] == '-'); /* the training script: the rest is its own */
            return;
        }
        size_t klen = (size_t)(strchrnul(t, '=') - t);
        bool whole = t[klen] == '\0'; /* no '=': the word is the option */
        if (whole && klen == 12 && !memcmp(t, "--standalone", 12))
            r->standalone = true;
        if (whole && in_list(t, klen, flags))
            continue;
        if ((v = opt_value(cmd, i, klen, nnodes, &skip, &vw)))
            opt_from_word(&r->nnodes, vw, v);
        else if ((v = opt_value(cmd, i, klen, nproc, &skip, &vw)))
            opt_from_word(&r->nproc, vw, v);
        else if ((v = opt_value(cmd, i, klen, rdzv, &skip, &vw)))
            r->rdzv = true;
        else
            skip = whole; /* another option and its value */
        if (skip)
            i++;
    }
}

/* torchrun's env action: an option not on the command line takes PET_<OPTION> (its last entry
 * in the environment the torchrun process starts with). */
static void opt_from_env(struct tg_torch_opt *o, const struct tg_sh_cmd *cmd, const char *name)
{
    const char *value;
    if (o->set || !tg_sh_cmd_getenv(cmd, name, &value))
        return;
    o->set = o->from_env = true;
    o->resolved = value != NULL;
    snprintf(o->env_name, sizeof(o->env_name), "%s", name);
    snprintf(o->text, sizeof(o->text), "%s", value ? value : "");
    if (!value)
        snprintf(o->reason, sizeof(o->reason), "%s is not known at admission", name);
}

int tg_torchrun_parse(const struct tg_sh_cmd *cmd, struct tg_torchrun *out)
{
    memset(out, 0, sizeof(*out));
    size_t start = torch_start(cmd, out->launcher, sizeof(out->launcher));
    if (start == 0)
        return 0;
    out->depth = cmd->depth;
    out->line = cmd->line;
    out->index = cmd->index;
    out->argv_index = cmd->argv_index;
    read_options(cmd, start, out);
    opt_from_env(&out->nnodes, cmd, "PET_NNODES");
    opt_from_env(&out->nproc, cmd, "PET_NPROC_PER_NODE");
    const char *sa;
    if (tg_sh_cmd_getenv(cmd, "PET_STANDALONE", &sa) && sa && !strcmp(sa, "1"))
        out->standalone = true;
    out->rdzv |= tg_sh_cmd_getenv(cmd, "PET_RDZV_ENDPOINT", &sa);
    return 1;
}

int tg_torchrun_parse_memo(struct tg_torchrun_memo *memo, const struct tg_sh_cmd *cmd,
                           struct tg_torchrun *out)
{
    if (memo && memo->words && memo->words == cmd->words && memo->nwords == cmd->nwords) {
        *out = memo->r;
        return memo->rc;
    }
    int rc = tg_torchrun_parse(cmd, out);
    if (memo && rc >= 0) {
        memo->words = cmd->words;
        memo->nwords = cmd->nwords;
        memo->rc = rc;
        memo->r = *out;
    }
    return rc;
}

/* A non-negative decimal count, all of s. */
static bool count(const char *s, long long *n)
{
    return tg_launch_count(s, n);
}

int tg_torchrun_nnodes(const struct tg_torchrun *r, long long *min, long long *max)
{
    char buf[sizeof(r->nnodes.text)];
    if (r->standalone || !r->nnodes.set) {
        *min = *max = 1;
        return 1;
    }
    if (!r->nnodes.resolved)
        return 0;
    snprintf(buf, sizeof(buf), "%s", r->nnodes.text);
    char *colon = strchr(buf, ':');
    if (!colon) {
        if (!count(buf, min))
            return 0;
        *max = *min;
        return 1;
    }
    *colon = '\0';
    return count(buf, min) && count(colon + 1, max) && *min <= *max ? 1 : 0;
}

int tg_torchrun_nproc(const struct tg_torchrun *r, long long *n)
{
    if (!r->nproc.set) {
        *n = 1;
        return 1;
    }
    return r->nproc.resolved && count(r->nproc.text, n) ? 1 : 0;
}
